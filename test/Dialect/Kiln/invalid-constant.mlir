// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the value and the result have one type.
func.func @type_mismatch() {
  // expected-error @+1 {{'kiln.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "kiln.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

// Tests that a constant is a tensor of the dialect's element types.
func.func @f64_constant() {
  // expected-error @+1 {{'kiln.constant' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<2xf64>'}}
  %0 = kiln.constant dense<1.0> : tensor<2xf64>
  return
}

// -----

// Tests that a scalar attribute is not a tensor constant.
func.func @scalar_value() {
  // expected-error @+1 {{invalid properties {value = 1.000000e+00 : f32} for op kiln.constant: Invalid attribute `value` in property conversion}}
  %0 = "kiln.constant"() <{value = 1.0 : f32}> : () -> tensor<f32>
  return
}
