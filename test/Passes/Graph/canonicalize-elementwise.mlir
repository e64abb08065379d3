// RUN: kiln-opt %s -split-input-file --canonicalize | FileCheck --enable-var-scope %s

// Tests that binary ops on float constants fold, splat and dense alike.
// CHECK-LABEL: func @fold_float_constants
func.func @fold_float_constants() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK-DAG: %[[ADD:.+]] = kiln.constant dense<[1.500000e+00, 2.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[SUB:.+]] = kiln.constant dense<[5.000000e-01, 1.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[MUL:.+]] = kiln.constant dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[2.000000e+00, 4.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<5.000000e-01> : tensor<2xf32>
  // CHECK-NOT: kiln.add
  // CHECK-NOT: kiln.sub
  // CHECK-NOT: kiln.mul
  // CHECK-NOT: kiln.div
  // CHECK-NOT: kiln.maximum
  // CHECK-NOT: kiln.minimum
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
  %a = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = kiln.constant dense<0.5> : tensor<2xf32>
  %0 = kiln.add %a, %b : tensor<2xf32>
  %1 = kiln.sub %a, %b : tensor<2xf32>
  %2 = kiln.mul %a, %b : tensor<2xf32>
  %3 = kiln.div %a, %b : tensor<2xf32>
  %4 = kiln.maximum %a, %b : tensor<2xf32>
  %5 = kiln.minimum %a, %b : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Tests that binary ops on integer constants fold; division truncates toward
// zero and max/min compare signed.
// CHECK-LABEL: func @fold_int_constants
func.func @fold_int_constants() -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  // CHECK-DAG: %[[ADD:.+]] = kiln.constant dense<[5, -9, 2]> : tensor<3xi32>
  // CHECK-DAG: %[[SUB:.+]] = kiln.constant dense<[9, -5, 2]> : tensor<3xi32>
  // CHECK-DAG: %[[MUL:.+]] = kiln.constant dense<[-14, -14, 6]> : tensor<3xi32>
  // CHECK-DAG: %[[DIV:.+]] = kiln.constant dense<[-3, -3, 0]> : tensor<3xi32>
  // CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<[7, -2, 2]> : tensor<3xi32>
  // CHECK-DAG: %[[MIN:.+]] = kiln.constant dense<[-2, -7, 0]> : tensor<3xi32>
  // CHECK-NOT: kiln.add
  // CHECK-NOT: kiln.div
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
  %a = kiln.constant dense<[7, -7, 2]> : tensor<3xi32>
  %b = kiln.constant dense<[-2, -2, 0]> : tensor<3xi32>
  %c = kiln.constant dense<[-2, 2, 3]> : tensor<3xi32>
  %0 = kiln.add %a, %b : tensor<3xi32>
  %1 = kiln.sub %a, %b : tensor<3xi32>
  %2 = kiln.mul %a, %c : tensor<3xi32>
  %3 = kiln.div %a, %c : tensor<3xi32>
  %4 = kiln.maximum %a, %b : tensor<3xi32>
  %5 = kiln.minimum %a, %b : tensor<3xi32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}

// -----

// Tests that splat constants fold to splats, integers as integers (the
// element type picks the arithmetic, not the order of the attempts).
// CHECK-LABEL: func @fold_splats
func.func @fold_splats() -> (tensor<4xi64>, tensor<2x2xi32>, tensor<3xbf16>) {
  // CHECK-DAG: %[[I:.+]] = kiln.constant dense<-6> : tensor<4xi64>
  // CHECK-DAG: %[[J:.+]] = kiln.constant dense<{{\[}}[4, 5], [6, 7]]> : tensor<2x2xi32>
  // CHECK-DAG: %[[F:.+]] = kiln.constant dense<2.500000e-01> : tensor<3xbf16>
  // CHECK-NOT: kiln.mul
  // CHECK-NOT: kiln.add
  // CHECK-NOT: kiln.sub
  // CHECK: return %[[I]], %[[J]], %[[F]]
  %a = kiln.constant dense<3> : tensor<4xi64>
  %b = kiln.constant dense<-2> : tensor<4xi64>
  %0 = kiln.mul %a, %b : tensor<4xi64>
  %c = kiln.constant dense<3> : tensor<2x2xi32>
  %d = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %1 = kiln.add %c, %d : tensor<2x2xi32>
  %e = kiln.constant dense<1.0> : tensor<3xbf16>
  %f = kiln.constant dense<0.75> : tensor<3xbf16>
  %2 = kiln.sub %e, %f : tensor<3xbf16>
  return %0, %1, %2 : tensor<4xi64>, tensor<2x2xi32>, tensor<3xbf16>
}

