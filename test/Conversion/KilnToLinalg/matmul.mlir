// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that a 2-D matmul is linalg.matmul accumulating into a zero-filled
// result.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x16xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: %[[R:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Tests that transpose_a and transpose_b transpose the operands (K x M to
// M x K, N x K to K x N) before the product.
// CHECK-LABEL: func @matmul_transposed
// CHECK-SAME: (%[[A:.+]]: tensor<8x4xf32>, %[[B:.+]]: tensor<16x8xf32>)
// CHECK: %[[AT:.+]] = linalg.transpose ins(%[[A]] : tensor<8x4xf32>) outs(%{{.+}} : tensor<4x8xf32>) permutation = [1, 0]
// CHECK: %[[BT:.+]] = linalg.transpose ins(%[[B]] : tensor<16x8xf32>) outs(%{{.+}} : tensor<8x16xf32>) permutation = [1, 0]
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[R:.+]] = linalg.matmul ins(%[[AT]], %[[BT]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @matmul_transposed(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = kiln.matmul %a, %b {transpose_a, transpose_b} : (tensor<8x4xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// Tests that a batched matmul collapses the batch dimensions (2 x 3 = 6) of
// both operands, uses linalg.batch_matmul and reshapes the product back.
// CHECK-LABEL: func @batch_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4x8xf32>, %[[B:.+]]: tensor<2x3x8x5xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A1:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2, 3]] : tensor<2x3x4x8xf32> into tensor<192xf32>
// CHECK-NEXT: %[[A3:.+]] = tensor.expand_shape %[[A1]] {{\[}}[0, 1, 2]] output_shape [6, 4, 8] : tensor<192xf32> into tensor<6x4x8xf32>
// CHECK: %[[B1:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1, 2, 3]] : tensor<2x3x8x5xf32> into tensor<240xf32>
// CHECK-NEXT: %[[B3:.+]] = tensor.expand_shape %[[B1]] {{\[}}[0, 1, 2]] output_shape [6, 8, 5] : tensor<240xf32> into tensor<6x8x5xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<6x4x5xf32>)
// CHECK: %[[P:.+]] = linalg.batch_matmul ins(%[[A3]], %[[B3]] : tensor<6x4x8xf32>, tensor<6x8x5xf32>) outs(%[[INIT]] : tensor<6x4x5xf32>)
// CHECK: %[[P1:.+]] = tensor.collapse_shape %[[P]] {{\[}}[0, 1, 2]] : tensor<6x4x5xf32> into tensor<120xf32>
// CHECK-NEXT: %[[R:.+]] = tensor.expand_shape %[[P1]] {{\[}}[0, 1, 2, 3]] output_shape [2, 3, 4, 5] : tensor<120xf32> into tensor<2x3x4x5xf32>
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @batch_matmul(%a: tensor<2x3x4x8xf32>, %b: tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Tests that a matrix rhs shared by every batch (transposed first) is
// broadcast over the batch, reading (k, n) at every batch index, before
// linalg.batch_matmul; a rank-3 lhs needs no reshape.
// CHECK-DAG: #[[$SHARED:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @batch_matmul_shared_rhs
// CHECK-SAME: (%[[A:.+]]: tensor<6x4x8xf32>, %[[B:.+]]: tensor<5x8xf32>)
// CHECK: %[[BT:.+]] = linalg.transpose ins(%[[B]] : tensor<5x8xf32>) outs(%{{.+}} : tensor<8x5xf32>) permutation = [1, 0]
// CHECK: %[[B3:.+]] = linalg.generic {indexing_maps = [#[[$SHARED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[BT]] : tensor<8x5xf32>) outs(%{{.+}} : tensor<6x8x5xf32>)
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[R:.+]] = linalg.batch_matmul ins(%[[A]], %[[B3]] : tensor<6x4x8xf32>, tensor<6x8x5xf32>) outs(%[[INIT]] : tensor<6x4x5xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @batch_matmul_shared_rhs(%a: tensor<6x4x8xf32>, %b: tensor<5x8xf32>) -> tensor<6x4x5xf32> {
  %0 = kiln.matmul %a, %b {transpose_b} : (tensor<6x4x8xf32>, tensor<5x8xf32>) -> tensor<6x4x5xf32>
  return %0 : tensor<6x4x5xf32>
}

// -----

// Tests that an i32 matmul accumulates in i32 into a zero-filled i32 result,
// with nothing to round.
// CHECK-LABEL: func @matmul_i32
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xi32>, %[[B:.+]]: tensor<8x16xi32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<4x16xi32>)
// CHECK: %[[R:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xi32>, tensor<8x16xi32>) outs(%[[INIT]] : tensor<4x16xi32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @matmul_i32(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) -> tensor<4x16xi32> {
  %0 = kiln.matmul %a, %b : (tensor<4x8xi32>, tensor<8x16xi32>) -> tensor<4x16xi32>
  return %0 : tensor<4x16xi32>
}

// -----

// Tests that a bf16 matmul accumulates in f32 (linalg.matmul widens its
// bf16 inputs to the f32 result) and rounds the product to bf16 once.
// CHECK-LABEL: func @matmul_bf16
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xbf16>, %[[B:.+]]: tensor<8x16xbf16>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4x16xf32>)
// CHECK: %[[P:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[P]] : tensor<4x16xf32>) outs(%{{.+}} : tensor<4x16xbf16>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @matmul_bf16(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<4x16xbf16> {
  %0 = kiln.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  return %0 : tensor<4x16xbf16>
}
