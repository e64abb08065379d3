// RUN: kiln-opt %s -split-input-file --kiln-infer-shapes -verify-diagnostics

// Tests that a `?` the element count cannot fill is an error, not left as is.
func.func @reshape_indivisible(%x: tensor<2x5xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 10 elements to 'tensor<?x3xf32>'}}
  %0 = kiln.reshape %x : tensor<2x5xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Tests that elements cannot go into a shape with a zero size.
func.func @reshape_into_zero(%x: tensor<4xi32>) -> tensor<?x0xi32> {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 4 elements to 'tensor<?x0xi32>'}}
  %0 = kiln.reshape %x : tensor<4xi32> -> tensor<?x0xi32>
  return %0 : tensor<?x0xi32>
}

// -----

// Tests that sizes which refinement shows to disagree are an error of the op
// that combines them (a rule with InferTypeOpInterface).
func.func @compare_conflict(%x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<?xi1> {
  %0 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  %1 = kiln.reshape %y : tensor<5xf32> -> tensor<?xf32>
  // expected-error @+1 {{'kiln.compare' op expects operands of one shape, got [4] and [5]}}
  %2 = kiln.compare eq, %0, %1 : tensor<?xf32>
  return %2 : tensor<?xi1>
}

// -----

// Tests that the same holds for an elementwise op (same operand and result
// type).
func.func @elementwise_conflict(%x: tensor<2x3xf32>, %y: tensor<12xf32>) -> tensor<?x3xf32> {
  %0 = kiln.reshape %x : tensor<2x3xf32> -> tensor<?x3xf32>
  %1 = kiln.reshape %y : tensor<12xf32> -> tensor<?x3xf32>
  // expected-error @+1 {{'kiln.mul' op expects operands of one shape, got [2, 3] and [4, 3]}}
  %2 = kiln.mul %0, %1 : tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
