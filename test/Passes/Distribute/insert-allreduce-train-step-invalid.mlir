// RUN: kiln-opt %s -split-input-file --kiln-insert-allreduce -verify-diagnostics

// kiln-insert-allreduce's errors on train steps written by hand (what
// kiln-autodiff never makes).

// Tests that fp16 loss scaling with gathered rows needs the scale variable
// kiln-autodiff adds (a train step written without it).
module attributes {kiln.train_spec = {loss = "loss", precision = "fp16_mixed", optimizer = {kind = "adam", sparse_updates = "lazy"}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  // expected-error @+1 {{'func.func' op fp16 training needs the 'loss_scale' variable kiln-autodiff adds}}
  func.func @train_step(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}, tensor<4xi32> {kiln.gradient_indices = @emb}, tensor<4x3xf32> {kiln.gradient_rows = @emb}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l, %ids, %t : tensor<f32>, tensor<4xi32>, tensor<4x3xf32>
  }
}

// -----

// Tests that a sparse gradient of a size known only at run time is refused
// (kiln-autodiff makes static ones; the replicas average only those).
module attributes {kiln.train_spec = {loss = "loss", optimizer = {kind = "adam", sparse_updates = "lazy"}, strategy = {kind = "all_reduce", bucket_bytes = 1024 : i64}}} {
  kiln.variable @emb : tensor<10x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi32> {kiln.name = "ids"}, %t: tensor<4x3xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<10x3xf32>
    %rows = kiln.gather %e[%ids] : (tensor<10x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
    %l = kiln.mean_squared_error %rows, %t : tensor<4x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  // expected-error @+1 {{'func.func' op returns a sparse gradient of @emb of shape 'tensor<?x3xf32>': the replicas can average only static shapes}}
  func.func @train_step(%ids: tensor<4xi32> {kiln.name = "ids"}, %rows: tensor<?x3xf32> {kiln.name = "rows"}, %l: tensor<f32> {kiln.name = "l"}) -> (tensor<f32> {kiln.name = "loss"}, tensor<4xi32> {kiln.gradient_indices = @emb}, tensor<?x3xf32> {kiln.gradient_rows = @emb}) {
    return %l, %ids, %rows : tensor<f32>, tensor<4xi32>, tensor<?x3xf32>
  }
}
