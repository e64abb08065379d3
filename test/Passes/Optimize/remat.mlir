// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-remat{policy=all}))' | FileCheck --enable-var-scope %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-remat{policy=auto memory-budget=1000000}))' | FileCheck --enable-var-scope %s --check-prefix=ROOMY
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(kiln-remat))' | FileCheck --enable-var-scope %s --check-prefix=SPEC

// Tests that an activation alive but unused across the peak (%h, while the
// 256 KiB %big lives) is dropped after its forward use and computed again
// right before its backward use, and that a budget the function already
// fits changes nothing.
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%[[X:.+]]: tensor<64x256xf32>, %[[W:.+]]: tensor<256x256xf32>)
// ROOMY-LABEL: func @train_step
// ROOMY-NOT: kiln.recomputed
func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<f32> {
  // CHECK: %[[H:.+]] = kiln.tanh %[[X]] : tensor<64x256xf32>
  // CHECK-NEXT: %[[Y:.+]] = kiln.matmul %[[H]], %[[W]]
  // CHECK-NEXT: %[[BIG:.+]] = kiln.matmul %[[W]], %[[W]]
  // CHECK-NEXT: %[[S:.+]] = kiln.reduce_sum %[[BIG]]
  // CHECK-NEXT: %[[YS:.+]] = kiln.reduce_sum %[[Y]]
  // CHECK-NEXT: %[[H2:.+]] = kiln.tanh %[[X]] {kiln.recomputed} : tensor<64x256xf32>
  // CHECK-NEXT: %[[G:.+]] = kiln.mul %[[H2]], %[[H2]]
  %h = kiln.tanh %x : tensor<64x256xf32>
  %y = kiln.matmul %h, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %big = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = kiln.reduce_sum %big axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
  %ys = kiln.reduce_sum %y axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %g = kiln.mul %h, %h : tensor<64x256xf32>
  %gs = kiln.reduce_sum %g axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %xs = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %t = kiln.add %s, %ys : tensor<f32>
  %u = kiln.add %t, %gs : tensor<f32>
  %r = kiln.add %u, %xs : tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that a chain is recomputed back to what is still alive: %b is
// dropped, and %a, dead by then, is cloned for it rather than kept alive
// (%x, alive to the end anyway, is read where it is).
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%[[X:.+]]: tensor<64x256xf32>, %[[W:.+]]: tensor<256x256xf32>)
func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<f32> {
  // CHECK: kiln.reduce_sum
  // CHECK-NEXT: kiln.reduce_sum
  // CHECK-NEXT: %[[A2:.+]] = kiln.exp %[[X]] {kiln.recomputed}
  // CHECK-NEXT: %[[B2:.+]] = kiln.transpose %[[A2]] [1, 0] {kiln.recomputed}
  // CHECK-NEXT: kiln.mul %[[B2]], %[[B2]]
  %a = kiln.exp %x : tensor<64x256xf32>
  %b = kiln.transpose %a [1, 0] : tensor<64x256xf32> -> tensor<256x64xf32>
  %y = kiln.matmul %w, %b : (tensor<256x256xf32>, tensor<256x64xf32>) -> tensor<256x64xf32>
  %big = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = kiln.reduce_sum %big axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
  %ys = kiln.reduce_sum %y axes [0, 1] : tensor<256x64xf32> -> tensor<f32>
  %g = kiln.mul %b, %b : tensor<256x64xf32>
  %gs = kiln.reduce_sum %g axes [0, 1] : tensor<256x64xf32> -> tensor<f32>
  %xs = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %t = kiln.add %s, %ys : tensor<f32>
  %u = kiln.add %t, %gs : tensor<f32>
  %r = kiln.add %u, %xs : tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that functions other than the training steps are left alone.
// CHECK-LABEL: func @forward
// CHECK-NOT: kiln.recomputed
func.func @forward(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<f32> {
  %h = kiln.tanh %x : tensor<64x256xf32>
  %y = kiln.matmul %h, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %big = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = kiln.reduce_sum %big axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
  %ys = kiln.reduce_sum %y axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %g = kiln.mul %h, %h : tensor<64x256xf32>
  %gs = kiln.reduce_sum %g axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %xs = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
  %t = kiln.add %s, %ys : tensor<f32>
  %u = kiln.add %t, %gs : tensor<f32>
  %r = kiln.add %u, %xs : tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that the policy and budget come from the train spec when no option
// names them (720,896 bytes at the peak without recomputation).
// CHECK-LABEL: func @train_step
// SPEC-LABEL: func @train_step
// SPEC: kiln.tanh %{{.+}} {kiln.recomputed}
module attributes {kiln.train_spec = {loss = "l", remat = {kind = "memory_budget", memory_budget_bytes = 700000 : i64}}} {
  func.func @train_step(%x: tensor<64x256xf32>, %w: tensor<256x256xf32>) -> tensor<f32> {
    %h = kiln.tanh %x : tensor<64x256xf32>
    %y = kiln.matmul %h, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %big = kiln.matmul %w, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %s = kiln.reduce_sum %big axes [0, 1] : tensor<256x256xf32> -> tensor<f32>
    %ys = kiln.reduce_sum %y axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %g = kiln.mul %h, %h : tensor<64x256xf32>
    %gs = kiln.reduce_sum %g axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %xs = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %t = kiln.add %s, %ys : tensor<f32>
    %u = kiln.add %t, %gs : tensor<f32>
    %r = kiln.add %u, %xs : tensor<f32>
    return %r : tensor<f32>
  }
  func.func @forward(%x: tensor<64x256xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x256xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}
