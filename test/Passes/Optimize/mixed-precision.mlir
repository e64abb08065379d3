// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16})' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp16})' | FileCheck %s --check-prefix=FP16
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp32})' | FileCheck %s --check-prefix=FP32
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision)' | FileCheck %s --check-prefix=SPEC
// RUN: not kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp8})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Tests that every f32 product is marked (both operands f32), the
// elementwise ops are not, and fp32 marks nothing. Without an option the
// module's precision is its train spec's: none here, so fp32.
// BF16-LABEL: func.func @forward
// BF16: kiln.matmul %arg0, %arg1 {kiln.compute_precision = bf16}
// BF16: kiln.matmul %{{.*}}, %{{.*}} {kiln.compute_precision = bf16, transpose_b}
// BF16-NEXT: return
// FP16: kiln.matmul %arg0, %arg1 {kiln.compute_precision = f16}
// FP32-NOT: kiln.compute_precision
// SPEC-LABEL: func.func @forward
// SPEC-NOT: kiln.compute_precision
// SPEC-LABEL: func.func @forward
// UNKNOWN: error: unknown precision 'fp8' (expected fp32, bf16 or fp16)
func.func @forward(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x8xf32> {
  %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = kiln.relu %y : tensor<8x4xf32>
  %g = kiln.matmul %r, %r {transpose_b} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  return %g : tensor<8x8xf32>
}

// -----

// Tests that a train spec's bf16_mixed marks the products without an option.
// SPEC: kiln.matmul %arg0, %arg1 {kiln.compute_precision = bf16}
module attributes {kiln.train_spec = {loss = "l", precision = "bf16_mixed"}} {
  func.func @forward(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> (tensor<8x4xf32> {kiln.name = "l"}) {
    %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}
