// RUN: kiln-opt %s -split-input-file --canonicalize --mlir-elide-elementsattrs-if-larger=16 | FileCheck --enable-var-scope %s

// Tests that integers cast to floats round to nearest (2^24 + 1 is not an
// f32), floats to integers truncate toward zero, and anything to bool is
// `!= 0`, NaN included and -0.0 excluded; bools become 0 or 1, never -1;
// narrowing integers keeps the low bits.
// CHECK-LABEL: func @cast_constants
// CHECK-DAG: %[[ITOF:.+]] = kiln.constant dense<[-3.000000e+00, 0.000000e+00, 7.000000e+00, 0x4B800000]> : tensor<4xf32>
// CHECK-DAG: %[[FTOI:.+]] = kiln.constant dense<[2, -2, 0, 0, 1000000000, 0]> : tensor<6xi32>
// CHECK-DAG: %[[FTOB:.+]] = kiln.constant dense<[false, false, true, true]> : tensor<4xi1>
// CHECK-DAG: %[[ITOB:.+]] = kiln.constant dense<[false, true, true]> : tensor<3xi1>
// CHECK-DAG: %[[BTOF:.+]] = kiln.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[BTOI:.+]] = kiln.constant dense<[1, 0]> : tensor<2xi64>
// CHECK-DAG: %[[NARROW:.+]] = kiln.constant dense<[1, -1]> : tensor<2xi32>
// CHECK-DAG: %[[BF16:.+]] = kiln.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xbf16>
// CHECK-NOT: kiln.cast
// CHECK: return %[[ITOF]], %[[FTOI]], %[[FTOB]], %[[ITOB]], %[[BTOF]], %[[BTOI]], %[[NARROW]], %[[BF16]]
func.func @cast_constants() -> (tensor<4xf32>, tensor<6xi32>, tensor<4xi1>, tensor<3xi1>, tensor<2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<2xbf16>) {
  %i = kiln.constant dense<[-3, 0, 7, 16777217]> : tensor<4xi32>
  %f = kiln.constant dense<[2.7, -2.7, 0.5, -0.5, 1.0e9, -0.0]> : tensor<6xf32>
  %z = kiln.constant dense<[0.0, -0.0, 2.5, 0x7FC00000]> : tensor<4xf32>
  %n = kiln.constant dense<[0, -1, 5]> : tensor<3xi64>
  %b = kiln.constant dense<[true, false]> : tensor<2xi1>
  %w = kiln.constant dense<[4294967297, -1]> : tensor<2xi64>
  %0 = kiln.cast %i : tensor<4xi32> to tensor<4xf32>
  %1 = kiln.cast %f : tensor<6xf32> to tensor<6xi32>
  %2 = kiln.cast %z : tensor<4xf32> to tensor<4xi1>
  %3 = kiln.cast %n : tensor<3xi64> to tensor<3xi1>
  %4 = kiln.cast %b : tensor<2xi1> to tensor<2xf32>
  %5 = kiln.cast %b : tensor<2xi1> to tensor<2xi64>
  %6 = kiln.cast %w : tensor<2xi64> to tensor<2xi32>
  %7 = kiln.cast %4 : tensor<2xf32> to tensor<2xbf16>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<6xi32>, tensor<4xi1>, tensor<3xi1>, tensor<2xf32>, tensor<2xi64>, tensor<2xi32>, tensor<2xbf16>
}

// -----

