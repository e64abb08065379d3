// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that a bag of ids per example combines to one row per example.
// CHECK-LABEL: func @bag
// CHECK-SAME: (%[[T:[^:]+]]: tensor<1000x8xf32>, %[[I:[^:]+]]: tensor<32x5xi64>)
func.func @bag(%table: tensor<1000x8xf32>, %ids: tensor<32x5xi64>) -> tensor<32x8xf32> {
  // CHECK-NEXT: %[[E:.+]] = kiln.embedding_bag %[[T]][%[[I]]] combiner = mean : (tensor<1000x8xf32>, tensor<32x5xi64>) -> tensor<32x8xf32>
  // CHECK-NEXT: return %[[E]]
  %e = kiln.embedding_bag %table[%ids] combiner = mean : (tensor<1000x8xf32>, tensor<32x5xi64>) -> tensor<32x8xf32>
  return %e : tensor<32x8xf32>
}

// -----

// Tests every combiner, i32 ids, nested batch dimensions and a rank-1 table.
// CHECK-LABEL: func @combiners
func.func @combiners(%table: tensor<50x2x3xbf16>, %ids: tensor<4x6x3xi32>, %w: tensor<50xf32>, %one: tensor<7xi64>) {
  // CHECK: kiln.embedding_bag %{{.+}}[%{{.+}}] combiner = sum : (tensor<50x2x3xbf16>, tensor<4x6x3xi32>) -> tensor<4x6x2x3xbf16>
  // CHECK-NEXT: kiln.embedding_bag %{{.+}}[%{{.+}}] combiner = sqrtn : (tensor<50xf32>, tensor<7xi64>) -> tensor<f32>
  %0 = kiln.embedding_bag %table[%ids] combiner = sum : (tensor<50x2x3xbf16>, tensor<4x6x3xi32>) -> tensor<4x6x2x3xbf16>
  %1 = kiln.embedding_bag %w[%one] combiner = sqrtn : (tensor<50xf32>, tensor<7xi64>) -> tensor<f32>
  return
}
