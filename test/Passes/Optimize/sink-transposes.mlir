// RUN: kiln-opt %s -split-input-file --kiln-sink-transposes | FileCheck %s

// A channels-last bias and ReLU between a convolution's transpose back to
// NHWC and the next op's transpose to NCHW: the pair cancels, the bias is
// reshaped to [1, C, 1, 1] and broadcast over the channels-first result.
// CHECK-LABEL: func.func @bias_relu_between_pairs
// CHECK-SAME: (%[[CONV:.+]]: tensor<8x16x5x5xf32>, %[[BIAS:.+]]: tensor<16xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: %[[B:.+]] = kiln.reshape %[[BIAS]] : tensor<16xf32> -> tensor<1x16x1x1xf32>
// CHECK-NEXT: %[[BB:.+]] = kiln.broadcast %[[B]] : tensor<1x16x1x1xf32> -> tensor<8x16x5x5xf32>
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[CONV]], %[[BB]] : tensor<8x16x5x5xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[A]] : tensor<8x16x5x5xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[R]]
func.func @bias_relu_between_pairs(%conv: tensor<8x16x5x5xf32>, %bias: tensor<16xf32>) -> tensor<8x16x5x5xf32> {
  %t = kiln.transpose %conv [0, 2, 3, 1] : tensor<8x16x5x5xf32> -> tensor<8x5x5x16xf32>
  %b = kiln.broadcast %bias : tensor<16xf32> -> tensor<8x5x5x16xf32>
  %a = kiln.add %t, %b : tensor<8x5x5x16xf32>
  %r = kiln.relu %a : tensor<8x5x5x16xf32>
  %u = kiln.transpose %r [0, 3, 1, 2] : tensor<8x5x5x16xf32> -> tensor<8x16x5x5xf32>
  return %u : tensor<8x16x5x5xf32>
}

// -----

// A broadcast whose dimensions change order under the inverse permutation
// is transposed (it is the small operand); a splat constant is re-splatted;
// a comparison keeps its i1 element type. With no inverse below, one
// transpose remains, after the last elementwise op.
// CHECK-LABEL: func.func @reordered_broadcast_and_compare
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3xf32>, %[[V:.+]]: tensor<3x4xf32>)
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<2x4x3xf32>
// CHECK-DAG: %[[V3:.+]] = kiln.reshape %[[V]] : tensor<3x4xf32> -> tensor<1x3x4xf32>
// CHECK: %[[VT:.+]] = kiln.transpose %[[V3]] [0, 2, 1] : tensor<1x3x4xf32> -> tensor<1x4x3xf32>
// CHECK-NEXT: %[[VB:.+]] = kiln.broadcast %[[VT]] : tensor<1x4x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[S:.+]] = kiln.sub %[[X]], %[[VB]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[C:.+]] = kiln.compare gt, %[[S]], %[[ZERO]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[CT:.+]] = kiln.transpose %[[C]] [0, 2, 1] : tensor<2x4x3xi1> -> tensor<2x3x4xi1>
// CHECK-NEXT: return %[[CT]]
func.func @reordered_broadcast_and_compare(%x: tensor<2x4x3xf32>, %v: tensor<3x4xf32>) -> tensor<2x3x4xi1> {
  %zero = kiln.constant dense<0.0> : tensor<2x3x4xf32>
  %t = kiln.transpose %x [0, 2, 1] : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %b = kiln.broadcast %v : tensor<3x4xf32> -> tensor<2x3x4xf32>
  %s = kiln.sub %t, %b : tensor<2x3x4xf32>
  %c = kiln.compare gt, %s, %zero : tensor<2x3x4xf32>
  return %c : tensor<2x3x4xi1>
}

// -----

// Left alone: a transpose something else also reads (sinking it would add
// a transpose), an operand that is neither transposed, broadcast nor
// constant, and two transposes by different permutations.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[T:.+]] = kiln.transpose %{{.+}} [1, 0]
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[T]]
// CHECK: kiln.add %{{.+}}, %{{.+}} : tensor<4x6xf32>
// CHECK: kiln.transpose %{{.+}} [0, 2, 1]
// CHECK-NEXT: kiln.transpose %{{.+}} [2, 1, 0]
// CHECK-NEXT: kiln.mul
// CHECK: return
func.func @left_alone(%x: tensor<6x4xf32>, %y: tensor<4x6xf32>, %p: tensor<3x3x3xf32>, %q: tensor<3x3x3xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<3x3x3xf32>) {
  %t = kiln.transpose %x [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %e = kiln.exp %t : tensor<4x6xf32>
  %t2 = kiln.transpose %x [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %a = kiln.add %t2, %y : tensor<4x6xf32>
  %pt = kiln.transpose %p [0, 2, 1] : tensor<3x3x3xf32> -> tensor<3x3x3xf32>
  %qt = kiln.transpose %q [2, 1, 0] : tensor<3x3x3xf32> -> tensor<3x3x3xf32>
  %m = kiln.mul %pt, %qt : tensor<3x3x3xf32>
  return %e, %t, %a, %m : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<3x3x3xf32>
}

// -----

// A scalar's broadcast (PyTorch attention's scale on K^T) is the same
// broadcast to the untransposed shape: no reshape, no new value for CSE to
// miss.
// CHECK-LABEL: func.func @scalar_broadcast
// CHECK-SAME: (%[[K:.+]]: tensor<2x4x8xf32>, %[[S:.+]]: tensor<1xf32>)
// CHECK-NEXT: %[[B:.+]] = kiln.broadcast %[[S]] : tensor<1xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.mul %[[K]], %[[B]] : tensor<2x4x8xf32>
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[M]] [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT: return %[[T]]
func.func @scalar_broadcast(%k: tensor<2x4x8xf32>, %s: tensor<1xf32>) -> tensor<2x8x4xf32> {
  %t = kiln.transpose %k [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %b = kiln.broadcast %s : tensor<1xf32> -> tensor<2x8x4xf32>
  %m = kiln.mul %t, %b : tensor<2x8x4xf32>
  return %m : tensor<2x8x4xf32>
}
