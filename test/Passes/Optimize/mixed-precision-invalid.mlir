// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the attribute belongs on a matrix product.
func.func @not_a_product(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.compute_precision' belongs on a kiln.matmul}}
  %r = kiln.relu %x {kiln.compute_precision = bf16} : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that the attribute names a 16-bit float type.
func.func @wrong_type(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'kiln.compute_precision' must be the type bf16 or f16, got f32}}
  %r = kiln.matmul %x, %x {kiln.compute_precision = f32} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
