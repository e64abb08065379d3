// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-insert-ps-ops -verify-diagnostics

// Tests that a hash table read other than by row gathers is refused.
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "none", hash_embeddings = ["w"]}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    // expected-error @+1 {{hash embedding @w is read by 'kiln.matmul': only row gathers (kiln.gather axis 0) and kiln.embedding_bag can read a hash table}}
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that global-norm clipping is refused.
// expected-error @+1 {{parameter-server training cannot clip by global norm yet: the norm needs every server's gradients (drop clip_global_norm)}}
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    optimizer = {kind = "sgd", clip_global_norm = 1.0}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a hash table must be a variable.
// expected-error @+1 {{hash embedding @nothing is not a variable}}
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "parameter_server"},
    partitioner = {kind = "none", hash_embeddings = ["nothing"]}}} {
  kiln.variable @w : tensor<4x2xf32> init <glorot_uniform, seed = 1>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
