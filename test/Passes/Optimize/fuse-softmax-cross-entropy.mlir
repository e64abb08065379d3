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


// -----

// Tests that a loss with an ignore_index takes its value from the weighted
// gradient op autodiff wrote for it (same logits, labels and ignore_index):
// the sum of its losses (0 at ignored labels) over the count of kept ones,
// right after it, and no loss op left.
// CHECK-LABEL: func @ignored_loss_from_gradient
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32>, %[[T:.+]]: tensor<4xi64>, %[[W:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[L:.+]], %[[G:.+]] = kiln.softmax_cross_entropy_grad_rows %[[X]], %[[T]] weights %[[W]] scale = 1.000000e+00 {ignore_index = -100 : i64}
// CHECK-NEXT: %[[IGNORED:.+]] = kiln.constant dense<-100> : tensor<4xi64>
// CHECK-NEXT: %[[KEPT:.+]] = kiln.compare ne, %[[T]], %[[IGNORED]] : tensor<4xi64>
// CHECK-NEXT: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.select %[[KEPT]], %[[ONE]], %[[ZERO]]
// CHECK-NEXT: %[[SUM:.+]] = kiln.reduce_sum %[[L]] axes [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: %[[COUNT:.+]] = kiln.reduce_sum %[[K]] axes [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: %[[MEAN:.+]] = kiln.div %[[SUM]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: return %[[MEAN]], %[[G]]
func.func @ignored_loss_from_gradient(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) -> (tensor<f32>, tensor<4x10xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %r, %g = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %g : tensor<f32>, tensor<4x10xf32>
}

// -----

// Tests that a loss with an ignore_index stays when a reader of the loss
// comes before the gradient op, or the gradient op ignores another label;
// fused with a softmax instead, the rows op takes the ignore_index and the
// loss is the sum of the losses over the count of kept labels.
// CHECK-LABEL: func @ignored_loss_left_or_with_softmax
// CHECK: kiln.softmax_cross_entropy %arg0, %arg1 {ignore_index = -100 : i64}
// CHECK: kiln.softmax_cross_entropy %arg3, %arg1 {ignore_index = 0 : i64}
// CHECK-NOT: kiln.softmax_cross_entropy %arg4
// CHECK: %[[L:.+]], %[[P:.+]] = kiln.softmax_cross_entropy_rows %arg4, %arg1 {ignore_index = 7 : i64}
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %[[L]] axes [0]
// CHECK: kiln.div %[[SUM]], %{{.+}} : tensor<f32>
// CHECK-NOT: kiln.softmax_cross_entropy %arg4
func.func @ignored_loss_left_or_with_softmax(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>,
                                             %y: tensor<4x10xf32>, %z: tensor<4x10xf32>)
    -> (tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %early = kiln.neg %l : tensor<f32>
  %r, %g = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  %ly = kiln.softmax_cross_entropy %y, %t {ignore_index = 0 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %ry, %gy = kiln.softmax_cross_entropy_grad_rows %y, %t weights %w scale = 1.0 {ignore_index = 1 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  %lz = kiln.softmax_cross_entropy %z, %t {ignore_index = 7 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %pz = kiln.softmax %z axis = 1 : tensor<4x10xf32>
  return %early, %g, %ly, %gy, %lz, %pz : tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>
}

// -----

// Tests that a plain loss's gradient, (softmax - one_hot) * c, stays apart
// when its softmax went into the rows op of a loss with an ignore_index of
// the same logits: folded into that op it would be held at 0 where the
// labels are ignored, which the plain loss does not do.
// CHECK-LABEL: func @plain_gradient_beside_ignoring_loss
// CHECK: kiln.softmax_cross_entropy_rows %arg0, %arg1 {ignore_index = -100 : i64}
// CHECK-NOT: softmax_cross_entropy_grad_rows
// CHECK: kiln.one_hot
// CHECK: kiln.sub
// CHECK: kiln.mul
func.func @plain_gradient_beside_ignoring_loss(%x: tensor<4x10xf32>, %t: tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>) {
  %c = kiln.constant dense<2.500000e-01> : tensor<4x10xf32>
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %h = kiln.one_hot %t : tensor<4xi64> -> tensor<4x10xf32>
  %d = kiln.sub %p, %h : tensor<4x10xf32>
  %g = kiln.mul %c, %d : tensor<4x10xf32>
  return %l, %g : tensor<f32>, tensor<4x10xf32>
}

// -----

// Tests that a loss with only a label smoothing takes its value from its
// weighted gradient op too: the mean of its losses (every label kept).
// CHECK-LABEL: func @smoothed_loss_from_gradient
// CHECK-NEXT: %[[L:.+]], %[[G:.+]] = kiln.softmax_cross_entropy_grad_rows %arg0, %arg1 weights %arg2 scale = 1.000000e+00 {label_smoothing = 1.000000e-01 : f64}
// CHECK-NEXT: %[[M:.+]] = kiln.reduce_mean %[[L]] axes [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT: return %[[M]], %[[G]]
func.func @smoothed_loss_from_gradient(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) -> (tensor<f32>, tensor<4x10xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {label_smoothing = 0.1 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %r, %g = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {label_smoothing = 0.1 : f64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %g : tensor<f32>, tensor<4x10xf32>
}

// -----

// Tests that a smoothed loss fused with the model's softmax gives the rows
// op its label smoothing, and that an explicit smoothing of 0 is the plain
// loss: its gradient is folded as any other.
// CHECK-LABEL: func @smoothed_rows_and_zero_smoothing
// CHECK: kiln.softmax_cross_entropy_rows %arg0, %arg1 {label_smoothing = 2.500000e-01 : f64}
// CHECK: kiln.softmax_cross_entropy_grad_rows %arg2, %arg1 scale = 2.500000e-01 : (tensor<4x10xf32>, tensor<4xi64>)
func.func @smoothed_rows_and_zero_smoothing(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %y: tensor<4x10xf32>)
    -> (tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {label_smoothing = 0.25 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
  %c = kiln.constant dense<2.500000e-01> : tensor<4x10xf32>
  %ly = kiln.softmax_cross_entropy %y, %t {label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %py = kiln.softmax %y axis = 1 : tensor<4x10xf32>
  %h = kiln.one_hot %t : tensor<4xi64> -> tensor<4x10xf32>
  %d = kiln.sub %py, %h : tensor<4x10xf32>
  %g = kiln.mul %c, %d : tensor<4x10xf32>
  return %l, %p, %ly, %g : tensor<f32>, tensor<4x10xf32>, tensor<f32>, tensor<4x10xf32>
}
