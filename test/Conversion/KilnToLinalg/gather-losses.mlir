// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that gather on axis 0 first clamps every id to [0, rows - 1] as an
// index, in a tensor of its own (a kernel's scratch: LLVM then reads each
// id once per row copied, where the ids argument, which the result might
// alias, was read again for every element), then loops over the result
// (indices dims, then the row), reads each clamped id through the map of
// the leading loops and extracts the table element at (id, column).
// CHECK-DAG: #[[$IDS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @gather_axis0
// CHECK-SAME: (%[[TABLE:.+]]: tensor<10x16xf32>, %[[IDS:.+]]: tensor<3x4xi64>)
// CHECK: %[[CLAMPED:.+]] = linalg.generic {{.+}} ins(%[[IDS]] : tensor<3x4xi64>) outs(%{{.+}} : tensor<3x4xindex>)
// CHECK-NEXT: ^bb0(%[[ID:.+]]: i64, %{{.+}}: index):
// CHECK-NEXT: %[[INDEX:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.constant 9 : index
// CHECK-NEXT: %[[LOW:.+]] = arith.maxsi %[[INDEX]], %[[ZERO]] : index
// CHECK-NEXT: %[[CLAMP:.+]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT: linalg.yield %[[CLAMP]] : index
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<3x4x16xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IDS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[CLAMPED]] : tensor<3x4xindex>) outs(%[[INIT]] : tensor<3x4x16xf32>)
// CHECK-NEXT: ^bb0(%[[ROW:.+]]: index, %{{.+}}: f32):
// CHECK-NEXT: %[[COL:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[E:.+]] = tensor.extract %[[TABLE]][%[[ROW]], %[[COL]]] : tensor<10x16xf32>
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @gather_axis0(%t: tensor<10x16xf32>, %i: tensor<3x4xi64>) -> tensor<3x4x16xf32> {
  %0 = kiln.gather %t[%i] : (tensor<10x16xf32>, tensor<3x4xi64>) -> tensor<3x4x16xf32>
  return %0 : tensor<3x4x16xf32>
}

// -----

// Tests that gather on axis 1 clamps the ids to [0, 9] first (i32 ids,
// signed), keeps the leading table dimension as loop 0 and reads the
// clamped ids through loop 1.
// CHECK-DAG: #[[$IDS:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func @gather_axis1
// CHECK-SAME: (%[[TABLE:.+]]: tensor<2x10x3xbf16>, %[[IDS:.+]]: tensor<5xi32>)
// CHECK: %[[CLAMPED:.+]] = linalg.generic {{.+}} ins(%[[IDS]] : tensor<5xi32>) outs(%{{.+}} : tensor<5xindex>)
// CHECK-NEXT: ^bb0(%[[ID:.+]]: i32, %{{.+}}: index):
// CHECK-NEXT: %[[INDEX:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.constant 9 : index
// CHECK-NEXT: %[[LOW:.+]] = arith.maxsi %[[INDEX]], %[[ZERO]] : index
// CHECK-NEXT: %[[CLAMP:.+]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT: linalg.yield %[[CLAMP]] : index
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$IDS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[CLAMPED]] : tensor<5xindex>) outs(%{{.+}} : tensor<2x5x3xbf16>)
// CHECK-NEXT: ^bb0(%[[MID:.+]]: index, %{{.+}}: bf16):
// CHECK-NEXT: %[[BATCH:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[INNER:.+]] = linalg.index 2 : index
// CHECK-NEXT: %[[E:.+]] = tensor.extract %[[TABLE]][%[[BATCH]], %[[MID]], %[[INNER]]] : tensor<2x10x3xbf16>
// CHECK-NEXT: linalg.yield %[[E]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @gather_axis1(%t: tensor<2x10x3xbf16>, %i: tensor<5xi32>) -> tensor<2x5x3xbf16> {
  %0 = kiln.gather %t[%i] {axis = 1} : (tensor<2x10x3xbf16>, tensor<5xi32>) -> tensor<2x5x3xbf16>
  return %0 : tensor<2x5x3xbf16>
}

// -----

