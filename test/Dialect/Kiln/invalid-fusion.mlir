// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that each input needs a block argument.
func.func @missing_argument(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op expects one block argument per input (2), got 1}}
  %r = kiln.fusion(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that a block argument has its input's type.
func.func @argument_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op expects block argument 0 to have its input's type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %r = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf16>):
    %0 = kiln.cast %a : tensor<4xf16> to tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that the yield gives the result types.
func.func @yield_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.fusion' op expects kiln.yield of its result types, got 2 values of other types}}
  %r = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that the body holds kiln ops only.
func.func @foreign_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.fusion(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{'arith.addf' op cannot be in a kiln.fusion: only kiln ops can}}
    %0 = arith.addf %a, %a : tensor<4xf32>
    kiln.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that kiln.yield ends only a fusion.
func.func @stray_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.fusion'}}
  kiln.yield %x : tensor<4xf32>
}
