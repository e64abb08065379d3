// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that reshape collapses to one dimension and expands to the result
// shape, which stay views after bufferization (tensor.reshape would copy).
// CHECK-LABEL: func @reshape
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK-NEXT: %[[R:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1, 2]] output_shape [2, 3, 4] : tensor<24xf32> into tensor<2x3x4xf32>
// CHECK-NOT: kiln.
// CHECK-NOT: tensor.reshape
// CHECK: return %[[R]]
func.func @reshape(%a: tensor<4x6xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.reshape %a : tensor<4x6xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that a reshape to rank 0 collapses with no groups.
// CHECK-LABEL: func @reshape_to_scalar
// CHECK-SAME: (%[[X:.+]]: tensor<1x1xi64>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x1xi64> into tensor<1xi64>
// CHECK-NEXT: %[[R:.+]] = tensor.collapse_shape %[[FLAT]] [] : tensor<1xi64> into tensor<i64>
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reshape_to_scalar(%a: tensor<1x1xi64>) -> tensor<i64> {
  %0 = kiln.reshape %a : tensor<1x1xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that broadcast aligns dimensions from the right: an added leading
// dimension is not read.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @broadcast_leading
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @broadcast_leading(%a: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.broadcast %a : tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a size-1 operand dimension under a larger result dimension is
// read at 0, while one under a size-1 result dimension is read as is.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @broadcast_unit_dims
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}} : tensor<3x1x1xbf16>) outs(%{{.+}} : tensor<2x3x4x1xbf16>)
// CHECK-NOT: kiln.
// CHECK: return
func.func @broadcast_unit_dims(%a: tensor<3x1x1xbf16>) -> tensor<2x3x4x1xbf16> {
  %0 = kiln.broadcast %a : tensor<3x1x1xbf16> -> tensor<2x3x4x1xbf16>
  return %0 : tensor<2x3x4x1xbf16>
}

// -----

// Tests that a rank-0 operand broadcasts through an empty map.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @broadcast_scalar
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}} : tensor<i1>) outs(%{{.+}} : tensor<2x3xi1>)
// CHECK-NOT: kiln.
// CHECK: return
func.func @broadcast_scalar(%a: tensor<i1>) -> tensor<2x3xi1> {
  %0 = kiln.broadcast %a : tensor<i1> -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Tests that transpose becomes linalg.transpose with the same permutation
// (result dim i is operand dim permutation[i] in both).
// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x2x3xf32>
// CHECK: %[[R:.+]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %a [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// Tests that concat copies each input into its place in the result with a
// loop nest of its own, carrying the result tensor (tensor.insert, in place
// once bufferized): columns [0, 2) from the first input, [2, 5) from the
// second at column + 2, [5, 6) from the third at column + 5. No
// insert_slice: its copy between strided views would lower to a call into
// MLIR's runner library.
// CHECK-LABEL: func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<4x2xf32>, %[[B:.+]]: tensor<4x3xf32>, %[[C:.+]]: tensor<4x1xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x6xf32>
// CHECK: %[[RA:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUTER:.+]] = %[[INIT]]) -> (tensor<4x6xf32>) {
// CHECK-NEXT: scf.for %[[J:.+]] = %{{.+}} to %[[TWO:.+]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[OUTER]]) -> (tensor<4x6xf32>) {
// CHECK-NEXT: %[[EA:.+]] = tensor.extract %[[A]][%[[I]], %[[J]]] : tensor<4x2xf32>
// CHECK-NEXT: %[[COL:.+]] = arith.addi %[[J]], %{{.+}} : index
// CHECK-NEXT: tensor.insert %[[EA]] into %[[ACC]][%[[I]], %[[COL]]] : tensor<4x6xf32>
// CHECK: %[[RB:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[RA]])
// CHECK: %[[EB:.+]] = tensor.extract %[[B]]
// CHECK-NEXT: %[[COL_B:.+]] = arith.addi %{{.+}}, %[[OFF_B:.+]] : index
// CHECK: %[[R:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[RB]])
// CHECK: %[[EC:.+]] = tensor.extract %[[C]]
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %0 = kiln.concat %a, %b, %c axis = 1 : (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Tests that concat on axis 0 offsets the row (the third input's rows at
// row + 2), and that an input of size 0 along the axis is never read.
// CHECK-LABEL: func @concat_axis0
// CHECK-SAME: (%[[A:.+]]: tensor<2x4xi32>, %[[EMPTY:.+]]: tensor<0x4xi32>, %[[C:.+]]: tensor<3x4xi32>)
// CHECK: tensor.extract %[[A]][%{{.+}}, %{{.+}}] : tensor<2x4xi32>
// CHECK: %[[THREE:.+]] = arith.constant 3 : index
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[THREE]] step
// CHECK: %[[EC:.+]] = tensor.extract %[[C]][%[[I]], %[[J:.+]]] : tensor<3x4xi32>
// CHECK-NEXT: %[[ROW:.+]] = arith.addi %[[I]], %[[TWO]] : index
// CHECK-NEXT: tensor.insert %[[EC]] into %{{.+}}[%[[ROW]], %[[J]]] : tensor<5x4xi32>
// CHECK-NOT: tensor.extract %[[EMPTY]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @concat_axis0(%a: tensor<2x4xi32>, %b: tensor<0x4xi32>, %c: tensor<3x4xi32>) -> tensor<5x4xi32> {
  %0 = kiln.concat %a, %b, %c axis = 0 : (tensor<2x4xi32>, tensor<0x4xi32>, tensor<3x4xi32>) -> tensor<5x4xi32>
  return %0 : tensor<5x4xi32>
}

// -----

// Tests that a strided slice reads element start + step * i: rows as they
// are, columns 2, 4, 6, through tensor.extract in a generic over the result.
// No extract_slice view, which would be copied out through MLIR's runner
// library.
// CHECK-LABEL: func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK: %[[I:.+]] = linalg.index 0
// CHECK: %[[J:.+]] = linalg.index 1
// CHECK: %[[J2:.+]] = arith.muli %[[J]], %{{.+}}
// CHECK: %[[COL:.+]] = arith.addi %[[J2]], %{{.+}}
// CHECK: %[[E:.+]] = tensor.extract %[[X]][%[[I]], %[[COL]]] : tensor<4x8xf32>
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @slice(%a: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %0 = kiln.slice %a start [0, 2] limit [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that a slice starting at 0 with step 1 but shorter than its input
// iterates over the result's 4 columns, not the input's 13 (an indexing map
// folded to the identity there made linalg take the input's size).
// CHECK-LABEL: func @slice_head
// CHECK-SAME: (%[[X:.+]]: tensor<2x13xf32>)
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: %[[I:.+]] = linalg.index 0
// CHECK: %[[J:.+]] = linalg.index 1
// CHECK-NEXT: tensor.extract %[[X]][%[[I]], %[[J]]] : tensor<2x13xf32>
func.func @slice_head(%a: tensor<2x13xf32>) -> tensor<2x4xf32> {
  %0 = kiln.slice %a start [0, 0] limit [2, 4] step [1, 1] : tensor<2x13xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that an empty slice (start = limit = size) reads nothing: no
// generic over an empty result.
// CHECK-LABEL: func @slice_empty
// CHECK-NEXT: %[[R:.+]] = tensor.empty() : tensor<4x0xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: kiln.
// CHECK-NEXT: return %[[R]]
func.func @slice_empty(%a: tensor<4x8xf32>) -> tensor<4x0xf32> {
  %0 = kiln.slice %a start [0, 8] limit [4, 8] step [1, 1] : tensor<4x8xf32> -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}
