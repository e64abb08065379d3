// RUN: kiln-opt %s -split-input-file --kiln-autodiff --kiln-insert-allreduce -verify-diagnostics

// Tests that lazy Adam with clipping is refused: the rows cannot be
// gathered (clipping squares them in kernels of static shapes) and a dense
// average would move rows with a zero gradient.
module attributes {kiln.train_spec = {loss = "loss", optimizer = {kind = "adam", sparse_updates = "lazy", clip_global_norm = 1.0 : f64}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  // expected-error @+1 {{'func.func' op cannot average the sparse gradient of @emb over replicas with lazy adam updates and clipping: rows would be gathered, which clipping cannot take yet, and a dense average would move rows with a zero gradient (--sparse-updates=dense)}}
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a bucket holds at least a byte.
// expected-error @+1 {{data-parallel training needs a bucket size >= 1 byte, got -5}}
module attributes {kiln.train_spec = {loss = "loss", strategy = {kind = "all_reduce", bucket_bytes = -5 : i64}}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
