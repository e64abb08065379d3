// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-softmax-cross-entropy))' | FileCheck --enable-var-scope %s

// Tests that a loss and the softmax of its logits (the gradient's, here
// also a second one CSE left) become one op at the place of the first, the
// loss the mean of its positions' losses, every softmax its probabilities.
// CHECK-LABEL: func @loss_and_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32>, %[[T:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[L:.+]], %[[P:.+]] = kiln.softmax_cross_entropy_rows %[[X]], %[[T]] : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
// CHECK-NEXT: %[[M:.+]] = kiln.reduce_mean %[[L]] axes [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: %[[N:.+]] = kiln.neg %[[P]]
// CHECK-NEXT: return %[[M]], %[[P]], %[[N]]
func.func @loss_and_softmax(%x: tensor<4x10xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>, tensor<4x10xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %q = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %n = kiln.neg %q : tensor<4x10xf32>
  return %l, %p, %n : tensor<f32>, tensor<4x10xf32>, tensor<4x10xf32>
}

// -----

// Tests that logits of rank 3 average over both leading dimensions, and
// that a softmax before the loss puts the fused op there.
// CHECK-LABEL: func @tokens
// CHECK-NEXT: %[[L:.+]], %[[P:.+]] = kiln.softmax_cross_entropy_rows %arg0, %arg1 : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3x5xf32>)
// CHECK-NEXT: %[[M:.+]] = kiln.reduce_mean %[[L]] axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
// CHECK-NEXT: %[[E:.+]] = kiln.exp %[[P]]
// CHECK-NEXT: return %[[M]], %[[E]]
func.func @tokens(%x: tensor<2x3x5xf32>, %t: tensor<2x3xi32>) -> (tensor<f32>, tensor<2x3x5xf32>) {
  %p = kiln.softmax %x axis = 2 : tensor<2x3x5xf32>
  %e = kiln.exp %p : tensor<2x3x5xf32>
  %l = kiln.softmax_cross_entropy %x, %t : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> tensor<f32>
  return %l, %e : tensor<f32>, tensor<2x3x5xf32>
}

// -----

// Tests what stays: a loss with no softmax beside it, a softmax along
// another axis, bf16 logits, and a softmax computed before the labels are
// (the fused op could not read them there).
// CHECK-LABEL: func @left_alone
// CHECK-NOT: softmax_cross_entropy_rows
// CHECK: kiln.softmax_cross_entropy %arg0, %arg1
// CHECK: kiln.softmax %arg0 axis = 0
// CHECK: kiln.softmax_cross_entropy %arg2, %arg1
// CHECK: kiln.softmax %arg2 axis = 1
// CHECK: kiln.softmax %arg3 axis = 1
// CHECK: kiln.add
// CHECK: kiln.softmax_cross_entropy %arg3, %{{.+}}
// CHECK-NOT: softmax_cross_entropy_rows
func.func @left_alone(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %h: tensor<4x10xbf16>, %y: tensor<4x10xf32>)
    -> (tensor<f32>, tensor<4x10xf32>, tensor<bf16>, tensor<4x10xbf16>, tensor<4x10xf32>, tensor<f32>) {
  %l = kiln.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p0 = kiln.softmax %x axis = 0 : tensor<4x10xf32>
  %lh = kiln.softmax_cross_entropy %h, %t : (tensor<4x10xbf16>, tensor<4xi64>) -> tensor<bf16>
  %ph = kiln.softmax %h axis = 1 : tensor<4x10xbf16>
  %py = kiln.softmax %y axis = 1 : tensor<4x10xf32>
  %t2 = kiln.add %t, %t : tensor<4xi64>
  %ly = kiln.softmax_cross_entropy %y, %t2 : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %l, %p0, %lh, %ph, %py, %ly : tensor<f32>, tensor<4x10xf32>, tensor<bf16>, tensor<4x10xbf16>, tensor<4x10xf32>, tensor<f32>
}

// -----

// Tests that a softmax only its gradient reads, (softmax - one_hot(labels))
// * c with a splat constant c (as autodiff writes it), goes into the op
// that computes the loss: one softmax_cross_entropy_grad_rows, the softmax
// never stored, the one-hot, subtraction and product gone.
// CHECK-LABEL: func @loss_and_gradient
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32>, %[[T:.+]]: tensor<4xi64>)
// CHECK-NEXT: %[[L:.+]], %[[G:.+]] = kiln.softmax_cross_entropy_grad_rows %[[X]], %[[T]] scale = 2.500000e-01 : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
// CHECK-NEXT: %[[M:.+]] = kiln.reduce_mean %[[L]] axes [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: return %[[M]], %[[G]]
func.func @loss_and_gradient(%x: tensor<4x10xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>) {
  %c = kiln.constant dense<2.500000e-01> : tensor<4x10xf32>
  %l = kiln.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %h = kiln.one_hot %t : tensor<4xi64> -> tensor<4x10xf32>
  %d = kiln.sub %p, %h : tensor<4x10xf32>
  %g = kiln.mul %c, %d : tensor<4x10xf32>
  return %l, %g : tensor<f32>, tensor<4x10xf32>
}

// -----

// Tests that the gradient stays apart when the softmax has another reader
// (the model's probabilities output), when the scale is not a constant, and
// when the one-hot is of other labels.
// CHECK-LABEL: func @gradient_left_apart
// CHECK-NOT: softmax_cross_entropy_grad_rows
// CHECK: kiln.softmax_cross_entropy_rows %arg0, %arg1
// CHECK: kiln.softmax_cross_entropy_rows %arg3, %arg1
// CHECK: kiln.softmax_cross_entropy_rows %arg4, %arg1
// CHECK-NOT: softmax_cross_entropy_grad_rows
func.func @gradient_left_apart(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %s: tensor<4x10xf32>,
                               %y: tensor<4x10xf32>, %z: tensor<4x10xf32>, %u: tensor<4xi64>)
    -> (tensor<f32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>) {
  %c = kiln.constant dense<2.500000e-01> : tensor<4x10xf32>
  %l = kiln.softmax_cross_entropy %x, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %h = kiln.one_hot %t : tensor<4xi64> -> tensor<4x10xf32>
  %d = kiln.sub %p, %h : tensor<4x10xf32>
  %g = kiln.mul %d, %c : tensor<4x10xf32>
  %ly = kiln.softmax_cross_entropy %y, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %py = kiln.softmax %y axis = 1 : tensor<4x10xf32>
  %dy = kiln.sub %py, %h : tensor<4x10xf32>
  %gy = kiln.mul %dy, %s : tensor<4x10xf32>
  %lz = kiln.softmax_cross_entropy %z, %t : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %pz = kiln.softmax %z axis = 1 : tensor<4x10xf32>
  %hu = kiln.one_hot %u : tensor<4xi64> -> tensor<4x10xf32>
  %dz = kiln.sub %pz, %hu : tensor<4x10xf32>
  %gz = kiln.mul %dz, %c : tensor<4x10xf32>
  return %l, %p, %g, %ly, %gy, %lz, %gz : tensor<f32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>
}

