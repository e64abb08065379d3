// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that axes are dimensions of the operand.
func.func @axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.reduce_sum' op expects axes in [0, 2), got [0, 2]}}
  // expected-error @+1 {{'kiln.reduce_sum' op failed to infer returned types}}
  %0 = kiln.reduce_sum %x axes [0, 2] : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

// Tests that negative axes are not accepted (importers normalize them).
func.func @negative_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.reduce_max' op expects axes in [0, 2), got [-1]}}
  // expected-error @+1 {{'kiln.reduce_max' op failed to infer returned types}}
  %0 = kiln.reduce_max %x axes [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that an axis is not repeated.
func.func @repeated_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.reduce_mean' op expects strictly increasing axes, got [1, 1]}}
  // expected-error @+1 {{'kiln.reduce_mean' op failed to infer returned types}}
  %0 = kiln.reduce_mean %x axes [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that axes are sorted.
func.func @unsorted_axes(%x: tensor<4x8x2xf32>) {
  // expected-error @+2 {{'kiln.reduce_sum' op expects strictly increasing axes, got [2, 0]}}
  // expected-error @+1 {{'kiln.reduce_sum' op failed to infer returned types}}
  %0 = kiln.reduce_sum %x axes [2, 0] : tensor<4x8x2xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that the result drops the reduced axes.
func.func @wrong_result(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.reduce_sum' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @+1 {{'kiln.reduce_sum' op failed to infer returned types}}
  %0 = kiln.reduce_sum %x axes [1] : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that without keep_dims the reduced axes are gone, not size 1.
func.func @missing_keep_dims(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'kiln.reduce_max' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4x1xf32>'}}
  // expected-error @+1 {{'kiln.reduce_max' op failed to infer returned types}}
  %0 = kiln.reduce_max %x axes [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return
}

// -----

// Tests that a mean is over floats only.
func.func @mean_of_int(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'kiln.reduce_mean' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = kiln.reduce_mean %x axes [1] : tensor<4x8xi32> -> tensor<4xi32>
  return
}
