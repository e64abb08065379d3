// RUN: kiln-opt %s -split-input-file --canonicalize | FileCheck --enable-var-scope %s

// Tests that a reduction over no axes is its operand, with or without
// keep_dims.
// CHECK-LABEL: func @empty_axes
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[I:[^:]+]]: tensor<3xi32>)
func.func @empty_axes(%x: tensor<4x8xf32>, %i: tensor<3xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi32>) {
  // CHECK-NEXT: return %[[X]], %[[X]], %[[I]]
  %0 = kiln.reduce_sum %x axes [] : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = kiln.reduce_mean %x axes [] {keep_dims} : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = kiln.reduce_max %i axes [] : tensor<3xi32> -> tensor<3xi32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi32>
}

// -----

// Tests that real reductions stay, even over a size-1 axis.
// CHECK-LABEL: func @real_reductions
func.func @real_reductions(%x: tensor<4x1xf32>) -> (tensor<4xf32>, tensor<4x1xf32>) {
  // CHECK-NEXT: %[[S:.+]] = kiln.reduce_sum %{{.+}} axes [1] : tensor<4x1xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[M:.+]] = kiln.reduce_max %{{.+}} axes [0] {keep_dims} : tensor<4x1xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: %[[B:.+]] = kiln.broadcast %[[M]]
  // CHECK-NEXT: return %[[S]], %[[B]]
  %0 = kiln.reduce_sum %x axes [1] : tensor<4x1xf32> -> tensor<4xf32>
  %1 = kiln.reduce_max %x axes [0] {keep_dims} : tensor<4x1xf32> -> tensor<1x1xf32>
  %2 = kiln.broadcast %1 : tensor<1x1xf32> -> tensor<4x1xf32>
  return %0, %2 : tensor<4xf32>, tensor<4x1xf32>
}

// -----

// Tests that an empty reduction with a more static result is kept: it
// carries shape information.
// CHECK-LABEL: func @empty_axes_refining
func.func @empty_axes_refining(%x: tensor<?x8xf32>) -> tensor<4x8xf32> {
  // CHECK: kiln.reduce_sum %{{.+}} axes [] : tensor<?x8xf32> -> tensor<4x8xf32>
  %0 = kiln.reduce_sum %x axes [] : tensor<?x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