// -----

// Tests that integer division by zero folds to 0, as it runs (numpy's
// answer; the lowering never divides by 0).
// CHECK-LABEL: func @fold_int_div_by_zero
func.func @fold_int_div_by_zero() -> tensor<2xi64> {
  // CHECK: %[[D:.+]] = kiln.constant dense<[2, 0]> : tensor<2xi64>
  // CHECK-NEXT: return %[[D]]
  %a = kiln.constant dense<[4, 6]> : tensor<2xi64>
  %z = kiln.constant dense<[2, 0]> : tensor<2xi64>
  %0 = kiln.div %a, %z : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Tests that the one overflowing integer division (min / -1) folds to the
// wrapping negation, min, as it runs.
// CHECK-LABEL: func @fold_int_div_overflow
func.func @fold_int_div_overflow() -> tensor<i32> {
  // CHECK: %[[D:.+]] = kiln.constant dense<-2147483648> : tensor<i32>
  // CHECK-NEXT: return %[[D]]
  %a = kiln.constant dense<-2147483648> : tensor<i32>
  %b = kiln.constant dense<-1> : tensor<i32>
  %0 = kiln.div %a, %b : tensor<i32>
  return %0 : tensor<i32>
}

// -----

// Tests that float division by zero folds to IEEE infinity.
// CHECK-LABEL: func @fold_float_div_by_zero
func.func @fold_float_div_by_zero() -> tensor<2xf32> {
  // CHECK: %[[C:.+]] = kiln.constant dense<0x7F800000> : tensor<2xf32>
  // CHECK-NEXT: return %[[C]]
  %a = kiln.constant dense<1.0> : tensor<2xf32>
  %z = kiln.constant dense<0.0> : tensor<2xf32>
  %0 = kiln.div %a, %z : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that x * 1 and x / 1 are x, for floats and integers, with the
// constant on either side of the commutative mul.
// CHECK-LABEL: func @multiplicative_identities
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<4xi32>)
func.func @multiplicative_identities(%x: tensor<4xf32>, %i: tensor<4xi32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) {
  // CHECK-NOT: kiln.mul
  // CHECK-NOT: kiln.div
  // CHECK: return %[[X]], %[[X]], %[[X]], %[[I]], %[[I]]
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %ione = kiln.constant dense<1> : tensor<4xi32>
  %0 = kiln.mul %x, %one : tensor<4xf32>
  %1 = kiln.mul %one, %x : tensor<4xf32>
  %2 = kiln.div %x, %one : tensor<4xf32>
  %3 = kiln.mul %i, %ione : tensor<4xi32>
  %4 = kiln.div %i, %ione : tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>, tensor<4xi32>
}

// -----

// Tests that 1 / x is not x.
// CHECK-LABEL: func @no_fold_one_over_x
func.func @no_fold_one_over_x(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[D:.+]] = kiln.div %{{.+}}, %{{.+}} : tensor<4xf32>
  // CHECK-NEXT: return %[[D]]
  %one = kiln.constant dense<1.0> : tensor<4xf32>
  %0 = kiln.div %one, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that the additive identities which hold for every value fold: x + 0
// and x - 0 for integers (either side of the add), x + (-0.0) and x - (+0.0)
// for floats.
// CHECK-LABEL: func @additive_identities
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<4xi64>)
func.func @additive_identities(%x: tensor<4xf32>, %i: tensor<4xi64>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  // CHECK-NOT: kiln.add
  // CHECK-NOT: kiln.sub
  // CHECK: return %[[X]], %[[X]], %[[I]], %[[I]], %[[I]]
  %negzero = kiln.constant dense<-0.0> : tensor<4xf32>
  %poszero = kiln.constant dense<0.0> : tensor<4xf32>
  %izero = kiln.constant dense<0> : tensor<4xi64>
  %0 = kiln.add %x, %negzero : tensor<4xf32>
  %1 = kiln.sub %x, %poszero : tensor<4xf32>
  %2 = kiln.add %i, %izero : tensor<4xi64>
  %3 = kiln.add %izero, %i : tensor<4xi64>
  %4 = kiln.sub %i, %izero : tensor<4xi64>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// Tests that x + 0.0 is not folded (-0.0 + 0.0 is +0.0), nor x - (-0.0).
// CHECK-LABEL: func @no_fold_signed_zeros
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
func.func @no_fold_signed_zeros(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-DAG: %[[POS:.+]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
  // CHECK-DAG: %[[NEG:.+]] = kiln.constant dense<-0.000000e+00> : tensor<4xf32>
  // CHECK: %[[A:.+]] = kiln.add %[[X]], %[[POS]] : tensor<4xf32>
  // CHECK-NEXT: %[[S:.+]] = kiln.sub %[[X]], %[[NEG]] : tensor<4xf32>
  // CHECK-NEXT: return %[[A]], %[[S]]
  %poszero = kiln.constant dense<0.0> : tensor<4xf32>
  %negzero = kiln.constant dense<-0.0> : tensor<4xf32>
  %0 = kiln.add %x, %poszero : tensor<4xf32>
  %1 = kiln.sub %x, %negzero : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that 0 - x is not x.
// CHECK-LABEL: func @no_fold_zero_minus_x
func.func @no_fold_zero_minus_x(%i: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: %[[S:.+]] = kiln.sub %{{.+}}, %{{.+}} : tensor<4xi32>
  // CHECK-NEXT: return %[[S]]
  %zero = kiln.constant dense<0> : tensor<4xi32>
  %0 = kiln.sub %zero, %i : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that max(x, x) and min(x, x) are x.
// CHECK-LABEL: func @max_min_same
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xbf16>)
func.func @max_min_same(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  // CHECK-NEXT: return %[[X]], %[[X]]
  %0 = kiln.maximum %x, %x : tensor<4xbf16>
  %1 = kiln.minimum %x, %x : tensor<4xbf16>
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// -----

// Tests that neg is an involution: an even chain is x, an odd one one neg.
// CHECK-LABEL: func @neg_neg
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xi32>)
func.func @neg_neg(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  // CHECK-NEXT: %[[N:.+]] = kiln.neg %[[X]] : tensor<4xi32>
  // CHECK-NEXT: return %[[X]], %[[N]]
  %0 = kiln.neg %x : tensor<4xi32>
  %1 = kiln.neg %0 : tensor<4xi32>
  %2 = kiln.neg %1 : tensor<4xi32>
  return %1, %2 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Tests that relu is idempotent: relu(relu(x)) is relu(x).
// CHECK-LABEL: func @relu_relu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
func.func @relu_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.relu %[[X]] : tensor<4xf32>
  // CHECK-NEXT: return %[[R]]
  %0 = kiln.relu %x : tensor<4xf32>
  %1 = kiln.relu %0 : tensor<4xf32>
  %2 = kiln.relu %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Tests that ops without a folder (exp, and neg of relu) stay.
// CHECK-LABEL: func @no_fold_other_unary
func.func @no_fold_other_unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: kiln.exp
  // CHECK-NEXT: kiln.exp
  // CHECK-NEXT: kiln.relu
  // CHECK-NEXT: kiln.neg
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.exp %0 : tensor<4xf32>
  %2 = kiln.relu %1 : tensor<4xf32>
  %3 = kiln.neg %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
