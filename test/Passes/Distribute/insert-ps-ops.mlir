// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-insert-ps-ops --kiln-expand-optimizer | FileCheck --enable-var-scope %s

// Tests that a dense variable is pulled once, at the top of @forward and
// @train_step, that its gradient is pushed right after it is
// computed, that the gradient results are gone and no optimizer update is
// left (the servers apply it), and that the placement records the
// partitioner.
// CHECK-LABEL: kiln.variable @w
// CHECK-SAME: kdist.placement = {kind = "dense", num_shards = 2 : i64, partitioner = "fixed_shards"}
// CHECK-LABEL: func @forward
// CHECK-NEXT: %[[W:.+]] = kdist.ps_pull @w : tensor<4x2xf32>
// CHECK-NOT: kiln.read
// CHECK: kiln.matmul %{{.+}}, %[[W]]
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"})
// CHECK-NEXT: kdist.ps_pull @w
// CHECK: %[[DW:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<8x4xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: kdist.ps_push @w, %[[DW]] : tensor<4x2xf32>
// CHECK-NOT: kiln.apply_sgd
// CHECK-NOT: kiln.assign
// CHECK: return %{{.+}} : tensor<f32>
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "fixed_shards", num_shards = 2 : i64, min_shard_bytes = 262144 : i64,
                   max_shard_bytes = 0 : i64, max_shards = 0 : i64, row_split = "div"}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a table read only by row gathers is pulled by rows and its
