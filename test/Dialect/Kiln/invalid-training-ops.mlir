// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that stop_gradient is an identity: its result has the operand's type
// (the generic form can spell another).
func.func @stop_gradient_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.stop_gradient' op requires the same type for all operands and results}}
  %0 = "kiln.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Tests that stop_gradient takes only element types of the dialect.
func.func @stop_gradient_f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{'kiln.stop_gradient' op operand #0 must be ranked tensor of}}
  %0 = kiln.stop_gradient %x : tensor<4xf64>
  return
}

// -----

// Tests that sparse_apply's `dense` is a flag, not a value.
func.func @sparse_apply_dense_value(%t: tensor<10x4xf32>, %ids: tensor<2xi64>, %g: tensor<2x4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'kiln.sparse_apply' op attribute 'dense' failed to satisfy constraint: unit attribute}}
  %0 = kiln.sparse_apply sgd %t, [], %ids, %g, %lr, %lr {dense = true}
      : (tensor<10x4xf32>, tensor<2xi64>, tensor<2x4xf32>, tensor<f32>, tensor<f32>) -> tensor<10x4xf32>
  return
}
