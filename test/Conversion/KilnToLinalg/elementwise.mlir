// RUN: kiln-opt %s -split-input-file --convert-kiln-to-linalg | FileCheck --enable-var-scope %s

// Tests that a float add becomes one all-parallel generic over the result
// shape, reading both operands through the identity map into a fresh tensor.
// CHECK: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @add_f32
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(%[[INIT]] : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: kiln.
// CHECK: return %[[R]]
func.func @add_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kiln.add %a, %b : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that float sub, mul, div, maximum and minimum use the float arith
// ops of the element type; maximum and minimum propagate NaN (maximumf,
// minimumf) as numpy does.
// CHECK-LABEL: func @binary_f16
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.subf %[[X]], %[[Y]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[X]], %[[Y]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.divf %[[X]], %[[Y]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.maximumf %[[X]], %[[Y]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f16, %[[Y:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.minimumf %[[X]], %[[Y]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @binary_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0 = kiln.sub %a, %b : tensor<4xf16>
  %1 = kiln.mul %a, %b : tensor<4xf16>
  %2 = kiln.div %a, %b : tensor<4xf16>
  %3 = kiln.maximum %a, %b : tensor<4xf16>
  %4 = kiln.minimum %a, %b : tensor<4xf16>
  return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// -----

// Tests that integer binary ops are signed: division truncates toward zero
// (divsi), maximum and minimum compare signed.
// CHECK-LABEL: func @binary_i32
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.addi %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.subi %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.muli %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[BYZERO:.+]] = arith.cmpi eq, %[[Y]], %[[ZERO]] : i32
// CHECK-NEXT: %[[MINUSONE:.+]] = arith.constant -1 : i32
// CHECK-NEXT: %[[BYMINUSONE:.+]] = arith.cmpi eq, %[[Y]], %[[MINUSONE]] : i32
// CHECK-NEXT: %[[UNSAFE:.+]] = arith.ori %[[BYZERO]], %[[BYMINUSONE]] : i1
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[UNSAFE]], %[[ONE]], %[[Y]] : i32
// CHECK-NEXT: %[[Q:.+]] = arith.divsi %[[X]], %[[SAFE]] : i32
// CHECK-NEXT: %[[NEG:.+]] = arith.subi %[[ZERO]], %[[X]] : i32
// CHECK-NEXT: %[[Q1:.+]] = arith.select %[[BYMINUSONE]], %[[NEG]], %[[Q]] : i32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[BYZERO]], %[[ZERO]], %[[Q1]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.maxsi %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.minsi %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @binary_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %0 = kiln.add %a, %b : tensor<4xi32>
  %1 = kiln.sub %a, %b : tensor<4xi32>
  %2 = kiln.mul %a, %b : tensor<4xi32>
  %3 = kiln.div %a, %b : tensor<4xi32>
  %4 = kiln.maximum %a, %b : tensor<4xi32>
  %5 = kiln.minimum %a, %b : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Tests that neg is negf on floats and 0 - x on integers.
// CHECK-LABEL: func @neg
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.negf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[R:.+]] = arith.subi %[[ZERO]], %[[X]] : i64
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @neg(%a: tensor<4xf32>, %b: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = kiln.neg %a : tensor<4xf32>
  %1 = kiln.neg %b : tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// Tests that exp, log, sqrt, rsqrt and tanh become the math op of the same
// name on the element type (bf16 here; the CPU pipeline widens it later).
// CHECK-LABEL: func @unary_math
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = math.exp %[[X]] : bf16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = math.log %[[X]] : bf16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = math.sqrt %[[X]] : bf16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = math.rsqrt %[[X]] : bf16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = math.tanh %[[X]] : bf16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @unary_math(%a: tensor<2x3xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>) {
  %0 = kiln.exp %a : tensor<2x3xbf16>
  %1 = kiln.log %a : tensor<2x3xbf16>
  %2 = kiln.sqrt %a : tensor<2x3xbf16>
  %3 = kiln.rsqrt %a : tensor<2x3xbf16>
  %4 = kiln.tanh %a : tensor<2x3xbf16>
  return %0, %1, %2, %3, %4 : tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xbf16>
}

// -----

// Tests that sigmoid computes 1 / (1 + exp(-x)).
// CHECK-LABEL: func @sigmoid
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[X]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[NEG]] : f32
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DEN:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.sigmoid %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that relu is max(x, 0): maximumf on floats, maxsi on integers.
// CHECK-LABEL: func @relu
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[R:.+]] = arith.maxsi %[[X]], %[[ZERO]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @relu(%a: tensor<4xf32>, %b: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0 = kiln.relu %a : tensor<4xf32>
  %1 = kiln.relu %b : tensor<4xi32>
  return %0, %1 : tensor<4xf32>, tensor<4xi32>
}

// -----

// Tests that exact gelu is x * 0.5 * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func @gelu_exact
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK-NEXT: %[[ERF:.+]] = math.erf %[[SCALED]] : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK-NEXT: %[[PHI:.+]] = arith.mulf %[[HALF]], %[[SUM]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[X]], %[[PHI]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: math.tanh
// CHECK-NOT: kiln.
// CHECK: return
func.func @gelu_exact(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.gelu %a approximation(exact) : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tanh gelu is 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// with no erf.
// CHECK-LABEL: func @gelu_tanh
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[X2:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[X3:.+]] = arith.mulf %[[X]], %[[X2]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT: %[[CX3:.+]] = arith.mulf %[[C]], %[[X3]] : f32
// CHECK-NEXT: %[[POLY:.+]] = arith.addf %[[X]], %[[CX3]] : f32
// CHECK-NEXT: %[[K:.+]] = arith.constant 0.797884583 : f32
// CHECK-NEXT: %[[ARG:.+]] = arith.mulf %[[K]], %[[POLY]] : f32
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[ARG]] : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ONE]], %[[T]] : f32
// CHECK-NEXT: %[[PHI:.+]] = arith.mulf %[[HALF]], %[[SUM]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[X]], %[[PHI]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: math.erf
// CHECK-NOT: kiln.
// CHECK: return
func.func @gelu_tanh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.gelu %a approximation(tanh) : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float compares are ordered (false on NaN) except ne, which is
// unordered (true on NaN) as in numpy, and give an i1 tensor.
// CHECK-LABEL: func @compare_float
// CHECK: outs(%{{.+}} : tensor<4xi1>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: %[[R:.+]] = arith.cmpf oeq, %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : i1
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpf une, %[[X]], %[[Y]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpf olt, %[[X]], %[[Y]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpf ole, %[[X]], %[[Y]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpf ogt, %[[X]], %[[Y]] : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpf oge, %[[X]], %[[Y]] : f32
// CHECK-NOT: kiln.
// CHECK: return
func.func @compare_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare eq, %a, %b : tensor<4xf32>
  %1 = kiln.compare ne, %a, %b : tensor<4xf32>
  %2 = kiln.compare lt, %a, %b : tensor<4xf32>
  %3 = kiln.compare le, %a, %b : tensor<4xf32>
  %4 = kiln.compare gt, %a, %b : tensor<4xf32>
  %5 = kiln.compare ge, %a, %b : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that integer compares are signed.
// CHECK-LABEL: func @compare_int
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: %[[R:.+]] = arith.cmpi eq, %[[X]], %[[Y]] : i32
// CHECK-NEXT: linalg.yield %[[R]] : i1
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi ne, %[[X]], %[[Y]] : i32
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi slt, %[[X]], %[[Y]] : i32
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi sle, %[[X]], %[[Y]] : i32
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi sgt, %[[X]], %[[Y]] : i32
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi sge, %[[X]], %[[Y]] : i32
// CHECK-NOT: kiln.
// CHECK: return
func.func @compare_int(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare eq, %a, %b : tensor<4xi32>
  %1 = kiln.compare ne, %a, %b : tensor<4xi32>
  %2 = kiln.compare lt, %a, %b : tensor<4xi32>
  %3 = kiln.compare le, %a, %b : tensor<4xi32>
  %4 = kiln.compare gt, %a, %b : tensor<4xi32>
  %5 = kiln.compare ge, %a, %b : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that bool compares are unsigned (false < true); signed i1 would
// order true (-1) below false.
// CHECK-LABEL: func @compare_bool
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi eq, %[[X]], %[[Y]] : i1
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi ne, %[[X]], %[[Y]] : i1
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi ult, %[[X]], %[[Y]] : i1
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi ule, %[[X]], %[[Y]] : i1
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi ugt, %[[X]], %[[Y]] : i1
// CHECK: ^bb0(%[[X:.+]]: i1, %[[Y:.+]]: i1, %{{.+}}: i1):
// CHECK-NEXT: arith.cmpi uge, %[[X]], %[[Y]] : i1
// CHECK-NOT: kiln.
// CHECK: return
func.func @compare_bool(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.compare eq, %a, %b : tensor<4xi1>
  %1 = kiln.compare ne, %a, %b : tensor<4xi1>
  %2 = kiln.compare lt, %a, %b : tensor<4xi1>
  %3 = kiln.compare le, %a, %b : tensor<4xi1>
  %4 = kiln.compare gt, %a, %b : tensor<4xi1>
  %5 = kiln.compare ge, %a, %b : tensor<4xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that select reads condition, on_true and on_false elementwise and
// picks with arith.select.
// CHECK: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func @select
// CHECK-SAME: (%[[C:.+]]: tensor<2x3xi1>, %[[A:.+]]: tensor<2x3xi64>, %[[B:.+]]: tensor<2x3xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[C]], %[[A]], %[[B]] : tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>)
// CHECK-NEXT: ^bb0(%[[COND:.+]]: i1, %[[T:.+]]: i64, %[[F:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: %[[R:.+]] = arith.select %[[COND]], %[[T]], %[[F]] : i64
// CHECK-NEXT: linalg.yield %[[R]] : i64
// CHECK-NOT: kiln.
// CHECK: return
func.func @select(%c: tensor<2x3xi1>, %a: tensor<2x3xi64>, %b: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = kiln.select %c, %a, %b : tensor<2x3xi1>, tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// Tests that float-to-float casts widen with extf and narrow with truncf,
// and that f16 <-> bf16 (same width, different format) goes through f32.
// CHECK-LABEL: func @cast_float_float
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: ^bb0(%[[X:.+]]: f16, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[X:.+]]: f16, %{{.+}}: bf16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[W]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[R:.+]] = arith.truncf %[[W]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: kiln.
// CHECK: return
func.func @cast_float_float(%a: tensor<4xf32>, %b: tensor<4xf16>, %c: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>, tensor<4xf32>) {
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xf16>
  %1 = kiln.cast %b : tensor<4xf16> to tensor<4xf32>
  %2 = kiln.cast %b : tensor<4xf16> to tensor<4xbf16>
  %3 = kiln.cast %c : tensor<4xbf16> to tensor<4xf16>
  %4 = kiln.cast %c : tensor<4xbf16> to tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf16>, tensor<4xf32>
}

// -----

// Tests that floats become integers truncating toward zero (fptosi) and
// integers become floats signed (sitofp).
// CHECK-LABEL: func @cast_float_int
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
// CHECK: ^bb0(%[[X:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.sitofp %[[X]] : i32 to f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[X:.+]]: bf16, %{{.+}}: i64):
// CHECK-NEXT: %[[R:.+]] = arith.fptosi %[[X]] : bf16 to i64
// CHECK-NEXT: linalg.yield %[[R]] : i64
// CHECK-NOT: kiln.
// CHECK: return
func.func @cast_float_int(%a: tensor<4xf32>, %b: tensor<4xi32>, %c: tensor<4xbf16>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi64>) {
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xi32>
  %1 = kiln.cast %b : tensor<4xi32> to tensor<4xf32>
  %2 = kiln.cast %c : tensor<4xbf16> to tensor<4xi64>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xf32>, tensor<4xi64>
}

// -----

// Tests that integer widening sign-extends and narrowing truncates.
// CHECK-LABEL: func @cast_int_int
// CHECK: ^bb0(%[[X:.+]]: i32, %{{.+}}: i64):
// CHECK-NEXT: %[[R:.+]] = arith.extsi %[[X]] : i32 to i64
// CHECK-NEXT: linalg.yield %[[R]] : i64
// CHECK: ^bb0(%[[X:.+]]: i64, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.trunci %[[X]] : i64 to i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
// CHECK-NOT: kiln.
// CHECK: return
func.func @cast_int_int(%a: tensor<4xi32>, %b: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi32>) {
  %0 = kiln.cast %a : tensor<4xi32> to tensor<4xi64>
  %1 = kiln.cast %b : tensor<4xi64> to tensor<4xi32>
  return %0, %1 : tensor<4xi64>, tensor<4xi32>
}

// -----

// Tests that a cast to bool is `x != 0`: unordered on floats, so NaN is
// true as in numpy, and never a truncation to the low bit.
// CHECK-LABEL: func @cast_to_bool
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: i1):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = arith.cmpf une, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : i1
// CHECK: ^bb0(%[[X:.+]]: i64, %{{.+}}: i1):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[R:.+]] = arith.cmpi ne, %[[X]], %[[ZERO]] : i64
// CHECK-NEXT: linalg.yield %[[R]] : i1
// CHECK-NOT: arith.trunci
// CHECK-NOT: kiln.
// CHECK: return
func.func @cast_to_bool(%a: tensor<4xf32>, %b: tensor<4xi64>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xi1>
  %1 = kiln.cast %b : tensor<4xi64> to tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that bools become 0 or 1, never -1: unsigned conversions (uitofp,
// extui).
// CHECK-LABEL: func @cast_from_bool
// CHECK: ^bb0(%[[X:.+]]: i1, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.uitofp %[[X]] : i1 to f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[X:.+]]: i1, %{{.+}}: bf16):
// CHECK-NEXT: %[[R:.+]] = arith.uitofp %[[X]] : i1 to bf16
// CHECK-NEXT: linalg.yield %[[R]] : bf16
// CHECK: ^bb0(%[[X:.+]]: i1, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = arith.extui %[[X]] : i1 to i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
// CHECK-NOT: kiln.
// CHECK: return
func.func @cast_from_bool(%a: tensor<4xi1>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xi32>) {
  %0 = kiln.cast %a : tensor<4xi1> to tensor<4xf32>
  %1 = kiln.cast %a : tensor<4xi1> to tensor<4xbf16>
  %2 = kiln.cast %a : tensor<4xi1> to tensor<4xi32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xbf16>, tensor<4xi32>
}

// -----

// Tests that a constant becomes an arith.constant with the same value.
// CHECK-LABEL: func @constant
// CHECK-NEXT: %[[C:.+]] = arith.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi32>
// CHECK-NOT: kiln.
// CHECK-NEXT: return %[[C]]
func.func @constant() -> tensor<2x2xi32> {
  %0 = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

// Tests that an elementwise op on rank-0 tensors is a generic with no loops.
// CHECK: #[[$SCALAR:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func @scalar
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #[[$SCALAR]], #[[$SCALAR]]], iterator_types = []}
// CHECK-SAME: outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NOT: kiln.
// CHECK: return
func.func @scalar(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = kiln.mul %a, %b : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that variables and their reads are left alone (the execution plan
// gives them memory) while the ops on what is read are lowered.
// CHECK: kiln.variable @w : tensor<4xf32> init <zeros>
// CHECK-LABEL: func @read_variable
// CHECK: %[[W:.+]] = kiln.read @w : tensor<4xf32>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[W]], %[[W]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.addf
// CHECK-NOT: kiln.add
// CHECK: return %[[R]]
kiln.variable @w : tensor<4xf32> init <zeros>
func.func @read_variable() -> tensor<4xf32> {
  %w = kiln.read @w : tensor<4xf32>
  %0 = kiln.add %w, %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that erf, abs and pow become math.erf, math.absf / math.absi and
// math.powf.
// CHECK-LABEL: func @erf_abs_pow
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = math.erf %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[R:.+]] = math.absf %[[X]] : f16
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT: %[[R:.+]] = math.absi %[[X]] : i32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[R:.+]] = math.powf %[[X]], %[[Y]] : f32
// CHECK-NEXT: linalg.yield %[[R]]
// CHECK-NOT: kiln.
// CHECK: return
func.func @erf_abs_pow(%a: tensor<4xf32>, %b: tensor<4xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xi32>, tensor<4xf32>) {
  %0 = kiln.erf %a : tensor<4xf32>
  %1 = kiln.abs %h : tensor<4xf16>
  %2 = kiln.abs %i : tensor<4xi32>
  %3 = kiln.pow %a, %b : tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf16>, tensor<4xi32>, tensor<4xf32>
}

// -----

// Tests that a float mod is remf (the sign of the dividend), then for the
// floored remainder the divisor added where the remainder is nonzero and its
// sign differs from the divisor's; with fmod the remf alone.
// CHECK-LABEL: func @mod_float
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[REM:.+]] = arith.remf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[REMNEG:.+]] = arith.cmpf olt, %[[REM]], %[[ZERO]] : f32
// CHECK-NEXT: %[[BNEG:.+]] = arith.cmpf olt, %[[B]], %[[ZERO]] : f32
// CHECK-NEXT: %[[NONZERO:.+]] = arith.cmpf une, %[[REM]], %[[ZERO]] : f32
// CHECK-NEXT: %[[DIFFER:.+]] = arith.xori %[[REMNEG]], %[[BNEG]] : i1
// CHECK-NEXT: %[[ADJUST:.+]] = arith.andi %[[DIFFER]], %[[NONZERO]] : i1
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.addf %[[REM]], %[[B]] : f32
// CHECK-NEXT: %[[FLOORED:.+]] = arith.select %[[ADJUST]], %[[SHIFTED]], %[[REM]] : f32
// CHECK-NEXT: %[[SIGNED:.+]] = math.copysign %[[ZERO]], %[[B]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[NONZERO]], %[[FLOORED]], %[[SIGNED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[REM:.+]] = arith.remf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[REM]] : f32
// CHECK-NOT: kiln.
// CHECK: return
func.func @mod_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.mod %a, %b : tensor<4xf32>
  %1 = kiln.mod %a, %b {fmod} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that an integer mod divides by 1 where the divisor is 0 or -1
// (remsi traps there; the remainder is 0 for both), then floors as for
// floats; with fmod the guarded remsi alone.
// CHECK-LABEL: func @mod_int
// CHECK: ^bb0(%[[A:.+]]: i64, %[[B:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT: %[[BZERO:.+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i64
// CHECK-NEXT: %[[MINUSONE:.+]] = arith.constant -1 : i64
// CHECK-NEXT: %[[BMINUSONE:.+]] = arith.cmpi eq, %[[B]], %[[MINUSONE]] : i64
// CHECK-NEXT: %[[UNSAFE:.+]] = arith.ori %[[BZERO]], %[[BMINUSONE]] : i1
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[UNSAFE]], %[[ONE]], %[[B]] : i64
// CHECK-NEXT: %[[REM:.+]] = arith.remsi %[[A]], %[[SAFE]] : i64
// CHECK-NEXT: %[[REMNEG:.+]] = arith.cmpi slt, %[[REM]], %[[ZERO]] : i64
// CHECK-NEXT: %[[BNEG:.+]] = arith.cmpi slt, %[[B]], %[[ZERO]] : i64
// CHECK-NEXT: %[[NONZERO:.+]] = arith.cmpi ne, %[[REM]], %[[ZERO]] : i64
// CHECK-NEXT: %[[DIFFER:.+]] = arith.xori %[[REMNEG]], %[[BNEG]] : i1
// CHECK-NEXT: %[[ADJUST:.+]] = arith.andi %[[DIFFER]], %[[NONZERO]] : i1
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.addi %[[REM]], %[[B]] : i64
// CHECK-NEXT: %[[R:.+]] = arith.select %[[ADJUST]], %[[SHIFTED]], %[[REM]] : i64
// CHECK-NEXT: linalg.yield %[[R]] : i64
// CHECK: ^bb0(%[[A:.+]]: i32, %[[B:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[SAFE:.+]] = arith.select %{{.+}}, %{{.+}}, %[[B]] : i32
// CHECK-NEXT: %[[REM:.+]] = arith.remsi %[[A]], %[[SAFE]] : i32
// CHECK-NEXT: linalg.yield %[[REM]] : i32
// CHECK-NOT: kiln.
// CHECK: return
func.func @mod_int(%a: tensor<4xi64>, %b: tensor<4xi64>, %c: tensor<4xi32>, %d: tensor<4xi32>) -> (tensor<4xi64>, tensor<4xi32>) {
  %0 = kiln.mod %a, %b : tensor<4xi64>
  %1 = kiln.mod %c, %d {fmod} : tensor<4xi32>
  return %0, %1 : tensor<4xi64>, tensor<4xi32>
}

// -----

// Tests that stop_gradient lowers to nothing: its operand is its result.
// CHECK-LABEL: func @stop_gradient
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x5xf32>)
// CHECK-NEXT: return %[[X]]
func.func @stop_gradient(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = kiln.stop_gradient %x : tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
