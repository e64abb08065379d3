// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the softmax axis is a dimension of the operand.
func.func @axis_out_of_range(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'kiln.softmax' op expects axis (2) to be in [0, 2)}}
  %0 = kiln.softmax %x axis = 2 : tensor<4x10xf32>
  return
}

// -----

// Tests that a negative axis is rejected (importers normalize it).
func.func @negative_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'kiln.log_softmax' op expects axis (-1) to be in [0, 2)}}
  %0 = kiln.log_softmax %x axis = -1 : tensor<4x10xf32>
  return
}

// -----

// Tests that a scalar has no axis to normalize over.
func.func @scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'kiln.softmax' op expects axis (0) to be in [0, 0)}}
  %0 = kiln.softmax %x axis = 0 : tensor<f32>
  return
}

// -----

// Tests that softmax takes only floats.
func.func @int_operand(%x: tensor<4x10xi32>) {
  // expected-error @+1 {{'kiln.softmax' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x10xi32>'}}
  %0 = kiln.softmax %x axis = 1 : tensor<4x10xi32>
  return
}

// -----

// Tests that the result has the operand's type.
func.func @wrong_result(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'kiln.log_softmax' op requires the same type for all operands and results}}
  %0 = "kiln.log_softmax"(%x) <{axis = 1 : i64}> : (tensor<4x10xf32>) -> tensor<4x10xf16>
  return
}
