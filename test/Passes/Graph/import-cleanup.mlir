// RUN: kiln-opt %s -split-input-file --kiln-import-cleanup | FileCheck --enable-var-scope %s

// Tests that the pipeline cleans up what an importer writes for a dense
// layer: shapes refined, the identity reshapes the refinement exposes folded
// away, constant arithmetic and x * 1 folded, and the bias add computed twice
// merged.
kiln.variable @fc.w : tensor<784x10xf32> init <glorot_uniform, seed = 1>
kiln.variable @fc.b : tensor<10xf32> init <zeros>
// CHECK-LABEL: func @forward
// CHECK-SAME: (%[[X:[^:]+]]: tensor<32x28x28xf32> {kiln.name = "image"}) -> (tensor<32x10xf32> {kiln.name = "logits"}, tensor<32x10xf32> {kiln.name = "scaled"})
func.func @forward(%x: tensor<32x28x28xf32> {kiln.name = "image"})
    -> (tensor<?x10xf32> {kiln.name = "logits"}, tensor<?x10xf32> {kiln.name = "scaled"}) {
  // CHECK-DAG: %[[HALF:.+]] = kiln.constant dense<5.000000e-01> : tensor<32x10xf32>
  // CHECK-DAG: %[[W:.+]] = kiln.read @fc.w : tensor<784x10xf32>
  // CHECK-DAG: %[[B:.+]] = kiln.read @fc.b : tensor<10xf32>
  // CHECK-DAG: %[[FLAT:.+]] = kiln.reshape %[[X]] : tensor<32x28x28xf32> -> tensor<32x784xf32>
  // CHECK: %[[MM:.+]] = kiln.matmul %[[FLAT]], %[[W]] : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
  // CHECK: %[[BB:.+]] = kiln.broadcast %[[B]] : tensor<10xf32> -> tensor<32x10xf32>
  // CHECK-NOT: kiln.broadcast
  // CHECK: %[[Y:.+]] = kiln.add %[[MM]], %[[BB]] : tensor<32x10xf32>
  // CHECK-NOT: kiln.reshape
  // CHECK-NOT: kiln.add
  // CHECK: %[[S:.+]] = kiln.mul %[[Y]], %[[HALF]] : tensor<32x10xf32>
  // CHECK-NEXT: return %[[Y]], %[[S]] : tensor<32x10xf32>, tensor<32x10xf32>
  %w = kiln.read @fc.w : tensor<784x10xf32>
  %b = kiln.read @fc.b : tensor<10xf32>
  %flat = kiln.reshape %x : tensor<32x28x28xf32> -> tensor<?x784xf32>
  %mm = kiln.matmul %flat, %w : (tensor<?x784xf32>, tensor<784x10xf32>) -> tensor<?x10xf32>
  %bb = kiln.broadcast %b : tensor<10xf32> -> tensor<32x10xf32>
  %bb2 = kiln.broadcast %b : tensor<10xf32> -> tensor<32x10xf32>
  %mm2 = kiln.reshape %mm : tensor<?x10xf32> -> tensor<32x10xf32>
  %y = kiln.add %mm2, %bb : tensor<32x10xf32>
  %one = kiln.constant dense<1.0> : tensor<32x10xf32>
  %two = kiln.constant dense<2.0> : tensor<32x10xf32>
  %half = kiln.div %one, %two : tensor<32x10xf32>
  %y2 = kiln.add %mm2, %bb2 : tensor<32x10xf32>
  %y3 = kiln.mul %y2, %one : tensor<32x10xf32>
  %s = kiln.mul %y3, %half : tensor<32x10xf32>
  %ylogits = kiln.reshape %y : tensor<32x10xf32> -> tensor<?x10xf32>
  %sd = kiln.reshape %s : tensor<32x10xf32> -> tensor<?x10xf32>
  return %ylogits, %sd : tensor<?x10xf32>, tensor<?x10xf32>
}

// -----

// Tests that CSE merges what is computed twice, including reads, after
// canonicalization made the copies equal.
kiln.variable @w : tensor<4x4xf32> init <ones>
// CHECK-LABEL: func @merge
func.func @merge(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK: %[[W:.+]] = kiln.read @w
  // CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[W]] [1, 0]
  // CHECK-NEXT: %[[M:.+]] = kiln.matmul %{{.+}}, %[[T]]
  // CHECK-NEXT: %[[A:.+]] = kiln.add %[[M]], %[[M]]
  // CHECK-NEXT: return %[[A]]
  %w1 = kiln.read @w : tensor<4x4xf32>
  %w2 = kiln.read @w : tensor<4x4xf32>
  %t1 = kiln.transpose %w1 [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %t2a = kiln.transpose %w2 [0, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  %t2 = kiln.transpose %t2a [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %m1 = kiln.matmul %x, %t1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = kiln.matmul %x, %t2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %a = kiln.add %m1, %m2 : tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}
