// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | FileCheck --enable-var-scope --check-prefix=GENERIC %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | kiln-opt -split-input-file | FileCheck --enable-var-scope %s

// Tests that properties (enums, arrays, unit flags, the initializer) survive
// the generic form, and read back into the custom form.
// GENERIC-LABEL: "kiln.variable"()
// GENERIC-SAME: <{initializer = #kiln.init<uniform(-1.000000e+00, 1.000000e+00), seed = 7>, sym_name = "w", trainable = false, type = tensor<4x4xf32>}> : () -> ()
// CHECK-LABEL: kiln.variable @w : tensor<4x4xf32> init <uniform(-1.000000e+00, 1.000000e+00), seed = 7> {trainable = false}
kiln.variable @w : tensor<4x4xf32> init <uniform(-1.0, 1.0), seed = 7> {trainable = false}

// GENERIC-LABEL: sym_name = "generic"
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<4x4xf32>, %i: tensor<2xi32>) -> tensor<f32> {
  // GENERIC: %[[W:.+]] = "kiln.read"() <{variable = @w}> : () -> tensor<4x4xf32>
  // GENERIC-NEXT: %[[M:.+]] = "kiln.matmul"(%{{.+}}, %[[W]]) <{transpose_b}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // GENERIC-NEXT: %[[C:.+]] = "kiln.compare"(%[[M]], %[[W]]) <{predicate = 4 : i32}> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xi1>
  // GENERIC-NEXT: %[[S:.+]] = "kiln.select"(%[[C]], %[[M]], %[[W]]) : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // GENERIC-NEXT: %[[G:.+]] = "kiln.gelu"(%[[S]]) <{approximation = 0 : i32}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // GENERIC-NEXT: %[[T:.+]] = "kiln.transpose"(%[[G]]) <{permutation = array<i64: 1, 0>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  // GENERIC-NEXT: %[[L:.+]] = "kiln.slice"(%[[T]]) <{limit = array<i64: 4, 4>, start = array<i64: 0, 1>, step = array<i64: 2, 1>}> : (tensor<4x4xf32>) -> tensor<2x3xf32>
  // GENERIC-NEXT: %[[E:.+]] = "kiln.gather"(%[[L]], %{{.+}}) <{axis = 1 : i64}> : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  // GENERIC-NEXT: %[[R:.+]] = "kiln.reduce_sum"(%[[E]]) <{axes = array<i64: 0, 1>, keep_dims}> : (tensor<2x2xf32>) -> tensor<1x1xf32>
  // GENERIC-NEXT: %[[Q:.+]] = "kiln.reshape"(%[[R]]) : (tensor<1x1xf32>) -> tensor<f32>
  // GENERIC-NEXT: "func.return"(%[[Q]]) : (tensor<f32>) -> ()
  // CHECK: %[[W:.+]] = kiln.read @w : tensor<4x4xf32>
  // CHECK-NEXT: %[[M:.+]] = kiln.matmul %{{.+}}, %[[W]] {transpose_b} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  // CHECK-NEXT: %[[C:.+]] = kiln.compare gt, %[[M]], %[[W]] : tensor<4x4xf32>
  // CHECK-NEXT: %[[S:.+]] = kiln.select %[[C]], %[[M]], %[[W]] : tensor<4x4xi1>, tensor<4x4xf32>
  // CHECK-NEXT: %[[G:.+]] = kiln.gelu %[[S]] approximation(exact) : tensor<4x4xf32>
  // CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[G]] [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  // CHECK-NEXT: %[[L:.+]] = kiln.slice %[[T]] start [0, 1] limit [4, 4] step [2, 1] : tensor<4x4xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[E:.+]] = kiln.gather %[[L]][%{{.+}}] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  // CHECK-NEXT: %[[R:.+]] = kiln.reduce_sum %[[E]] axes [0, 1] {keep_dims} : tensor<2x2xf32> -> tensor<1x1xf32>
  // CHECK-NEXT: %[[Q:.+]] = kiln.reshape %[[R]] : tensor<1x1xf32> -> tensor<f32>
  // CHECK-NEXT: return %[[Q]] : tensor<f32>
  %w = kiln.read @w : tensor<4x4xf32>
  %m = kiln.matmul %x, %w {transpose_b} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = kiln.compare gt, %m, %w : tensor<4x4xf32>
  %s = kiln.select %c, %m, %w : tensor<4x4xi1>, tensor<4x4xf32>
  %g = kiln.gelu %s approximation(exact) : tensor<4x4xf32>
  %t = kiln.transpose %g [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %l = kiln.slice %t start [0, 1] limit [4, 4] step [2, 1] : tensor<4x4xf32> -> tensor<2x3xf32>
  %e = kiln.gather %l[%i] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  %r = kiln.reduce_sum %e axes [0, 1] {keep_dims} : tensor<2x2xf32> -> tensor<1x1xf32>
  %q = kiln.reshape %r : tensor<1x1xf32> -> tensor<f32>
  return %q : tensor<f32>
}

// -----

// Tests that the remaining ops with properties (concat, layer_norm, softmax,
// constant) and the train spec survive the generic form.
// GENERIC-LABEL: "builtin.module"()
// GENERIC: "kiln.constant"() <{value = dense<1.000000e+00> : tensor<8xf32>}> : () -> tensor<8xf32>
// GENERIC-NEXT: "kiln.concat"(%{{.+}}, %{{.+}}) <{axis = 0 : i64}> : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: "kiln.layer_norm"(%{{.+}}, %{{.+}}) <{axis = 1 : i64, epsilon = 1.000000e-05 : f64}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC-NEXT: "kiln.log_softmax"(%{{.+}}) <{axis = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
// GENERIC: }) {kiln.train_spec = {loss = "out"}} : () -> ()
// CHECK-LABEL: module attributes {kiln.train_spec = {loss = "out"}}
// CHECK: kiln.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-NEXT: kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: kiln.layer_norm %{{.+}}, %{{.+}} axis = 1 epsilon = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: kiln.log_softmax %{{.+}} axis = 1 : tensor<4x8xf32>
module attributes {kiln.train_spec = {loss = "out"}} {
  func.func @forward(%a: tensor<2x8xf32>) -> (tensor<4x8xf32> {kiln.name = "out"}) {
    %g = kiln.constant dense<1.0> : tensor<8xf32>
    %c = kiln.concat %a, %a axis = 0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    %n = kiln.layer_norm %c, %g axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %s = kiln.log_softmax %n axis = 1 : tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}
