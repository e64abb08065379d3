// RUN: kiln-opt %s -split-input-file -allow-unregistered-dialect --kiln-infer-shapes | kiln-opt -split-input-file -allow-unregistered-dialect | FileCheck --enable-var-scope %s

// Tests that the example of the pass description holds: a reshape `?` from
// the element count, an elementwise op following its operand, a matmul from
// its rule, and the function result type.
// CHECK-LABEL: func @description
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>) -> tensor<16x16xf32>
func.func @description(%x: tensor<4x8xf32>) -> tensor<?x?xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] : tensor<4x8xf32> -> tensor<16x2xf32>
  // CHECK-NEXT: %[[E:.+]] = kiln.exp %[[R]] : tensor<16x2xf32>
  // CHECK-NEXT: %[[M:.+]] = kiln.matmul %[[E]], %[[E]] {transpose_b} : (tensor<16x2xf32>, tensor<16x2xf32>) -> tensor<16x16xf32>
  // CHECK-NEXT: return %[[M]] : tensor<16x16xf32>
  %0 = kiln.reshape %x : tensor<4x8xf32> -> tensor<?x2xf32>
  %1 = kiln.exp %0 : tensor<?x2xf32>
  %2 = kiln.matmul %1, %1 {transpose_b} : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x?xf32>
  return %2 : tensor<?x?xf32>
}

// -----

// Tests that a `?` the rule knows is refined for each op with a rule, from
// static operands.
// CHECK-LABEL: func @rules
func.func @rules(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %ids: tensor<3xi64>, %y: tensor<4xi32>) {
  // CHECK: kiln.transpose %{{.+}} [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK-NEXT: kiln.concat %{{.+}}, %{{.+}} axis = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  // CHECK-NEXT: kiln.slice %{{.+}} start [0, 1] limit [4, 8] step [2, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: kiln.reduce_sum %{{.+}} axes [1] {keep_dims} : tensor<4x8xf32> -> tensor<4x1xf32>
  // CHECK-NEXT: kiln.reduce_mean %{{.+}} axes [0] : tensor<4x8xf32> -> tensor<8xf32>
  // CHECK-NEXT: kiln.reduce_max %{{.+}} axes [] : tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK-NEXT: kiln.layer_norm %{{.+}}, %{{.+}} axis = 1 epsilon = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: kiln.gather %{{.+}}[%{{.+}}] : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  // CHECK-NEXT: kiln.softmax_cross_entropy %{{.+}}, %{{.+}} : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  %0 = kiln.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<?x4xf32>
  %1 = kiln.concat %x, %x axis = 1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x?xf32>
  %2 = kiln.slice %x start [0, 1] limit [4, 8] step [2, 2] : tensor<4x8xf32> -> tensor<?x?xf32>
  %3 = kiln.reduce_sum %x axes [1] {keep_dims} : tensor<4x8xf32> -> tensor<?x1xf32>
  %4 = kiln.reduce_mean %x axes [0] : tensor<4x8xf32> -> tensor<?xf32>
  %5 = kiln.reduce_max %x axes [] : tensor<4x8xf32> -> tensor<?x?xf32>
  %6 = kiln.layer_norm %x, %g axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %7 = kiln.gather %x[%ids] : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  %8 = kiln.softmax_cross_entropy %x, %y : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<f32>
  return
}

// -----

// Tests that compare and select, whose results the parser infers, follow
// refined operands.
// CHECK-LABEL: func @compare_select
// CHECK-SAME: -> tensor<2x4xf32>
func.func @compare_select(%x: tensor<8xf32>) -> tensor<?x4xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<8xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %[[C:.+]] = kiln.compare lt, %[[R]], %[[R]] : tensor<2x4xf32>
  // CHECK-NEXT: %[[S:.+]] = kiln.select %[[C]], %[[R]], %[[R]] : tensor<2x4xi1>, tensor<2x4xf32>
  // CHECK-NEXT: return %[[S]] : tensor<2x4xf32>
  %0 = kiln.reshape %x : tensor<8xf32> -> tensor<?x4xf32>
  %1 = kiln.compare lt, %0, %0 : tensor<?x4xf32>
  %2 = kiln.select %1, %0, %0 : tensor<?x4xi1>, tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}

// -----

