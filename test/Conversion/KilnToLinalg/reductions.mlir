// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that reduce_sum is a generic with the reduced axis as a reduction
// loop, accumulating into a zero-filled tensor without that axis.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @reduce_sum
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[E]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_sum(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = kiln.reduce_sum %a axes [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that reduce_sum over several axes keeps the others as parallel
// loops, and that keep_dims reshapes the result to put size-1 dimensions
// back.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func @reduce_sum_keep_dims
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<3xi32>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<3xi32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: i32, %[[ACC:.+]]: i32):
// CHECK-NEXT: arith.addi %[[E]], %[[ACC]] : i32
// CHECK: %[[R:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1, 2]] output_shape [1, 3, 1] : tensor<3xi32> into tensor<1x3x1xi32>
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_sum_keep_dims(%a: tensor<2x3x4xi32>) -> tensor<1x3x1xi32> {
  %0 = kiln.reduce_sum %a axes [0, 2] {keep_dims} : tensor<2x3x4xi32> -> tensor<1x3x1xi32>
  return %0 : tensor<1x3x1xi32>
}

// -----

// Tests that a bf16 sum accumulates in f32 (a bf16 accumulator stops
// counting at 256) and is rounded to bf16 once at the end.
// CHECK-LABEL: func @reduce_sum_bf16
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<4x8xbf16>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[WIDE]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<4xf32>) outs(%{{.+}} : tensor<4xbf16>)
// CHECK-NEXT: ^bb0(%[[V:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_sum_bf16(%a: tensor<4x8xbf16>) -> tensor<4xbf16> {
  %0 = kiln.reduce_sum %a axes [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Tests that a float reduce_max starts from -inf and combines with maximumf
// (NaN-propagating), in the element type: a max needs no wider accumulator.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @reduce_max_float
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFC00 : f16
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f16) outs(%{{.+}} : tensor<8xf16>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<8xf16>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f16, %[[ACC:.+]]: f16):
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[E]], %[[ACC]] : f16
// CHECK-NEXT: linalg.yield %[[M]] : f16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_max_float(%a: tensor<4x8xf16>) -> tensor<8xf16> {
  %0 = kiln.reduce_max %a axes [0] : tensor<4x8xf16> -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

// Tests that an integer reduce_max over all axes starts from the signed
// minimum, compares signed and gives a rank-0 result.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @reduce_max_int
// CHECK: %[[LOWEST:.+]] = arith.constant -9223372036854775808 : i64
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[LOWEST]] : i64) outs(%{{.+}} : tensor<i64>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: outs(%[[INIT]] : tensor<i64>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: i64, %[[ACC:.+]]: i64):
// CHECK-NEXT: %[[M:.+]] = arith.maxsi %[[E]], %[[ACC]] : i64
// CHECK-NEXT: linalg.yield %[[M]] : i64
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_max_int(%a: tensor<4x8xi64>) -> tensor<i64> {
  %0 = kiln.reduce_max %a axes [0, 1] : tensor<4x8xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Tests that reduce_mean sums, then divides by the number of elements
// reduced: 2 * 4 = 8 for axes [0, 2] of 2x3x4.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func @reduce_mean
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: %[[COUNT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[SUM]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[M:.+]] = arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_mean(%a: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = kiln.reduce_mean %a axes [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a bf16 reduce_mean with keep_dims sums in f32, reshapes the sum
// to 4x1, then divides by 8 in f32 and rounds to bf16.
// CHECK-LABEL: func @reduce_mean_keep_dims
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[WIDE]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[KEPT:.+]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
// CHECK: %[[COUNT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[KEPT]] : tensor<4x1xf32>) outs(%{{.+}} : tensor<4x1xbf16>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[M:.+]] = arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @reduce_mean_keep_dims(%a: tensor<4x8xbf16>) -> tensor<4x1xbf16> {
  %0 = kiln.reduce_mean %a axes [1] {keep_dims} : tensor<4x8xbf16> -> tensor<4x1xbf16>
  return %0 : tensor<4x1xbf16>
}
