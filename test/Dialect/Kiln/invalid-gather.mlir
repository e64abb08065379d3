// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the axis is a dimension of the table.
func.func @axis_out_of_range(%t: tensor<10x16xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{'kiln.gather' op expects axis (2) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.gather' op failed to infer returned types}}
  %0 = kiln.gather %t[%i] {axis = 2 : i64} : (tensor<10x16xf32>, tensor<4xi64>) -> tensor<10x16x4xf32>
  return
}

// -----

// Tests that a negative axis is rejected (importers normalize it).
func.func @negative_axis(%t: tensor<10x16xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{'kiln.gather' op expects axis (-1) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.gather' op failed to infer returned types}}
  %0 = kiln.gather %t[%i] {axis = -1 : i64} : (tensor<10x16xf32>, tensor<4xi64>) -> tensor<10x4xf32>
  return
}

// -----

// Tests that indices are integers.
func.func @float_indices(%t: tensor<10x16xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = kiln.gather %t[%i] : (tensor<10x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Tests that the index shape replaces the gathered dimension.
func.func @wrong_result(%t: tensor<10x16xf32>, %i: tensor<2x4xi32>) {
  // expected-error @+2 {{'kiln.gather' op inferred type(s) 'tensor<2x4x16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xf32>'}}
  // expected-error @+1 {{'kiln.gather' op failed to infer returned types}}
  %0 = kiln.gather %t[%i] : (tensor<10x16xf32>, tensor<2x4xi32>) -> tensor<8x16xf32>
  return
}

// -----

// Tests that the result has the table's element type.
func.func @wrong_element_type(%t: tensor<10x16xf32>, %i: tensor<4xi32>) {
  // expected-error @+2 {{'kiln.gather' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x16xi32>'}}
  // expected-error @+1 {{'kiln.gather' op failed to infer returned types}}
  %0 = kiln.gather %t[%i] : (tensor<10x16xf32>, tensor<4xi32>) -> tensor<4x16xi32>
  return
}

// -----

// Tests that gather_elements' indices have the input's rank.
func.func @gather_elements_rank(%x: tensor<4x8xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{'kiln.gather_elements' op expects indices of the input's rank (2), got shape [4]}}
  // expected-error @+1 {{'kiln.gather_elements' op failed to infer returned types}}
  %0 = kiln.gather_elements %x[%i] axis = 0 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

// Tests that gather_elements' axis is a dimension of the input.
func.func @gather_elements_axis(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+2 {{'kiln.gather_elements' op expects axis (2) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.gather_elements' op failed to infer returned types}}
  %0 = kiln.gather_elements %x[%i] axis = 2 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that gather_elements' negative axis is rejected (importers normalize
// it).
func.func @gather_elements_negative_axis(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+2 {{'kiln.gather_elements' op expects axis (-1) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.gather_elements' op failed to infer returned types}}
  %0 = kiln.gather_elements %x[%i] axis = -1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that outside the axis the indices are at most the input's size.
func.func @gather_elements_too_long(%x: tensor<4x8xf32>, %i: tensor<5x2xi32>) {
  // expected-error @+2 {{'kiln.gather_elements' op expects indices dimension 0 (5) to be at most the input's (4)}}
  // expected-error @+1 {{'kiln.gather_elements' op failed to infer returned types}}
  %0 = kiln.gather_elements %x[%i] axis = 1 : (tensor<4x8xf32>, tensor<5x2xi32>) -> tensor<5x2xf32>
  return
}

// -----

// Tests that gather_elements' indices are integers.
func.func @gather_elements_float_indices(%x: tensor<4x8xf32>, %i: tensor<4x2xf32>) {
  // expected-error @+1 {{'kiln.gather_elements' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x2xf32>'}}
  %0 = kiln.gather_elements %x[%i] axis = 1 : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

// Tests that gather_elements' result has the indices' shape and the input's
// element type.
func.func @gather_elements_result(%x: tensor<4x8xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+2 {{'kiln.gather_elements' op inferred type(s) 'tensor<4x2xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'kiln.gather_elements' op failed to infer returned types}}
  %0 = kiln.gather_elements %x[%i] axis = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x8xf32>
  return
}
