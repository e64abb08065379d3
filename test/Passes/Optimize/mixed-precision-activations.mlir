// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16})' | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16},func.func(kiln-fuse-elementwise))' | FileCheck %s --check-prefix=FUSED
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16 store-activations=false})' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(kiln-mixed-precision{precision=bf16 round-in-kernels=false})' | FileCheck %s --check-prefix=OFF

// Tests which forward values a train step's backward sweep reads through a
// bf16 copy. The forward pass is what the results are computed from (the
// loss here before the replicas average it). %a (a tanh: its kernel writes
// the copy) is read by the backward mul through a cast back to f32, and the
// forward reduction still reads it in f32. %e is read in backward by a
// softmax, which cannot widen a copy in its kernel: f32. %small has fewer
// than 4,096 elements: f32. The weight %w (a variable read, with a bf16
// copy for its product) keeps f32 for the backward sub.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[W:.+]] = kiln.read @w : tensor<128x128xf32>
// CHECK: %[[A:.+]] = kiln.tanh %{{.+}} : tensor<64x128xf32>
// CHECK-NEXT: %[[A16:.+]] = kiln.cast %[[A]] : tensor<64x128xf32> to tensor<64x128xbf16>
// CHECK: kiln.reduce_sum %[[A]] axes [0, 1]
// CHECK: %[[E:.+]] = kiln.exp
// CHECK: %[[SMALL:.+]] = kiln.tanh %{{.+}} : tensor<8x16xf32>
// CHECK: kdist.all_reduce mean
// CHECK: %[[A32:.+]] = kiln.cast %[[A16]] : tensor<64x128xbf16> to tensor<64x128xf32>
// CHECK-NEXT: kiln.mul %[[A32]], %[[A32]] : tensor<64x128xf32>
// CHECK: kiln.softmax %[[E]] axis = 1
// CHECK: kiln.neg %[[SMALL]]
// CHECK: kiln.sub %{{.+}}, %[[W]] : tensor<128x128xf32>
// In one kernel: the tanh writes both; the mul reads the copy.
// FUSED-LABEL: func.func @train_step
// FUSED: kiln.fusion({{.+}}) : (tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xbf16>)
// FUSED: kiln.fusion({{.+}}) : (tensor<64x128xbf16>, tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xbf16>)
// OFF-LABEL: func.func @train_step
// OFF-NOT: xbf16> to tensor<64x128xf32>
module attributes {kiln.train_spec = {loss = "l"}} {
  kiln.variable @w : tensor<128x128xf32> init <zeros>
  kiln.variable @g : tensor<64x128xf32> init <zeros>
  kiln.variable @p : tensor<64x128xf32> init <zeros>
  kiln.variable @n : tensor<8x16xf32> init <zeros>
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  func.func @train_step(%x: tensor<64x128xf32>, %dy: tensor<64x128xf32>, %z: tensor<8x16xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %w = kiln.read @w : tensor<128x128xf32>
    %h = kiln.matmul %x, %w : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %a = kiln.tanh %h : tensor<64x128xf32>
    %s = kiln.reduce_sum %a axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    %e = kiln.exp %h : tensor<64x128xf32>
    %es = kiln.reduce_sum %e axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    %small = kiln.tanh %z : tensor<8x16xf32>
    %ss = kiln.reduce_sum %small axes [0, 1] : tensor<8x16xf32> -> tensor<f32>
    %t = kiln.add %s, %es : tensor<f32>
    %u = kiln.add %t, %ss : tensor<f32>
    %l = kdist.all_reduce mean %u : tensor<f32>
    // The backward sweep.
    %sq = kiln.mul %a, %a : tensor<64x128xf32>
    %g = kiln.mul %sq, %dy : tensor<64x128xf32>
    %p = kiln.softmax %e axis = 1 : tensor<64x128xf32>
    %n = kiln.neg %small : tensor<8x16xf32>
    %gw = kiln.matmul %x, %g {transpose_a} : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<128x128xf32>
    %upd = kiln.sub %gw, %w : tensor<128x128xf32>
    kiln.assign @w, %upd : tensor<128x128xf32>
    kiln.assign @g, %g : tensor<64x128xf32>
    kiln.assign @p, %p : tensor<64x128xf32>
    kiln.assign @n, %n : tensor<8x16xf32>
    return %l : tensor<f32>
  }
}

// -----

