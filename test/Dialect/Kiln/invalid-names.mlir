// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that an argument name is not empty.
// expected-error @+1 {{'kiln.name' of argument #1 must be a non-empty string, got ""}}
func.func @empty_arg_name(%a: tensor<4xf32>, %b: tensor<4xf32> {kiln.name = ""}) {
  return
}

// -----

// Tests that a result name is a string.
// expected-error @+1 {{'kiln.name' of result #0 must be a non-empty string, got 3 : i64}}
func.func @int_result_name(%a: tensor<4xf32>) -> (tensor<4xf32> {kiln.name = 3}) {
  return %a : tensor<4xf32>
}

// -----

// Tests that a name is not a symbol reference either.
// expected-error @+1 {{'kiln.name' of argument #0 must be a non-empty string, got @x}}
func.func private @symbol_name(tensor<4xf32> {kiln.name = @x})

// -----

// Tests that unknown kiln attributes on arguments are rejected (a typo is not
// ignored).
// expected-error @+1 {{unknown kiln attribute 'kiln.nam' on argument #0}}
func.func @misspelled_arg_attr(%a: tensor<4xf32> {kiln.nam = "a"}) {
  return
}

// -----

// Tests that the train spec is not a result attribute.
// expected-error @+1 {{unknown kiln attribute 'kiln.train_spec' on result #0}}
func.func @spec_on_result(%a: tensor<4xf32>) -> (tensor<4xf32> {kiln.train_spec = {loss = "l"}}) {
  return %a : tensor<4xf32>
}

// -----

// Tests that a name belongs on an argument or result, not on an op.
func.func @name_on_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.name' belongs on a function argument or result}}
  %0 = kiln.neg %a {kiln.name = "n"} : tensor<4xf32>
  return
}

// -----

// Tests that unknown kiln attributes on ops are rejected.
// expected-error @+1 {{unknown kiln attribute 'kiln.trainable'}}
func.func @unknown_op_attr() attributes {kiln.trainable = true} {
  return
}

// -----

// Tests that a label input's class count (a class-weighted loss's) is
// positive.
// expected-error @+1 {{'kiln.class_count' of argument #0 must be a positive integer, got 0 : i64}}
func.func @no_classes(%labels: tensor<4xi32> {kiln.class_count = 0}) {
  return
}

// -----

// Tests that its ignored label is an integer.
// expected-error @+1 {{'kiln.ignored_label' of argument #0 must be an integer, got "x"}}
func.func @ignored_label_string(%labels: tensor<4xi32> {kiln.ignored_label = "x"}) {
  return
}
