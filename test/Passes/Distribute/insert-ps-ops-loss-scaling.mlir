// RUN: kiln-opt %s --kiln-autodiff --kiln-insert-ps-ops --kiln-expand-optimizer | FileCheck %s

// Tests fp16 loss scaling with parameter servers: the scale and its counter
// stay with the worker (no placement); the backward pass starts from the
// scale; the step checks every gradient it pushes (their sums, dense and
// rows, minus themselves are 0) and pushes them as they are, times the
// scale (the runtime sends the scale with them and the servers divide; a
// skip marker instead where they are not finite); the scale moves as
// without servers; no optimizer update, step counter or learning rate is
// left (the servers apply the update); the step returns the loss, the next
// scale and whether it skipped.
// CHECK-LABEL: kiln.variable @w
// CHECK-SAME: kdist.placement
// CHECK-LABEL: kiln.variable @loss_scale : tensor<f32> init <constant dense<6.553600e+04> : tensor<f32>> {trainable = false}
// CHECK-NEXT: kiln.variable @"loss_scale/good_steps" : tensor<f32> init <zeros> {trainable = false}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "l"}, tensor<f32> {kiln.name = "loss_scale"}, tensor<f32> {kiln.name = "skipped_step"})
// CHECK: %[[SCALE:.*]] = kiln.read @loss_scale
// CHECK: %[[ROWS:.*]] = kiln.matmul %{{.*}} {transpose_b}
// CHECK-NEXT: kdist.ps_push_rows @emb, %arg0, %[[ROWS]]
// CHECK-NEXT: %[[GRAD:.*]] = kiln.matmul %{{.*}} {transpose_a}
// CHECK-NEXT: kdist.ps_push @w, %[[GRAD]]
// CHECK-NOT: kiln.read @loss_scale
// CHECK: %[[SUM:.*]] = kiln.reduce_sum %[[GRAD]]
// CHECK: %[[ROWSUM:.*]] = kiln.reduce_sum %[[ROWS]]
// CHECK: %[[TOTAL:.*]] = kiln.add %[[SUM]], %[[ROWSUM]]
// CHECK: %[[DIFF:.*]] = kiln.sub %[[TOTAL]], %[[TOTAL]]
// CHECK: %[[FINITE:.*]] = kiln.compare eq, %[[DIFF]]
// CHECK-NOT: kiln.div
// CHECK-NOT: kiln.assign @w
// CHECK-NOT: kiln.assign @emb
// CHECK: %[[HALF:.*]] = kiln.mul %[[SCALE]], %{{.*}}
// CHECK: %[[DOUBLE:.*]] = kiln.mul %[[SCALE]], %{{.*}}
// CHECK: %[[GROWN:.*]] = kiln.select %{{.*}}, %[[DOUBLE]], %[[SCALE]]
// CHECK: %[[NEXTSCALE:.*]] = kiln.select %[[FINITE]], %[[GROWN]], %[[HALF]]
// CHECK: kiln.assign @loss_scale, %[[NEXTSCALE]]
// CHECK: kiln.assign @"loss_scale/good_steps"
// CHECK: %[[SKIPPED:.*]] = kiln.select %[[FINITE]], %{{.*}}, %{{.*}}
// CHECK: return %{{.*}}, %[[NEXTSCALE]], %[[SKIPPED]] :
// CHECK-NOT: global_step
// CHECK-NOT: kiln.apply
module attributes {kiln.train_spec = {loss = "l", precision = "fp16_mixed",
    strategy = {kind = "parameter_server"},
    optimizer = {kind = "adam", learning_rate = 0.1 : f64}}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  kiln.variable @emb : tensor<10x4xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%ids: tensor<8xi64>) -> (tensor<f32> {kiln.name = "l"}) {
    %e = kiln.read @emb : tensor<10x4xf32>
    %x = kiln.gather %e[%ids] : (tensor<10x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.reduce_mean %y axes [0, 1] : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
