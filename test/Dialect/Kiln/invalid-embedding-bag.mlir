// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that ids need a list dimension.
func.func @scalar_ids(%t: tensor<10x16xf32>, %i: tensor<i64>) {
  // expected-error @+2 {{'kiln.embedding_bag' op expects ids of rank >= 1 [batch..., ids per list], got rank 0}}
  // expected-error @+1 {{'kiln.embedding_bag' op failed to infer returned types}}
  %0 = kiln.embedding_bag %t[%i] combiner = sum : (tensor<10x16xf32>, tensor<i64>) -> tensor<16xf32>
  return
}

// -----

// Tests that the result has the lists' batch shape and the table's row shape.
func.func @wrong_result(%t: tensor<10x16xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+2 {{'kiln.embedding_bag' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x3x16xf32>'}}
  // expected-error @+1 {{'kiln.embedding_bag' op failed to infer returned types}}
  %0 = kiln.embedding_bag %t[%i] combiner = mean : (tensor<10x16xf32>, tensor<4x3xi64>) -> tensor<4x3x16xf32>
  return
}

// -----

// Tests that the combiner is one of sum, mean, sqrtn.
func.func @bad_combiner(%t: tensor<10x16xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'combiner' [sum, mean, sqrtn]}}
  %0 = kiln.embedding_bag %t[%i] combiner = max : (tensor<10x16xf32>, tensor<4x3xi64>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that a table of integers is refused (rows are combined by weights).
func.func @integer_table(%t: tensor<10x16xi32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{'kiln.embedding_bag' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<10x16xi32>'}}
  %0 = kiln.embedding_bag %t[%i] combiner = sum : (tensor<10x16xi32>, tensor<4x3xi64>) -> tensor<4x16xi32>
  return
}
