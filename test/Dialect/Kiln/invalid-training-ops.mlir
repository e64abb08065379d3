// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Tests that stop_gradient is an identity: its result has the operand's type
// (the generic form can spell another).
func.func @stop_gradient_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.stop_gradient' op requires the same type for all operands and results}}
  %0 = "kiln.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Tests that stop_gradient takes only element types of the dialect.
func.func @stop_gradient_f64(%x: tensor<4xf64>) {
  // expected-error @+1 {{'kiln.stop_gradient' op operand #0 must be ranked tensor of}}
  %0 = kiln.stop_gradient %x : tensor<4xf64>
  return
}

// -----

// Tests that sparse_apply's `dense` is a flag, not a value.
func.func @sparse_apply_dense_value(%t: tensor<10x4xf32>, %ids: tensor<2xi64>, %g: tensor<2x4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'kiln.sparse_apply' op attribute 'dense' failed to satisfy constraint: unit attribute}}
  %0 = kiln.sparse_apply sgd %t, [], %ids, %g, %lr, %lr {dense = true}
      : (tensor<10x4xf32>, tensor<2xi64>, tensor<2x4xf32>, tensor<f32>, tensor<f32>) -> tensor<10x4xf32>
  return
}

// -----

// Tests that sparse_apply's `when` is an i1 scalar (the step's finite flag).
func.func @sparse_apply_when_type(%t: tensor<10x4xf32>, %ids: tensor<2xi64>, %g: tensor<2x4xf32>, %lr: tensor<f32>, %flags: tensor<2xi1>) {
  // expected-error @+1 {{'kiln.sparse_apply' op operand #5 must be 0D tensor of 1-bit signless integer values}}
  %0 = kiln.sparse_apply sgd %t, [], %ids, %g, %lr, %lr when %flags
      : (tensor<10x4xf32>, tensor<2xi64>, tensor<2x4xf32>, tensor<f32>, tensor<f32>, tensor<2xi1>) -> tensor<10x4xf32>
  return
}

// -----

// Tests scatter_add_rows' shape rules: one id per row, ids of rank 1, the
// rows' trailing dimensions and element type in the result.
func.func @scatter_count(%rows: tensor<8x4xf32>, %ids: tensor<6xi64>) {
  // expected-error @+1 {{'kiln.scatter_add_rows' op expects one id per row: 6 ids, 8 rows}}
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<6xi64>) -> tensor<10x4xf32>
  return
}

// -----

func.func @scatter_ids_rank(%rows: tensor<8x4xf32>, %ids: tensor<8x1xi64>) {
  // expected-error @+1 {{'kiln.scatter_add_rows' op expects ids of rank 1, got 'tensor<8x1xi64>'}}
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<8x1xi64>) -> tensor<10x4xf32>
  return
}

// -----

func.func @scatter_row_shape(%rows: tensor<8x4xf32>, %ids: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.scatter_add_rows' op expects result dimension 1 to be 4 (the rows'), got 5}}
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<10x5xf32>
  return
}

// -----

func.func @scatter_rank(%rows: tensor<8x4xf32>, %ids: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.scatter_add_rows' op expects rows and a result of one rank (at least 1), got 'tensor<8x4xf32>' and 'tensor<40xf32>'}}
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<40xf32>
  return
}

// -----

func.func @scatter_type(%rows: tensor<8x4xf32>, %ids: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.scatter_add_rows' op expects the result element type 'f32'}}
  %0 = kiln.scatter_add_rows %rows[%ids] : (tensor<8x4xf32>, tensor<8xi64>) -> tensor<10x4xbf16>
  return
}

// -----

// Tests softmax_cross_entropy_rows' shape rules: labels of the logits'
// shape without the classes, losses of that shape and the logits' element
// type, probabilities of the logits' type.
func.func @sce_rows_labels(%x: tensor<8x10xf32>, %t: tensor<10xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_rows' op expects labels of shape [8] (the logits' without the classes), got 'tensor<10xi64>'}}
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t : (tensor<8x10xf32>, tensor<10xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_rows_losses(%x: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_rows' op expects losses of the labels' shape and the logits' element type, got 'tensor<8xbf16>'}}
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xbf16>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_rows_probs(%x: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_rows' op expects probs of the logits' type 'tensor<8x10xf32>', got 'tensor<8x1xf32>'}}
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x1xf32>)
  return
}

// -----

func.func @sce_rows_scalar(%x: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_rows' op expects logits of rank 1 or more, got 'tensor<f32>'}}
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t : (tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

// Tests softmax_cross_entropy_grad_rows' rules: those of the rows op, the
// gradient of the logits' type, and a finite scale.
func.func @sce_grad_rows_grad(%x: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_grad_rows' op expects grad of the logits' type 'tensor<8x10xf32>', got 'tensor<8x10xbf16>'}}
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 1.0 : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xbf16>)
  return
}

// -----

func.func @sce_grad_rows_labels(%x: tensor<8x10xf32>, %t: tensor<8x1xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_grad_rows' op expects labels of shape [8] (the logits' without the classes), got 'tensor<8x1xi64>'}}
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 1.0 : (tensor<8x10xf32>, tensor<8x1xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_grad_rows_scale(%x: tensor<8x10xf32>, %t: tensor<8xi64>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_grad_rows' op expects a finite scale, got INF}}
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 0x7FF0000000000000 : (tensor<8x10xf32>, tensor<8xi64>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_grad_rows_weights(%x: tensor<8x10xf32>, %t: tensor<8xi64>, %w: tensor<8x1xf32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_grad_rows' op expects weights of type 'tensor<8xf32>' (the labels' shape, the logits' element type), got 'tensor<8x1xf32>'}}
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t weights %w scale = 1.0 : (tensor<8x10xf32>, tensor<8xi64>, tensor<8x1xf32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_rows_ignore_index(%x: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_rows' op expects an ignore_index that 'i32' labels can hold, got 4294967296}}
  %0:2 = kiln.softmax_cross_entropy_rows %x, %t {ignore_index = 4294967296 : i64} : (tensor<8x10xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}

// -----

func.func @sce_ignore_index(%x: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op expects an ignore_index that 'i32' labels can hold, got -4294967296}}
  %0 = kiln.softmax_cross_entropy %x, %t {ignore_index = -4294967296 : i64} : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

func.func @sce_label_smoothing(%x: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy' op expects a label_smoothing in [0, 1], got 1.5}}
  %0 = kiln.softmax_cross_entropy %x, %t {label_smoothing = 1.5 : f64} : (tensor<8x10xf32>, tensor<8xi32>) -> tensor<f32>
  return
}

// -----

func.func @sce_grad_rows_label_smoothing(%x: tensor<8x10xf32>, %t: tensor<8xi32>) {
  // expected-error @+1 {{'kiln.softmax_cross_entropy_grad_rows' op expects a label_smoothing in [0, 1], got -0.5}}
  %0:2 = kiln.softmax_cross_entropy_grad_rows %x, %t scale = 1.0 {label_smoothing = -0.5 : f64} : (tensor<8x10xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8x10xf32>)
  return
}
