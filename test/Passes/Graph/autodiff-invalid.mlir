// RUN: kiln-opt %s -split-input-file --kiln-autodiff -verify-diagnostics

// expected-error @+1 {{kiln-autodiff needs a training specification (kiln.train_spec) on the module}}
module {
  func.func @forward() {
    return
  }
}

// -----

module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<3xf32> init <zeros>
  // expected-error @+1 {{'func.func' op expects the loss 'loss' to be a float scalar, got 'tensor<3xf32>'}}
  func.func @forward(%x: tensor<3xf32>) -> (tensor<3xf32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<3xf32>
    return %w : tensor<3xf32>
  }
}

// -----

module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<3xf32> init <zeros>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<3xf32>
    // A gradient op (a second derivative) has none.
    // expected-error @+1 {{'kiln.gelu_grad' op has no gradient rule, but the loss depends on it through a trainable variable}}
    %c = kiln.gelu_grad %w, %w approximation(exact) : tensor<3xf32>
    %l = kiln.reduce_sum %c axes [0] : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
