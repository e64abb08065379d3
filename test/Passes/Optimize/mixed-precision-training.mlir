// RUN: kiln-opt %s -verify-diagnostics --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp16})'

// Tests that fp16 refuses a training module built without dynamic loss
// scaling (no loss_scale variable): small gradients would flush to zero.
// expected-error @+1 {{fp16 training needs dynamic loss scaling: the train spec's precision must be fp16_mixed when the training passes run (kilnc --precision=fp16 sets it)}}
module {
  func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}