// Tests that softmax cross-entropy takes the row max and sum of
// exp(logits - max), then sums max + log(sum) - logits[row, label] over the
// batch, with the label clamped to [0, classes - 1], and divides by the
// batch size.
// CHECK-DAG: #[[$ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @softmax_cross_entropy
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<8x10xf32>, %[[LABELS:.+]]: tensor<8xi32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[LOGITS]] : tensor<8x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[LOGITS]], %[[MAX]] : tensor<8x10xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.+]]: f32, %[[M:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[M]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: arith.addf %[[EXP]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: %[[TOTAL:.+]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]], #[[$ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[LABELS]], %[[MAX]], %[[SUM]] : tensor<8xi32>, tensor<8xf32>, tensor<8xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[LABEL:.+]]: i32, %[[M:.+]]: f32, %[[S:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[ROW_INDEX:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[INDEX:.+]] = arith.index_cast %[[LABEL]] : i32 to index
// CHECK-NEXT: %[[FIRST:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.constant 9 : index
// CHECK-NEXT: %[[LOW:.+]] = arith.maxsi %[[INDEX]], %[[FIRST]] : index
// CHECK-NEXT: %[[CLASS:.+]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT: %[[PICKED:.+]] = tensor.extract %[[LOGITS]][%[[ROW_INDEX]], %[[CLASS]]] : tensor<8x10xf32>
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[LSE:.+]] = arith.addf %[[M]], %[[LOG]] : f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.subf %[[LSE]], %[[PICKED]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[LOSS]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[BATCH:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[T:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[MEAN:.+]] = arith.divf %[[T]], %[[BATCH]] : f32
// CHECK-NEXT: linalg.yield %[[MEAN]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @softmax_cross_entropy(%l: tensor<8x10xf32>, %y: tensor<8xi32>) -> tensor<f32> {
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that an f16 softmax cross-entropy sums the per-example losses in
// f32 (max and the picked logit widened) and rounds the mean to f16.
// CHECK-LABEL: func @softmax_cross_entropy_f16
// CHECK: %[[TOTAL:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<8xi64>, tensor<8xf16>, tensor<8xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%{{.+}}: i64, %[[M:.+]]: f16, %[[S:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[PICKED:.+]] = tensor.extract %{{.+}} : tensor<8x10xf16>
// CHECK-NEXT: %[[WM:.+]] = arith.extf %[[M]] : f16 to f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[LSE:.+]] = arith.addf %[[WM]], %[[LOG]] : f32
// CHECK-NEXT: %[[WP:.+]] = arith.extf %[[PICKED]] : f16 to f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.subf %[[LSE]], %[[WP]] : f32
// CHECK-NEXT: arith.addf %[[LOSS]], %[[ACC]] fastmath<reassoc> : f32
// CHECK: %[[BATCH:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>) outs(%{{.+}} : tensor<f16>)
// CHECK-NEXT: ^bb0(%[[T:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[MEAN:.+]] = arith.divf %[[T]], %[[BATCH]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[MEAN]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[NARROW]] : f16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @softmax_cross_entropy_f16(%l: tensor<8x10xf16>, %y: tensor<8xi64>) -> tensor<f16> {
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<8x10xf16>, tensor<8xi64>) -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// Tests that sigmoid cross-entropy uses the stable form
// max(x, 0) - x * t + log1p(exp(-|x|)), summed over all elements and
// divided by their count (8 * 2).
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @sigmoid_cross_entropy
// CHECK-SAME: (%[[LOGITS:.+]]: tensor<8x2xf32>, %[[TARGETS:.+]]: tensor<8x2xf32>)
// CHECK: %[[TOTAL:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[LOGITS]], %[[TARGETS]] : tensor<8x2xf32>, tensor<8x2xf32>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[T:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[POS:.+]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[ABS:.+]] = math.absf %[[X]] : f32
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[ABS]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[SOFTPLUS:.+]] = math.log1p %[[EXP]] : f32
// CHECK-NEXT: %[[XT:.+]] = arith.mulf %[[X]], %[[T]] : f32
// CHECK-NEXT: %[[LINEAR:.+]] = arith.subf %[[POS]], %[[XT]] : f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.addf %[[LINEAR]], %[[SOFTPLUS]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[LOSS]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[COUNT:.+]] = arith.constant 1.600000e+01 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @sigmoid_cross_entropy(%l: tensor<8x2xf32>, %t: tensor<8x2xf32>) -> tensor<f32> {
  %0 = kiln.sigmoid_cross_entropy %l, %t : tensor<8x2xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that mean squared error sums (p - t)^2 over all elements, in f32
// for bf16 inputs, and divides by the count before rounding to bf16.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func @mean_squared_error
// CHECK-SAME: (%[[P:.+]]: tensor<8x1xbf16>, %[[T:.+]]: tensor<8x1xbf16>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[TOTAL:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK-SAME: ins(%[[P]], %[[T]] : tensor<8x1xbf16>, tensor<8x1xbf16>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: bf16, %[[Y:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[WX:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[WY:.+]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[WX]], %[[WY]] : f32
// CHECK-NEXT: %[[D2:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[D2]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[COUNT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[TOTAL]] : tensor<f32>) outs(%{{.+}} : tensor<bf16>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: %[[MEAN:.+]] = arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NEXT: %[[NARROW:.+]] = arith.truncf %[[MEAN]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[NARROW]] : bf16
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @mean_squared_error(%p: tensor<8x1xbf16>, %t: tensor<8x1xbf16>) -> tensor<bf16> {
  %0 = kiln.mean_squared_error %p, %t : tensor<8x1xbf16> -> tensor<bf16>
  return %0 : tensor<bf16>
}

// -----

// Tests that gather_elements is a generic over the indices' shape that
// reads each index, wraps a negative one by the axis' size, clamps it into
// [0, size - 1] and extracts the input at the loop position with the axis
// coordinate replaced.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @gather_elements
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x5xf32>, %[[IDX:[^:]+]]: tensor<2x4xi64>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[IDX]] : tensor<2x4xi64>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[ID:.+]]: i64, %{{.+}}: f32):
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[SIZE:.+]] = arith.constant 5 : i64
// CHECK: %[[WRAPPED:.+]] = arith.addi %[[ID]], %[[SIZE]] : i64
// CHECK-NEXT: %[[NEG:.+]] = arith.cmpi slt, %[[ID]], %[[ZERO]] : i64
// CHECK-NEXT: %[[POS:.+]] = arith.select %[[NEG]], %[[WRAPPED]], %[[ID]] : i64
// CHECK-NEXT: %[[ROW:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[INDEX:.+]] = arith.index_cast %[[POS]] : i64 to index
// CHECK-NEXT: %[[LOWEST:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[LAST:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[LOW:.+]] = arith.maxsi %[[INDEX]], %[[LOWEST]] : index
// CHECK-NEXT: %[[COL:.+]] = arith.minsi %[[LOW]], %[[LAST]] : index
// CHECK-NEXT: %[[E:.+]] = tensor.extract %[[X]][%[[ROW]], %[[COL]]] : tensor<3x5xf32>
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @gather_elements(%x: tensor<3x5xf32>, %i: tensor<2x4xi64>) -> tensor<2x4xf32> {
  %0 = kiln.gather_elements %x[%i] axis = 1 : (tensor<3x5xf32>, tensor<2x4xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that gather_elements on axis 0 with i32 indices clamps the row and
// keeps the column loop (the coordinate of every other dimension is the
// loop's).
// CHECK-LABEL: func @gather_elements_axis0
// CHECK: ^bb0(%[[ID:.+]]: i32, %{{.+}}: bf16):
// CHECK: %[[POS:.+]] = arith.select %{{.+}}, %{{.+}}, %[[ID]] : i32
// CHECK-NEXT: %[[INDEX:.+]] = arith.index_cast %[[POS]] : i32 to index
// CHECK: %[[LAST:.+]] = arith.constant 2 : index
// CHECK: %[[ROW:.+]] = arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK-NEXT: %[[COL:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[E:.+]] = tensor.extract %{{.+}}[%[[ROW]], %[[COL]]] : tensor<3x4xbf16>
// CHECK-NEXT: linalg.yield %[[E]] : bf16
func.func @gather_elements_axis0(%x: tensor<3x4xbf16>, %i: tensor<5x2xi32>) -> tensor<5x2xbf16> {
  %0 = kiln.gather_elements %x[%i] axis = 0 : (tensor<3x4xbf16>, tensor<5x2xi32>) -> tensor<5x2xbf16>
  return %0 : tensor<5x2xbf16>
}

// -----

// Tests that scatter_add_rows is a loop over the rows: the table zeroed,
// each row whose id is in [0, 4) (unsigned: a negative id is not) added to
// the table's row at that id, a slice out and back in (in place once
// bufferized).
// CHECK-LABEL: func @scatter_add_rows
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: %[[TABLE:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]])
// CHECK: %[[RAW:.+]] = tensor.extract %arg1[%[[I]]] : tensor<5xi64>
// CHECK: %[[ID:.+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[ID]], %{{.+}} : index
// CHECK: scf.if %[[IN]]
// CHECK: %[[ROW:.+]] = tensor.extract_slice %arg0[%[[I]], 0] [1, 3] [1, 1] : tensor<5x3xf32> to tensor<3xf32>
// CHECK: %[[OLD:.+]] = tensor.extract_slice %[[ACC]][%[[ID]], 0] [1, 3] [1, 1]
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[ROW]] : tensor<3xf32>) outs(%[[OLD]] : tensor<3xf32>)
// CHECK: arith.addf
// CHECK: tensor.insert_slice %[[SUM]] into %[[ACC]][%[[ID]], 0] [1, 3] [1, 1]
// CHECK: return %[[TABLE]]
func.func @scatter_add_rows(%rows: tensor<5x3xf32>, %ids: tensor<5xi64>) -> tensor<4x3xf32> {
  %t = kiln.scatter_add_rows %rows[%ids] : (tensor<5x3xf32>, tensor<5xi64>) -> tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// -----

// Tests softmax_cross_entropy_rows: the softmax with one exp an element (the
// row max; one pass summing exp(x - max) and writing it; the division in
// place), then each position's loss from the same max and sum: max +
// log(sum) - x[row, label], the label clamped to [0, 10). Every loop runs
// over the rows, so kiln-split-rows can split the kernel.
// CHECK-LABEL: func @softmax_cross_entropy_rows
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x10xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SE:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[SE]]#0 : tensor<4xf32>) outs(%[[SE]]#1 : tensor<4x10xf32>)
// CHECK: arith.divf
// CHECK: %[[L:.+]] = linalg.generic {{.+}} iterator_types = ["parallel"]} ins(%arg1, %[[MAX]], %[[SE]]#0 : tensor<4xi64>, tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%{{.+}}: i64, %[[M:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ROW:.+]] = linalg.index 0
// CHECK: %[[LOW:.+]] = arith.maxsi
// CHECK: %[[LABEL:.+]] = arith.minsi %[[LOW]], %{{.+}}
// CHECK: %[[PICKED:.+]] = tensor.extract %arg0[%[[ROW]], %[[LABEL]]]
// CHECK: %[[LOG:.+]] = math.log %[[S]]
// CHECK: %[[LSE:.+]] = arith.addf %[[M]], %[[LOG]]
// CHECK: %[[LOSS:.+]] = arith.subf %[[LSE]], %[[PICKED]]
// CHECK: linalg.yield %[[LOSS]]
// CHECK: return %[[L]], %[[P]]
func.func @softmax_cross_entropy_rows(%x: tensor<4x10xf32>, %t: tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  %l, %p = kiln.softmax_cross_entropy_rows %x, %t : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %p : tensor<4xf32>, tensor<4x10xf32>
}

