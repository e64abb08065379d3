// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-insert-allreduce | FileCheck --enable-var-scope %s
// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-insert-allreduce=bucket-bytes=1024 | FileCheck --enable-var-scope --check-prefix=ONE %s

// Tests that the gradients are bucketed in the order backward produces them
// (the last layer's first), the loss riding in the first bucket: with 32-byte
// buckets, the loss (4 bytes) and dw2 (24) share bucket 0, started right
// after dw2 is computed and before dw1's matmul; dw1 (48) is bucket 1 alone.
// Both waits come just before the return, whose loss and gradients are the
// waits' results.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x3xf32> {kiln.gradient = @w1}, tensor<3x2xf32> {kiln.gradient = @w2})
// CHECK: %[[LOSS:.+]] = kiln.mean_squared_error
// CHECK: %[[DW2:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<8x3xf32>, tensor<8x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %[[H0:.+]] = kdist.all_reduce_start mean %[[LOSS]], %[[DW2]] tag = 0 : tensor<f32>, tensor<3x2xf32>
// CHECK: %[[DW1:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[H1:.+]] = kdist.all_reduce_start mean %[[DW1]] tag = 1 : tensor<4x3xf32>
// CHECK-NEXT: %[[R0:.+]]:2 = kdist.wait %[[H0]] : tensor<f32>, tensor<3x2xf32>
// CHECK-NEXT: %[[R1:.+]] = kdist.wait %[[H1]] : tensor<4x3xf32>
// CHECK-NEXT: return %[[R0]]#0, %[[R1]], %[[R0]]#1 : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>

// Tests that buckets large enough for everything give one all-reduce,
// started after the last gradient.
// ONE-LABEL: func @train_step
// ONE: %[[DW1:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// ONE-NEXT: %[[H:.+]] = kdist.all_reduce_start mean %{{.+}}, %{{.+}}, %[[DW1]] tag = 0
// ONE-NOT: kdist.all_reduce_start
// ONE: kdist.wait %[[H]]
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "all_reduce", bucket_bytes = 32 : i64}}} {
  kiln.variable @w1 : tensor<4x3xf32> init <glorot_uniform, seed = 1>
  kiln.variable @w2 : tensor<3x2xf32> init <glorot_uniform, seed = 2>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w1 = kiln.read @w1 : tensor<4x3xf32>
    %h = kiln.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
    %a = kiln.relu %h : tensor<8x3xf32>
    %w2 = kiln.read @w2 : tensor<3x2xf32>
    %y = kiln.matmul %a, %w2 : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an embedding table's sparse gradient (ids and rows) becomes
// the table's dense gradient before it is averaged: the rows scattered by
// id (one_hot(ids)^T x rows), built right after the rows exist, with the
// ids result gone.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<10x3xf32> {kiln.gradient = @emb})
// CHECK: %[[DENSE:.+]] = kiln.scatter_add_rows %{{.+}}[%{{.+}}] : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<10x3xf32>
// CHECK: kdist.all_reduce_start mean %{{.+}}, %[[DENSE]] tag = 0 : tensor<f32>, tensor<10x3xf32>
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "all_reduce", bucket_bytes = 1048576 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a large table's sparse gradient is gathered rather than made
// dense: 8 replicas' ids and rows (8 x 64 bytes) are less than twice the
// table (24000 bytes). It starts right after its rows exist and is waited
// for after the buckets (the loss alone here); the results keep the
// gradient's two halves, now of every replica.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<?xi32> {kiln.gradient_indices = @big}, tensor<?x3xf32> {kiln.gradient_rows = @big})
// CHECK-NOT: kiln.one_hot
// CHECK: %[[H0:.+]] = kdist.all_reduce_start mean %{{.+}} tag = 0 : tensor<f32>
// CHECK: %[[HS:.+]] = kdist.sparse_all_reduce_start mean %[[IDS:.+]], %[[ROWS:.+]] tag = 1 : tensor<4xi32>, tensor<4x3xf32>
// CHECK: %[[L:.+]] = kdist.wait %[[H0]] : tensor<f32>
// CHECK-NEXT: %[[G:.+]]:2 = kdist.wait %[[HS]] : tensor<?xi32>, tensor<?x3xf32>
// CHECK-NEXT: return %[[L]], %[[G]]#0, %[[G]]#1
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "all_reduce", bucket_bytes = 1048576 : i64}}} {
  kiln.variable @big : tensor<2000x3xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @big : tensor<2000x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<2000x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that lazy Adam gathers even a small table's rows: a dense average
// would move the rows no replica looked up.
// CHECK-LABEL: func @train_step
// CHECK: kdist.sparse_all_reduce_start mean
module attributes {kiln.train_spec = {loss = "loss", optimizer = {kind = "adam", sparse_updates = "lazy"}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests fp16 loss scaling with gathered rows: each replica checks its own
// rows (their sum minus itself: 0, or NaN) and divides them by the scale
// before they are gathered; the check is a result the replicas average with
// the loss, which kiln-expand-optimizer adds to its finite check.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<?xi32> {kiln.gradient_indices = @emb}, tensor<?x3xf32> {kiln.gradient_rows = @emb, kiln.loss_scale_unscaled}, tensor<f32> {kiln.loss_scale_rows_check})
// CHECK: %[[SCALE:.+]] = kiln.read @loss_scale : tensor<f32>
// CHECK: %[[INVERSE:.+]] = kiln.div %{{.+}}, %[[SCALE]] : tensor<f32>
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %[[ROWS:[^ ]+]] axes [0, 1] : tensor<4x3xf32> -> tensor<f32>
// CHECK-NEXT: %[[CHECK:.+]] = kiln.sub %[[SUM]], %[[SUM]] : tensor<f32>
// CHECK-NEXT: %[[H0:.+]] = kdist.all_reduce_start mean %{{.+}}, %[[CHECK]] tag = 0 : tensor<f32>, tensor<f32>
// CHECK-NEXT: %[[BY:.+]] = kiln.broadcast %[[INVERSE]] : tensor<f32> -> tensor<4x3xf32>
// CHECK-NEXT: %[[UNSCALED:.+]] = kiln.mul %[[ROWS]], %[[BY]] : tensor<4x3xf32>
// CHECK-NEXT: kdist.sparse_all_reduce_start mean %{{.+}}, %[[UNSCALED]] tag = 1
// CHECK: %[[REDUCED:.+]]:2 = kdist.wait %[[H0]] : tensor<f32>, tensor<f32>
// CHECK: return %[[REDUCED]]#0, %{{.+}}, %{{.+}}, %[[REDUCED]]#1
module attributes {kiln.train_spec = {loss = "loss", precision = "fp16_mixed", optimizer = {kind = "adam", sparse_updates = "lazy"}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a model trained by one replica is left alone.
// CHECK-LABEL: func @train_step
// CHECK-NOT: kdist
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "single", bucket_bytes = 32 : i64}}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
