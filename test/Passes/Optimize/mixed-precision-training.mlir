// RUN: kiln-opt %s -verify-diagnostics --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp16})'

// Tests that fp16 refuses a training module: without dynamic loss scaling
// small gradients would flush to zero in f16.
// expected-error @+1 {{fp16 training needs dynamic loss scaling, which kiln does not have yet: train with --precision=bf16 (the range of f32); fp16 is for inference (--inference-only)}}
module {
  func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}
