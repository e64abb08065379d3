// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that a convolution needs at least one spatial dimension.
func.func @input_rank_2(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects an input [N, C, D...] with 1 to 3 spatial dimensions, got shape [4, 3]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [] dilations [] pad_low [] pad_high [] : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that a convolution has at most three spatial dimensions.
func.func @input_rank_6(%x: tensor<1x1x2x2x2x2xf32>, %w: tensor<1x1x1x1x1x1xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects an input [N, C, D...] with 1 to 3 spatial dimensions, got shape [1, 1, 2, 2, 2, 2]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1, 1, 1] dilations [1, 1, 1, 1] pad_low [0, 0, 0, 0] pad_high [0, 0, 0, 0]
      : (tensor<1x1x2x2x2x2xf32>, tensor<1x1x1x1x1x1xf32>) -> tensor<1x1x2x2x2x2xf32>
  return
}

// -----

// Tests that the filter has the input's rank.
func.func @filter_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects a filter of rank 4 [F, C / groups, K...], got shape [4, 3, 3]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that input and filter share their element type.
func.func @element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+2 {{'kiln.conv' op expects input and filter of one element type, got 'f32' and 'f16'}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that convolutions take only floats.
func.func @integer_input(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xi32>) {
  // expected-error @+1 {{'kiln.conv' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<1x3x8x8xi32>'}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xi32>) -> tensor<1x4x6x6xi32>
  return
}

// -----

// Tests that strides has one entry per spatial dimension.
func.func @strides_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects strides to have 2 entries (one per spatial dimension), got 1}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that dilations has one entry per spatial dimension.
func.func @dilations_length(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects dilations to have 2 entries (one per spatial dimension), got 3}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that pad_low has one entry per spatial dimension.
func.func @pad_low_length(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects pad_low to have 1 entries (one per spatial dimension), got 0}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1] dilations [1] pad_low [] pad_high [0]
      : (tensor<1x3x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

// Tests that pad_high has one entry per spatial dimension.
func.func @pad_high_length(%x: tensor<1x3x4x4x4xf32>, %w: tensor<4x3x1x1x1xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects pad_high to have 3 entries (one per spatial dimension), got 2}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1, 1] dilations [1, 1, 1] pad_low [0, 0, 0] pad_high [0, 0]
      : (tensor<1x3x4x4x4xf32>, tensor<4x3x1x1x1xf32>) -> tensor<1x4x4x4x4xf32>
  return
}

// -----

// Tests that strides are at least 1.
func.func @zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects strides of at least 1, got [1, 0]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 0] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that dilations are at least 1.
func.func @zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects dilations of at least 1, got [0, 1]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [0, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that padding before a dimension is not negative (cropping is a
// slice's job).
func.func @negative_pad_low(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects pad_low of at least 0, got [-1, 0]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [-1, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x6xf32>
  return
}

// -----

// Tests that padding after a dimension is not negative.
func.func @negative_pad_high(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects pad_high of at least 0, got [0, -2]}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, -2]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x4xf32>
  return
}

// -----

// Tests that there is at least one group.
func.func @zero_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects groups of at least 1, got 0}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 0 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that the groups divide the input channels.
func.func @groups_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects input channels (3) divisible by groups (2)}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64}
      : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that the groups divide the filter's outputs.
func.func @groups_features(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects filter outputs (6) divisible by groups (4)}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 4 : i64}
      : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that the filter's dimension 1 is the channels of one group.
func.func @filter_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects filter dimension 1 (4) to be input channels / groups (4 / 2)}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64}
      : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that without groups the filter reads every input channel.
func.func @filter_channels_ungrouped(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects filter dimension 1 (2) to be input channels / groups (3 / 1)}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that the (dilated) window fits the padded input: a kernel of 3 with
// dilation 2 spans 5 positions, more than 3 + 1.
func.func @window_does_not_fit(%x: tensor<1x3x8x3xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op expects the window (kernel 3, dilation 2) to fit spatial dimension 1 of size 3 padded by 1 and 0}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 2] pad_low [0, 1] pad_high [0, 0]
      : (tensor<1x3x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return
}

// -----

// Tests that the result type is the inferred one: features, then the
// window's output sizes.
func.func @wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op inferred type(s) 'tensor<1x4x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x4x4x4xf32>'}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %0 = kiln.conv %x, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

// Tests that the data gradient's operands are a convolution's: the gradient
// must have the type convolving the stated input gives.
func.func @backward_data_gradient_type(%dy: tensor<1x4x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_data' op expects a gradient of type 'tensor<1x4x3x3xf32>', got 'tensor<1x4x4x4xf32>'}}
  %0 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return
}

// -----

// Tests that the data gradient's element type is the gradient's.
func.func @backward_data_element_type(%dy: tensor<1x4x3x3xf16>, %w: tensor<4x2x3x3xf16>) {
  // expected-error @+1 {{'kiln.conv_backward_data' op expects input and filter of one element type, got 'f32' and 'f16'}}
  %0 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf16>, tensor<4x2x3x3xf16>) -> tensor<1x2x7x7xf32>
  return
}

// -----

// Tests that the data gradient's result has the filter's channels per group
// times the groups.
func.func @backward_data_channels(%dy: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_data' op expects filter dimension 1 (2) to be input channels / groups (3 / 1)}}
  %0 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x3x7x7xf32>
  return
}

// -----

// Tests that the data gradient checks its window like the convolution.
func.func @backward_data_stride(%dy: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_data' op expects strides of at least 1, got [0, 2]}}
  %0 = kiln.conv_backward_data %dy, %w strides [0, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return
}

// -----

// Tests that the filter gradient's operands are a convolution's: a 2x2
// filter over a 5x5 input gives 4x4 outputs, not the gradient's 3x3.
func.func @backward_filter_gradient_type(%x: tensor<1x4x5x5xf32>, %dy: tensor<1x4x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_filter' op expects a gradient of type 'tensor<1x4x4x4xf32>', got 'tensor<1x4x3x3xf32>'}}
  %0 = kiln.conv_backward_filter %x, %dy strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>) -> tensor<4x4x2x2xf32>
  return
}

// -----

// Tests that the filter gradient's result has the filter's rank.
func.func @backward_filter_rank(%x: tensor<1x4x5x5xf32>, %dy: tensor<1x4x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_filter' op expects a filter of rank 4 [F, C / groups, K...], got shape [4, 4, 3]}}
  %0 = kiln.conv_backward_filter %x, %dy strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x5x5xf32>, tensor<1x4x3x3xf32>) -> tensor<4x4x3xf32>
  return
}

// -----

// Tests that the filter gradient's groups divide the input channels.
func.func @backward_filter_groups(%x: tensor<1x4x5x5xf32>, %dy: tensor<1x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv_backward_filter' op expects input channels (4) divisible by groups (3)}}
  %0 = kiln.conv_backward_filter %x, %dy strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 3 : i64}
      : (tensor<1x4x5x5xf32>, tensor<1x3x3x3xf32>) -> tensor<3x1x3x3xf32>
  return
}
