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

// -----

// Tests that gather_elements round-trips, its result shaped like the indices.
// CHECK-LABEL: func @gather_elements
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[I:[^:]+]]: tensor<4x2xi64>)
func.func @gather_elements(%x: tensor<4x8xf32>, %idx: tensor<4x2xi64>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %[[G:.+]] = kiln.gather_elements %[[X]][%[[I]]] axis = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  // CHECK-NEXT: return %[[G]]
  %g = kiln.gather_elements %x[%idx] axis = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// Tests that the indices may be longer than the input along the axis (an
// element picked many times) and shorter in the other dimensions, and that
// integer, bf16 and `?` shapes pass through.
// CHECK-LABEL: func @gather_elements_shapes
func.func @gather_elements_shapes(%t: tensor<3x4xi32>, %i: tensor<5x2xi32>,
                                  %b: tensor<2x?x3xbf16>, %j: tensor<2x4x1xi64>) {
  // CHECK: kiln.gather_elements %{{.+}}[%{{.+}}] axis = 0 : (tensor<3x4xi32>, tensor<5x2xi32>) -> tensor<5x2xi32>
  // CHECK-NEXT: kiln.gather_elements %{{.+}}[%{{.+}}] axis = 1 : (tensor<2x?x3xbf16>, tensor<2x4x1xi64>) -> tensor<2x4x1xbf16>
  %0 = kiln.gather_elements %t[%i] axis = 0 : (tensor<3x4xi32>, tensor<5x2xi32>) -> tensor<5x2xi32>
  %1 = kiln.gather_elements %b[%j] axis = 1 : (tensor<2x?x3xbf16>, tensor<2x4x1xi64>) -> tensor<2x4x1xbf16>
  return
}
