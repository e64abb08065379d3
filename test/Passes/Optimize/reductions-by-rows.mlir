// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-reductions-by-rows))' | FileCheck --enable-var-scope %s

// Tests that a sum to a convolution's channels reads its input with the
// channels first: a sum with one row per channel, reshaped back; without
// keep_dims, no reshape.
// CHECK-LABEL: func @bias_gradient
// CHECK-SAME: (%[[G:.+]]: tensor<2x3x4x5xf32>)
// CHECK: %[[T:.+]] = kiln.transpose %[[G]] [1, 0, 2, 3] : tensor<2x3x4x5xf32> -> tensor<3x2x4x5xf32>
// CHECK: %[[S:.+]] = kiln.reduce_sum %[[T]] axes [1, 2, 3] : tensor<3x2x4x5xf32> -> tensor<3xf32>
// CHECK: %[[B:.+]] = kiln.reshape %[[S]] : tensor<3xf32> -> tensor<1x3x1x1xf32>
// CHECK: %[[T2:.+]] = kiln.transpose %[[G]] [2, 0, 1, 3] : tensor<2x3x4x5xf32> -> tensor<4x2x3x5xf32>
// CHECK: %[[S2:.+]] = kiln.reduce_sum %[[T2]] axes [1, 2, 3] : tensor<4x2x3x5xf32> -> tensor<4xf32>
// CHECK: return %[[B]], %[[S2]]
func.func @bias_gradient(%g: tensor<2x3x4x5xf32>) -> (tensor<1x3x1x1xf32>, tensor<4xf32>) {
  %b = kiln.reduce_sum %g axes [0, 2, 3] {keep_dims} : tensor<2x3x4x5xf32> -> tensor<1x3x1x1xf32>
  %c = kiln.reduce_sum %g axes [0, 1, 3] : tensor<2x3x4x5xf32> -> tensor<4xf32>
  return %b, %c : tensor<1x3x1x1xf32>, tensor<4xf32>
}

// -----

// Tests what stays: the first axis kept (already rows), the last kept (a
// dense layer's bias gradient, summed along its rows), two axes kept, an
// axis of one element, and a dynamic shape.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: kiln.transpose
// CHECK-COUNT-5: kiln.reduce_sum %arg
// CHECK-NOT: kiln.transpose
func.func @left_alone(%g: tensor<2x3x4x5xf32>, %d: tensor<64x256xf32>, %one: tensor<2x1x4xf32>, %dyn: tensor<?x3x4xf32>) -> (tensor<2xf32>, tensor<1x256xf32>, tensor<3x4xf32>, tensor<1xf32>, tensor<3xf32>) {
  %a = kiln.reduce_sum %g axes [1, 2, 3] : tensor<2x3x4x5xf32> -> tensor<2xf32>
  %b = kiln.reduce_sum %d axes [0] {keep_dims} : tensor<64x256xf32> -> tensor<1x256xf32>
  %c = kiln.reduce_sum %g axes [0, 3] : tensor<2x3x4x5xf32> -> tensor<3x4xf32>
  %e = kiln.reduce_sum %one axes [0, 2] : tensor<2x1x4xf32> -> tensor<1xf32>
  %f = kiln.reduce_sum %dyn axes [0, 2] : tensor<?x3x4xf32> -> tensor<3xf32>
  return %a, %b, %c, %e, %f : tensor<2xf32>, tensor<1x256xf32>, tensor<3x4xf32>, tensor<1xf32>, tensor<3xf32>
}
