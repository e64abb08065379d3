// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that the smallest train spec is a loss naming an output of @forward.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "loss"}}
// CHECK: func @forward
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"})
module attributes {kiln.train_spec = {loss = "loss"}} {
  func.func @forward(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %l = kiln.mean_squared_error %x, %y : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a train spec with every key, nested dictionaries included,
// round-trips (the printer sorts the keys).
// CHECK-LABEL: module attributes {kiln.train_spec = {
// CHECK-SAME: accumulate_steps = 2 : i64
// CHECK-SAME: batch_size = 32 : i64
// CHECK-SAME: checkpoint = {directory = "/tmp/ckpt", every_steps = 100 : i64, keep_last = 3 : i64}
// CHECK-SAME: label = "y"
// CHECK-SAME: loss = "xent"
// CHECK-SAME: optimizer = {beta1 = 9.000000e-01 : f64, beta2 = 5.000000e-01 : f64, clip_global_norm = 1.000000e+00 : f64, epsilon = 1.000000e-08 : f64, initial_accumulator = 1.000000e-01 : f64, kind = "adamw", learning_rate = 1.000000e-03 : f64, momentum = 0.000000e+00 : f64, nesterov = false,
// CHECK-SAME: schedule = {decay_steps = 1000 : i64, kind = "cosine_decay", min_lr = 0.000000e+00 : f64, warmup_steps = 10 : i64}
// CHECK-SAME: weight_decay = 1.000000e-02 : f64}
// CHECK-SAME: partitioner = {hash_embeddings = ["emb"], kind = "min_shard_bytes", max_shards = 8 : i64, min_shard_bytes = 1024 : i64, num_shards = 2 : i64, row_split = "mod"}
// CHECK-SAME: precision = "bf16_mixed"
// CHECK-SAME: remat = {kind = "memory_budget", memory_budget_bytes = 1073741824 : i64}
// CHECK-SAME: strategy = {bucket_bytes = 26214400 : i64, kind = "all_reduce"}
// CHECK-SAME: sync_mode = "sync"}}
module attributes {kiln.train_spec = {
    loss = "xent", label = "y", batch_size = 32 : i64, accumulate_steps = 2 : i64,
    precision = "bf16_mixed", sync_mode = "sync",
    optimizer = {kind = "adamw", learning_rate = 1.0e-3, momentum = 0.0,
                 nesterov = false, beta1 = 0.9, beta2 = 0.5,
                 epsilon = 1.0e-8, weight_decay = 0.01,
                 initial_accumulator = 0.1, clip_global_norm = 1.0,
                 schedule = {kind = "cosine_decay", warmup_steps = 10 : i64,
                             decay_steps = 1000 : i64, min_lr = 0.0}},
    strategy = {kind = "all_reduce", bucket_bytes = 26214400 : i64},
    partitioner = {kind = "min_shard_bytes", num_shards = 2 : i64,
                   min_shard_bytes = 1024 : i64, max_shards = 8 : i64, row_split = "mod",
                   hash_embeddings = ["emb"]},
    remat = {kind = "memory_budget", memory_budget_bytes = 1073741824 : i64},
    checkpoint = {directory = "/tmp/ckpt", every_steps = 100 : i64, keep_last = 3 : i64}}} {
  func.func @forward(%logits: tensor<8x10xf32> {kiln.name = "x"}, %y: tensor<8xi64> {kiln.name = "y"})
      -> (tensor<f32> {kiln.name = "xent"}) {
    %l = kiln.softmax_cross_entropy %logits, %y : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the string keys with a fixed set take each of their values.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", schedule = {kind = "constant"}}, partitioner = {kind = "none"}, precision = "fp32", remat = {kind = "none"}, strategy = {kind = "single"}, sync_mode = "async"}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", schedule = {kind = "constant"}}, partitioner = {kind = "none"}, precision = "fp32", remat = {kind = "none"}, strategy = {kind = "single"}, sync_mode = "async"}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that they take the remaining values too.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "momentum", nesterov = true, schedule = {kind = "linear_warmup"}}, partitioner = {kind = "fixed_shards"}, precision = "fp16_mixed", remat = {kind = "all"}, strategy = {kind = "parameter_server"}}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "momentum", nesterov = true, schedule = {kind = "linear_warmup"}}, partitioner = {kind = "fixed_shards"}, precision = "fp16_mixed", remat = {kind = "all"}, strategy = {kind = "parameter_server"}}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that the adam optimizer kind is accepted.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "adam"}}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "adam"}}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that the adagrad optimizer kind is accepted.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "adagrad"}}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "adagrad"}}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that the loss may be any of several outputs of @forward.
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "second"}}
// CHECK: func @forward
// CHECK-SAME: -> (tensor<f32> {kiln.name = "first"}, tensor<f32> {kiln.name = "second"})
module attributes {kiln.train_spec = {loss = "second"}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "first"}, tensor<f32> {kiln.name = "second"}) {
    return %x, %x : tensor<f32>, tensor<f32>
  }
}
