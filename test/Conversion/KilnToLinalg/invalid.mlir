// RUN: kiln-opt %s -split-input-file -verify-diagnostics --convert-kiln-to-linalg

// Tests that a dynamic result dimension is reported: the patterns build
// static linalg ops, so shapes must be inferred first.
func.func @dynamic_reshape(%a: tensor<4x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kiln.reshape' op expects static shapes (run kiln-infer-shapes first), got 'tensor<?x8xf32>'}}
  %0 = kiln.reshape %a : tensor<4x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Tests that a dynamic operand is reported too, before anything is lowered.
func.func @dynamic_operand(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kiln.add' op expects static shapes (run kiln-infer-shapes first), got 'tensor<?x8xf32>'}}
  %0 = kiln.add %a, %b : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Tests that every op with a dynamic shape is reported, not only the first.
func.func @dynamic_twice(%a: tensor<4x?xf32>, %i: tensor<?xi64>) -> (tensor<4xf32>, tensor<4x?xf32>) {
  // expected-error @+1 {{'kiln.reduce_sum' op expects static shapes (run kiln-infer-shapes first), got 'tensor<4x?xf32>'}}
  %0 = kiln.reduce_sum %a axes [1] : tensor<4x?xf32> -> tensor<4xf32>
  // expected-error @+1 {{'kiln.gather' op expects static shapes (run kiln-infer-shapes first), got 'tensor<4x?xf32>'}}
  %1 = kiln.gather %a[%i] {axis = 1} : (tensor<4x?xf32>, tensor<?xi64>) -> tensor<4x?xf32>
  return %0, %1 : tensor<4xf32>, tensor<4x?xf32>
}
