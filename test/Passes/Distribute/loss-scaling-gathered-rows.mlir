// RUN: kiln-opt %s --kiln-autodiff --kiln-insert-allreduce --kiln-expand-optimizer | FileCheck --enable-var-scope %s

// Tests fp16 loss scaling where the data-parallel replicas gather an
// embedding table's rows (lazy Adam): kiln-expand-optimizer takes the
// replicas' averaged check (the second result of the loss's bucket) as the
// step's finite flag, applies the gathered rows as they are (already divided
// by the scale before the gather: no second division), under that flag, and
// the check is no result of the step any more.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<f32> {kiln.name = "loss_scale"}, tensor<f32> {kiln.name = "skipped_step"}, tensor<f32> {kiln.name = "learning_rate"})
// CHECK: %[[REDUCED:.+]]:2 = kdist.wait %{{.+}} : tensor<f32>, tensor<f32>
// CHECK-NEXT: %[[ROWS:.+]]:2 = kdist.wait %{{.+}} : tensor<?xi32>, tensor<?x3xf32>
// CHECK-NEXT: %[[DIFF:.+]] = kiln.sub %[[REDUCED]]#1, %[[REDUCED]]#1 : tensor<f32>
// CHECK: %[[FINITE:.+]] = kiln.compare eq, %[[DIFF]]
// CHECK-NOT: kiln.mul %[[ROWS]]#1
// CHECK: kiln.sparse_apply adam %{{.+}}, [%{{.+}}, %{{.+}}], %[[ROWS]]#0, %[[ROWS]]#1, %{{.+}}, %{{.+}} when %[[FINITE]]
module attributes {kiln.train_spec = {loss = "loss", precision = "fp16_mixed", optimizer = {kind = "adam", sparse_updates = "lazy"}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
