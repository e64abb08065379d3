// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that the axis is a dimension of the input.
func.func @axis_out_of_range(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects axis (2) to be in [0, 2)}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 2 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that epsilon is not negative.
func.func @negative_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects a finite epsilon >= 0, got -1.000000e-05}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = -1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that epsilon is not NaN.
func.func @nan_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects a finite epsilon >= 0, got nan}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 0x7FF8000000000000 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that epsilon is finite.
func.func @infinite_epsilon(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects a finite epsilon >= 0, got INF}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 0x7FF0000000000000 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that the scale has the input's element type.
func.func @scale_element_type(%x: tensor<4x8xf32>, %g: tensor<8xbf16>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects scale of element type 'f32', got 'bf16'}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xbf16>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that the scale has the shape of the normalized dimensions.
func.func @scale_shape(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects scale of shape [3, 4] (input dimensions from axis 1), got [4]}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-05 : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

// Tests that the bias is checked like the scale.
func.func @bias_shape(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects bias of shape [8] (input dimensions from axis 1), got [4]}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that the bias element type is checked too.
func.func @bias_element_type(%x: tensor<4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op expects bias of element type 'f16', got 'f32'}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf32>) -> tensor<4x8xf16>
  return
}

// -----

// Tests that the result has the input's type.
func.func @wrong_result(%x: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{'kiln.layer_norm' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @+1 {{'kiln.layer_norm' op failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that integers are not normalized.
func.func @int_input(%x: tensor<4x8xi32>, %g: tensor<8xi32>) {
  // expected-error @+1 {{'kiln.layer_norm' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xi32>'}}
  %0 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-05 : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  return
}
