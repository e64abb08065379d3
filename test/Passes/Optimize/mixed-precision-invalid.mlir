// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the attribute belongs on a matrix product or a convolution.
func.func @not_a_product(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.compute_precision' belongs on a kiln.matmul or a convolution}}
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

// -----

// Tests that a convolution computes in bf16 only.
func.func @f16_convolution(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'kiln.compute_precision' on a convolution must be bf16, got f16}}
  %y = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 1 : i64, kiln.compute_precision = f16}
      : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
