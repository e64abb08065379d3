// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-schedule))' | FileCheck --enable-var-scope %s

// Tests that each variable's update follows its gradient instead of waiting
// for the rest of the backward pass (which frees the gradient early), that
// the step's scalar (the learning rate) runs as soon as it can, and that
// the update of @w2 waits for the backward product that reads w2's old
// value, both the op computing it and the assign.
// CHECK-LABEL: func @train_step
module {
  kiln.variable @w1 : tensor<256x256xf32> init <zeros>
  kiln.variable @w2 : tensor<256x256xf32> init <zeros>
  func.func @train_step(%x: tensor<64x256xf32>, %dy: tensor<64x256xf32>, %step: tensor<f32>) -> tensor<64x256xf32> {
    // CHECK: %[[W1:.+]] = kiln.read @w1
    // CHECK: %[[W2:.+]] = kiln.read @w2
    // CHECK: %[[LR:.+]] = kiln.mul %[[STEP:.+]], %[[STEP]] : tensor<f32>
    // CHECK: %[[H:.+]] = kiln.matmul %[[X:.+]], %[[W1]]
    // CHECK-NEXT: %[[GW2:.+]] = kiln.matmul %[[H]], %[[DY:.+]] {transpose_a}
    // CHECK-NEXT: %[[DH:.+]] = kiln.matmul %[[DY]], %[[W2]] {transpose_b}
    // CHECK-NEXT: %[[NEW2:.+]] = kiln.apply_sgd %[[W2]], %[[GW2]], %[[LR]]
    // CHECK-NEXT: kiln.assign @w2, %[[NEW2]]
    // CHECK-NEXT: %[[GW1:.+]] = kiln.matmul %[[X]], %[[DH]] {transpose_a}
    // CHECK-NEXT: %[[NEW1:.+]] = kiln.apply_sgd %[[W1]], %[[GW1]], %[[LR]]
    // CHECK-NEXT: kiln.assign @w1, %[[NEW1]]
    // CHECK-NEXT: return %[[DH]]
    %w1 = kiln.read @w1 : tensor<256x256xf32>
    %w2 = kiln.read @w2 : tensor<256x256xf32>
    %h = kiln.matmul %x, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %gw2 = kiln.matmul %h, %dy {transpose_a} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %dh = kiln.matmul %dy, %w2 {transpose_b} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %gw1 = kiln.matmul %x, %dh {transpose_a} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
    %lr = kiln.mul %step, %step : tensor<f32>
    %new2 = kiln.apply_sgd %w2, %gw2, %lr : tensor<256x256xf32>, tensor<f32>
    %new1 = kiln.apply_sgd %w1, %gw1, %lr : tensor<256x256xf32>, tensor<f32>
    kiln.assign @w1, %new1 : tensor<256x256xf32>
    kiln.assign @w2, %new2 : tensor<256x256xf32>
    return %dh : tensor<64x256xf32>
  }
}

// -----

// Tests that an all-reduce starts as soon as its gradient is computed, and
// that its wait stays where it was.
// CHECK-LABEL: func @train_step
func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<256x256xf32>) {
  // CHECK: %[[G:.+]] = kiln.matmul
  // CHECK-NEXT: %[[H:.+]] = kdist.all_reduce_start mean %[[G]]
  // CHECK-NEXT: %[[Y:.+]] = kiln.matmul
  // CHECK-NEXT: %[[Z:.+]] = kiln.add %[[Y]], %{{.+}}
  // CHECK-NEXT: %[[R:.+]] = kdist.wait %[[H]]
  %g = kiln.matmul %x, %x {transpose_a} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  %y = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %z = kiln.add %y, %w : tensor<256x256xf32>
  %h = kdist.all_reduce_start mean %g tag = 0 : tensor<256x256xf32>
  %r = kdist.wait %h : tensor<256x256xf32>
  return %r, %z : tensor<256x256xf32>, tensor<256x256xf32>
}

// -----

// Tests that functions other than the training steps keep their order.
// CHECK-LABEL: func @forward
// CHECK: kiln.matmul %{{.+}}, %{{.+}} {transpose_a}
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: kdist.all_reduce_start
func.func @forward(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> (tensor<256x256xf32>, tensor<f32>) {
  %g = kiln.matmul %x, %x {transpose_a} : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  %y = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = kiln.reduce_sum %y axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
  %h = kdist.all_reduce_start mean %g tag = 0 : tensor<256x256xf32>
  %r = kdist.wait %h : tensor<256x256xf32>
  return %r, %s : tensor<256x256xf32>, tensor<f32>
}
