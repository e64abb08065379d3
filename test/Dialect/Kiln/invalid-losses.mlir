// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that logits have a classes dimension.
func.func @logits_rank(%l: tensor<10xf32>, %y: tensor<i64>) {
  // expected-error @+2 {{'kiln.softmax_cross_entropy' op expects logits of rank >= 2 [batch..., classes], got [10]}}
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op failed to infer returned types}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

// Tests that sequence logits [B, T, C] take labels [B, T].
func.func @sequence_labels_rank(%l: tensor<4x3x10xf32>, %y: tensor<4xi64>) {
  // expected-error @+2 {{'kiln.softmax_cross_entropy' op expects labels of rank 2 (the logits' without classes), got [4]}}
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op failed to infer returned types}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x3x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// Tests that labels are class ids [batch], not one-hot rows.
func.func @labels_rank(%l: tensor<4x10xf32>, %y: tensor<4x10xi64>) {
  // expected-error @+2 {{'kiln.softmax_cross_entropy' op expects labels of rank 1 (the logits' without classes), got [4, 10]}}
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op failed to infer returned types}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4x10xi64>) -> tensor<f32>
  return
}

// -----

// Tests that logits and labels share the batch size.
func.func @batch_mismatch(%l: tensor<4x10xf32>, %y: tensor<5xi32>) {
  // expected-error @+2 {{'kiln.softmax_cross_entropy' op expects labels shaped like the logits without classes ([4]), got [5]}}
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op failed to infer returned types}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<5xi32>) -> tensor<f32>
  return
}

// -----

// Tests that float labels are rejected (i32 and i64 are fine, see losses.mlir).
func.func @float_labels(%l: tensor<4x10xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

// Tests that the loss is a scalar.
func.func @vector_loss(%l: tensor<4x10xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op result #0 must be 0D tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xf32>'}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

// Tests that the loss has the logits' float type.
func.func @loss_element_type(%l: tensor<4x10xbf16>, %y: tensor<4xi32>) {
  // expected-error @+2 {{'kiln.softmax_cross_entropy' op inferred type(s) 'tensor<bf16>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op failed to infer returned types}}
  %0 = kiln.softmax_cross_entropy %l, %y : (tensor<4x10xbf16>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

// Tests that a pointwise loss has the inputs' float type.
func.func @pointwise_element_type(%a: tensor<4xf16>) {
  // expected-error @+2 {{'kiln.mean_squared_error' op inferred type(s) 'tensor<f16>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{'kiln.mean_squared_error' op failed to infer returned types}}
  %0 = kiln.mean_squared_error %a, %a : tensor<4xf16> -> tensor<f32>
  return
}

// -----

// Tests that prediction and target share one type.
func.func @pointwise_mixed(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.sigmoid_cross_entropy' op requires all operands to have the same type}}
  %0 = "kiln.sigmoid_cross_entropy"(%a, %b) : (tensor<4xf32>, tensor<5xf32>) -> tensor<f32>
  return
}

// -----

// Tests that pointwise losses take only floats.
func.func @pointwise_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.mean_squared_error' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4xi32>'}}
  %0 = kiln.mean_squared_error %a, %a : tensor<4xi32> -> tensor<i32>
  return
}
