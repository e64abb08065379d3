// RUN: kiln-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(kiln-remat))'
// RUN: not kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-remat{policy=often}))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: 'func.func' op unknown recomputation policy 'often' (expected none, auto, sqrt or all)

// Tests that a budget below what recomputation reaches fails, naming the
// smallest peak (the 589,824 bytes of %x, %w and %big, none recomputable).
module attributes {kiln.train_spec = {loss = "l", remat = {kind = "memory_budget", memory_budget_bytes = 100000 : i64}}} {
  func.func @forward(%x: tensor<64x256xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  // expected-error @+1 {{cannot fit the memory budget of 100000 bytes in @train_step: recomputation reaches 589824 bytes at best (recomputing 0 values)}}
  func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<f32> {
    %big = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %s = kiln.reduce_sum %big axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
    %xs = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %r = kiln.add %s, %xs : tensor<f32>
    return %r : tensor<f32>
  }
}

// -----

// Tests that a budget policy without a budget is an error.
module attributes {kiln.train_spec = {loss = "l", remat = {kind = "memory_budget"}}} {
  func.func @forward(%x: tensor<64x256xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  // expected-error @+1 {{recomputation policy 'auto' needs a memory budget > 0, got 0}}
  func.func @train_step(%x: tensor<64x256xf32>) -> tensor<f32> {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}
