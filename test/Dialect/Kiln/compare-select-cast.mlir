// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that compare prints every predicate and infers an i1 result of the
// operands' shape.
// CHECK-LABEL: func @compare
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK-NEXT: %[[EQ:.+]] = kiln.compare eq, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: %[[NE:.+]] = kiln.compare ne, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: %[[LT:.+]] = kiln.compare lt, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: %[[LE:.+]] = kiln.compare le, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: %[[GT:.+]] = kiln.compare gt, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: %[[GE:.+]] = kiln.compare ge, %[[A]], %[[B]] : tensor<4xf32>
  // CHECK-NEXT: return %[[EQ]], %[[NE]], %[[LT]], %[[LE]], %[[GT]], %[[GE]] : tensor<4xi1>, tensor<4xi1>,
  %0 = kiln.compare eq, %a, %b : tensor<4xf32>
  %1 = kiln.compare ne, %a, %b : tensor<4xf32>
  %2 = kiln.compare lt, %a, %b : tensor<4xf32>
  %3 = kiln.compare le, %a, %b : tensor<4xf32>
  %4 = kiln.compare gt, %a, %b : tensor<4xf32>
  %5 = kiln.compare ge, %a, %b : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that compare takes integers and booleans, and keeps a `?` it cannot
// know.
// CHECK-LABEL: func @compare_types
func.func @compare_types(%i: tensor<?x3xi64>, %m: tensor<2xi1>) -> (tensor<?x3xi1>, tensor<2xi1>) {
  // CHECK: kiln.compare ge, %{{.+}}, %{{.+}} : tensor<?x3xi64>
  // CHECK-NEXT: kiln.compare eq, %{{.+}}, %{{.+}} : tensor<2xi1>
  // CHECK-NEXT: return {{.*}} : tensor<?x3xi1>, tensor<2xi1>
  %0 = kiln.compare ge, %i, %i : tensor<?x3xi64>
  %1 = kiln.compare eq, %m, %m : tensor<2xi1>
  return %0, %1 : tensor<?x3xi1>, tensor<2xi1>
}

// -----

// Tests that select round-trips and feeds on a compare.
// CHECK-LABEL: func @select
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<4x8xf32>)
func.func @select(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NEXT: %[[M:.+]] = kiln.compare gt, %[[A]], %[[B]] : tensor<4x8xf32>
  // CHECK-NEXT: %[[R:.+]] = kiln.select %[[M]], %[[A]], %[[B]] : tensor<4x8xi1>, tensor<4x8xf32>
  // CHECK-NEXT: return %[[R]] : tensor<4x8xf32>
  %m = kiln.compare gt, %a, %b : tensor<4x8xf32>
  %r = kiln.select %m, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Tests that a static condition makes the select result static where the
// values are `?`.
// CHECK-LABEL: func @select_joins_condition_shape
func.func @select_joins_condition_shape(%m: tensor<4x8xi1>, %v: tensor<?x8xi32>) -> tensor<4x8xi32> {
  // CHECK: %[[R:.+]] = kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<4x8xi1>, tensor<?x8xi32>
  // CHECK-NEXT: return %[[R]] : tensor<4x8xi32>
  %r = kiln.select %m, %v, %v : tensor<4x8xi1>, tensor<?x8xi32>
  return %r : tensor<4x8xi32>
}

// -----

// Tests that cast converts between every element kind, keeping the shape.
// CHECK-LABEL: func @cast
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x?xf32>)
func.func @cast(%x: tensor<4x?xf32>) {
  // CHECK-NEXT: %[[H:.+]] = kiln.cast %[[X]] : tensor<4x?xf32> to tensor<4x?xbf16>
  // CHECK-NEXT: %[[I:.+]] = kiln.cast %[[H]] : tensor<4x?xbf16> to tensor<4x?xi32>
  // CHECK-NEXT: %[[B:.+]] = kiln.cast %[[I]] : tensor<4x?xi32> to tensor<4x?xi1>
  // CHECK-NEXT: kiln.cast %[[B]] : tensor<4x?xi1> to tensor<4x?xf16>
  %0 = kiln.cast %x : tensor<4x?xf32> to tensor<4x?xbf16>
  %1 = kiln.cast %0 : tensor<4x?xbf16> to tensor<4x?xi32>
  %2 = kiln.cast %1 : tensor<4x?xi32> to tensor<4x?xi1>
  %3 = kiln.cast %2 : tensor<4x?xi1> to tensor<4x?xf16>
  return
}

// -----

// Tests that cast may make a `?` static (its shapes need only be compatible).
// CHECK-LABEL: func @cast_refines
func.func @cast_refines(%x: tensor<?xi64>) {
  // CHECK: kiln.cast %{{.+}} : tensor<?xi64> to tensor<7xi32>
  %0 = kiln.cast %x : tensor<?xi64> to tensor<7xi32>
  return
}