// Tests what stays f32 for every reader. %pred is an output (a model's
// prediction, here also read by the backward mul, as when CSE merges a
// forward op with the same op a gradient rule builds): an op the results
// are computed from reads f32, so %h, which it reads, keeps no copy. A
// weight pulled from a parameter server (%pw, with a bf16 copy for its
// product) keeps f32 for its backward reader too, and so does %wsq, an
// elementwise op of weights alone, and %bc, a broadcast (of a column sum of
// the input), cheaper computed again than kept.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[PW:.+]] = kdist.ps_pull @pw : tensor<128x128xf32>
// CHECK: %[[WSQ:.+]] = kiln.mul %[[PW]], %[[PW]] : tensor<128x128xf32>
// CHECK: %[[H:.+]] = kiln.tanh
// CHECK: %[[BC:.+]] = kiln.broadcast
// CHECK: %[[PRED:.+]] = kiln.sigmoid %[[H]]
// CHECK: kiln.mul %[[PRED]], %{{.+}} : tensor<64x128xf32>
// CHECK: kiln.mul %[[PW]], %[[PW]] : tensor<128x128xf32>
// CHECK: kiln.neg %[[WSQ]] : tensor<128x128xf32>
// CHECK: kiln.neg %[[BC]] : tensor<64x128xf32>
// CHECK-NOT: to tensor<64x128xf32>
// CHECK-NOT: to tensor<128x128xf32>
// CHECK: return
module attributes {kiln.train_spec = {loss = "l"}} {
  kiln.variable @pw : tensor<128x128xf32> init <zeros>
  kiln.variable @g : tensor<64x128xf32> init <zeros>
  kiln.variable @nw : tensor<128x128xf32> init <zeros>
  kiln.variable @nb : tensor<64x128xf32> init <zeros>
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  func.func @train_step(%x: tensor<64x128xf32>, %dy: tensor<64x128xf32>) -> (tensor<f32> {kiln.name = "l"}, tensor<64x128xf32> {kiln.name = "pred"}) {
    %pw = kdist.ps_pull @pw : tensor<128x128xf32>
    %wsq = kiln.mul %pw, %pw : tensor<128x128xf32>
    %ws = kiln.reduce_sum %wsq axes [0, 1] : tensor<128x128xf32> -> tensor<f32>
    %y = kiln.matmul %x, %pw : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %h = kiln.tanh %y : tensor<64x128xf32>
    %c = kiln.reduce_sum %x axes [0] : tensor<64x128xf32> -> tensor<128xf32>
    %bc = kiln.broadcast %c : tensor<128xf32> -> tensor<64x128xf32>
    %hb = kiln.add %h, %bc : tensor<64x128xf32>
    %hs = kiln.reduce_sum %hb axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    %l = kiln.add %hs, %ws : tensor<f32>
    %pred = kiln.sigmoid %h : tensor<64x128xf32>
    // The backward sweep.
    %g = kiln.mul %pred, %dy : tensor<64x128xf32>
    %gw = kiln.mul %pw, %pw : tensor<128x128xf32>
    %nw = kiln.neg %wsq : tensor<128x128xf32>
    %nb = kiln.neg %bc : tensor<64x128xf32>
    kiln.assign @g, %g : tensor<64x128xf32>
    kiln.assign @pw, %gw : tensor<128x128xf32>
    kiln.assign @nw, %nw : tensor<128x128xf32>
    kiln.assign @nb, %nb : tensor<64x128xf32>
    return %l, %pred : tensor<f32>, tensor<64x128xf32>
  }
}

// -----

// Tests that a forward value a backward compare reads against a bound (a
// clip's minimum, as Keras clips probabilities) stays f32: rounded to bf16,
// 0.999 would meet the bound 1 - 1e-7 and lose its gradient. One compared
// with zero (a ReLU's mask) is read through its bf16 copy.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[R:.+]] = kiln.relu %{{.+}} : tensor<64x128xf32>
// CHECK-NEXT: %[[R16:.+]] = kiln.cast %[[R]] : tensor<64x128xf32> to tensor<64x128xbf16>
// CHECK: %[[C:.+]] = kiln.minimum %[[R]], %{{.+}} : tensor<64x128xf32>
// CHECK-NOT: kiln.cast %[[C]]
// CHECK: kiln.compare le, %[[C]], %{{.+}} : tensor<64x128xf32>
// CHECK: %[[R32:.+]] = kiln.cast %[[R16]] : tensor<64x128xbf16> to tensor<64x128xf32>
// CHECK-NEXT: kiln.compare gt, %[[R32]], %{{.+}} : tensor<64x128xf32>
module attributes {kiln.train_spec = {loss = "l"}} {
  kiln.variable @w : tensor<128x128xf32> init <zeros>
  kiln.variable @g : tensor<64x128xf32> init <zeros>
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %s = kiln.reduce_sum %x axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
  func.func @train_step(%x: tensor<64x128xf32>, %dy: tensor<64x128xf32>) -> (tensor<f32> {kiln.name = "l"}) {
    %w = kiln.read @w : tensor<128x128xf32>
    %h = kiln.matmul %x, %w : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %r = kiln.relu %h : tensor<64x128xf32>
    %high = kiln.constant dense<0.99999988> : tensor<64x128xf32>
    %zero = kiln.constant dense<0.0> : tensor<64x128xf32>
    %c = kiln.minimum %r, %high : tensor<64x128xf32>
    %l = kiln.reduce_sum %c axes [0, 1] : tensor<64x128xf32> -> tensor<f32>
    // The backward sweep.
    %kept = kiln.compare le, %c, %high : tensor<64x128xf32>
    %gc = kiln.select %kept, %dy, %zero : tensor<64x128xi1>, tensor<64x128xf32>
    %positive = kiln.compare gt, %r, %zero : tensor<64x128xf32>
    %gr = kiln.select %positive, %gc, %zero : tensor<64x128xi1>, tensor<64x128xf32>
    kiln.assign @g, %gr : tensor<64x128xf32>
    return %l : tensor<f32>
  }
}