// -----

// Tests softmax_cross_entropy_grad_rows: the same loops, the last one
// reading each row's label beside its sum and yielding (e / sum - [class ==
// label]) * scale in place of the softmax (the label compared as it is: one
// outside [0, 10) selects no class, as kiln.one_hot).
// CHECK-LABEL: func @softmax_cross_entropy_grad_rows
// CHECK: %[[SE:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %{{.+}} : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[SE]]#0, %arg1 : tensor<4xf32>, tensor<4xi32>) outs(%[[SE]]#1 : tensor<4x10xf32>)
// CHECK: ^bb0(%[[S:.+]]: f32, %[[LABEL:.+]]: i32, %[[E:.+]]: f32):
// CHECK: %[[P:.+]] = arith.divf %[[E]], %[[S]]
// CHECK: %[[C:.+]] = linalg.index 1
// CHECK: %[[CI:.+]] = arith.index_cast %[[C]] : index to i32
// CHECK: %[[IS:.+]] = arith.cmpi eq, %[[CI]], %[[LABEL]]
// CHECK: %[[HOT:.+]] = arith.select %[[IS]]
// CHECK: %[[D:.+]] = arith.subf %[[P]], %[[HOT]]
// CHECK: %[[GRAD:.+]] = arith.mulf %[[D]], %{{.+}}
// CHECK: linalg.yield %[[GRAD]]
// CHECK: %[[L:.+]] = linalg.generic {{.+}} iterator_types = ["parallel"]} ins(%arg1, %{{.+}}, %[[SE]]#0 : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log
// CHECK: return %[[L]], %[[G]]
func.func @softmax_cross_entropy_grad_rows(%x: tensor<4x10xf32>, %t: tensor<4xi32>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  %l, %g = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 2.500000e-01 : (tensor<4x10xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %g : tensor<4xf32>, tensor<4x10xf32>
}

// -----

// Tests the gradient op with weights and an ignore_index: the gradient
// loop reads each row's weight beside its label, multiplies the scaled
// difference by it, and yields 0 where the label is the ignored one; the
// losses' loop yields 0 there too.
// CHECK-LABEL: func @softmax_cross_entropy_grad_rows_ignoring
// CHECK: %[[SE:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %{{.+}} : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[SE]]#0, %arg1, %arg2 : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>) outs(%[[SE]]#1 : tensor<4x10xf32>)
// CHECK: ^bb0(%[[S:.+]]: f32, %[[LABEL:.+]]: i32, %[[W:.+]]: f32, %[[E:.+]]: f32):
// CHECK: %[[D:.+]] = arith.subf
// CHECK: %[[SCALED:.+]] = arith.mulf %[[D]], %{{.+}}
// CHECK: %[[WEIGHTED:.+]] = arith.mulf %[[SCALED]], %[[W]]
// CHECK: %[[IGNORED:.+]] = arith.constant -100 : i32
// CHECK: %[[IS:.+]] = arith.cmpi eq, %[[LABEL]], %[[IGNORED]]
// CHECK: %[[GRAD:.+]] = arith.select %[[IS]], %{{.+}}, %[[WEIGHTED]]
// CHECK: linalg.yield %[[GRAD]]
// CHECK: %[[L:.+]] = linalg.generic {{.+}} iterator_types = ["parallel"]} ins(%arg1, %{{.+}}, %[[SE]]#0 : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[LL:.+]]: i32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: %[[LOSS:.+]] = arith.subf
// CHECK: %[[LIS:.+]] = arith.cmpi eq, %[[LL]], %{{.+}}
// CHECK: arith.select %[[LIS]], %{{.+}}, %[[LOSS]]
// CHECK: return %[[L]], %[[G]]
func.func @softmax_cross_entropy_grad_rows_ignoring(%x: tensor<4x10xf32>, %t: tensor<4xi32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  %l, %g = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %g : tensor<4xf32>, tensor<4x10xf32>
}

// -----

// Tests the loss with an ignore_index: 0 for an ignored position in the
// sum, and the sum over the count of the others, counted from the labels.
// CHECK-LABEL: func @softmax_cross_entropy_ignoring
// CHECK: %[[TOTAL:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4xi64>, tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : i64
// CHECK: arith.select
// CHECK: %[[KEPT:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%{{.+}} : tensor<4xi64>)
// CHECK: arith.select
// CHECK: linalg.generic {{.+}} ins(%[[TOTAL]], %[[KEPT]] : tensor<f32>, tensor<f32>)
// CHECK: arith.divf
func.func @softmax_cross_entropy_ignoring(%x: tensor<4x10xf32>, %t: tensor<4xi64>) -> tensor<f32> {
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = 255 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests label smoothing e = 0.2 over 10 classes in the gradient op: the
// one-hot becomes 0.82 at the label and 0.02 elsewhere; each loss is
// log(sum) - 0.8 (x[label] - max) - 0.02 * sum(x - max), the last sum
// reduced from the logits and each row's max.
// CHECK-LABEL: func @softmax_cross_entropy_grad_rows_smoothing
// CHECK: %[[SE:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %{{.+}} : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.+}} ins(%[[SE]]#0, %arg1, %arg2 : tensor<4xf32>, tensor<4xi32>, tensor<4xf32>)
// CHECK: %[[AT:.+]] = arith.constant 0.819999992 : f32
// CHECK: %[[ELSE:.+]] = arith.constant 2.000000e-02 : f32
// CHECK: arith.select %{{.+}}, %[[AT]], %[[ELSE]]
// CHECK: linalg.yield
// CHECK: %[[SHIFTED:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %{{.+}} : tensor<4x10xf32>, tensor<4xf32>)
// CHECK: arith.subf
// CHECK: %[[L:.+]] = linalg.generic {{.+}} ins(%arg1, %{{.+}}, %[[SE]]#0, %[[SHIFTED]] : tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log
// CHECK: arith.constant 8.000000e-01 : f32
// CHECK: arith.constant 2.000000e-02 : f32
// CHECK: return %[[L]], %[[G]]
func.func @softmax_cross_entropy_grad_rows_smoothing(%x: tensor<4x10xf32>, %t: tensor<4xi32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>) {
  %l, %g = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {label_smoothing = 0.2 : f64} : (tensor<4x10xf32>, tensor<4xi32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %l, %g : tensor<4xf32>, tensor<4x10xf32>
}
