// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that a plain matrix product round-trips.
// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[X:[^:]+]]: tensor<32x784xf32>, %[[W:[^:]+]]: tensor<784x128xf32>)
func.func @matmul(%x: tensor<32x784xf32>, %w: tensor<784x128xf32>) -> tensor<32x128xf32> {
  // CHECK-NEXT: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]] : (tensor<32x784xf32>, tensor<784x128xf32>) -> tensor<32x128xf32>
  // CHECK-NEXT: return %[[Y]]
  %y = kiln.matmul %x, %w : (tensor<32x784xf32>, tensor<784x128xf32>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}

// -----

// Tests that the transpose flags round-trip, alone and together.
// CHECK-LABEL: func @transposed
func.func @transposed(%a: tensor<8x4xf32>, %b: tensor<6x8xf32>) {
  // CHECK: kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: kiln.matmul %{{.+}}, %{{.+}} {transpose_b} : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x6xf32>
  // CHECK-NEXT: kiln.matmul %{{.+}}, %{{.+}} {transpose_a, transpose_b} : (tensor<8x4xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  %0 = kiln.matmul %a, %a {transpose_a} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = kiln.matmul %b, %b {transpose_b} : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x6xf32>
  %2 = kiln.matmul %a, %b {transpose_a, transpose_b} : (tensor<8x4xf32>, tensor<6x8xf32>) -> tensor<4x6xf32>
  return
}

// -----

// Tests that batched products take equal batch dimensions, or a matrix rhs
// shared by every batch.
// CHECK-LABEL: func @batched
func.func @batched(%q: tensor<2x3x5x7xbf16>, %k: tensor<2x3x9x7xbf16>, %w: tensor<7x16xbf16>) {
  // CHECK: kiln.matmul %{{.+}}, %{{.+}} {transpose_b} : (tensor<2x3x5x7xbf16>, tensor<2x3x9x7xbf16>) -> tensor<2x3x5x9xbf16>
  // CHECK-NEXT: kiln.matmul %{{.+}}, %{{.+}} : (tensor<2x3x5x7xbf16>, tensor<7x16xbf16>) -> tensor<2x3x5x16xbf16>
  %0 = kiln.matmul %q, %k {transpose_b} : (tensor<2x3x5x7xbf16>, tensor<2x3x9x7xbf16>) -> tensor<2x3x5x9xbf16>
  %1 = kiln.matmul %q, %w : (tensor<2x3x5x7xbf16>, tensor<7x16xbf16>) -> tensor<2x3x5x16xbf16>
  return
}

// -----

// Tests that `?` dimensions are accepted, and that the result may keep a `?`
// the rule knows (kiln-infer-shapes refines it) or be static where the
// operand is `?`.
// CHECK-LABEL: func @dynamic
func.func @dynamic(%x: tensor<?x16xi32>, %w: tensor<?x4xi32>) {
  // CHECK: kiln.matmul %{{.+}}, %{{.+}} : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  // CHECK-NEXT: kiln.matmul %{{.+}}, %{{.+}} : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<?x?xi32>
  // CHECK-NEXT: kiln.matmul %{{.+}}, %{{.+}} : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<8x4xi32>
  %0 = kiln.matmul %x, %w : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  %1 = kiln.matmul %x, %w : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<?x?xi32>
  %2 = kiln.matmul %x, %w : (tensor<?x16xi32>, tensor<?x4xi32>) -> tensor<8x4xi32>
  return
}
