// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that a padded 2-D convolution round-trips, with the default of one
// group not printed.
// CHECK-LABEL: func @conv_2d
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x3x32x32xf32>, %[[W:[^:]+]]: tensor<16x3x3x3xf32>)
func.func @conv_2d(%x: tensor<8x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32> {
  // CHECK-NEXT: %[[Y:.+]] = kiln.conv %[[X]], %[[W]] strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  // CHECK-NEXT: return %[[Y]]
  %y = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 1 : i64}
      : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
  return %y : tensor<8x16x32x32xf32>
}

// -----

// Tests that a 1-D convolution with stride 2 and dilation 2 has
// (10 - 2 * 2 - 1) / 2 + 1 = 3 output positions (the last input position is
// not read).
// CHECK-LABEL: func @conv_1d
func.func @conv_1d(%x: tensor<2x4x10xf16>, %w: tensor<6x4x3xf16>) {
  // CHECK: kiln.conv %{{.+}}, %{{.+}} strides [2] dilations [2] pad_low [0] pad_high [0] : (tensor<2x4x10xf16>, tensor<6x4x3xf16>) -> tensor<2x6x3xf16>
  %0 = kiln.conv %x, %w strides [2] dilations [2] pad_low [0] pad_high [0]
      : (tensor<2x4x10xf16>, tensor<6x4x3xf16>) -> tensor<2x6x3xf16>
  return
}

// -----

// Tests that a 3-D convolution takes a different stride, dilation and
// padding in each dimension: (4 - 1 - 1) / 1 + 1 = 3,
// (6 + 2 - 2 - 1) / 2 + 1 = 3 and (8 + 2 - 2 * 2 - 1) / 3 + 1 = 2.
// CHECK-LABEL: func @conv_3d
func.func @conv_3d(%x: tensor<1x2x4x6x8xbf16>, %w: tensor<3x2x2x3x3xbf16>) {
  // CHECK: kiln.conv %{{.+}}, %{{.+}} strides [1, 2, 3] dilations [1, 1, 2] pad_low [0, 1, 0] pad_high [0, 1, 2] : (tensor<1x2x4x6x8xbf16>, tensor<3x2x2x3x3xbf16>) -> tensor<1x3x3x3x2xbf16>
  %0 = kiln.conv %x, %w strides [1, 2, 3] dilations [1, 1, 2] pad_low [0, 1, 0] pad_high [0, 1, 2]
      : (tensor<1x2x4x6x8xbf16>, tensor<3x2x2x3x3xbf16>) -> tensor<1x3x3x3x2xbf16>
  return
}

// -----

// Tests that grouped convolutions round-trip: depthwise (one input channel
// per group, two features each) and two groups of three channels; the
// filter's dimension 1 is the channels of one group.
// CHECK-LABEL: func @conv_groups
func.func @conv_groups(%x: tensor<2x4x5x5xf32>, %dw: tensor<8x1x3x3xf32>,
                       %y: tensor<1x6x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // CHECK: kiln.conv %{{.+}}, %{{.+}} strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 4 : i64} : (tensor<2x4x5x5xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x3x3xf32>
  // CHECK-NEXT: kiln.conv %{{.+}}, %{{.+}} strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64} : (tensor<1x6x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  %0 = kiln.conv %x, %dw strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 4 : i64}
      : (tensor<2x4x5x5xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x3x3xf32>
  %1 = kiln.conv %y, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64}
      : (tensor<1x6x4x4xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

// Tests that padding may differ between the sides: 4 + 2 - 1 - 1 + 1 = 5
// rows from pad_low 2, 4 - 1 - 1 + 1 = 3 columns without padding.
// CHECK-LABEL: func @conv_asymmetric_padding
func.func @conv_asymmetric_padding(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) {
  // CHECK: kiln.conv %{{.+}}, %{{.+}} strides [1, 1] dilations [1, 1] pad_low [2, 0] pad_high [0, 0] : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x5x3xf32>
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [2, 0] pad_high [0, 0]
      : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x5x3xf32>
  return
}

// -----

// Tests that `?` dimensions pass through (batch and a spatial size), and
// that a result may be less static than the rule infers.
// CHECK-LABEL: func @conv_dynamic
func.func @conv_dynamic(%x: tensor<?x3x8x8xf32>, %s: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: kiln.conv %{{.+}}, %{{.+}} strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  // CHECK-NEXT: kiln.conv %{{.+}}, %{{.+}} strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x6xf32>
  // CHECK-NEXT: kiln.conv %{{.+}}, %{{.+}} strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x6x?xf32>
  %0 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  %1 = kiln.conv %s, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x6xf32>
  %2 = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x6x?xf32>
  return
}

// -----

// Tests that the data gradient states the input's type: with stride 2, inputs
// of 7 and 8 both give 3 outputs, so the window alone does not determine it.
// CHECK-LABEL: func @conv_backward_data
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x4x3x3xf32>, %[[W:[^:]+]]: tensor<4x2x3x3xf32>)
func.func @conv_backward_data(%dy: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // CHECK-NEXT: kiln.conv_backward_data %[[DY]], %[[W]] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  // CHECK-NEXT: kiln.conv_backward_data %[[DY]], %[[W]] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x8x7xf32>
  %0 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  %1 = kiln.conv_backward_data %dy, %w strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x8x7xf32>
  return
}

// -----

// Tests that the filter gradient round-trips with groups, dilation and
// padding, its result the filter's type.
// CHECK-LABEL: func @conv_backward_filter
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x4x9xf16>, %[[DY:[^:]+]]: tensor<2x6x7xf16>)
func.func @conv_backward_filter(%x: tensor<2x4x9xf16>, %dy: tensor<2x6x7xf16>) {
  // CHECK-NEXT: kiln.conv_backward_filter %[[X]], %[[DY]] strides [1] dilations [2] pad_low [1] pad_high [1] {groups = 2 : i64} : (tensor<2x4x9xf16>, tensor<2x6x7xf16>) -> tensor<6x2x3xf16>
  %0 = kiln.conv_backward_filter %x, %dy strides [1] dilations [2] pad_low [1] pad_high [1] {groups = 2 : i64}
      : (tensor<2x4x9xf16>, tensor<2x6x7xf16>) -> tensor<6x2x3xf16>
  return
}
