// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that kiln.name round-trips on arguments and results.
// CHECK-LABEL: func @forward
// CHECK-SAME: (%{{[^:]+}}: tensor<32x784xf32> {kiln.name = "image"}, %{{[^:]+}}: tensor<32xi64> {kiln.name = "label"})
// CHECK-SAME: -> (tensor<32x10xf32> {kiln.name = "logits"}, tensor<f32> {kiln.name = "loss"})
func.func @forward(%x: tensor<32x784xf32> {kiln.name = "image"}, %y: tensor<32xi64> {kiln.name = "label"})
    -> (tensor<32x10xf32> {kiln.name = "logits"}, tensor<f32> {kiln.name = "loss"}) {
  %w = kiln.constant dense<0.0> : tensor<784x10xf32>
  %logits = kiln.matmul %x, %w : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
  %loss = kiln.softmax_cross_entropy %logits, %y : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>
  return %logits, %loss : tensor<32x10xf32>, tensor<f32>
}

// -----

// Tests that names are free-form strings and that only some arguments need
// one; other attributes sit beside them.
// CHECK-LABEL: func @partial
// CHECK-SAME: (%{{[^:]+}}: tensor<4xf32>, %{{[^:]+}}: tensor<4xf32> {kiln.name = "fc1/input:0", other.note = 1 : i64})
// CHECK-SAME: -> (tensor<4xf32> {kiln.name = "out put"})
func.func @partial(%a: tensor<4xf32>, %b: tensor<4xf32> {kiln.name = "fc1/input:0", other.note = 1 : i64})
    -> (tensor<4xf32> {kiln.name = "out put"}) {
  return %b : tensor<4xf32>
}

// -----

// Tests that a declaration (no body) may carry names too.
// CHECK-LABEL: func private @external
// CHECK-SAME: (tensor<2xf32> {kiln.name = "in"}) -> (tensor<2xf32> {kiln.name = "out"})
func.func private @external(tensor<2xf32> {kiln.name = "in"}) -> (tensor<2xf32> {kiln.name = "out"})
