// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16})' | FileCheck %s --check-prefix=BF16
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp16})' | FileCheck %s --check-prefix=FP16
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp32})' | FileCheck %s --check-prefix=FP32
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision)' | FileCheck %s --check-prefix=SPEC
// RUN: not kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=fp8})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16},func.func(kiln-fuse-elementwise))' | FileCheck %s --check-prefix=FUSED

// Tests that every f32 product is marked (both operands f32), the
// elementwise ops are not, and fp32 marks nothing. Without an option the
// module's precision is its train spec's: none here, so fp32. With bf16,
// each product reads its inputs through one kiln.cast per value: an
// argument's right before its first product, the relu's (an op a fusion
// computes) right after it, read twice by one product. With fp16 (emulated
// on every CPU) the runtime rounds: no casts.
// BF16-LABEL: func.func @forward
// BF16-NEXT: %[[X:.+]] = kiln.cast %arg0 : tensor<8x16xf32> to tensor<8x16xbf16>
// BF16-NEXT: %[[W:.+]] = kiln.cast %arg1 : tensor<16x4xf32> to tensor<16x4xbf16>
// BF16-NEXT: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]] {kiln.compute_precision = bf16} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
// BF16-NEXT: %[[R:.+]] = kiln.relu %[[Y]] : tensor<8x4xf32>
// BF16-NEXT: %[[R16:.+]] = kiln.cast %[[R]] : tensor<8x4xf32> to tensor<8x4xbf16>
// BF16-NEXT: kiln.matmul %[[R16]], %[[R16]] {kiln.compute_precision = bf16, transpose_b} : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<8x8xf32>
// BF16-NEXT: return
// FP16-LABEL: func.func @forward
// FP16-NEXT: kiln.matmul %arg0, %arg1 {kiln.compute_precision = f16} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// FP16-NOT: kiln.cast
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

