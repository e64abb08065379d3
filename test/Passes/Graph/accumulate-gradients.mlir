// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-accumulate-gradients | FileCheck --enable-var-scope %s

// Tests that with accumulate_steps = 4, @accumulate_step adds the dense
// gradient into w/gradient_sum and shifts the table's 8 ids and rows into
// buffers of 4 x 8, returning only the loss; @train_step, without
// arguments, returns the sum / 4 (zeroing the sum), the ids, and the rows / 4.
// CHECK-DAG: kiln.variable @"w/gradient_sum" : tensor<4x2xf32> init <zeros>
// CHECK-DAG: kiln.variable @"emb/gradient_ids" : tensor<32xi32> init <zeros>
// CHECK-DAG: kiln.variable @"emb/gradient_rows" : tensor<32x2xf32> init <zeros>
// CHECK-LABEL: func @accumulate_step
// CHECK-SAME: %[[X:[^:]+]]: tensor<8x4xf32> {kiln.name = "x"}, %[[IDS:[^:]+]]: tensor<8xi32> {kiln.name = "ids"}
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"})
// CHECK: %[[LOSS:.+]] = kiln.mean_squared_error
// CHECK: %[[DW:.+]] = kiln.matmul %[[X]], %[[DY:.+]] {transpose_a}
// CHECK: %[[SUM:.+]] = kiln.read @"w/gradient_sum"
// CHECK: %[[SUM1:.+]] = kiln.add %[[SUM]], %[[DW]]
// CHECK: kiln.assign @"w/gradient_sum", %[[SUM1]]
// CHECK: %[[OLDIDS:.+]] = kiln.read @"emb/gradient_ids"
// CHECK: %[[KEPTIDS:.+]] = kiln.slice %[[OLDIDS]] start [8] limit [32] step [1]
// CHECK: %[[NEWIDS:.+]] = kiln.concat %[[KEPTIDS]], %[[IDS]] axis = 0
// CHECK: kiln.assign @"emb/gradient_ids", %[[NEWIDS]]
// CHECK: %[[OLDROWS:.+]] = kiln.read @"emb/gradient_rows"
// CHECK: %[[KEPTROWS:.+]] = kiln.slice %[[OLDROWS]] start [8, 0] limit [32, 2] step [1, 1]
// CHECK: %[[NEWROWS:.+]] = kiln.concat %[[KEPTROWS]], %[[DY]] axis = 0
// CHECK: kiln.assign @"emb/gradient_rows", %[[NEWROWS]]
// CHECK: return %[[LOSS]] : tensor<f32>
// CHECK-LABEL: func @train_step()
// CHECK-SAME: -> (tensor<4x2xf32> {kiln.gradient = @w}, tensor<32xi32> {kiln.gradient_indices = @emb}, tensor<32x2xf32> {kiln.gradient_rows = @emb})
// CHECK: %[[S:.+]] = kiln.read @"w/gradient_sum"
// CHECK: %[[QUARTER:.+]] = kiln.constant dense<2.500000e-01> : tensor<4x2xf32>
// CHECK: %[[G:.+]] = kiln.mul %[[S]], %[[QUARTER]]
// CHECK: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<4x2xf32>
// CHECK: %[[Z:.+]] = kiln.mul %[[S]], %[[ZERO]]
// CHECK: kiln.assign @"w/gradient_sum", %[[Z]]
// CHECK: %[[I:.+]] = kiln.read @"emb/gradient_ids"
// CHECK: %[[R:.+]] = kiln.read @"emb/gradient_rows"
// CHECK: %[[RM:.+]] = kiln.mul %[[R]], %{{.+}} : tensor<32x2xf32>
// CHECK: return %[[G]], %[[I]], %[[RM]]
module attributes {kiln.train_spec = {loss = "loss", accumulate_steps = 4 : i64}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  kiln.variable @emb : tensor<10x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %ids: tensor<8xi32> {kiln.name = "ids"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %e = kiln.read @emb : tensor<10x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %r = kiln.gather %e[%ids] : (tensor<10x2xf32>, tensor<8xi32>) -> tensor<8x2xf32>
    %z = kiln.add %y, %r : tensor<8x2xf32>
    %l = kiln.mean_squared_error %z, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that without accumulation (accumulate_steps 1) nothing changes.
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%{{.+}}: tensor<8x4xf32>
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x2xf32> {kiln.gradient = @w})
// CHECK-NOT: accumulate_step
module attributes {kiln.train_spec = {loss = "loss", accumulate_steps = 1 : i64}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