// Tests that a float-to-integer cast is not folded where an element is out
// of the integer's range or NaN: what the machine gives is left to run time.
// CHECK-LABEL: func @cast_out_of_range
// CHECK: %[[BIG:.+]] = kiln.cast %{{.+}} : tensor<2xf32> to tensor<2xi32>
// CHECK-NEXT: %[[NAN:.+]] = kiln.cast %{{.+}} : tensor<2xf32> to tensor<2xi32>
// CHECK-NEXT: return %[[BIG]], %[[NAN]]
func.func @cast_out_of_range() -> (tensor<2xi32>, tensor<2xi32>) {
  %f = kiln.constant dense<[1.0, 3.0e9]> : tensor<2xf32>
  %g = kiln.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %0 = kiln.cast %f : tensor<2xf32> to tensor<2xi32>
  %1 = kiln.cast %g : tensor<2xf32> to tensor<2xi32>
  return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// -----

// Tests that float comparisons with NaN are false except `ne`, as the
// compiled compare (ordered predicates, une) gives.
// CHECK-LABEL: func @compare_floats
// CHECK-DAG: %[[EQ:.+]] = kiln.constant dense<[true, false, false, false, false]> : tensor<5xi1>
// CHECK-DAG: %[[NE:.+]] = kiln.constant dense<[false, true, true, true, true]> : tensor<5xi1>
// CHECK-DAG: %[[LT:.+]] = kiln.constant dense<[false, false, false, false, true]> : tensor<5xi1>
// CHECK-DAG: %[[LE:.+]] = kiln.constant dense<[true, false, false, false, true]> : tensor<5xi1>
// CHECK-DAG: %[[GT:.+]] = kiln.constant dense<[false, false, false, true, false]> : tensor<5xi1>
// CHECK-DAG: %[[GE:.+]] = kiln.constant dense<[true, false, false, true, false]> : tensor<5xi1>
// CHECK-NOT: kiln.compare
// CHECK: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]]
func.func @compare_floats() -> (tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>) {
  %a = kiln.constant dense<[1.0, 0x7FC00000, 2.0, 3.0, 1.0]> : tensor<5xf32>
  %b = kiln.constant dense<[1.0, 1.0, 0x7FC00000, 2.0, 2.0]> : tensor<5xf32>
  %0 = kiln.compare eq, %a, %b : tensor<5xf32>
  %1 = kiln.compare ne, %a, %b : tensor<5xf32>
  %2 = kiln.compare lt, %a, %b : tensor<5xf32>
  %3 = kiln.compare le, %a, %b : tensor<5xf32>
  %4 = kiln.compare gt, %a, %b : tensor<5xf32>
  %5 = kiln.compare ge, %a, %b : tensor<5xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>, tensor<5xi1>
}

// -----

// Tests that integers compare signed (a splat operand read element by
// element) and bools unsigned (true > false).
// CHECK-LABEL: func @compare_integers
// CHECK-DAG: %[[INT:.+]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[BOOL:.+]] = kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-NOT: kiln.compare
// CHECK: return %[[INT]], %[[BOOL]]
func.func @compare_integers() -> (tensor<2xi1>, tensor<2xi1>) {
  %i = kiln.constant dense<[-1, 2]> : tensor<2xi64>
  %j = kiln.constant dense<1> : tensor<2xi64>
  %0 = kiln.compare lt, %i, %j : tensor<2xi64>
  %t = kiln.constant dense<[false, true]> : tensor<2xi1>
  %f = kiln.constant dense<false> : tensor<2xi1>
  %1 = kiln.compare gt, %t, %f : tensor<2xi1>
  return %0, %1 : tensor<2xi1>, tensor<2xi1>
}

// -----

// Tests that a select of constants with a mixed constant condition picks
// element by element.
// CHECK-LABEL: func @select_constants
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<[1, 20, 3]> : tensor<3xi32>
// CHECK-NEXT: return %[[C]]
func.func @select_constants() -> tensor<3xi32> {
  %c = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %a = kiln.constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = kiln.constant dense<[10, 20, 30]> : tensor<3xi32>
  %0 = kiln.select %c, %a, %b : tensor<3xi1>, tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Tests that a gather of constants clamps ids into the table as the compiled
// gather does: -1 reads row 0 and 5 the last row (2); on axis 1, 7 reads
// column 2.
// CHECK-LABEL: func @gather_constants
// CHECK-DAG: %[[ROWS:.+]] = kiln.constant dense<{{\[}}[2.000000e+00, 2.500000e+00], [0.000000e+00, 5.000000e-01], [2.000000e+00, 2.500000e+00], [0.000000e+00, 5.000000e-01]]> : tensor<4x2xf32>
// CHECK-DAG: %[[COLS:.+]] = kiln.constant dense<{{\[}}[11, 12], [21, 22]]> : tensor<2x2xi64>
// CHECK-NOT: kiln.gather
// CHECK: return %[[ROWS]], %[[COLS]]
func.func @gather_constants() -> (tensor<4x2xf32>, tensor<2x2xi64>) {
  %t = kiln.constant dense<[[0.0, 0.5], [1.0, 1.5], [2.0, 2.5]]> : tensor<3x2xf32>
  %ids = kiln.constant dense<[2, -1, 5, 0]> : tensor<4xi64>
  %0 = kiln.gather %t[%ids] : (tensor<3x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
  %s = kiln.constant dense<[[10, 11, 12], [20, 21, 22]]> : tensor<2x3xi64>
  %c = kiln.constant dense<[1, 7]> : tensor<2xi32>
  %1 = kiln.gather %s[%c] {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x2xi64>
  return %0, %1 : tensor<4x2xf32>, tensor<2x2xi64>
}

// -----

// Tests that concats of constants are constants, on the last axis too (rows
// interleave).
// CHECK-LABEL: func @concat_constants
// CHECK-DAG: %[[V:.+]] = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-DAG: %[[M:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf16>
// CHECK-NOT: kiln.concat
// CHECK: return %[[V]], %[[M]]
func.func @concat_constants() -> (tensor<3xi64>, tensor<2x3xf16>) {
  %a = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %b = kiln.constant dense<[3]> : tensor<1xi64>
  %0 = kiln.concat %a, %b axis = 0 : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %c = kiln.constant dense<[[1.0], [2.0]]> : tensor<2x1xf16>
  %d = kiln.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf16>
  %1 = kiln.concat %c, %d axis = 1 : (tensor<2x1xf16>, tensor<2x2xf16>) -> tensor<2x3xf16>
  return %0, %1 : tensor<3xi64>, tensor<2x3xf16>
}

// -----

// Tests that strided slices and transposes of (non-splat) constants are
// constants.
// CHECK-LABEL: func @slice_transpose_constants
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<[1, 4, 7]> : tensor<3xi32>
// CHECK-DAG: %[[R:.+]] = kiln.constant dense<{{\[}}[3, 5]]> : tensor<1x2xi32>
// CHECK-DAG: %[[T:.+]] = kiln.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: kiln.slice
// CHECK-NOT: kiln.transpose
// CHECK: return %[[S]], %[[R]], %[[T]]
func.func @slice_transpose_constants() -> (tensor<3xi32>, tensor<1x2xi32>, tensor<3x2xf32>) {
  %a = kiln.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
  %0 = kiln.slice %a start [1] limit [8] step [3] : tensor<8xi32> -> tensor<3xi32>
  %m = kiln.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %1 = kiln.slice %m start [1, 0] limit [2, 3] step [1, 2] : tensor<2x3xi32> -> tensor<1x2xi32>
  %f = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %2 = kiln.transpose %f [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0, %1, %2 : tensor<3xi32>, tensor<1x2xi32>, tensor<3x2xf32>
}

// -----

// Tests that neg of constants folds: integers wrap (-INT_MIN is INT_MIN),
// floats flip the sign of zero too.
// CHECK-LABEL: func @neg_constants
// CHECK-DAG: %[[I:.+]] = kiln.constant dense<[-1, 2, -2147483648]> : tensor<3xi32>
// CHECK-DAG: %[[F:.+]] = kiln.constant dense<[-1.500000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NOT: kiln.neg
// CHECK: return %[[I]], %[[F]]
func.func @neg_constants() -> (tensor<3xi32>, tensor<2xf32>) {
  %i = kiln.constant dense<[1, -2, -2147483648]> : tensor<3xi32>
  %f = kiln.constant dense<[1.5, -0.0]> : tensor<2xf32>
  %0 = kiln.neg %i : tensor<3xi32>
  %1 = kiln.neg %f : tensor<2xf32>
  return %0, %1 : tensor<3xi32>, tensor<2xf32>
}

// -----

// Tests that mod folds floored (the sign of the divisor, Python's %) and
// with fmod truncated (the sign of the dividend, C's fmod).
// CHECK-LABEL: func @mod_float_constants
// CHECK-DAG: %[[FLOORED:.+]] = kiln.constant dense<[1.500000e+00, 5.000000e-01, -5.000000e-01, -1.500000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[TRUNCATED:.+]] = kiln.constant dense<[1.500000e+00, -1.500000e+00, 1.500000e+00, -1.500000e+00]> : tensor<4xf32>
// CHECK-NOT: kiln.mod
// CHECK: return %[[FLOORED]], %[[TRUNCATED]]
func.func @mod_float_constants() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.constant dense<[5.5, -5.5, 5.5, -5.5]> : tensor<4xf32>
  %b = kiln.constant dense<[2.0, 2.0, -2.0, -2.0]> : tensor<4xf32>
  %0 = kiln.mod %a, %b : tensor<4xf32>
  %1 = kiln.mod %a, %b {fmod} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that integer mod of constants folds floored and truncated; a
// remainder by zero is 0, as the compiled mod gives, and INT_MIN mod -1 is
// 0, the true remainder (not an overflow).
// CHECK-LABEL: func @mod_int_constants
// CHECK-DAG: %[[FLOORED:.+]] = kiln.constant dense<[1, 2, -2, -1, 0, 0, 0]> : tensor<7xi32>
// CHECK-DAG: %[[TRUNCATED:.+]] = kiln.constant dense<[1, -1, 1, -1, 0, 0, 0]> : tensor<7xi32>
// CHECK-NOT: kiln.mod
// CHECK: return %[[FLOORED]], %[[TRUNCATED]]
func.func @mod_int_constants() -> (tensor<7xi32>, tensor<7xi32>) {
  %a = kiln.constant dense<[7, -7, 7, -7, 7, 0, -2147483648]> : tensor<7xi32>
  %b = kiln.constant dense<[3, 3, -3, -3, 0, 5, -1]> : tensor<7xi32>
  %0 = kiln.mod %a, %b : tensor<7xi32>
  %1 = kiln.mod %a, %b {fmod} : tensor<7xi32>
  return %0, %1 : tensor<7xi32>, tensor<7xi32>
}

// -----

// Tests that a float remainder by zero (NaN) is not folded.
// CHECK-LABEL: func @mod_float_by_zero
// CHECK: %[[R:.+]] = kiln.mod %{{.+}}, %{{.+}} : tensor<2xf32>
// CHECK-NEXT: return %[[R]]
func.func @mod_float_by_zero() -> tensor<2xf32> {
  %a = kiln.constant dense<[5.5, 1.0]> : tensor<2xf32>
  %b = kiln.constant dense<[2.0, 0.0]> : tensor<2xf32>
  %0 = kiln.mod %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that integer reduce_sum and reduce_max of constants fold, with
// keep_dims and over every axis; a float reduction stays (its order of
// additions is the compiled code's).
// CHECK-LABEL: func @reduce_constants
// CHECK-DAG: %[[SUM:.+]] = kiln.constant dense<[6, 5]> : tensor<2xi32>
// CHECK-DAG: %[[MAX:.+]] = kiln.constant dense<{{\[}}[1, -2, 3]]> : tensor<1x3xi64>
// CHECK-DAG: %[[ALL:.+]] = kiln.constant dense<6> : tensor<i32>
// CHECK-DAG: %[[FSUM:.+]] = kiln.reduce_sum %{{.+}} axes [1] : tensor<2x2xf32> -> tensor<2xf32>
// CHECK-NOT: kiln.reduce_max
// CHECK: return %[[SUM]], %[[MAX]], %[[ALL]], %[[FSUM]]
func.func @reduce_constants() -> (tensor<2xi32>, tensor<1x3xi64>, tensor<i32>, tensor<2xf32>) {
  %a = kiln.constant dense<[[1, 2, 3], [4, -5, 6]]> : tensor<2x3xi32>
  %0 = kiln.reduce_sum %a axes [1] : tensor<2x3xi32> -> tensor<2xi32>
  %b = kiln.constant dense<[[1, -2, 3], [-4, -5, 2]]> : tensor<2x3xi64>
  %1 = kiln.reduce_max %b axes [0] {keep_dims} : tensor<2x3xi64> -> tensor<1x3xi64>
  %2 = kiln.reduce_max %a axes [0, 1] : tensor<2x3xi32> -> tensor<i32>
  %f = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %3 = kiln.reduce_sum %f axes [1] : tensor<2x2xf32> -> tensor<2xf32>
  return %0, %1, %2, %3 : tensor<2xi32>, tensor<1x3xi64>, tensor<i32>, tensor<2xf32>
}

// -----

// Tests that the size limit holds: a result of 65536 elements folds, one of
// 65538 (or a cast of 65537) stays an op.
// CHECK-LABEL: func @fold_limit
// CHECK-DAG: %[[AT:.+]] = kiln.constant dense_resource<__elided__> : tensor<32768x2xi64>
// CHECK-DAG: %[[SPLAT:.+]] = kiln.constant dense<3.000000e+00> : tensor<65536xf32>
// CHECK-DAG: %[[OVER:.+]] = kiln.broadcast %{{.+}} : tensor<2xi64> -> tensor<32769x2xi64>
// CHECK-DAG: %[[CAST:.+]] = kiln.cast %{{.+}} : tensor<65537xi32> to tensor<65537xf32>
// CHECK: return %[[AT]], %[[OVER]], %[[SPLAT]], %[[CAST]]
func.func @fold_limit() -> (tensor<32768x2xi64>, tensor<32769x2xi64>, tensor<65536xf32>, tensor<65537xf32>) {
  %d = kiln.constant dense<[1, 2]> : tensor<2xi64>
  %0 = kiln.broadcast %d : tensor<2xi64> -> tensor<32768x2xi64>
  %1 = kiln.broadcast %d : tensor<2xi64> -> tensor<32769x2xi64>
  %i = kiln.constant dense<3> : tensor<65536xi32>
  %2 = kiln.cast %i : tensor<65536xi32> to tensor<65536xf32>
  %j = kiln.constant dense<3> : tensor<65537xi32>
  %3 = kiln.cast %j : tensor<65537xi32> to tensor<65537xf32>
  return %0, %1, %2, %3 : tensor<32768x2xi64>, tensor<32769x2xi64>, tensor<65536xf32>, tensor<65537xf32>
}
