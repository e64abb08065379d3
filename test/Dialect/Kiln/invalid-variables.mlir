// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that an unknown initializer kind is a parse error.
// expected-error @+1 {{unknown initializer 'he_normal'}}
kiln.variable @v : tensor<2xf32> init <he_normal>

// -----

// Tests that a constant initializer needs a tensor value.
// expected-error @+1 {{expects a tensor value for a constant initializer}}
kiln.variable @v : tensor<2xf32> init <constant 1.0 : f32>

// -----

// Tests that bounded kinds need their two parameters.
// expected-error @+1 {{expected '('}}
kiln.variable @v : tensor<2xf32> init <uniform, seed = 1>

// -----

// Tests that the only option after the parameters is the seed.
// expected-error @+1 {{expected 'seed'}}
kiln.variable @v : tensor<2xf32> init <normal(0.0, 1.0), scale = 1>

// -----

// Tests that kinds which draw no random numbers take no seed.
// expected-error @+1 {{expected '>'}}
kiln.variable @v : tensor<2xf32> init <zeros, seed = 1>

// -----

// Tests that the initializer also parses, and is checked, as a plain
// attribute in the generic form.
// expected-error @+1 {{unknown initializer 'random'}}
"kiln.variable"() <{initializer = #kiln.init<random>, sym_name = "v", type = tensor<2xf32>}> : () -> ()

// -----

// Tests that a variable has a static shape.
// expected-error @+1 {{'kiln.variable' op expects a static shape, got 'tensor<?x4xf32>'}}
kiln.variable @v : tensor<?x4xf32> init <zeros>

// -----

// Tests that a constant initializer has the variable's type.
// expected-error @+1 {{'kiln.variable' op expects a constant initializer of type 'tensor<2xf32>', got 'tensor<3xf32>'}}
kiln.variable @v : tensor<2xf32> init <constant dense<1.0> : tensor<3xf32>>

// -----

// Tests that a constant initializer has the variable's element type too.
// expected-error @+1 {{'kiln.variable' op expects a constant initializer of type 'tensor<2xf32>', got 'tensor<2xi32>'}}
kiln.variable @v : tensor<2xf32> init <constant dense<1> : tensor<2xi32>>

// -----

// Tests that random initializers are for float variables.
// expected-error @+1 {{'kiln.variable' op expects a float variable for initializer 'uniform', got 'i32'}}
kiln.variable @v : tensor<2xi32> init <uniform(0.0, 1.0), seed = 1>

// -----

// Tests that glorot initializers are for float variables.
// expected-error @+1 {{'kiln.variable' op expects a float variable for initializer 'glorot_normal', got 'i64'}}
kiln.variable @v : tensor<2x2xi64> init <glorot_normal, seed = 1>

// -----

// Tests that parameters are finite (a hex literal spells infinity).
// expected-error @+1 {{'kiln.variable' op expects finite initializer parameters, got INF and 1.000000e+00}}
kiln.variable @v : tensor<2xf32> init <uniform(0x7FF0000000000000, 1.0), seed = 1>

// -----

// Tests that a uniform range is not empty.
// expected-error @+1 {{'kiln.variable' op expects uniform min (1.000000e+00) to be less than max (1.000000e+00)}}
kiln.variable @v : tensor<2xf32> init <uniform(1.0, 1.0), seed = 1>

// -----

// Tests that a normal has a positive stddev.
// expected-error @+1 {{'kiln.variable' op expects a positive stddev, got 0.000000e+00}}
kiln.variable @v : tensor<2xf32> init <normal(0.0, 0.0), seed = 1>

// -----

// Tests that a truncated normal has a positive stddev.
// expected-error @+1 {{'kiln.variable' op expects a positive stddev, got -1.000000e+00}}
kiln.variable @v : tensor<2xbf16> init <truncated_normal(0.0, -1.0), seed = 1>

// -----

// Tests that glorot needs dimensions to count fan-in and fan-out.
// expected-error @+1 {{'kiln.variable' op expects a variable of rank >= 1 for initializer 'glorot_uniform'}}
kiln.variable @v : tensor<f32> init <glorot_uniform, seed = 1>

// -----

// Tests that variables live at module level.
func.func @nested() {
  // expected-error @+1 {{'kiln.variable' op expects parent op 'builtin.module'}}
  kiln.variable @v : tensor<2xf32> init <zeros>
  return
}

// -----

// Tests that a variable's type is a kiln tensor.
// expected-error @+1 {{'kiln.variable' op attribute 'type' failed to satisfy constraint: type attribute of ranked tensor of}}
kiln.variable @v : tensor<2xf64> init <zeros>

// -----

// Tests that read names a variable that exists.
func.func @read_unknown() {
  // expected-error @+1 {{'kiln.read' op reads unknown variable @missing}}
  %0 = kiln.read @missing : tensor<2xf32>
  return
}

// -----

// Tests that read names a variable, not another symbol.
func.func @read_function() {
  // expected-error @+1 {{'kiln.read' op reads unknown variable @read_function}}
  %0 = kiln.read @read_function : tensor<2xf32>
  return
}

// -----

// Tests that read gives the variable's type.
kiln.variable @w : tensor<4x4xf32> init <zeros>
func.func @read_wrong_type() {
  // expected-error @+1 {{'kiln.read' op expects result type 'tensor<4x4xf32>' (the variable's), got 'tensor<4x4xbf16>'}}
  %0 = kiln.read @w : tensor<4x4xbf16>
  return
}

// -----

// Tests that read gives exactly the variable's type, not a less static one.
kiln.variable @w : tensor<4x4xf32> init <zeros>
func.func @read_dynamic() {
  // expected-error @+1 {{'kiln.read' op expects result type 'tensor<4x4xf32>' (the variable's), got 'tensor<?x4xf32>'}}
  %0 = kiln.read @w : tensor<?x4xf32>
  return
}
