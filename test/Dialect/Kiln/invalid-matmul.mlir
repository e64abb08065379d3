// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that lhs and rhs share an element type.
func.func @mixed_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xi32>) {
  // expected-error @+2 {{'kiln.matmul' op expects lhs and rhs of one element type, got 'f32' and 'i32'}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xi32>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that vectors are not matrices.
func.func @vector_operand(%a: tensor<8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects lhs and rhs of rank >= 2, got 1 and 2}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<8xf32>, tensor<8x2xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that the contracted dimensions agree.
func.func @inner_mismatch(%a: tensor<4x8xf32>, %b: tensor<7x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects lhs columns (8) to equal rhs rows (7)}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<7x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that transpose_a contracts the lhs rows.
func.func @inner_mismatch_transpose_a(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects lhs columns (4) to equal rhs rows (8)}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b {transpose_a} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return
}

// -----

// Tests that transpose_b contracts the rhs columns.
func.func @inner_mismatch_transpose_b(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects lhs columns (8) to equal rhs rows (2)}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b {transpose_b} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that batch dimensions agree in size.
func.func @batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x5xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects equal batch dimensions or a matrix rhs, got [2] and [3]}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x4x5xf32>
  return
}

// -----

// Tests that batch dimensions agree in number: only the rhs may be a plain
// matrix.
func.func @batch_rank_mismatch(%a: tensor<4x8xf32>, %b: tensor<2x8x5xf32>) {
  // expected-error @+2 {{'kiln.matmul' op expects equal batch dimensions or a matrix rhs, got [] and [2]}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<2x8x5xf32>) -> tensor<2x4x5xf32>
  return
}

// -----

// Tests that the result type is checked against the inferred one.
func.func @wrong_result(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x3xf32>'}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that a `?` result dimension does not hide a wrong rank.
func.func @wrong_result_rank(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  // expected-error @+2 {{'kiln.matmul' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<?x?x?xf32>'}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<?x?x?xf32>
  return
}

// -----

// Tests that booleans are not multiplied.
func.func @bool_operands(%a: tensor<4x4xi1>) {
  // expected-error @+1 {{'kiln.matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x4xi1>'}}
  %0 = kiln.matmul %a, %a : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  return
}
