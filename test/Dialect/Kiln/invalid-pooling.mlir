// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that pooling needs at least one spatial dimension.
func.func @input_rank_2(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects an input [N, C, D...] with 1 to 3 spatial dimensions, got shape [4, 3]}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [] strides [] dilations [] pad_low [] pad_high [] : tensor<4x3xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that pooling has at most three spatial dimensions.
func.func @input_rank_6(%x: tensor<1x1x2x2x2x2xf32>) {
  // expected-error @+2 {{'kiln.avg_pool' op expects an input [N, C, D...] with 1 to 3 spatial dimensions, got shape [1, 1, 2, 2, 2, 2]}}
  // expected-error @+1 {{'kiln.avg_pool' op failed to infer returned types}}
  %0 = kiln.avg_pool %x kernel [1, 1, 1, 1] strides [1, 1, 1, 1] dilations [1, 1, 1, 1] pad_low [0, 0, 0, 0] pad_high [0, 0, 0, 0]
      : tensor<1x1x2x2x2x2xf32> -> tensor<1x1x2x2x2x2xf32>
  return
}

// -----

// Tests that a pool states its kernel (a convolution's comes from its filter).
func.func @no_kernel(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects a kernel}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x5x5xf32>
  return
}

// -----

// Tests that the kernel has one entry per spatial dimension.
func.func @kernel_length(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects kernel to have 2 entries (one per spatial dimension), got 1}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that kernel sizes are at least 1.
func.func @zero_kernel(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects kernel of at least 1, got [2, 0]}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 0] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x6xf32>
  return
}

// -----

// Tests that strides has one entry per spatial dimension.
func.func @strides_length(%x: tensor<1x1x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects strides to have 1 entries (one per spatial dimension), got 2}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2] strides [1, 1] dilations [1] pad_low [0] pad_high [0]
      : tensor<1x1x5xf32> -> tensor<1x1x4xf32>
  return
}

// -----

// Tests that strides are at least 1.
func.func @zero_stride(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.avg_pool' op expects strides of at least 1, got [0, 1]}}
  // expected-error @+1 {{'kiln.avg_pool' op failed to infer returned types}}
  %0 = kiln.avg_pool %x kernel [2, 2] strides [0, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that dilations has one entry per spatial dimension.
func.func @dilations_length(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects dilations to have 2 entries (one per spatial dimension), got 0}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that dilations are at least 1.
func.func @zero_dilation(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects dilations of at least 1, got [1, 0]}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [1, 0] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that pad_low has one entry per spatial dimension.
func.func @pad_low_length(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects pad_low to have 2 entries (one per spatial dimension), got 1}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that padding is not negative.
func.func @negative_pad_low(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects pad_low of at least 0, got [0, -1]}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0, -1] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x3xf32>
  return
}

// -----

// Tests that pad_high has one entry per spatial dimension.
func.func @pad_high_length(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects pad_high to have 2 entries (one per spatial dimension), got 3}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that padding after a dimension is not negative.
func.func @negative_pad_high(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.avg_pool' op expects pad_high of at least 0, got [-1, 0]}}
  // expected-error @+1 {{'kiln.avg_pool' op failed to infer returned types}}
  %0 = kiln.avg_pool %x kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [-1, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x3x4xf32>
  return
}

// -----

// Tests that padding before a dimension is smaller than the window: a window
// entirely in the padding would pool nothing.
func.func @pad_low_covers_window(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects padding smaller than the window in spatial dimension 1, got 2 and 0 for a kernel of 2}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [1, 1] dilations [1, 1] pad_low [0, 2] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x6xf32>
  return
}

// -----

// Tests that padding after a dimension is smaller than the window too, and
// that the window's extent counts its dilation: a kernel of 2 with dilation 2
// spans 3, so padding 3 is too much (padding 2 would be allowed).
func.func @pad_high_covers_window(%x: tensor<1x1x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects padding smaller than the window in spatial dimension 0, got 0 and 3 for a kernel of 2}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2] strides [1] dilations [2] pad_low [0] pad_high [3]
      : tensor<1x1x5xf32> -> tensor<1x1x6xf32>
  return
}

// -----

// Tests that the window fits the padded input.
func.func @window_does_not_fit(%x: tensor<1x1x5x2xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects the window (kernel 3, dilation 1) to fit spatial dimension 1 of size 2 padded by 0 and 0}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [3, 3] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x2xf32> -> tensor<1x1x3x1xf32>
  return
}

// -----

// Tests that a dilated window must fit too: kernel 2 with dilation 3 spans 4,
// more than 1 + 1 + 1.
func.func @dilated_window_does_not_fit(%x: tensor<1x1x1xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op expects the window (kernel 2, dilation 3) to fit spatial dimension 0 of size 1 padded by 1 and 1}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2] strides [1] dilations [3] pad_low [1] pad_high [1]
      : tensor<1x1x1xf32> -> tensor<1x1x1xf32>
  return
}

