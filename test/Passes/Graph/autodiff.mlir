// RUN: kiln-opt %s -split-input-file --kiln-autodiff | FileCheck --enable-var-scope %s

// Tests that a dense layer's weight gets x^T dy and its bias the batch sum
// of dy, returned after @forward's outputs and tagged with the variable.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x2xf32> {kiln.gradient = @w}, tensor<2xf32> {kiln.gradient = @b})
// CHECK: %[[Y:.+]] = kiln.add
// CHECK: %[[LOSS:.+]] = kiln.mean_squared_error %[[Y]], %[[T:.+]] :
// CHECK: %[[DIFF:.+]] = kiln.sub %[[Y]], %[[T]]
// CHECK: %[[DY:.+]] = kiln.mul %[[DIFF]],
// CHECK-DAG: %[[DW:.+]] = kiln.matmul %[[X:.+]], %[[DY]] {transpose_a}
// CHECK-DAG: %[[DBK:.+]] = kiln.reduce_sum %[[DY]] axes [0] {keep_dims}
// CHECK-DAG: %[[DB:.+]] = kiln.reshape %[[DBK]] : tensor<1x2xf32> -> tensor<2xf32>
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  kiln.variable @b : tensor<2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32>, %t: tensor<8x2xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %b = kiln.read @b : tensor<2xf32>
    %mm = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %bb = kiln.broadcast %b : tensor<2xf32> -> tensor<8x2xf32>
    %y = kiln.add %mm, %bb : tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an embedding table read only by gathers gets a sparse
// gradient: the flattened ids and one gradient row per id; two lookups of
// the same table are concatenated.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<10xi64> {kiln.gradient_indices = @emb}, tensor<10x3xf32> {kiln.gradient_rows = @emb}
// CHECK-NOT: kiln.one_hot
// CHECK-DAG: %[[IDS1:.+]] = kiln.reshape %[[A:.+]] : tensor<2x2xi64> -> tensor<4xi64>
// CHECK-DAG: %[[IDS:.+]] = kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<6xi64>, tensor<4xi64>) -> tensor<10xi64>
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<100x3xf32> init <zeros>
  func.func @forward(%a: tensor<2x2xi64>, %c: tensor<6xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<100x3xf32>
    %ga = kiln.gather %e[%a] : (tensor<100x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
    %gc = kiln.gather %e[%c] : (tensor<100x3xf32>, tensor<6xi64>) -> tensor<6x3xf32>
    %sa = kiln.reduce_sum %ga axes [0, 1, 2] : tensor<2x2x3xf32> -> tensor<f32>
    %sc = kiln.reduce_mean %gc axes [0, 1] : tensor<6x3xf32> -> tensor<f32>
    %l = kiln.add %sa, %sc : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a table also used by a matmul (tied embeddings) gets one dense
// gradient: the gather's rows scattered with one_hot^T x rows, plus the
// matmul's.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<5x3xf32> {kiln.gradient = @emb}
// CHECK: %[[HOT:.+]] = kiln.one_hot %arg0 : tensor<4xi64> -> tensor<4x5xf32>
// CHECK: kiln.matmul %[[HOT]], %{{.+}} {transpose_a} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<5x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi64>, %labels: tensor<4xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<5x3xf32>
    %h = kiln.gather %e[%ids] : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
    %logits = kiln.matmul %h, %e {transpose_b} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    %l = kiln.softmax_cross_entropy %logits, %labels : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that non-trainable variables, and branches that do not reach the
// loss, get no gradient (and no backward ops).
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3xf32> {kiln.name = "aux"}, tensor<3xf32> {kiln.gradient = @w})
// CHECK-NOT: kiln.gradient = @frozen
// CHECK: kiln.tanh
// CHECK-NOT: kiln.sub
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<3xf32> init <zeros>
  kiln.variable @frozen : tensor<3xf32> init <zeros> {trainable = false}
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {kiln.name = "loss"}, tensor<3xf32> {kiln.name = "aux"}) {
    %w = kiln.read @w : tensor<3xf32>
    %f = kiln.read @frozen : tensor<3xf32>
    %p = kiln.mul %w, %f : tensor<3xf32>
    %q = kiln.mul %p, %x : tensor<3xf32>
    %l = kiln.reduce_sum %q axes [0] : tensor<3xf32> -> tensor<f32>
    %aux = kiln.tanh %w : tensor<3xf32>
    return %l, %aux : tensor<f32>, tensor<3xf32>
  }
}

// -----

// Tests that no gradient flows through kiln.stop_gradient: y = w + stop(w)
// gives w the gradient through y's first operand alone (1/4 from the mean,
// not twice that), as TensorFlow's StopGradient does.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<4xf32> {kiln.gradient = @w}
// CHECK: %[[W:.+]] = kiln.read @w
// CHECK: %[[S:.+]] = kiln.stop_gradient %[[W]]
// CHECK: %[[Y:.+]] = kiln.add %[[W]], %[[S]]
// CHECK: %[[G:.+]] = kiln.mul
// CHECK-NOT: kiln.add %[[G]], %[[G]]
// CHECK: return %{{.+}}, %[[G]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4xf32>
    %s = kiln.stop_gradient %w : tensor<4xf32>
    %y = kiln.add %w, %s : tensor<4xf32>
    %l = kiln.reduce_mean %y axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
