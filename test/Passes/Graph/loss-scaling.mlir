// RUN: kiln-opt %s --kiln-autodiff --kiln-expand-optimizer | FileCheck %s

// Tests dynamic loss scaling (train spec precision fp16_mixed): the backward
// pass starts from @loss_scale instead of 1; the gradients' finiteness
// (their sum minus itself is 0) gates every assign, the step counter's too;
// the gradient is divided by the scale before the update; the scale halves
// after a step that is not finite and doubles after 2000 that are; the step
// returns the next scale and whether it skipped.
// CHECK: kiln.variable @loss_scale : tensor<f32> init <constant dense<6.553600e+04> : tensor<f32>> {trainable = false}
// CHECK: kiln.variable @"loss_scale/good_steps" : tensor<f32> init <zeros> {trainable = false}
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {kiln.name = "loss_scale"}, tensor<f32> {kiln.name = "skipped_step"}, tensor<f32> {kiln.name = "learning_rate"})
// CHECK: %[[SCALE:.*]] = kiln.read @loss_scale
// CHECK: %[[SCALE2D:.*]] = kiln.reshape %[[SCALE]]
// CHECK: kiln.broadcast %[[SCALE2D]] : tensor<1x1xf32> -> tensor<8x2xf32>
// CHECK: %[[GRAD:.*]] = kiln.matmul %arg0, %{{.*}} {transpose_a}
// CHECK: %[[SUM:.*]] = kiln.reduce_sum %[[GRAD]]
// CHECK: %[[DIFF:.*]] = kiln.sub %[[SUM]], %[[SUM]]
// CHECK: %[[FINITE:.*]] = kiln.compare eq, %[[DIFF]]
// CHECK: %[[INVERSE:.*]] = kiln.div %{{.*}}, %[[SCALE]]
// CHECK: %[[UNSCALED:.*]] = kiln.mul %[[GRAD]], %{{.*}}
// CHECK: %[[STEP:.*]] = kiln.read @global_step
// CHECK: %[[NEXT:.*]] = kiln.add %[[STEP]]
// CHECK: %[[KEPT:.*]] = kiln.select %[[FINITE]], %[[NEXT]], %[[STEP]]
// CHECK: kiln.assign @global_step, %[[KEPT]]
// CHECK: %[[NEW:.*]] = kiln.apply_sgd %{{.*}}, %[[UNSCALED]]
// CHECK: %[[GATE:.*]] = kiln.broadcast %[[FINITE]] : tensor<i1> -> tensor<4x2xi1>
// CHECK: %[[W:.*]] = kiln.select %[[GATE]], %[[NEW]], %{{.*}}
// CHECK: kiln.assign @w, %[[W]]
// CHECK: %[[HALF:.*]] = kiln.mul %[[SCALE]], %{{.*}}
// CHECK: %[[DOUBLE:.*]] = kiln.mul %[[SCALE]], %{{.*}}
// CHECK: %[[GROWN:.*]] = kiln.select %{{.*}}, %[[DOUBLE]], %[[SCALE]]
// CHECK: %[[NEXTSCALE:.*]] = kiln.select %[[FINITE]], %[[GROWN]], %[[HALF]]
// CHECK: kiln.assign @loss_scale, %[[NEXTSCALE]]
// CHECK: kiln.assign @"loss_scale/good_steps"
// CHECK: %[[SKIPPED:.*]] = kiln.select %[[FINITE]], %{{.*}}, %{{.*}}
// CHECK: return %{{.*}}, %[[NEXTSCALE]], %[[SKIPPED]], %{{.*}}
module attributes {kiln.train_spec = {loss = "l", precision = "fp16_mixed", optimizer = {kind = "sgd", learning_rate = 0.1 : f64}}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.reduce_mean %y axes [0, 1] : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