// Tests that same-type ops (elementwise, softmax) pass a refined shape on,
// and that a same-shape op (cast) keeps its own element type.
// CHECK-LABEL: func @same_shape
// CHECK-SAME: -> tensor<3x4xbf16>
func.func @same_shape(%x: tensor<12xf32>) -> tensor<?x4xbf16> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<12xf32> -> tensor<3x4xf32>
  // CHECK-NEXT: %[[A:.+]] = kiln.add %[[R]], %[[R]] : tensor<3x4xf32>
  // CHECK-NEXT: %[[G:.+]] = kiln.gelu %[[A]] approximation(tanh) : tensor<3x4xf32>
  // CHECK-NEXT: %[[S:.+]] = kiln.softmax %[[G]] axis = 1 : tensor<3x4xf32>
  // CHECK-NEXT: %[[C:.+]] = kiln.cast %[[S]] : tensor<3x4xf32> to tensor<3x4xbf16>
  // CHECK-NEXT: return %[[C]] : tensor<3x4xbf16>
  %0 = kiln.reshape %x : tensor<12xf32> -> tensor<?x4xf32>
  %1 = kiln.add %0, %0 : tensor<?x4xf32>
  %2 = kiln.gelu %1 approximation(tanh) : tensor<?x4xf32>
  %3 = kiln.softmax %2 axis = 1 : tensor<?x4xf32>
  %4 = kiln.cast %3 : tensor<?x4xf32> to tensor<?x4xbf16>
  return %4 : tensor<?x4xbf16>
}

// -----