// Tests that a product reading a reshape of a value reads the reshape of
// the value's cast (one cast for both products; the f32 reshape, read by
// nothing now, is erased), and that the f32 value stays for its other
// reader. Fused, the cast is a second result of the tanh's kernel.
// BF16-LABEL: func.func @viewed
// BF16-NEXT: %[[T:.+]] = kiln.tanh %arg0 : tensor<8x16xf32>
// BF16-NEXT: %[[T16:.+]] = kiln.cast %[[T]] : tensor<8x16xf32> to tensor<8x16xbf16>
// BF16-NEXT: %[[V16:.+]] = kiln.reshape %[[T16]] : tensor<8x16xbf16> -> tensor<32x4xbf16>
// BF16-NOT: kiln.reshape %[[T]]
// BF16-NEXT: %[[W:.+]] = kiln.cast %arg1 : tensor<4x4xf32> to tensor<4x4xbf16>
// BF16-NEXT: kiln.matmul %[[V16]], %[[W]] {kiln.compute_precision = bf16} : (tensor<32x4xbf16>, tensor<4x4xbf16>) -> tensor<32x4xf32>
// BF16-NEXT: kiln.matmul %[[T16]], %[[T16]] {kiln.compute_precision = bf16, transpose_a}
// BF16-NEXT: kiln.neg %[[T]]
// FUSED-LABEL: func.func @viewed
// FUSED: %[[K:.+]]:2 = kiln.fusion(%arg0) : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xbf16>)
// FUSED: kiln.reshape %[[K]]#1 : tensor<8x16xbf16> -> tensor<32x4xbf16>
func.func @viewed(%x: tensor<8x16xf32>, %w: tensor<4x4xf32>) -> (tensor<32x4xf32>, tensor<16x16xf32>, tensor<8x16xf32>) {
  %t = kiln.tanh %x : tensor<8x16xf32>
  %v = kiln.reshape %t : tensor<8x16xf32> -> tensor<32x4xf32>
  %y = kiln.matmul %v, %w : (tensor<32x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
  %g = kiln.matmul %t, %t {transpose_a} : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %n = kiln.neg %t : tensor<8x16xf32>
  return %y, %g, %n : tensor<32x4xf32>, tensor<16x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that a transpose read by a product is cast right after it, and
// that fused, the transpose and the cast are one kernel reading the input
// permuted.
// BF16-LABEL: func.func @transposed
// BF16-NEXT: %[[P:.+]] = kiln.transpose %arg0 [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
// BF16-NEXT: %[[P16:.+]] = kiln.cast %[[P]] : tensor<8x16xf32> to tensor<8x16xbf16>
// FUSED-LABEL: func.func @transposed
// FUSED: kiln.fusion(%arg0) : (tensor<16x8xf32>) -> tensor<8x16xbf16>
// FUSED-NEXT: ^bb0(%[[A:.+]]: tensor<16x8xf32>):
// FUSED-NEXT: %[[P:.+]] = kiln.transpose %[[A]] [1, 0]
// FUSED-NEXT: %[[C:.+]] = kiln.cast %[[P]]
// FUSED-NEXT: kiln.yield %[[C]]
func.func @transposed(%x: tensor<16x8xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %p = kiln.transpose %x [1, 0] : tensor<16x8xf32> -> tensor<8x16xf32>
  %y = kiln.matmul %p, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Tests that a train spec's bf16_mixed marks the products without an option.
// SPEC: kiln.matmul %{{.+}}, %{{.+}} {kiln.compute_precision = bf16}
module attributes {kiln.train_spec = {loss = "l", precision = "bf16_mixed"}} {
  func.func @forward(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> (tensor<8x4xf32> {kiln.name = "l"}) {
    %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}

// -----

// Tests that bf16 marks the convolutions and their gradients that gain
// from it (their inputs stay f32: the runtime converts them as it lays them
// out): 4 or more input channels per group, 16 or more for a data
// gradient; one channel (an image's first layer) and an 8-channel data
// gradient stay f32. fp16 marks none (no fast f16 convolution on these
// CPUs).
// BF16-LABEL: func.func @convolutions
// BF16: kiln.conv %{{.+}}, %{{.+}} strides {{.+}} {kiln.compute_precision = bf16} : (tensor<2x16x8x8xf32>
// BF16: kiln.conv_backward_data %{{.+}} {kiln.compute_precision = bf16} : (tensor<2x4x8x8xf32>
// BF16: kiln.conv_backward_filter %{{.+}} {kiln.compute_precision = bf16} : (tensor<2x16x8x8xf32>
// BF16: kiln.conv %{{.+}}, %{{.+}} strides {{[^{]+}} : (tensor<2x1x8x8xf32>
// BF16: kiln.conv_backward_filter %{{.+}} strides {{[^{]+}} : (tensor<2x1x8x8xf32>
// BF16: kiln.conv %{{.+}}, %{{.+}} strides {{.+}} {kiln.compute_precision = bf16} : (tensor<2x8x8x8xf32>
// BF16: kiln.conv_backward_data %{{.+}} strides {{[^{]+}} : (tensor<2x4x8x8xf32>, tensor<4x8x3x3xf32>)
// FP16-LABEL: func.func @convolutions
// FP16-NOT: kiln.compute_precision
// FP16: return
func.func @convolutions(%x: tensor<2x16x8x8xf32>, %w: tensor<4x16x3x3xf32>, %dy: tensor<2x4x8x8xf32>,
                        %img: tensor<2x1x8x8xf32>, %w1: tensor<4x1x3x3xf32>,
                        %x8: tensor<2x8x8x8xf32>, %w8: tensor<4x8x3x3xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x16x8x8xf32>, tensor<4x16x3x3xf32>, tensor<2x4x8x8xf32>,
        tensor<4x1x3x3xf32>, tensor<2x4x8x8xf32>, tensor<2x8x8x8xf32>) {
  %y = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 1 : i64}
      : (tensor<2x16x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dx = kiln.conv_backward_data %dy, %w strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
      : (tensor<2x4x8x8xf32>, tensor<4x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %dw = kiln.conv_backward_filter %x, %dy strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
      : (tensor<2x16x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x16x3x3xf32>
  %y1 = kiln.conv %img, %w1 strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 1 : i64}
      : (tensor<2x1x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dw1 = kiln.conv_backward_filter %img, %dy strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
      : (tensor<2x1x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<4x1x3x3xf32>
  %y8 = kiln.conv %x8, %w8 strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 1 : i64}
      : (tensor<2x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<2x4x8x8xf32>
  %dx8 = kiln.conv_backward_data %dy, %w8 strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
      : (tensor<2x4x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<2x8x8x8xf32>
  return %y, %dx, %dw, %y1, %dw1, %y8, %dx8 : tensor<2x4x8x8xf32>, tensor<2x16x8x8xf32>, tensor<4x16x3x3xf32>,
      tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<2x4x8x8xf32>, tensor<2x8x8x8xf32>
}
