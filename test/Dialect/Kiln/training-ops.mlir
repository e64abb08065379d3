// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck --enable-var-scope %s
// RUN: kiln-opt %s -split-input-file --mlir-print-op-generic | FileCheck --enable-var-scope --check-prefix=GENERIC %s

// Tests that stop_gradient round-trips on every element type the dialect
// has, `?` shapes included; its result is its operand's type.
// CHECK-LABEL: func @stop_gradient
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x1xf32>, %[[I:[^:]+]]: tensor<?xi64>, %[[B:[^:]+]]: tensor<2xi1>, %[[H:[^:]+]]: tensor<bf16>)
func.func @stop_gradient(%x: tensor<4x1xf32>, %i: tensor<?xi64>, %b: tensor<2xi1>, %h: tensor<bf16>) -> tensor<4x1xf32> {
  // CHECK-NEXT: %[[S:.+]] = kiln.stop_gradient %[[X]] : tensor<4x1xf32>
  // CHECK-NEXT: kiln.stop_gradient %[[I]] : tensor<?xi64>
  // CHECK-NEXT: kiln.stop_gradient %[[B]] : tensor<2xi1>
  // CHECK-NEXT: kiln.stop_gradient %[[H]] : tensor<bf16>
  // CHECK-NEXT: return %[[S]]
  %0 = kiln.stop_gradient %x : tensor<4x1xf32>
  %1 = kiln.stop_gradient %i : tensor<?xi64>
  %2 = kiln.stop_gradient %b : tensor<2xi1>
  %3 = kiln.stop_gradient %h : tensor<bf16>
  return %0 : tensor<4x1xf32>
}

// -----

// Tests that sparse_apply prints `dense` only when set, beside the other
// hyperparameters, and its `when` condition only when given; and that both
// survive the generic form.
// CHECK-LABEL: func @sparse_apply_dense
// CHECK: kiln.sparse_apply momentum %{{.+}}, [%{{.+}}], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {dense, momentum = 9.000000e-01 : f64} :
// CHECK: kiln.sparse_apply momentum %{{.+}}, [%{{.+}}], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {momentum = 9.000000e-01 : f64} :
// CHECK: kiln.sparse_apply adam %{{.+}}, [%{{.+}}, %{{.+}}], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {dense} :
// CHECK-SAME: -> (tensor<100x4xf32>, tensor<100x4xf32>, tensor<100x4xf32>)
// CHECK: kiln.sparse_apply sgd %{{.+}}, [], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} :
// CHECK: kiln.sparse_apply adagrad %{{.+}}, [%{{.+}}], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} when %{{.+}} :
// CHECK-SAME: tensor<f32>, tensor<i1>) -> (tensor<100x4xf32>, tensor<100x4xf32>)
// GENERIC-LABEL: sym_name = "sparse_apply_dense"
// GENERIC: "kiln.sparse_apply"({{.+}}) <{beta1 = {{[^,]+}}, beta2 = {{[^,]+}}, dense, epsilon = {{.+}}, optimizer = 1 : i32
// GENERIC: "kiln.sparse_apply"({{.+}}) <{beta1 = {{[^,]+}}, beta2 = {{[^,]+}}, epsilon = {{.+}}, optimizer = 1 : i32
// GENERIC: "kiln.sparse_apply"({{.+}}) <{beta1 = {{[^,]+}}, beta2 = {{[^,]+}}, dense, epsilon = {{.+}}, optimizer = 2 : i32
// GENERIC: "kiln.sparse_apply"({{.+}}) <{beta1 = {{[^,]+}}, beta2 = {{[^,]+}}, epsilon = {{.+}}, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 1, 0>, optimizer = 0 : i32
// GENERIC: "kiln.sparse_apply"({{.+}}) <{beta1 = {{[^,]+}}, beta2 = {{[^,]+}}, epsilon = {{.+}}, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>, optimizer = 3 : i32
func.func @sparse_apply_dense(%t: tensor<100x4xf32>, %v: tensor<100x4xf32>, %m: tensor<100x4xf32>,
                              %ids: tensor<8xi64>, %g: tensor<8x4xf32>, %lr: tensor<f32>, %step: tensor<f32>,
                              %finite: tensor<i1>) {
  %0, %1 = kiln.sparse_apply momentum %t, [%v], %ids, %g, %lr, %step {momentum = 0.9, dense}
      : (tensor<100x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8x4xf32>, tensor<f32>, tensor<f32>)
      -> (tensor<100x4xf32>, tensor<100x4xf32>)
  %2, %3 = kiln.sparse_apply momentum %t, [%v], %ids, %g, %lr, %step {momentum = 0.9}
      : (tensor<100x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8x4xf32>, tensor<f32>, tensor<f32>)
      -> (tensor<100x4xf32>, tensor<100x4xf32>)
  %4:3 = kiln.sparse_apply adam %t, [%v, %m], %ids, %g, %lr, %step {dense}
      : (tensor<100x4xf32>, tensor<100x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8x4xf32>, tensor<f32>, tensor<f32>)
      -> (tensor<100x4xf32>, tensor<100x4xf32>, tensor<100x4xf32>)
  %5 = kiln.sparse_apply sgd %t, [], %ids, %g, %lr, %step
      : (tensor<100x4xf32>, tensor<8xi64>, tensor<8x4xf32>, tensor<f32>, tensor<f32>) -> tensor<100x4xf32>
  %6:2 = kiln.sparse_apply adagrad %t, [%v], %ids, %g, %lr, %step when %finite
      : (tensor<100x4xf32>, tensor<100x4xf32>, tensor<8xi64>, tensor<8x4xf32>, tensor<f32>, tensor<f32>, tensor<i1>)
      -> (tensor<100x4xf32>, tensor<100x4xf32>)
  return
}

