// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' | FileCheck --enable-var-scope %s

// Tests that a bias add and its activation become one fusion reading the
// matmul's result and the unbroadcast bias.
// CHECK-LABEL: func @bias_relu
// CHECK-SAME: (%[[X:.+]]: tensor<8x4xf32>, %[[W:.+]]: tensor<4x16xf32>, %[[B:.+]]: tensor<16xf32>)
func.func @bias_relu(%x: tensor<8x4xf32>, %w: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[MM:.+]] = kiln.matmul
  // CHECK-NEXT: %[[F:.+]] = kiln.fusion(%[[B]], %[[MM]]) : (tensor<16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<16xf32>, %[[A1:.+]]: tensor<8x16xf32>):
  // CHECK-NEXT: %[[BB:.+]] = kiln.broadcast %[[A0]]
  // CHECK-NEXT: %[[SUM:.+]] = kiln.add %[[A1]], %[[BB]]
  // CHECK-NEXT: %[[R:.+]] = kiln.relu %[[SUM]]
  // CHECK-NEXT: kiln.yield %[[R]] : tensor<8x16xf32>
  // CHECK: return %[[F]]
  %0 = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %1 = kiln.broadcast %b : tensor<16xf32> -> tensor<8x16xf32>
  %2 = kiln.add %0, %1 : tensor<8x16xf32>
  %3 = kiln.relu %2 : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// -----

// Tests that a value read after the group's last op is yielded too, and
// that splat constants are copied into the body instead of being inputs.
// CHECK-LABEL: func @multiple_results
func.func @multiple_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-NOT: kiln.constant
  // CHECK: %[[F:.+]]:2 = kiln.fusion(%{{.+}}) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x8xf32>):
  // CHECK-NEXT: %[[HALF:.+]] = kiln.constant dense<5.000000e-01>
  // CHECK-NEXT: %[[M:.+]] = kiln.mul %[[A]], %[[HALF]]
  // CHECK-NEXT: %[[T:.+]] = kiln.tanh %[[M]]
  // CHECK-NEXT: kiln.yield %[[M]], %[[T]]
  // CHECK: %[[S:.+]] = kiln.softmax %[[F]]#1
  // CHECK: return %[[F]]#0, %[[S]]
  %half = kiln.constant dense<0.5> : tensor<4x8xf32>
  %0 = kiln.mul %x, %half : tensor<4x8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  %2 = kiln.softmax %1 axis = 1 : tensor<4x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that an op does not join a group whose value something outside
