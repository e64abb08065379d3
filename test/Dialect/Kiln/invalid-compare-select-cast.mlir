// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that compare predicates come from a fixed set.
func.func @compare_unknown_predicate(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [eq, ne, lt, le, gt, ge]}}
  %0 = kiln.compare ult, %a, %a : tensor<4xf32>
  return
}

// -----

// Tests that compare operands share one type.
func.func @compare_mixed_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.compare' op requires all operands to have the same type}}
  %0 = "kiln.compare"(%a, %b) <{predicate = 0 : i32}> : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return
}

// -----

// Tests that a compare gives booleans.
func.func @compare_float_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.compare' op result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = "kiln.compare"(%a, %a) <{predicate = 0 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that a compare result has the operands' shape.
func.func @compare_wrong_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.compare' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.compare"(%a, %a) <{predicate = 3 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xi1>
  return
}

// -----

// Tests that the parser, which infers the select result, rejects a condition
// that is not i1.
func.func @select_int_condition(%c: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.select' op expects an i1 condition, got 'i32'}}
  %0 = kiln.select %c, %a, %a : tensor<4xi32>, tensor<4xf32>
  return
}

// -----

// Tests that the generic form, which spells the result, still rejects a
// condition that is not i1.
func.func @select_int_condition_generic(%c: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %0 = "kiln.select"(%c, %a, %a) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that the condition has the values' shape.
func.func @select_condition_shape(%c: tensor<5xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.select' op expects a condition of shape [4] (the values'), got [5]}}
  %0 = kiln.select %c, %a, %a : tensor<5xi1>, tensor<4xf32>
  return
}

// -----

// Tests that the condition has the values' rank: no implicit broadcast.
func.func @select_condition_rank(%c: tensor<8xi1>, %a: tensor<4x8xbf16>) {
  // expected-error @+1 {{'kiln.select' op expects a condition of shape [4, 8] (the values'), got [8]}}
  %0 = kiln.select %c, %a, %a : tensor<8xi1>, tensor<4x8xbf16>
  return
}

// -----

// Tests that both values share one type.
func.func @select_mixed_values(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'kiln.select' op failed to verify that all of {on_true, on_false} have same type}}
  %0 = "kiln.select"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// Tests that cast keeps the shape.
func.func @cast_reshapes(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{'kiln.cast' op all non-scalar operands/results must have the same shape and base type}}
  %0 = kiln.cast %x : tensor<4x2xf32> to tensor<8xf16>
  return
}

// -----

// Tests that cast only converts to the dialect's element types.
func.func @cast_to_f64(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.cast' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf64>'}}
  %0 = kiln.cast %x : tensor<4xf32> to tensor<4xf64>
  return
}
