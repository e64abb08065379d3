// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that each reduction drops the reduced axes.
// CHECK-LABEL: func @reduce
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8x2xf32>)
func.func @reduce(%x: tensor<4x8x2xf32>) {
  // CHECK-NEXT: kiln.reduce_sum %[[X]] axes [1] : tensor<4x8x2xf32> -> tensor<4x2xf32>
  // CHECK-NEXT: kiln.reduce_mean %[[X]] axes [0, 2] : tensor<4x8x2xf32> -> tensor<8xf32>
  // CHECK-NEXT: kiln.reduce_max %[[X]] axes [0, 1, 2] : tensor<4x8x2xf32> -> tensor<f32>
  %0 = kiln.reduce_sum %x axes [1] : tensor<4x8x2xf32> -> tensor<4x2xf32>
  %1 = kiln.reduce_mean %x axes [0, 2] : tensor<4x8x2xf32> -> tensor<8xf32>
  %2 = kiln.reduce_max %x axes [0, 1, 2] : tensor<4x8x2xf32> -> tensor<f32>
  return
}

// -----

// Tests that keep_dims keeps the reduced axes as size 1.
// CHECK-LABEL: func @keep_dims
func.func @keep_dims(%x: tensor<4x8xbf16>) {
  // CHECK: kiln.reduce_sum %{{.+}} axes [1] {keep_dims} : tensor<4x8xbf16> -> tensor<4x1xbf16>
  // CHECK-NEXT: kiln.reduce_mean %{{.+}} axes [0, 1] {keep_dims} : tensor<4x8xbf16> -> tensor<1x1xbf16>
  %0 = kiln.reduce_sum %x axes [1] {keep_dims} : tensor<4x8xbf16> -> tensor<4x1xbf16>
  %1 = kiln.reduce_mean %x axes [0, 1] {keep_dims} : tensor<4x8xbf16> -> tensor<1x1xbf16>
  return
}

// -----

// Tests that sum and max take integers, that empty axes are allowed, and
// that an unreduced `?` stays.
// CHECK-LABEL: func @int_and_empty
func.func @int_and_empty(%x: tensor<?x3xi64>) {
  // CHECK: kiln.reduce_sum %{{.+}} axes [1] : tensor<?x3xi64> -> tensor<?xi64>
  // CHECK-NEXT: kiln.reduce_max %{{.+}} axes [] : tensor<?x3xi64> -> tensor<?x3xi64>
  %0 = kiln.reduce_sum %x axes [1] : tensor<?x3xi64> -> tensor<?xi64>
  %1 = kiln.reduce_max %x axes [] : tensor<?x3xi64> -> tensor<?x3xi64>
  return
}