// -----

// Tests that scatter_add_rows round-trips: rows of any rank, i32 or i64 ids.
// CHECK-LABEL: func @scatter_add_rows
// CHECK: kiln.scatter_add_rows %{{.+}}[%{{.+}}] : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<100x4xf32>
// CHECK-NEXT: kiln.scatter_add_rows %{{.+}}[%{{.+}}] : (tensor<3x2x5xf32>, tensor<3xi32>) -> tensor<10x2x5xf32>
// GENERIC-LABEL: sym_name = "scatter_add_rows"
// GENERIC: "kiln.scatter_add_rows"({{.+}}) : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<100x4xf32>
func.func @scatter_add_rows(%rows: tensor<8x4xf32>, %ids: tensor<8xi64>, %more: tensor<3x2x5xf32>, %few: tensor<3xi32>) {
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<100x4xf32>
  %1 = kiln.scatter_add_rows %more[%few] : (tensor<3x2x5xf32>, tensor<3xi32>) -> tensor<10x2x5xf32>
  return
}

// -----

// Tests that softmax_cross_entropy_rows round-trips: logits of rank 2 and
// 3, i64 or i32 labels, a loss per position and the softmax.
// CHECK-LABEL: func @softmax_cross_entropy_rows
// CHECK: kiln.softmax_cross_entropy_rows %{{.+}}, %{{.+}} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
// CHECK-NEXT: kiln.softmax_cross_entropy_rows %{{.+}}, %{{.+}} : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3x5xf32>)
// GENERIC-LABEL: sym_name = "softmax_cross_entropy_rows"
// GENERIC: "kiln.softmax_cross_entropy_rows"({{.+}}) : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
func.func @softmax_cross_entropy_rows(%x: tensor<8x10xf32>, %t: tensor<8xi64>, %x3: tensor<2x3x5xf32>, %t3: tensor<2x3xi32>) {
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  %1:2 = kiln.softmax_cross_entropy_rows %x3, %t3 : (tensor<2x3x5xf32>, tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3x5xf32>)
  return
}

// -----

// Tests that softmax_cross_entropy_grad_rows round-trips with its scale.
// CHECK-LABEL: func @softmax_cross_entropy_grad_rows
// CHECK: kiln.softmax_cross_entropy_grad_rows %{{.+}}, %{{.+}} scale = 1.562500e-02 : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
// GENERIC-LABEL: sym_name = "softmax_cross_entropy_grad_rows"
// GENERIC: "kiln.softmax_cross_entropy_grad_rows"({{.+}}) <{scale = 1.562500e-02 : f64}> : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
func.func @softmax_cross_entropy_grad_rows(%x: tensor<8x10xf32>, %t: tensor<8xi64>) {
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 1.562500e-02 : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

// Tests that the loss ops round-trip with an ignore_index, and the gradient
// op with its weights.
// CHECK-LABEL: func @ignoring_losses
// CHECK: kiln.softmax_cross_entropy %arg0, %arg1 {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
// CHECK: kiln.softmax_cross_entropy_rows %arg0, %arg1 {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
// CHECK: kiln.softmax_cross_entropy_grad_rows %arg0, %arg1 weights %arg2 scale = 1.000000e+00 {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
// GENERIC-LABEL: sym_name = "ignoring_losses"
// GENERIC: "kiln.softmax_cross_entropy_grad_rows"(%arg0, %arg1, %arg2) <{ignore_index = -100 : i64, scale = 1.000000e+00 : f64}>
func.func @ignoring_losses(%x: tensor<8x10xf32>, %t: tensor<8xi64>, %w: tensor<8xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %r:2 = kiln.softmax_cross_entropy_rows %x, %t {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  %g:2 = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {ignore_index = -100 : i64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

// Tests that the loss ops round-trip with a label smoothing.
// CHECK-LABEL: func @smoothing_losses
// CHECK: kiln.softmax_cross_entropy %arg0, %arg1 {ignore_index = 0 : i64, label_smoothing = 1.000000e-01 : f64}
// CHECK: kiln.softmax_cross_entropy_grad_rows %arg0, %arg1 weights %arg2 scale = 1.000000e+00 {label_smoothing = 1.000000e-01 : f64}
func.func @smoothing_losses(%x: tensor<8x10xf32>, %t: tensor<8xi64>, %w: tensor<8xf32>) {
  %l = kiln.softmax_cross_entropy %x, %t {ignore_index = 0 : i64, label_smoothing = 0.1 : f64} : (tensor<8x10xf32>, tensor<8xi64>) -> tensor<f32>
  %g:2 = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 {label_smoothing = 0.1 : f64} : (tensor<8x10xf32>, tensor<8xi64>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}
