// RUN: kiln-opt %s -split-input-file -verify-diagnostics --convert-kiln-to-linalg

// Tests that a fusion whose transposes read one input by two permutations
// (kiln-fuse-elementwise never makes one) is refused: one map per read.
func.func @two_permutations(%x: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  // expected-error @+2 {{transposes input 0 by two permutations}}
  // expected-error @+1 {{failed to legalize operation 'kiln.fusion'}}
  %0 = kiln.fusion(%x) : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  ^bb0(%a: tensor<2x2x2xf32>):
    %1 = kiln.transpose %a [1, 0, 2] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
    %2 = kiln.transpose %a [2, 1, 0] : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
    %3 = kiln.add %1, %2 : tensor<2x2x2xf32>
    kiln.yield %3 : tensor<2x2x2xf32>
  }
  return %0 : tensor<2x2x2xf32>
}