// Tests that a cast with a `?` of its own takes the operand's size.
// CHECK-LABEL: func @cast_own_dynamic
func.func @cast_own_dynamic(%x: tensor<5xi64>) -> tensor<?xi32> {
  // CHECK: kiln.cast %{{.+}} : tensor<5xi64> to tensor<5xi32>
  %0 = kiln.cast %x : tensor<5xi64> to tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// Tests that reshape infers a `?` only when it is the only one and the
// operand is static, and when the other sizes say what it is (not for zero
// elements and a zero size).
// CHECK-LABEL: func @reshape_limits
func.func @reshape_limits(%x: tensor<2x3x4xf32>, %d: tensor<?x4xf32>, %z: tensor<0x4xf32>) {
  // CHECK: kiln.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: kiln.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<24xf32>
  // CHECK-NEXT: kiln.reshape %{{.+}} : tensor<2x3x4xf32> -> tensor<?x?xf32>
  // CHECK-NEXT: kiln.reshape %{{.+}} : tensor<?x4xf32> -> tensor<?x2xf32>
  // CHECK-NEXT: kiln.reshape %{{.+}} : tensor<0x4xf32> -> tensor<?x0xf32>
  // CHECK-NEXT: kiln.reshape %{{.+}} : tensor<0x4xf32> -> tensor<0x2xf32>
  %0 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<2x?xf32>
  %1 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<?xf32>
  %2 = kiln.reshape %x : tensor<2x3x4xf32> -> tensor<?x?xf32>
  %3 = kiln.reshape %d : tensor<?x4xf32> -> tensor<?x2xf32>
  %4 = kiln.reshape %z : tensor<0x4xf32> -> tensor<?x0xf32>
  %5 = kiln.reshape %z : tensor<0x4xf32> -> tensor<?x2xf32>
  return
}

// -----

// Tests that the pass refines function results, and leaves a function alone
// when everything is already static.
// CHECK-LABEL: func @static
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[W:[^:]+]]: tensor<8x2xf32>) -> tensor<4x2xf32>
func.func @static(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // CHECK-NEXT: %[[M:.+]] = kiln.matmul %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  // CHECK-NEXT: %[[R:.+]] = kiln.relu %[[M]] : tensor<4x2xf32>
  // CHECK-NEXT: return %[[R]] : tensor<4x2xf32>
  %0 = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = kiln.relu %0 : tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// Tests that a `?` no rule knows stays: a dynamic input, and the broadcast,
// reshape and read ops whose result type is their own.
kiln.variable @w : tensor<8x2xf32> init <zeros>
// CHECK-LABEL: func @unknowable
// CHECK-SAME: -> (tensor<?x2xf32>, tensor<?x8xf32>)
func.func @unknowable(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> (tensor<?x2xf32>, tensor<?x8xf32>) {
  // CHECK-NEXT: %[[W:.+]] = kiln.read @w : tensor<8x2xf32>
  // CHECK-NEXT: %[[M:.+]] = kiln.matmul %{{.+}}, %[[W]] : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32>
  // CHECK-NEXT: %[[B:.+]] = kiln.broadcast %{{.+}} : tensor<8xf32> -> tensor<?x8xf32>
  // CHECK-NEXT: return %[[M]], %[[B]] : tensor<?x2xf32>, tensor<?x8xf32>
  %w = kiln.read @w : tensor<8x2xf32>
  %0 = kiln.matmul %x, %w : (tensor<?x8xf32>, tensor<8x2xf32>) -> tensor<?x2xf32>
  %1 = kiln.broadcast %b : tensor<8xf32> -> tensor<?x8xf32>
  return %0, %1 : tensor<?x2xf32>, tensor<?x8xf32>
}

// -----

// Tests that ops outside kiln keep the operand types they were checked with:
// the refinement stops at them, and their own results are untouched.
// CHECK-LABEL: func @foreign_user
func.func @foreign_user(%x: tensor<6xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<6xf32> -> tensor<?xf32>
  // CHECK-NEXT: %[[F:.+]] = "test.opaque"(%[[R]]) : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK-NEXT: %[[N:.+]] = kiln.neg %[[F]] : tensor<?xf32>
  // CHECK-NEXT: return %[[N]] : tensor<?xf32>
  %0 = kiln.reshape %x : tensor<6xf32> -> tensor<?xf32>
  %1 = "test.opaque"(%0) : (tensor<?xf32>) -> tensor<?xf32>
  %2 = kiln.neg %1 : tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// Tests that a value used by a call keeps the callee's parameter type, while
// its other kiln users still see the refined shape.
func.func private @callee(tensor<?xf32>) -> tensor<?xf32>
// CHECK-LABEL: func @call_user
func.func @call_user(%x: tensor<2x3xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<2x3xf32> -> tensor<?xf32>
  // CHECK-NEXT: %[[C:.+]] = call @callee(%[[R]]) : (tensor<?xf32>) -> tensor<?xf32>
  // CHECK-NEXT: kiln.slice %[[R]] start [0] limit [4] step [2] : tensor<?xf32> -> tensor<2xf32>
  // CHECK-NEXT: return %[[C]] : tensor<?xf32>
  %0 = kiln.reshape %x : tensor<2x3xf32> -> tensor<?xf32>
  %1 = func.call @callee(%0) : (tensor<?xf32>) -> tensor<?xf32>
  %2 = kiln.slice %0 start [0] limit [4] step [2] : tensor<?xf32> -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Tests that a function that is called keeps its result types (its callers
// were checked against them), while one that is not gets refined ones.
// CHECK-LABEL: func @called
// CHECK-SAME: -> tensor<?xf32>
// CHECK-NEXT: kiln.reshape %{{.+}} : tensor<4xf32> -> tensor<?xf32>
// CHECK-LABEL: func @caller
// CHECK-SAME: -> tensor<4xf32>
// CHECK-NEXT: call @called(%{{.+}}) : (tensor<4xf32>) -> tensor<?xf32>
// CHECK-NEXT: kiln.reshape %{{.+}} : tensor<4xf32> -> tensor<4xf32>
func.func @called(%x: tensor<4xf32>) -> tensor<?xf32> {
  %0 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<?xf32> {
  %0 = func.call @called(%x) : (tensor<4xf32>) -> tensor<?xf32>
  %1 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Tests that operands which must share a type (the assembly prints it once)
// are not refined apart: the `?` of the argument keeps the reshape and the
// add dynamic.
// CHECK-LABEL: func @mixed_elementwise
// CHECK-SAME: -> tensor<?xf32>
func.func @mixed_elementwise(%x: tensor<4xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<4xf32> -> tensor<?xf32>
  // CHECK-NEXT: %[[A:.+]] = kiln.add %[[R]], %{{.+}} : tensor<?xf32>
  // CHECK-NEXT: return %[[A]] : tensor<?xf32>
  %0 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  %1 = kiln.add %0, %y : tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Tests that the same holds for compare and the losses, whose operands share
// one type; a kiln user that prints its own types keeps its refined result.
// CHECK-LABEL: func @mixed_same_type_operands
// CHECK-SAME: -> (tensor<?xi1>, tensor<f32>, tensor<2xf32>)
func.func @mixed_same_type_operands(%x: tensor<4xf32>, %y: tensor<?xf32>) -> (tensor<?xi1>, tensor<f32>, tensor<?xf32>) {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<4xf32> -> tensor<?xf32>
  // CHECK-NEXT: %[[C:.+]] = kiln.compare lt, %[[R]], %{{.+}} : tensor<?xf32>
  // CHECK-NEXT: %[[L:.+]] = kiln.mean_squared_error %[[R]], %{{.+}} : tensor<?xf32> -> tensor<f32>
  // CHECK-NEXT: %[[S:.+]] = kiln.slice %[[R]] start [1] limit [3] step [1] : tensor<?xf32> -> tensor<2xf32>
  // CHECK-NEXT: %[[K:.+]] = kiln.cast %[[S]] : tensor<2xf32> to tensor<2xf32>
  // CHECK-NEXT: return %[[C]], %[[L]], %[[K]] : tensor<?xi1>, tensor<f32>, tensor<2xf32>
  %0 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  %1 = kiln.compare lt, %0, %y : tensor<?xf32>
  %2 = kiln.mean_squared_error %0, %y : tensor<?xf32> -> tensor<f32>
  %3 = kiln.slice %0 start [1] limit [3] step [1] : tensor<?xf32> -> tensor<?xf32>
  %4 = kiln.cast %3 : tensor<?xf32> to tensor<?xf32>
  return %1, %2, %4 : tensor<?xi1>, tensor<f32>, tensor<?xf32>
}

// -----

// Tests that select keeps both values of one type, and that taking back a
// refinement also takes back what followed from it.
// CHECK-LABEL: func @mixed_select
// CHECK-SAME: -> tensor<?xf32>
func.func @mixed_select(%c: tensor<?xi1>, %x: tensor<4xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK-NEXT: %[[R:.+]] = kiln.reshape %{{.+}} : tensor<4xf32> -> tensor<?xf32>
  // CHECK-NEXT: %[[E:.+]] = kiln.exp %[[R]] : tensor<?xf32>
  // CHECK-NEXT: %[[S:.+]] = kiln.select %{{.+}}, %[[E]], %{{.+}} : tensor<?xi1>, tensor<?xf32>
  // CHECK-NEXT: %[[N:.+]] = kiln.neg %[[S]] : tensor<?xf32>
  // CHECK-NEXT: return %[[N]] : tensor<?xf32>
  %0 = kiln.reshape %x : tensor<4xf32> -> tensor<?xf32>
  %1 = kiln.exp %0 : tensor<?xf32>
  %2 = kiln.select %c, %1, %y : tensor<?xi1>, tensor<?xf32>
  %3 = kiln.neg %2 : tensor<?xf32>
  return %3 : tensor<?xf32>
}

// -----

// Tests that a refined condition refines the select result and what follows,
// though the values stay `?`.
// CHECK-LABEL: func @select_condition_refines
// CHECK-SAME: -> tensor<3xi64>
func.func @select_condition_refines(%c: tensor<3xi1>, %v: tensor<?xi64>) -> tensor<?xi64> {
  // CHECK-NEXT: %[[C:.+]] = kiln.reshape %{{.+}} : tensor<3xi1> -> tensor<3xi1>
  // CHECK-NEXT: %[[S:.+]] = kiln.select %[[C]], %{{.+}}, %{{.+}} : tensor<3xi1>, tensor<?xi64>
  // CHECK-NEXT: %[[N:.+]] = kiln.neg %[[S]] : tensor<3xi64>
  // CHECK-NEXT: return %[[N]] : tensor<3xi64>
  %0 = kiln.reshape %c : tensor<3xi1> -> tensor<?xi1>
  %1 = kiln.select %0, %v, %v : tensor<?xi1>, tensor<?xi64>
  %2 = kiln.neg %1 : tensor<?xi64>
  return %2 : tensor<?xi64>
}

// -----

// Tests that declarations are skipped.
// CHECK-LABEL: func private @declaration(tensor<?xf32>) -> tensor<?xf32>
func.func private @declaration(tensor<?xf32>) -> tensor<?xf32>
