// RUN: kiln-opt %s --kiln-autodiff --cse --kiln-insert-allreduce | FileCheck --enable-var-scope %s

// Tests that one value returned as the gradient of two variables (two
// biases added to the same sum: their gradients are one reduction after
// CSE, as kilnc runs it before this pass) is averaged once, and both
// gradient results are that one average.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x2xf32> {kiln.gradient = @w}, tensor<2xf32> {kiln.gradient = @b1}, tensor<2xf32> {kiln.gradient = @b2})
// CHECK: %[[H:.+]] = kdist.all_reduce_start mean %[[LOSS:[^,]+]], %[[DB:[^,]+]], %[[DW:[^ ]+]] tag = 0 : tensor<f32>, tensor<2xf32>, tensor<4x2xf32>
// CHECK-NEXT: %[[R:.+]]:3 = kdist.wait %[[H]] : tensor<f32>, tensor<2xf32>, tensor<4x2xf32>
// CHECK-NEXT: return %[[R]]#0, %[[R]]#2, %[[R]]#1, %[[R]]#1 : tensor<f32>, tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "all_reduce", bucket_bytes = 1048576 : i64}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  kiln.variable @b1 : tensor<2xf32> init <zeros>
  kiln.variable @b2 : tensor<2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %b1 = kiln.read @b1 : tensor<2xf32>
    %b2 = kiln.read @b2 : tensor<2xf32>
    %c1 = kiln.broadcast %b1 : tensor<2xf32> -> tensor<8x2xf32>
    %y1 = kiln.add %h, %c1 : tensor<8x2xf32>
    %c2 = kiln.broadcast %b2 : tensor<2xf32> -> tensor<8x2xf32>
    %y = kiln.add %y1, %c2 : tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
