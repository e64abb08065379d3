// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that a 2x2 max pool with stride 2 halves the spatial sizes and keeps
// batch and channels.
// CHECK-LABEL: func @max_pool_2d
// CHECK-SAME: (%[[X:[^:]+]]: tensor<8x16x32x32xf32>)
func.func @max_pool_2d(%x: tensor<8x16x32x32xf32>) -> tensor<8x16x16x16xf32> {
  // CHECK-NEXT: %[[Y:.+]] = kiln.max_pool %[[X]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
  // CHECK-NEXT: return %[[Y]]
  %y = kiln.max_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
  return %y : tensor<8x16x16x16xf32>
}

// -----

// Tests that ceil_mode rounds the window count up: 5 with kernel 2, stride 2
// gives 2 windows, 3 with ceil_mode (the last one half outside); 6 padded by
// 1 and 1 with kernel 3, stride 2 gives 3, or 4.
// CHECK-LABEL: func @max_pool_ceil_mode
func.func @max_pool_ceil_mode(%x: tensor<1x2x5x6xf32>) {
  // CHECK: kiln.max_pool %{{.+}} kernel [2, 3] strides [2, 2] dilations [1, 1] pad_low [0, 1] pad_high [0, 1] : tensor<1x2x5x6xf32> -> tensor<1x2x2x3xf32>
  // CHECK-NEXT: kiln.max_pool %{{.+}} kernel [2, 3] strides [2, 2] dilations [1, 1] pad_low [0, 1] pad_high [0, 1] {ceil_mode} : tensor<1x2x5x6xf32> -> tensor<1x2x3x4xf32>
  %0 = kiln.max_pool %x kernel [2, 3] strides [2, 2] dilations [1, 1] pad_low [0, 1] pad_high [0, 1]
      : tensor<1x2x5x6xf32> -> tensor<1x2x2x3xf32>
  %1 = kiln.max_pool %x kernel [2, 3] strides [2, 2] dilations [1, 1] pad_low [0, 1] pad_high [0, 1] {ceil_mode}
      : tensor<1x2x5x6xf32> -> tensor<1x2x3x4xf32>
  return
}

// -----

// Tests that ceil_mode drops a last window that would start in the high
// padding, as PyTorch does: 5 padded by 1 and 1 with kernel 2, stride 3 has
// ceil((5 + 2 - 2) / 3) + 1 = 3 windows, but the third starts at padded
// position 6, past the input: 2 remain, as without ceil_mode.
// CHECK-LABEL: func @max_pool_ceil_mode_drops_padding_window
func.func @max_pool_ceil_mode_drops_padding_window(%x: tensor<1x1x5xf32>) {
  // CHECK: kiln.max_pool %{{.+}} kernel [2] strides [3] dilations [1] pad_low [1] pad_high [1] {ceil_mode} : tensor<1x1x5xf32> -> tensor<1x1x2xf32>
  %0 = kiln.max_pool %x kernel [2] strides [3] dilations [1] pad_low [1] pad_high [1] {ceil_mode}
      : tensor<1x1x5xf32> -> tensor<1x1x2xf32>
  return
}

// -----

// Tests that max pooling is dilated in 1-D and 3-D: a kernel of 3 with
// dilation 2 spans 5 positions, (10 - 5) / 2 + 1 = 3.
// CHECK-LABEL: func @max_pool_dilated
func.func @max_pool_dilated(%x: tensor<2x3x10xf16>, %v: tensor<1x2x4x6x8xbf16>) {
  // CHECK: kiln.max_pool %{{.+}} kernel [3] strides [2] dilations [2] pad_low [0] pad_high [0] : tensor<2x3x10xf16> -> tensor<2x3x3xf16>
  // CHECK-NEXT: kiln.max_pool %{{.+}} kernel [2, 2, 3] strides [1, 2, 2] dilations [2, 1, 2] pad_low [0, 1, 2] pad_high [1, 1, 0] : tensor<1x2x4x6x8xbf16> -> tensor<1x2x3x4x3xbf16>
  %0 = kiln.max_pool %x kernel [3] strides [2] dilations [2] pad_low [0] pad_high [0]
      : tensor<2x3x10xf16> -> tensor<2x3x3xf16>
  %1 = kiln.max_pool %v kernel [2, 2, 3] strides [1, 2, 2] dilations [2, 1, 2] pad_low [0, 1, 2] pad_high [1, 1, 0]
      : tensor<1x2x4x6x8xbf16> -> tensor<1x2x3x4x3xbf16>
  return
}

// -----

// Tests that average pooling prints exclude_pad and ceil_mode, and that a
// `?` batch passes through.
// CHECK-LABEL: func @avg_pool
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x3x7x7xf32>)
func.func @avg_pool(%x: tensor<?x3x7x7xf32>) {
  // CHECK-NEXT: kiln.avg_pool %[[X]] kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  // CHECK-NEXT: kiln.avg_pool %[[X]] kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {exclude_pad} : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  // CHECK-NEXT: kiln.avg_pool %[[X]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode, exclude_pad} : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  %0 = kiln.avg_pool %x kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
      : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  %1 = kiln.avg_pool %x kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {exclude_pad}
      : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  %2 = kiln.avg_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode, exclude_pad}
      : tensor<?x3x7x7xf32> -> tensor<?x3x4x4xf32>
  return
}

// -----

// Tests that max_pool_indices has max_pool's shape with i32 elements.
// CHECK-LABEL: func @max_pool_indices
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x5x5xf16>)
func.func @max_pool_indices(%x: tensor<2x3x5x5xf16>) {
  // CHECK-NEXT: kiln.max_pool_indices %[[X]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode} : tensor<2x3x5x5xf16> -> tensor<2x3x3x3xi32>
  %0 = kiln.max_pool_indices %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode}
      : tensor<2x3x5x5xf16> -> tensor<2x3x3x3xi32>
  return
}

// -----

// Tests that the pooling gradients round-trip, their results the pooled
// input's type (here one of the two sizes a stride of 2 maps to 2 windows).
// CHECK-LABEL: func @pool_gradients
// CHECK-SAME: (%[[DY:[^:]+]]: tensor<1x2x2x2xf32>, %[[I:[^:]+]]: tensor<1x2x2x2xi32>)
func.func @pool_gradients(%dy: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi32>) {
  // CHECK-NEXT: kiln.max_pool_grad %[[DY]], %[[I]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) -> tensor<1x2x5x4xf32>
  // CHECK-NEXT: kiln.avg_pool_grad %[[DY]] kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {ceil_mode, exclude_pad} : tensor<1x2x2x2xf32> -> tensor<1x2x3x3xf32>
  %0 = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]
      : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) -> tensor<1x2x5x4xf32>
  %1 = kiln.avg_pool_grad %dy kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {ceil_mode, exclude_pad}
      : tensor<1x2x2x2xf32> -> tensor<1x2x3x3xf32>
  return
}
