// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that in an embedding lookup each index selects a row of the table.
// CHECK-LABEL: func @embedding
// CHECK-SAME: (%[[T:[^:]+]]: tensor<10000x16xf32>, %[[I:[^:]+]]: tensor<32x4xi64>)
func.func @embedding(%table: tensor<10000x16xf32>, %ids: tensor<32x4xi64>) -> tensor<32x4x16xf32> {
  // CHECK-NEXT: %[[E:.+]] = kiln.gather %[[T]][%[[I]]] : (tensor<10000x16xf32>, tensor<32x4xi64>) -> tensor<32x4x16xf32>
  // CHECK-NEXT: return %[[E]]
  %e = kiln.gather %table[%ids] : (tensor<10000x16xf32>, tensor<32x4xi64>) -> tensor<32x4x16xf32>
  return %e : tensor<32x4x16xf32>
}

// -----

// Tests that a nonzero axis round-trips (and the default 0 is not printed).
// CHECK-LABEL: func @axis
func.func @axis(%table: tensor<5x6x7xi32>, %ids: tensor<3xi32>) {
  // CHECK: kiln.gather %{{.+}}[%{{.+}}] {axis = 1 : i64} : (tensor<5x6x7xi32>, tensor<3xi32>) -> tensor<5x3x7xi32>
  // CHECK-NEXT: kiln.gather %{{.+}}[%{{.+}}] : (tensor<5x6x7xi32>, tensor<3xi32>) -> tensor<3x6x7xi32>
  %0 = kiln.gather %table[%ids] {axis = 1 : i64} : (tensor<5x6x7xi32>, tensor<3xi32>) -> tensor<5x3x7xi32>
  %1 = kiln.gather %table[%ids] {axis = 0 : i64} : (tensor<5x6x7xi32>, tensor<3xi32>) -> tensor<3x6x7xi32>
  return
}

// -----

// Tests that scalar indices drop the gathered dimension.
// CHECK-LABEL: func @scalar_index
func.func @scalar_index(%table: tensor<5x6xbf16>, %id: tensor<i64>) {
  // CHECK: kiln.gather %{{.+}}[%{{.+}}] : (tensor<5x6xbf16>, tensor<i64>) -> tensor<6xbf16>
  %0 = kiln.gather %table[%id] : (tensor<5x6xbf16>, tensor<i64>) -> tensor<6xbf16>
  return
}
