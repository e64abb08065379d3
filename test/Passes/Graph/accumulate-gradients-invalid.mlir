// RUN: kiln-opt %s -split-input-file -verify-diagnostics --kiln-autodiff --kiln-accumulate-gradients

// Tests that an accumulator's name may not be taken already.
// expected-error@+1 {{the model already has a variable named 'w/gradient_sum', which gradient accumulation needs}}
module attributes {kiln.train_spec = {loss = "loss", accumulate_steps = 2 : i64}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  kiln.variable @"w/gradient_sum" : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32> {kiln.name = "x"}, %t: tensor<8x2xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %y = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
