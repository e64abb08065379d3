// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the transcendental ops take only floats.
func.func @exp_of_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = kiln.exp %x : tensor<4xi32>
  return
}

// -----

// Tests that gelu takes only floats.
func.func @gelu_of_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'kiln.gelu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = kiln.gelu %x approximation(tanh) : tensor<4xi64>
  return
}

// -----

// Tests that gelu names its approximation from a fixed set.
func.func @gelu_unknown_approximation(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'approximation' [exact, tanh]}}
  %0 = kiln.gelu %x approximation(erf) : tensor<4xf32>
  return
}

// -----

// Tests that arithmetic rejects booleans.
func.func @add_of_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.add' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = kiln.add %x, %x : tensor<4xi1>
  return
}

// -----

// Tests that element types outside the dialect's set are rejected.
func.func @mul_of_f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{'kiln.mul' op operand #0 must be ranked tensor of}}
  %0 = kiln.mul %x, %x : tensor<4xf64>
  return
}

// -----

// Tests that elementwise ops take only ranked tensors.
func.func @neg_of_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be ranked tensor of}}
  %0 = "kiln.neg"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

// Tests that a binary op's operands and result share their element type (the
// generic form can spell a mismatch).
func.func @sub_mixed_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'kiln.sub' op requires the same type for all operands and results}}
  %0 = "kiln.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// Tests that a binary op's operands share their shape: importers insert
// explicit broadcasts.
func.func @div_implicit_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kiln.div' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.div"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that erf takes only floats.
func.func @erf_of_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.erf' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = kiln.erf %x : tensor<4xi32>
  return
}

// -----

// Tests that pow takes only floats (an integer power would need its own
// overflow rules).
func.func @pow_of_int(%x: tensor<4xi64>) {
  // expected-error @+1 {{'kiln.pow' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi64>'}}
  %0 = kiln.pow %x, %x : tensor<4xi64>
  return
}

// -----

// Tests that mod rejects booleans.
func.func @mod_of_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.mod' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = kiln.mod %x, %x : tensor<4xi1>
  return
}

// -----

// Tests that abs rejects booleans.
func.func @abs_of_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.abs' op operand #0 must be ranked tensor of}}
  %0 = kiln.abs %x : tensor<4xi1>
  return
}

// -----

// Tests that pow's operands share their type (the generic form can spell a
// mismatch).
func.func @pow_mixed_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'kiln.pow' op requires the same type for all operands and results}}
  %0 = "kiln.pow"(%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}
