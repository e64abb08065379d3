// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the train spec is a dictionary.
// expected-error @+1 {{'kiln.train_spec' must be a dictionary, got "sgd"}}
module attributes {kiln.train_spec = "sgd"} {}

// -----

// Tests that the train spec lives on a module.
// expected-error @+1 {{'kiln.train_spec' belongs on a module}}
func.func @f() attributes {kiln.train_spec = {loss = "l"}} {
  return
}

// -----

// Tests that unknown top-level keys are rejected (a typo is not ignored).
// expected-error @+1 {{train spec has unknown key 'batchsize'}}
module attributes {kiln.train_spec = {loss = "l", batchsize = 32 : i64}} {}

// -----

// Tests that unknown nested keys are reported with their path.
// expected-error @+1 {{train spec has unknown key 'optimizer.schedule.gamma'}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", schedule = {kind = "constant", gamma = 0.5}}}} {}

// -----

// Tests that integer keys are i64.
// expected-error @+1 {{train spec key 'batch_size' must be an i64, got 32 : i32}}
module attributes {kiln.train_spec = {loss = "l", batch_size = 32 : i32}} {}

// -----

// Tests that float keys are floats, not integers.
// expected-error @+1 {{train spec key 'optimizer.learning_rate' must be a float, got 1 : i64}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", learning_rate = 1}}} {}

// -----

// Tests that bool keys are bools.
// expected-error @+1 {{train spec key 'optimizer.nesterov' must be a bool, got 1 : i64}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "momentum", nesterov = 1}}} {}

// -----

// Tests that string keys are strings.
// expected-error @+1 {{train spec key 'checkpoint.directory' must be a string, got 7 : i64}}
module attributes {kiln.train_spec = {loss = "l", checkpoint = {directory = 7}}} {}

// -----

// Tests that list keys hold only strings.
// expected-error @+1 {{train spec key 'partitioner.hash_embeddings' must be a list of strings, got ["emb", 3]}}
module attributes {kiln.train_spec = {loss = "l", partitioner = {kind = "none", hash_embeddings = ["emb", 3]}}} {}

// -----

// Tests that nested sections are dictionaries.
// expected-error @+1 {{train spec key 'optimizer' must be a dictionary, got "adam"}}
module attributes {kiln.train_spec = {loss = "l", optimizer = "adam"}} {}

// -----

// Tests that enumerated keys take one of their values.
// expected-error @+1 {{train spec key 'optimizer.kind' is 'rmsprop', expected one of: sgd, momentum, adam, adamw, adagrad}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "rmsprop"}}} {}

// -----

// Tests that a nested enumerated key lists its own choices.
// expected-error @+1 {{train spec key 'optimizer.schedule.kind' is 'step', expected one of: constant, linear_warmup, cosine_decay}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", schedule = {kind = "step"}}}} {}

// -----

// Tests that the precision takes one of its values.
// expected-error @+1 {{train spec key 'precision' is 'fp8', expected one of: fp32, bf16_mixed, fp16_mixed}}
module attributes {kiln.train_spec = {loss = "l", precision = "fp8"}} {}

// -----

// Tests that the sync mode takes one of its values.
// expected-error @+1 {{train spec key 'sync_mode' is 'semi', expected one of: sync, async}}
module attributes {kiln.train_spec = {loss = "l", sync_mode = "semi"}} {}

// -----

// Tests that the distribution strategy takes one of its values.
// expected-error @+1 {{train spec key 'strategy.kind' is 'ring', expected one of: single, all_reduce, parameter_server}}
module attributes {kiln.train_spec = {loss = "l", strategy = {kind = "ring"}}} {}

// -----

// Tests that the partitioner takes one of its values.
// expected-error @+1 {{train spec key 'partitioner.kind' is 'hash', expected one of: none, fixed_shards, min_shard_bytes, max_shard_bytes}}
module attributes {kiln.train_spec = {loss = "l", partitioner = {kind = "hash"}}} {}

// -----

// Tests that rematerialization takes one of its values.
// expected-error @+1 {{train spec key 'remat.kind' is 'some', expected one of: none, memory_budget, all, sqrt}}
module attributes {kiln.train_spec = {loss = "l", remat = {kind = "some"}}} {}

// -----

// Tests that a train spec names its loss.
// expected-error @+1 {{train spec needs a 'loss'}}
module attributes {kiln.train_spec = {batch_size = 32 : i64}} {
  func.func @forward(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that a train spec needs the forward function.
// expected-error @+1 {{train spec needs a 'forward' function}}
module attributes {kiln.train_spec = {loss = "l"}} {
  func.func @predict(%x: tensor<f32>) -> (tensor<f32> {kiln.name = "l"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that the loss names an output of @forward, not an input.
// expected-error @+1 {{train spec loss 'l' is not an output of @forward}}
module attributes {kiln.train_spec = {loss = "l"}} {
  func.func @forward(%x: tensor<f32> {kiln.name = "l"}) -> (tensor<f32> {kiln.name = "y"}) {
    return %x : tensor<f32>
  }
}

// -----

// Tests that a float is finite and not negative, a learning rate positive:
// a .mlir spec is checked as the graph importer checks its own.
// expected-error @+1 {{train spec key 'optimizer.learning_rate' must be a finite number > 0, got nan}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "sgd", learning_rate = 0x7FF8000000000000 : f64}}} {}

// -----

// expected-error @+1 {{train spec key 'optimizer.beta1' must be a finite number >= 0, got -5.000000e-01}}
module attributes {kiln.train_spec = {loss = "l", optimizer = {kind = "adam", beta1 = -0.5 : f64}}} {}