// -----

// Tests that the result type is the inferred one (here without ceil_mode).
func.func @wrong_result(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{'kiln.max_pool' op inferred type(s) 'tensor<1x1x2x2xf32>' are incompatible with return type(s) of operation 'tensor<1x1x3x3xf32>'}}
  // expected-error @+1 {{'kiln.max_pool' op failed to infer returned types}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

// Tests that pooling takes only floats.
func.func @integer_input(%x: tensor<1x1x4x4xi32>) {
  // expected-error @+1 {{'kiln.max_pool' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x1x4x4xi32>'}}
  %0 = kiln.max_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x4x4xi32> -> tensor<1x1x2x2xi32>
  return
}

// -----

// Tests that average pooling is not dilated (its divisor counts the window's
// elements).
func.func @avg_pool_dilated(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+1 {{'kiln.avg_pool' op expects dilations of 1, got [1, 2]}}
  %0 = kiln.avg_pool %x kernel [2, 2] strides [1, 1] dilations [1, 2] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x1x5x5xf32> -> tensor<1x1x4x3xf32>
  return
}

// -----

// Tests that max_pool_indices has max_pool's result shape.
func.func @indices_shape(%x: tensor<1x2x5x5xf32>) {
  // expected-error @+1 {{'kiln.max_pool_indices' op expects a result of type 'tensor<1x2x3x3xi32>', got 'tensor<1x2x2x2xi32>'}}
  %0 = kiln.max_pool_indices %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode}
      : tensor<1x2x5x5xf32> -> tensor<1x2x2x2xi32>
  return
}

// -----

// Tests that max_pool_indices gives i32 offsets.
func.func @indices_i64(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'kiln.max_pool_indices' op result #0 must be}}
  %0 = kiln.max_pool_indices %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xi64>
  return
}

// -----

// Tests that max_pool_indices checks its window as max_pool does.
func.func @indices_window(%x: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'kiln.max_pool_indices' op expects strides to have 2 entries (one per spatial dimension), got 1}}
  %0 = kiln.max_pool_indices %x kernel [2, 2] strides [2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xi32>
  return
}

// -----

// Tests that max_pool_grad's gradient has the type pooling its result gives.
func.func @max_pool_grad_type(%dy: tensor<1x2x3x3xf32>, %i: tensor<1x2x3x3xi32>) {
  // expected-error @+1 {{'kiln.max_pool_grad' op expects a gradient of type 'tensor<1x2x2x2xf32>', got 'tensor<1x2x3x3xf32>'}}
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

// Tests that max_pool_grad's gradient has its result's element type.
func.func @max_pool_grad_element_type(%dy: tensor<1x2x2x2xf16>, %i: tensor<1x2x2x2xi32>) {
  // expected-error @+1 {{'kiln.max_pool_grad' op expects a gradient of type 'tensor<1x2x2x2xf32>', got 'tensor<1x2x2x2xf16>'}}
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x2x2x2xf16>, tensor<1x2x2x2xi32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Tests that max_pool_grad's indices are shaped like its gradient.
func.func @max_pool_grad_indices(%dy: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x1xi32>) {
  // expected-error @+1 {{'kiln.max_pool_grad' op expects indices shaped like the gradient, got 'tensor<1x2x2x1xi32>'}}
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x2x2x2xf32>, tensor<1x2x2x1xi32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Tests that max_pool_grad checks its window as max_pool does.
func.func @max_pool_grad_window(%dy: tensor<1x2x3x3xf32>, %i: tensor<1x2x3x3xi32>) {
  // expected-error @+1 {{'kiln.max_pool_grad' op expects padding smaller than the window in spatial dimension 0, got 2 and 2 for a kernel of 2}}
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [2, 0] pad_high [2, 0]
      : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) -> tensor<1x2x4x6xf32>
  return
}

// -----

// Tests that avg_pool_grad is not dilated either.
func.func @avg_pool_grad_dilated(%dy: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'kiln.avg_pool_grad' op expects dilations of 1, got [2, 2]}}
  %0 = kiln.avg_pool_grad %dy kernel [2, 2] strides [1, 1] dilations [2, 2] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x2x2x2xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

// Tests that avg_pool_grad's gradient has the type pooling its result gives:
// ceil_mode counts (3 windows over 5 with it, 2 without).
func.func @avg_pool_grad_type(%dy: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.avg_pool_grad' op expects a gradient of type 'tensor<1x2x2x2xf32>', got 'tensor<1x2x3x3xf32>'}}
  %0 = kiln.avg_pool_grad %dy kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
  return
}