// sparse gradient pushed as ids and rows; a hash table the same way, with
// kind "hash"; rows split by mod as the spec says; a non-trainable variable
// stays with the worker. The two sparse gradients are the same value (the
// sum's gradient), pushed once per table.
// CHECK-LABEL: kiln.variable @emb
// CHECK-SAME: kdist.placement = {kind = "table", max_shards = 4 : i64, min_shard_bytes = 64 : i64, partitioner = "min_shard_bytes", row_split = "mod"}
// CHECK-LABEL: kiln.variable @ids_hash
// CHECK-SAME: kdist.placement = {kind = "hash", max_shards = 4 : i64, min_shard_bytes = 64 : i64, partitioner = "min_shard_bytes"}
// CHECK-LABEL: kiln.variable @scale
// CHECK-NOT: kdist.placement
// CHECK-LABEL: func @train_step
// CHECK-DAG: %[[E:.+]] = kdist.ps_pull_rows @emb[%{{.+}}] : (tensor<4xi32>) -> tensor<4x3xf32>
// CHECK-DAG: %[[H:.+]] = kdist.ps_pull_rows @ids_hash[%{{.+}}] : (tensor<4xi64>) -> tensor<4x3xf32>
// CHECK-DAG: kiln.read @scale
// CHECK-DAG: kdist.ps_push_rows @emb, %{{.+}}, %{{.+}} : tensor<4xi32>, tensor<4x3xf32>
// CHECK-DAG: kdist.ps_push_rows @ids_hash, %{{.+}}, %{{.+}} : tensor<4xi64>, tensor<4x3xf32>
// CHECK-NOT: kiln.gather
// CHECK: return %{{.+}} : tensor<f32>
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "min_shard_bytes", num_shards = 1 : i64, min_shard_bytes = 64 : i64,
                   max_shard_bytes = 0 : i64, max_shards = 4 : i64, row_split = "mod",
                   hash_embeddings = ["ids_hash"]}}} {
  kiln.variable @emb : tensor<10x3xf32> init <glorot_uniform, seed = 1>
  kiln.variable @ids_hash : tensor<1000x3xf32> init <normal(0.0, 0.1), seed = 2>
  kiln.variable @scale : tensor<3xf32> init <ones> {trainable = false}
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %keys: tensor<4xi64> {kiln.name = "keys"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %h = kiln.read @ids_hash : tensor<1000x3xf32>
    %hrows = kiln.gather %h[%keys] : (tensor<1000x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
    %sum = kiln.add %rows, %hrows : tensor<4x3xf32>
    %s = kiln.read @scale : tensor<3xf32>
    %sb = kiln.broadcast %s : tensor<3xf32> -> tensor<4x3xf32>
    %y = kiln.mul %sum, %sb : tensor<4x3xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that fixed_shards never makes more shards than rows, as
// TensorFlow's FixedShardsPartitioner.
// CHECK-LABEL: kiln.variable @w
// CHECK-SAME: kdist.placement = {kind = "dense", num_shards = 4 : i64, partitioner = "fixed_shards"}
// CHECK-LABEL: kiln.variable @b
// CHECK-SAME: kdist.placement = {kind = "dense", num_shards = 2 : i64, partitioner = "fixed_shards"}
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "fixed_shards", num_shards = 8 : i64}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  kiln.variable @b : tensor<2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %b = kiln.read @b : tensor<2xf32>
    %bb = kiln.broadcast %b : tensor<2xf32> -> tensor<8x2xf32>
    %z = kiln.add %y, %bb : tensor<8x2xf32>
    %l = kiln.mean_squared_error %z, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests max_shard_bytes: the placement keeps its size and shard limit, and
// no row split (a dense variable is split in contiguous blocks).
// CHECK-LABEL: kiln.variable @w
// CHECK-SAME: kdist.placement = {kind = "dense", max_shard_bytes = 16 : i64, max_shards = 3 : i64, partitioner = "max_shard_bytes"}
// CHECK-LABEL: func @train_step
// CHECK: kdist.ps_pull @w
// CHECK: kdist.ps_push @w
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "max_shard_bytes", max_shard_bytes = 16 : i64, max_shards = 3 : i64, row_split = "div"}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that without a partitioner a variable lives whole on one server, and
// that Adam's slots are not created on the worker: the servers keep them.
// CHECK-LABEL: kiln.variable @w
// CHECK-SAME: kdist.placement = {kind = "dense", partitioner = "none"}
// CHECK-NOT: kiln.variable
// CHECK-LABEL: func @train_step
// CHECK: kdist.ps_push @w
// CHECK-NOT: kiln.apply_adam
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"}, optimizer = {kind = "adam"}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests the order of pulls: whole variables and rows at the function's ids
// in one run at the top (the runtime sends a run as one request per
// server), rows at computed ids right after their ids.
// CHECK-LABEL: func @train_step
// CHECK-NEXT: kdist.ps_pull_rows @emb[%arg0]
// CHECK-NEXT: kdist.ps_pull @w
// CHECK: %[[IDS:.+]] = kiln.add %arg0
// CHECK-NEXT: kdist.ps_pull_rows @emb[%[[IDS]]]
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"}}} {
  kiln.variable @emb : tensor<10x3xf32> init <glorot_uniform, seed = 1>
  kiln.variable @w : tensor<3x3xf32> init <glorot_uniform, seed = 2>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %w = kiln.read @w : tensor<3x3xf32>
    %y = kiln.matmul %rows, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
    %next = kiln.add %ids, %ids : tensor<4xi32>
    %more = kiln.gather %e[%next] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %sum = kiln.add %y, %more : tensor<4x3xf32>
    %l = kiln.mean_squared_error %sum, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that embedding bags on a fixed and a hash table pull their lists'
// rows with `padded` (the servers give -1 a zero row) in the run at the top,
// next to a plain gather of the same table, that each bag then combines its
// pulled rows by the weights (1/n for mean, rsqrt(n) for sqrtn) where it
// stood, and that the bags' sparse gradients are pushed with the padding
// ids in them (the client drops them).
// CHECK-LABEL: func @forward
// CHECK-NEXT: kdist.ps_pull_rows @items[%{{.+}}] : (tensor<4xi64>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[W:.+]] = kdist.ps_pull_rows @items[%[[WATCHED:.+]]] {padded} : (tensor<4x5xi64>) -> tensor<4x5x3xf32>
// CHECK-NEXT: %[[T:.+]] = kdist.ps_pull_rows @tags[%{{.+}}] {padded} : (tensor<4x2xi64>) -> tensor<4x2x3xf32>
// CHECK: %[[PAD:.+]] = kiln.constant dense<-1> : tensor<4x5xi64>
// CHECK-NEXT: kiln.compare ne, %[[WATCHED]], %[[PAD]] : tensor<4x5xi64>
// CHECK: kiln.div
// CHECK: %[[WW:.+]] = kiln.broadcast %{{.+}} : tensor<4x5x1xf32> -> tensor<4x5x3xf32>
// CHECK-NEXT: %[[WR:.+]] = kiln.mul %[[W]], %[[WW]] : tensor<4x5x3xf32>
// CHECK-NEXT: kiln.reduce_sum %[[WR]] axes [1] : tensor<4x5x3xf32> -> tensor<4x3xf32>
// CHECK: kiln.rsqrt
// CHECK: %[[TW:.+]] = kiln.broadcast %{{.+}} : tensor<4x2x1xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: %[[TR:.+]] = kiln.mul %[[T]], %[[TW]] : tensor<4x2x3xf32>
// CHECK-NEXT: kiln.reduce_sum %[[TR]] axes [1] : tensor<4x2x3xf32> -> tensor<4x3xf32>
// CHECK-NOT: kiln.embedding_bag
// CHECK-LABEL: func @train_step
// CHECK-DAG: kdist.ps_push_rows @items, %{{.+}}, %{{.+}} : tensor<24xi64>, tensor<24x3xf32>
// CHECK-DAG: kdist.ps_push_rows @tags, %{{.+}}, %{{.+}} : tensor<8xi64>, tensor<8x3xf32>
// CHECK-NOT: kiln.embedding_bag
// CHECK: return %{{.+}} : tensor<f32>
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "fixed_shards", num_shards = 2 : i64, min_shard_bytes = 64 : i64,
                   max_shard_bytes = 0 : i64, max_shards = 0 : i64, row_split = "div",
                   hash_embeddings = ["tags"]}}} {
  kiln.variable @items : tensor<10x3xf32> init <glorot_uniform, seed = 1>
  kiln.variable @tags : tensor<1000x3xf32> init <normal(0.0, 0.1), seed = 2>
  func.func @forward(%watched: tensor<4x5xi64> {kiln.name = "watched"}, %item: tensor<4xi64> {kiln.name = "item"},
                     %tagged: tensor<4x2xi64> {kiln.name = "tagged"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @items : tensor<10x3xf32>
    %t = kiln.read @tags : tensor<1000x3xf32>
    %w = kiln.embedding_bag %e[%watched] combiner = mean : (tensor<10x3xf32>, tensor<4x5xi64>) -> tensor<4x3xf32>
    %i = kiln.gather %e[%item] : (tensor<10x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
    %g = kiln.embedding_bag %t[%tagged] combiner = sqrtn : (tensor<1000x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
    %wi = kiln.mul %w, %i : tensor<4x3xf32>
    %s = kiln.add %wi, %g : tensor<4x3xf32>
    %l = kiln.reduce_sum %s axes [0, 1] : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
