// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that softmax on the last axis is stable: the row max (from -inf,
// maximumf), then one pass that sums exp(x - max) and writes it where the
// result goes (one exp an element), then each written exp divided by its
// row's sum in place (read from the generic's output), the per-row values
// read through a map that drops the axis.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax_last
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32>)
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAX_INIT:.+]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<4x10xf32>) outs(%[[MAX_INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM_INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[SUM:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<4x10xf32>, tensor<4xf32>) outs(%[[SUM_INIT]], %{{.+}} : tensor<4xf32>, tensor<4x10xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[M:.+]]: f32, %[[ACC:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[M]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[EXP]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]], %[[EXP]] : f32, f32
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[SUM]]#0 : tensor<4xf32>) outs(%[[SUM]]#1 : tensor<4x10xf32>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[W:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.divf %[[W]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @softmax_last(%a: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = kiln.softmax %a axis = 1 : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Tests that softmax on axis 0 reduces the first loop and reads the
// per-column max and sum through (d0, d1) -> (d1).
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @softmax_axis0
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.+}} : tensor<10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]], #[[$COL]], #[[$ID]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[MAX]] : tensor<4x10xf32>, tensor<10xf32>) outs(%{{.+}}, %{{.+}} : tensor<10xf32>, tensor<4x10xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$COL]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[SUM]]#0 : tensor<10xf32>) outs(%[[SUM]]#1 : tensor<4x10xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.divf
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @softmax_axis0(%a: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = kiln.softmax %a axis = 0 : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

// Tests that a bf16 softmax takes the max in bf16 but computes exp, the sum
// and the quotient in f32, rounding once at the end.
// CHECK-LABEL: func @softmax_bf16
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF80 : bf16
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<4xbf16>)
// CHECK-NEXT: ^bb0(%{{.+}}: bf16, %{{.+}}: bf16):
// CHECK-NEXT: arith.maximumf %{{.+}}, %{{.+}} : bf16
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[MAX]] : tensor<4x10xbf16>, tensor<4xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[M:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[WE:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[WM:.+]] = arith.extf %[[M]] : bf16 to f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[WE]], %[[WM]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: arith.addf %[[EXP]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%{{.+}}, %[[MAX]], %[[SUM]] : tensor<4x10xbf16>, tensor<4xbf16>, tensor<4xf32>) outs(%{{.+}} : tensor<4x10xbf16>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[M:.+]]: bf16, %[[S:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[WE:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[WM:.+]] = arith.extf %[[M]] : bf16 to f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[WE]], %[[WM]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: %[[P:.+]] = arith.divf %[[EXP]], %[[S]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @softmax_bf16(%a: tensor<4x10xbf16>) -> tensor<4x10xbf16> {
  %0 = kiln.softmax %a axis = 1 : tensor<4x10xbf16>
  return %0 : tensor<4x10xbf16>
}

// -----

// Tests that log_softmax on the last axis of a 3-D tensor is
// (x - max) - log(sum(exp(x - max))), with no exp or division in the last
// generic.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @log_softmax_last
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[MAX]], %[[SUM]] : tensor<2x3x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[M:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[M]] : f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @log_softmax_last(%a: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %0 = kiln.log_softmax %a axis = 2 : tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Tests that an f16 log_softmax on axis 0 reduces over rows, computes in
// f32 and rounds to f16 at the end.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @log_softmax_axis0
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.+}} : tensor<10xf16>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]], #[[$COL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.+}} : tensor<10xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]], #[[$COL]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %[[MAX]], %[[SUM]] : tensor<4x10xf16>, tensor<10xf16>, tensor<10xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f16, %[[M:.+]]: f16, %[[S:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[WE:.+]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT: %[[WM:.+]] = arith.extf %[[M]] : f16 to f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[WE]], %[[WM]] : f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[Y]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[NARROW]] : f16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @log_softmax_axis0(%a: tensor<4x10xf16>) -> tensor<4x10xf16> {
  %0 = kiln.log_softmax %a axis = 0 : tensor<4x10xf16>
  return %0 : tensor<4x10xf16>
}

// -----

// Tests that layer_norm from axis 1 of 2x3x4 takes the mean and the biased
// variance over the 12 trailing elements (two passes: sum, then squares
// around sum / 12), then (x - mean) * rsqrt(var + eps) * scale + bias with
// scale and bias read over the trailing dimensions.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUTER:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[$INNER:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @layer_norm_bias
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[SCALE:.+]]: tensor<3x4xf32>, %[[BIAS:.+]]: tensor<3x4xf32>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[N:.+]] = arith.constant 1.200000e+01 : f32
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: arith.addf %[[E]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[SQUARES:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]], #[[$OUTER]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[S:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[MEAN:.+]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[E]], %[[MEAN]] : f32
// CHECK-NEXT: %[[C2:.+]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT: arith.addf %[[C2]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]], #[[$OUTER]], #[[$INNER]], #[[$INNER]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[SQUARES]], %[[SCALE]], %[[BIAS]] :
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[S:.+]]: f32, %[[SQ:.+]]: f32, %[[G:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[MEAN:.+]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: %[[VAR:.+]] = arith.divf %[[SQ]], %[[N]] : f32
// CHECK-NEXT: %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[INV:.+]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[E]], %[[MEAN]] : f32
// CHECK-NEXT: %[[NORM:.+]] = arith.mulf %[[C]], %[[INV]] : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[NORM]], %[[G]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.addf %[[SCALED]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @layer_norm_bias(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that layer_norm without bias ends at the scale, and that bf16 input
// is normalized in f32 (sums, variance, epsilon) and rounded at the end.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUTER:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$INNER:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @layer_norm_no_bias
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xbf16>, %[[SCALE:.+]]: tensor<8xbf16>)
// CHECK-DAG: %[[N:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<4x8xbf16>) outs(%{{.+}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[W]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[SQUARES:.+]] = linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[EPS:.+]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]], #[[$OUTER]], #[[$INNER]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[SUM]], %[[SQUARES]], %[[SCALE]] : tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<8xbf16>) outs(%{{.+}} : tensor<4x8xbf16>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: bf16, %[[S:.+]]: f32, %[[SQ:.+]]: f32, %[[G:.+]]: bf16, %{{.+}}: bf16):
// CHECK: %[[VE:.+]] = arith.addf %{{.+}}, %[[EPS]] : f32
// CHECK-NEXT: %[[INV:.+]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT: %[[WE:.+]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[WE]], %{{.+}} : f32
// CHECK-NEXT: %[[NORM:.+]] = arith.mulf %[[C]], %[[INV]] : f32
// CHECK-NEXT: %[[WG:.+]] = arith.extf %[[G]] : bf16 to f32
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[NORM]], %[[WG]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[Y]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @layer_norm_no_bias(%x: tensor<4x8xbf16>, %g: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-03 : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}
