// RUN: kiln-opt %s -split-input-file --canonicalize | FileCheck --enable-var-scope %s

// Tests that a splat condition picks one value.
// CHECK-LABEL: func @select_splat_condition
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
func.func @select_splat_condition(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NOT: kiln.select
  // CHECK: return %[[A]], %[[B]]
  %t = kiln.constant dense<true> : tensor<4xi1>
  %f = kiln.constant dense<false> : tensor<4xi1>
  %0 = kiln.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = kiln.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that equal values make the condition irrelevant.
// CHECK-LABEL: func @select_same_values
// CHECK-SAME: (%[[C:[^:]+]]: tensor<4xi1>, %[[A:[^:]+]]: tensor<4xi32>)
func.func @select_same_values(%c: tensor<4xi1>, %a: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK-NEXT: return %[[A]]
  %0 = kiln.select %c, %a, %a : tensor<4xi1>, tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that a condition that is not a splat is kept.
// CHECK-LABEL: func @select_mixed_condition
func.func @select_mixed_condition(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: %[[S:.+]] = kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<2xi1>, tensor<2xf32>
  // CHECK-NEXT: return %[[S]]
  %c = kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.select %c, %a, %b : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that select is not folded to a value of another type: the condition
// makes the result static where the values are `?`.
// CHECK-LABEL: func @select_keeps_result_type
func.func @select_keeps_result_type(%c: tensor<3xi1>, %a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[S:.+]] = kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xi1>, tensor<?xf32>
  // CHECK-NEXT: %[[T:.+]] = kiln.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<3xi1>, tensor<?xf32>
  // CHECK-NEXT: return %[[S]], %[[T]]
  %t = kiln.constant dense<true> : tensor<3xi1>
  %0 = kiln.select %t, %a, %b : tensor<3xi1>, tensor<?xf32>
  %1 = kiln.select %c, %a, %a : tensor<3xi1>, tensor<?xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a cast to the operand's own type is gone, and other casts stay.
// CHECK-LABEL: func @cast
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[D:[^:]+]]: tensor<?xf32>)
func.func @cast(%x: tensor<4xf32>, %d: tensor<?xf32>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) {
  // CHECK-NEXT: %[[H:.+]] = kiln.cast %[[X]] : tensor<4xf32> to tensor<4xbf16>
  // CHECK-NEXT: %[[S:.+]] = kiln.cast %[[D]] : tensor<?xf32> to tensor<4xf32>
  // CHECK-NEXT: return %[[X]], %[[H]], %[[S]]
  %0 = kiln.cast %x : tensor<4xf32> to tensor<4xf32>
  %1 = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
  %2 = kiln.cast %d : tensor<?xf32> to tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
}

// -----

// Tests that a round trip through another type is not an identity (bf16
// loses bits).
// CHECK-LABEL: func @cast_round_trip
func.func @cast_round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NEXT: %[[H:.+]] = kiln.cast %{{.+}} : tensor<4xf32> to tensor<4xbf16>
  // CHECK-NEXT: %[[F:.+]] = kiln.cast %[[H]] : tensor<4xbf16> to tensor<4xf32>
  // CHECK-NEXT: return %[[F]]
  %0 = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = kiln.cast %0 : tensor<4xbf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}