// reads before it: the fusion could not move past that reader.
// CHECK-LABEL: func @reader_in_between
func.func @reader_in_between(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK-NOT: kiln.fusion
  // CHECK: kiln.exp
  // CHECK-NEXT: kiln.matmul
  // CHECK-NEXT: kiln.add
  %0 = kiln.exp %x : tensor<4x4xf32>
  %1 = kiln.matmul %0, %0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.add %0, %1 : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// Tests that two groups meeting at a binary op merge into one fusion, that
// a reduction of a group's only value ends the group, and that ops of
// another shape start their own.
// CHECK-LABEL: func @merge_and_shapes
func.func @merge_and_shapes(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<f32> {
  // CHECK: %[[S:.+]] = kiln.fusion(%{{.+}}, %{{.+}}) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<f32> {
  // CHECK: kiln.exp
  // CHECK-NEXT: kiln.log
  // CHECK-NEXT: kiln.add
  // CHECK-NEXT: %[[SUM:.+]] = kiln.reduce_sum
  // CHECK-NEXT: kiln.yield %[[SUM]] : tensor<f32>
  // CHECK: %[[G:.+]] = kiln.fusion(%[[S]]) : (tensor<f32>) -> tensor<f32> {
  // CHECK: kiln.sqrt
  // CHECK-NEXT: kiln.neg
  // CHECK-NEXT: kiln.yield
  // CHECK: return %[[G]]
  %0 = kiln.exp %x : tensor<4x8xf32>
  %1 = kiln.log %y : tensor<4x8xf32>
  %2 = kiln.add %0, %1 : tensor<4x8xf32>
  %3 = kiln.reduce_sum %2 axes [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %4 = kiln.sqrt %3 : tensor<f32>
  %5 = kiln.neg %4 : tensor<f32>
  return %5 : tensor<f32>
}

// -----

// Tests that a lone op stays as it is.
// CHECK-LABEL: func @single_op
func.func @single_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: kiln.fusion
  // CHECK: kiln.exp
  %0 = kiln.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a group does not grow past a write to a variable: the fused
// ops would move after it and read the new value.
kiln.variable @v : tensor<4xf32> init <zeros>
// CHECK-LABEL: func @assign_in_between
func.func @assign_in_between(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: kiln.fusion
  // CHECK: %[[OLD:.+]] = kiln.read @v
  // CHECK-NEXT: %[[SUM:.+]] = kiln.add %[[OLD]]
  // CHECK-NEXT: kiln.assign @v
  // CHECK-NEXT: kiln.exp %[[SUM]]
  %old = kiln.read @v : tensor<4xf32>
  %sum = kiln.add %old, %x : tensor<4xf32>
  kiln.assign @v, %x : tensor<4xf32>
  %e = kiln.exp %sum : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

// Tests that a reduction does not join a group whose values are also read
// elsewhere: they would have to be written out anyway.
// CHECK-LABEL: func @reduction_of_shared_value
func.func @reduction_of_shared_value(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  // CHECK: %[[F:.+]] = kiln.fusion
  // CHECK: kiln.yield
  // CHECK-NEXT: }
  // CHECK-NEXT: kiln.reduce_max %[[F]]
  %0 = kiln.exp %x : tensor<4x8xf32>
  %1 = kiln.neg %0 : tensor<4x8xf32>
  %2 = kiln.reduce_max %1 axes [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Tests that a one_hot of the labels joins the softmax cross-entropy
// gradient's fusion, reading the labels as an input: no one-hot tensor.
// CHECK-LABEL: func @softmax_cross_entropy_grad
// CHECK-SAME: (%[[L:.+]]: tensor<32xi64>, %[[P:.+]]: tensor<32x10xf32>)
func.func @softmax_cross_entropy_grad(%labels: tensor<32xi64>, %probs: tensor<32x10xf32>) -> tensor<32x10xf32> {
  // CHECK-NEXT: %[[F:.+]] = kiln.fusion(%[[L]], %[[P]]) : (tensor<32xi64>, tensor<32x10xf32>) -> tensor<32x10xf32> {
  // CHECK-NEXT: ^bb0(%[[A0:.+]]: tensor<32xi64>, %[[A1:.+]]: tensor<32x10xf32>):
  // CHECK-NEXT: %[[H:.+]] = kiln.one_hot %[[A0]]
  // CHECK-NEXT: %[[D:.+]] = kiln.sub %[[A1]], %[[H]]
  // CHECK: return %[[F]]
  %h = kiln.one_hot %labels : tensor<32xi64> -> tensor<32x10xf32>
  %d = kiln.sub %probs, %h : tensor<32x10xf32>
  %s = kiln.constant dense<0.03125> : tensor<32x10xf32>
  %g = kiln.mul %d, %s : tensor<32x10xf32>
  return %g : tensor<32x10xf32>
}

// -----

// Tests that a transpose starts a group its readers join (the fusion reads
// its input permuted), and never joins its operand's group: the tanh and
// the transpose of its result stay apart even where the shapes agree.
// CHECK-LABEL: func @transpose_starts_a_group
// CHECK: %[[T:.+]] = kiln.tanh %arg0 : tensor<4x4xf32>
// CHECK-NEXT: %[[F:.+]] = kiln.fusion(%[[T]], %arg1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<4x4xf32>, %[[B:.+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[P:.+]] = kiln.transpose %[[A]] [1, 0]
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[P]], %[[B]]
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[S]]
// CHECK-NEXT: kiln.yield %[[R]]
func.func @transpose_starts_a_group(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %t = kiln.tanh %x : tensor<4x4xf32>
  %p = kiln.transpose %t [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %s = kiln.add %p, %y : tensor<4x4xf32>
  %r = kiln.relu %s : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Tests that an op reading both a value and a transpose of it joins only
// one of their groups: merged, the transpose would read a value computed
// inside the fusion.
// CHECK-LABEL: func @transpose_of_a_member
// CHECK: %[[F1:.+]] = kiln.fusion(%arg0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: kiln.tanh
// CHECK: kiln.neg
// CHECK: %[[F2:.+]] = kiln.fusion(%[[F1]]) : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: kiln.transpose
// CHECK: kiln.add
func.func @transpose_of_a_member(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %t = kiln.tanh %x : tensor<4x4xf32>
  %n = kiln.neg %t : tensor<4x4xf32>
  %p = kiln.transpose %n [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %s = kiln.add %n, %p : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}
