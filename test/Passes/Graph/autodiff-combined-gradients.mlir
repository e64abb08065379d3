// RUN: kiln-opt %s -split-input-file --kiln-autodiff | FileCheck --enable-var-scope %s

// Tests that slices tiling a value along one axis give it their gradients
// concatenated, zeros where no slice reads (rows 4 to 5), not a padded copy
// per slice summed (SliceGradients.h).
// CHECK-LABEL: func @train_step
// CHECK-NOT: kiln.pad
// CHECK: %[[GAP:.+]] = kiln.constant dense<0.000000e+00> : tensor<1x4xf32>
// CHECK: %[[DW:.+]] = kiln.concat %{{.+}}, %{{.+}}, %[[GAP]], %{{.+}} axis = 0 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<6x4xf32>
// CHECK: return %{{.+}}, %[[DW]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<6x4xf32> init <zeros>
  func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<6x4xf32>
    %a = kiln.slice %w start [0, 0] limit [2, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
    %b = kiln.slice %w start [2, 0] limit [4, 4] step [1, 1] : tensor<6x4xf32> -> tensor<2x4xf32>
    %c = kiln.slice %w start [5, 0] limit [6, 4] step [1, 1] : tensor<6x4xf32> -> tensor<1x4xf32>
    %sa = kiln.reduce_sum %a axes [0, 1] : tensor<2x4xf32> -> tensor<f32>
    %bb = kiln.mul %b, %b : tensor<2x4xf32>
    %sb = kiln.reduce_sum %bb axes [0, 1] : tensor<2x4xf32> -> tensor<f32>
    %sc = kiln.reduce_mean %c axes [0, 1] : tensor<1x4xf32> -> tensor<f32>
    %s = kiln.add %sa, %sb : tensor<f32>
    %l = kiln.add %s, %sc : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the same slice taken twice sums its gradients before the
// concatenation, and that columns tile as rows do.
// CHECK-LABEL: func @train_step
// CHECK-NOT: kiln.pad
// CHECK: %[[TWICE:.+]] = kiln.add %{{.+}}, %{{.+}} : tensor<3x2xf32>
// CHECK: %[[DW:.+]] = kiln.concat %[[TWICE]], %{{.+}} axis = 1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
// CHECK: return %{{.+}}, %[[DW]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<3x4xf32> init <zeros>
  func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<3x4xf32>
    %a = kiln.slice %w start [0, 0] limit [3, 2] step [1, 1] : tensor<3x4xf32> -> tensor<3x2xf32>
    %a2 = kiln.slice %w start [0, 0] limit [3, 2] step [1, 1] : tensor<3x4xf32> -> tensor<3x2xf32>
    %b = kiln.slice %w start [0, 2] limit [3, 4] step [1, 1] : tensor<3x4xf32> -> tensor<3x2xf32>
    %aa = kiln.mul %a, %a2 : tensor<3x2xf32>
    %sa = kiln.reduce_sum %aa axes [0, 1] : tensor<3x2xf32> -> tensor<f32>
    %sb = kiln.reduce_sum %b axes [0, 1] : tensor<3x2xf32> -> tensor<f32>
    %l = kiln.add %sa, %sb : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that overlapping slices keep a padded gradient each, summed.
// CHECK-LABEL: func @train_step
// CHECK: %[[P1:.+]] = kiln.pad
// CHECK: %[[P2:.+]] = kiln.pad
// CHECK: %[[DW:.+]] = kiln.add %[[P1]], %[[P2]]
// CHECK: return %{{.+}}, %[[DW]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<6xf32> init <zeros>
  func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<6xf32>
    %a = kiln.slice %w start [0] limit [4] step [1] : tensor<6xf32> -> tensor<4xf32>
    %b = kiln.slice %w start [2] limit [6] step [1] : tensor<6xf32> -> tensor<4xf32>
    %ab = kiln.mul %a, %b : tensor<4xf32>
    %l = kiln.reduce_sum %ab axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a weight used by two products (an unrolled recurrent layer's
// h_t R^T at two steps) gets one gradient product over the stacked rows,
// [g_1; g_2]^T [h_1; h_2], instead of two products added (GradientSums.h).
// CHECK-LABEL: func @train_step
// CHECK-DAG: %[[G:.+]] = kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-DAG: %[[H:.+]] = kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[DR:.+]] = kiln.matmul %[[G]], %[[H]] {transpose_a} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NOT: kiln.matmul {{.+}} -> tensor<3x5xf32>
// CHECK: return %{{.+}}, %[[DR]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @r : tensor<3x5xf32> init <zeros>
  func.func @forward(%h1: tensor<2x5xf32>, %h2: tensor<2x5xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %r = kiln.read @r : tensor<3x5xf32>
    %y1 = kiln.matmul %h1, %r {transpose_b} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
    %y2 = kiln.matmul %h2, %r {transpose_b} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
    %t = kiln.tanh %y1 : tensor<2x3xf32>
    %p = kiln.mul %t, %y2 : tensor<2x3xf32>
    %l = kiln.reduce_sum %p axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a merged product passed on unchanged by an add to both of its
// operands stays valid for the second: @a's gradient merges it with its own
// product's, and @b's is the merged product itself.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<3x5xf32> {kiln.gradient = @a}, tensor<3x5xf32> {kiln.gradient = @b}
// CHECK: %[[DV:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[DA:.+]] = kiln.matmul %{{.+}}, %{{.+}} {transpose_a} : (tensor<6x3xf32>, tensor<6x5xf32>) -> tensor<3x5xf32>
// CHECK: return %{{.+}}, %[[DA]], %[[DV]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @a : tensor<3x5xf32> init <zeros>
  kiln.variable @b : tensor<3x5xf32> init <zeros>
  func.func @forward(%h1: tensor<2x5xf32>, %h2: tensor<2x5xf32>, %h3: tensor<2x5xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %a = kiln.read @a : tensor<3x5xf32>
    %b = kiln.read @b : tensor<3x5xf32>
    %v = kiln.add %a, %b : tensor<3x5xf32>
    %y1 = kiln.matmul %h1, %v {transpose_b} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
    %y2 = kiln.matmul %h2, %v {transpose_b} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
    %y3 = kiln.matmul %h3, %a {transpose_b} : (tensor<2x5xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
    %p = kiln.mul %y1, %y2 : tensor<2x3xf32>
    %q = kiln.add %p, %y3 : tensor<2x3xf32>
    %l = kiln.reduce_sum %q axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
