// RUN: kiln-opt %s -split-input-file --kiln-autodiff | FileCheck --enable-var-scope %s

// Tests that a dense layer's weight gets x^T dy and its bias the batch sum
// of dy, returned after @forward's outputs and tagged with the variable.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x2xf32> {kiln.gradient = @w}, tensor<2xf32> {kiln.gradient = @b})
// CHECK: %[[Y:.+]] = kiln.add
// CHECK: %[[LOSS:.+]] = kiln.mean_squared_error %[[Y]], %[[T:.+]] :
// CHECK: %[[DIFF:.+]] = kiln.sub %[[Y]], %[[T]]
// CHECK: %[[DY:.+]] = kiln.mul %[[DIFF]],
// CHECK-DAG: %[[DW:.+]] = kiln.matmul %[[X:.+]], %[[DY]] {transpose_a}
// CHECK-DAG: %[[DBK:.+]] = kiln.reduce_sum %[[DY]] axes [0] {keep_dims}
// CHECK-DAG: %[[DB:.+]] = kiln.reshape %[[DBK]] : tensor<1x2xf32> -> tensor<2xf32>
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  kiln.variable @b : tensor<2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32>, %t: tensor<8x2xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %b = kiln.read @b : tensor<2xf32>
    %mm = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %bb = kiln.broadcast %b : tensor<2xf32> -> tensor<8x2xf32>
    %y = kiln.add %mm, %bb : tensor<8x2xf32>
    %l = kiln.mean_squared_error %y, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an embedding table read only by gathers gets a sparse
// gradient: the flattened ids and one gradient row per id; two lookups of
// the same table are concatenated.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<10xi64> {kiln.gradient_indices = @emb}, tensor<10x3xf32> {kiln.gradient_rows = @emb}
// CHECK-DAG: %[[IDS1:.+]] = kiln.reshape %[[A:.+]] : tensor<2x2xi64> -> tensor<4xi64>
// CHECK-DAG: %[[IDS:.+]] = kiln.concat %{{.+}}, %{{.+}} axis = 0 : (tensor<6xi64>, tensor<4xi64>) -> tensor<10xi64>
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<100x3xf32> init <zeros>
  func.func @forward(%a: tensor<2x2xi64>, %c: tensor<6xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<100x3xf32>
    %ga = kiln.gather %e[%a] : (tensor<100x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
    %gc = kiln.gather %e[%c] : (tensor<100x3xf32>, tensor<6xi64>) -> tensor<6x3xf32>
    %sa = kiln.reduce_sum %ga axes [0, 1, 2] : tensor<2x2x3xf32> -> tensor<f32>
    %sc = kiln.reduce_mean %gc axes [0, 1] : tensor<6x3xf32> -> tensor<f32>
    %l = kiln.add %sa, %sc : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a table also used by a matmul (tied embeddings) gets one dense
// gradient: the gather's rows scattered (kiln.scatter_add_rows: one_hot^T x
// rows without the product), plus the matmul's.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<5x3xf32> {kiln.gradient = @emb}
// CHECK: kiln.scatter_add_rows %{{.+}}[%arg0] : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<5x3xf32>
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<5x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi64>, %labels: tensor<4xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<5x3xf32>
    %h = kiln.gather %e[%ids] : (tensor<5x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
    %logits = kiln.matmul %h, %e {transpose_b} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    %l = kiln.softmax_cross_entropy %logits, %labels : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that non-trainable variables, and branches that do not reach the
// loss, get no gradient (and no backward ops).
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3xf32> {kiln.name = "aux"}, tensor<3xf32> {kiln.gradient = @w})
// CHECK-NOT: kiln.gradient = @frozen
// CHECK: kiln.tanh
// CHECK-NOT: kiln.sub
// CHECK: return
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<3xf32> init <zeros>
  kiln.variable @frozen : tensor<3xf32> init <zeros> {trainable = false}
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {kiln.name = "loss"}, tensor<3xf32> {kiln.name = "aux"}) {
    %w = kiln.read @w : tensor<3xf32>
    %f = kiln.read @frozen : tensor<3xf32>
    %p = kiln.mul %w, %f : tensor<3xf32>
    %q = kiln.mul %p, %x : tensor<3xf32>
    %l = kiln.reduce_sum %q axes [0] : tensor<3xf32> -> tensor<f32>
    %aux = kiln.tanh %w : tensor<3xf32>
    return %l, %aux : tensor<f32>, tensor<3xf32>
  }
}

// -----

// Tests that no gradient flows through kiln.stop_gradient: y = w + stop(w)
// gives w the gradient through y's first operand alone (1/4 from the mean,
// not twice that), as TensorFlow's StopGradient does.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<4xf32> {kiln.gradient = @w}
// CHECK: %[[W:.+]] = kiln.read @w
// CHECK: %[[S:.+]] = kiln.stop_gradient %[[W]]
// CHECK: %[[Y:.+]] = kiln.add %[[W]], %[[S]]
// CHECK: %[[G:.+]] = kiln.mul
// CHECK-NOT: kiln.add %[[G]], %[[G]]
// CHECK: return %{{.+}}, %[[G]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4xf32>
    %s = kiln.stop_gradient %w : tensor<4xf32>
    %y = kiln.add %w, %s : tensor<4xf32>
    %l = kiln.reduce_mean %y axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a convolution's operand gradients are conv_backward_data (the
// input's type) and conv_backward_filter (the filter's) with the forward
// window and groups; the first convolution's input is not trained, so it gets
// only the filter gradient, from the data gradient of the second.
// CHECK-LABEL: func @train_step
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<4x2x3x3xf32> {kiln.gradient = @w1}, tensor<6x2x1x2xf32> {kiln.gradient = @w2})
// CHECK: %[[W1:.+]] = kiln.read @w1
// CHECK: %[[W2:.+]] = kiln.read @w2
// CHECK: %[[Y:.+]] = kiln.conv %[[X:.+]], %[[W1]] strides [2, 2]
// CHECK: kiln.conv %[[Y]], %[[W2]]
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<1x6x2x1xf32>
// CHECK-DAG: %[[DY:.+]] = kiln.conv_backward_data %[[G]], %[[W2]] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64} : (tensor<1x6x2x1xf32>, tensor<6x2x1x2xf32>) -> tensor<1x4x2x2xf32>
// CHECK-DAG: %[[DW2:.+]] = kiln.conv_backward_filter %[[Y]], %[[G]] strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64} : (tensor<1x4x2x2xf32>, tensor<1x6x2x1xf32>) -> tensor<6x2x1x2xf32>
// CHECK: %[[DW1:.+]] = kiln.conv_backward_filter %[[X]], %[[DY]] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [0, 0] : (tensor<1x2x5x5xf32>, tensor<1x4x2x2xf32>) -> tensor<4x2x3x3xf32>
// CHECK-NOT: kiln.conv_backward_data
// CHECK: return %{{.+}}, %[[DW1]], %[[DW2]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w1 : tensor<4x2x3x3xf32> init <zeros>
  kiln.variable @w2 : tensor<6x2x1x2xf32> init <zeros>
  func.func @forward(%x: tensor<1x2x5x5xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w1 = kiln.read @w1 : tensor<4x2x3x3xf32>
    %w2 = kiln.read @w2 : tensor<6x2x1x2xf32>
    %y = kiln.conv %x, %w1 strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [0, 0]
        : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
    %z = kiln.conv %y, %w2 strides [1, 1] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {groups = 2 : i64}
        : (tensor<1x4x2x2xf32>, tensor<6x2x1x2xf32>) -> tensor<1x6x2x1xf32>
    %l = kiln.reduce_sum %z axes [0, 1, 2, 3] : tensor<1x6x2x1xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a max pool's gradient recomputes where each window's maximum
// is (max_pool_indices over the pooled input) and sends the gradient there
// (max_pool_grad), with the forward window, ceil_mode included; an average
// pool's is avg_pool_grad with its window and exclude_pad. The two sum into
// the input's gradient.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<1x2x5x5xf32> {kiln.gradient = @x}
// CHECK: %[[X:.+]] = kiln.read @x
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<1x2x3x3xf32>
// CHECK-DAG: %[[AVG:.+]] = kiln.avg_pool_grad %[[G]] kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {exclude_pad} : tensor<1x2x3x3xf32> -> tensor<1x2x5x5xf32>
// CHECK-DAG: %[[IDX:.+]] = kiln.max_pool_indices %[[X]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xi32>
// CHECK-DAG: %[[MAX:.+]] = kiln.max_pool_grad %[[G]], %[[IDX]] kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xi32>) -> tensor<1x2x5x5xf32>
// CHECK: %[[DX:.+]] = kiln.add %{{.+}}, %{{.+}} : tensor<1x2x5x5xf32>
// CHECK: return %{{.+}}, %[[DX]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @x : tensor<1x2x5x5xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %x = kiln.read @x : tensor<1x2x5x5xf32>
    %m = kiln.max_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0] {ceil_mode}
        : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
    %a = kiln.avg_pool %x kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {exclude_pad}
        : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
    %s = kiln.add %m, %a : tensor<1x2x3x3xf32>
    %l = kiln.reduce_sum %s axes [0, 1, 2, 3] : tensor<1x2x3x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a gather on axis 1 has a dense table gradient: the gathered
// axis moved to the front, the rows scattered by id (one_hot(ids)^T x
// rows), and moved back.
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<4xi64>)
// CHECK-SAME: tensor<3x5x2xf32> {kiln.gradient = @t}
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<3x4x2xf32>
// CHECK: %[[FRONT:.+]] = kiln.transpose %[[G]] [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
// CHECK: %[[TABLE:.+]] = kiln.scatter_add_rows %[[FRONT]][%[[IDS]]] : (tensor<4x3x2xf32>, tensor<4xi64>) -> tensor<5x3x2xf32>
// CHECK: %[[DT:.+]] = kiln.transpose %[[TABLE]] [1, 0, 2] : tensor<5x3x2xf32> -> tensor<3x5x2xf32>
// CHECK: return %{{.+}}, %[[DT]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @t : tensor<3x5x2xf32> init <zeros>
  func.func @forward(%ids: tensor<4xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %t = kiln.read @t : tensor<3x5x2xf32>
    %g = kiln.gather %t[%ids] {axis = 1 : i64} : (tensor<3x5x2xf32>, tensor<4xi64>) -> tensor<3x4x2xf32>
    %l = kiln.reduce_sum %g axes [0, 1, 2] : tensor<3x4x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that gather_elements' gradient wraps negative indices, one-hots
// them, weights the one-hot rows by the gradient and sums over the indices'
// axis, then zero-pads the dimensions the indices did not cover.
// CHECK-LABEL: func @train_step
// CHECK-SAME: (%[[IDX:[^:]+]]: tensor<2x2xi64>)
// CHECK-SAME: tensor<3x5xf32> {kiln.gradient = @x}
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<2x2xf32>
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0> : tensor<2x2xi64>
// CHECK-DAG: %[[DEPTH:.+]] = kiln.constant dense<5> : tensor<2x2xi64>
// CHECK-DAG: %[[WRAPPED:.+]] = kiln.add %[[IDX]], %[[DEPTH]] : tensor<2x2xi64>
// CHECK-DAG: %[[NEG:.+]] = kiln.compare lt, %[[IDX]], %[[ZERO]] : tensor<2x2xi64>
// CHECK: %[[INDEX:.+]] = kiln.select %[[NEG]], %[[WRAPPED]], %[[IDX]] : tensor<2x2xi1>, tensor<2x2xi64>
// CHECK: %[[HOT:.+]] = kiln.one_hot %[[INDEX]] : tensor<2x2xi64> -> tensor<2x2x5xf32>
// CHECK: %[[G3:.+]] = kiln.reshape %[[G]] : tensor<2x2xf32> -> tensor<2x2x1xf32>
// CHECK: %[[GB:.+]] = kiln.broadcast %[[G3]] : tensor<2x2x1xf32> -> tensor<2x2x5xf32>
// CHECK: %[[W:.+]] = kiln.mul %[[HOT]], %[[GB]] : tensor<2x2x5xf32>
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %[[W]] axes [1] : tensor<2x2x5xf32> -> tensor<2x5xf32>
// CHECK: %[[DENSE:.+]] = kiln.transpose %[[SUM]] [0, 1]
// CHECK: %[[DX:.+]] = kiln.pad %[[DENSE]] low [0, 0] high [1, 0] interior [0, 0] : tensor<2x5xf32> -> tensor<3x5xf32>
// CHECK: return %{{.+}}, %[[DX]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @x : tensor<3x5xf32> init <zeros>
  func.func @forward(%idx: tensor<2x2xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %x = kiln.read @x : tensor<3x5xf32>
    %g = kiln.gather_elements %x[%idx] axis = 1 : (tensor<3x5xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
    %l = kiln.reduce_sum %g axes [0, 1] : tensor<2x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that gather_elements on axis 0 moves the one-hot depth back to
// dimension 0.
// CHECK-LABEL: func @train_step
// CHECK: %[[HOT:.+]] = kiln.one_hot %{{.+}} : tensor<2x3xi32> -> tensor<2x3x4xf32>
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %{{.+}} axes [0] : tensor<2x3x4xf32> -> tensor<3x4xf32>
// CHECK: %[[DX:.+]] = kiln.transpose %[[SUM]] [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK-NOT: kiln.pad
// CHECK: return %{{.+}}, %[[DX]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @x : tensor<4x3xf32> init <zeros>
  func.func @forward(%idx: tensor<2x3xi32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %x = kiln.read @x : tensor<4x3xf32>
    %g = kiln.gather_elements %x[%idx] axis = 0 : (tensor<4x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
    %l = kiln.reduce_sum %g axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that erf's gradient is g * 2 / sqrt(pi) * exp(-x^2).
// CHECK-LABEL: func @train_step
// CHECK: %[[A:.+]] = kiln.read @a
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<4xf32>
// CHECK: %[[SQ:.+]] = kiln.mul %[[A]], %[[A]] : tensor<4xf32>
// CHECK: %[[NEG:.+]] = kiln.neg %[[SQ]] : tensor<4xf32>
// CHECK: %[[BELL:.+]] = kiln.exp %[[NEG]] : tensor<4xf32>
// CHECK: %[[GB:.+]] = kiln.mul %[[G]], %[[BELL]] : tensor<4xf32>
// CHECK: %[[C:.+]] = kiln.constant dense<1.12837923> : tensor<4xf32>
// CHECK: %[[DA:.+]] = kiln.mul %[[GB]], %[[C]] : tensor<4xf32>
// CHECK: return %{{.+}}, %[[DA]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @a : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %a = kiln.read @a : tensor<4xf32>
    %e = kiln.erf %a : tensor<4xf32>
    %l = kiln.reduce_sum %e axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that abs's gradient is g * sign(x) with sign(0) = 0: g where x > 0
// minus g where x < 0.
// CHECK-LABEL: func @train_step
// CHECK: %[[A:.+]] = kiln.read @a
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<4xf32>
// CHECK-DAG: %[[LT:.+]] = kiln.compare lt, %[[A]], %{{.+}} : tensor<4xf32>
// CHECK-DAG: %[[GT:.+]] = kiln.compare gt, %[[A]], %{{.+}} : tensor<4xf32>
// CHECK-DAG: %[[NEG:.+]] = kiln.select %[[LT]], %[[G]], %{{.+}} : tensor<4xi1>, tensor<4xf32>
// CHECK-DAG: %[[POS:.+]] = kiln.select %[[GT]], %[[G]], %{{.+}} : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[DA:.+]] = kiln.sub %[[POS]], %[[NEG]] : tensor<4xf32>
// CHECK: return %{{.+}}, %[[DA]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @a : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %a = kiln.read @a : tensor<4xf32>
    %e = kiln.abs %a : tensor<4xf32>
    %l = kiln.reduce_sum %e axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that pow's gradients are g * b * a^(b - 1) for the base, taken as 0
// where b == 0 (a^-1 is infinite at a = 0), and g * a^b * log(a) for the
// exponent, taken as 0 where a <= 0 (log of a safe 1 there).
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<4xf32> {kiln.gradient = @a}, tensor<4xf32> {kiln.gradient = @b}
// CHECK: %[[A:.+]] = kiln.read @a
// CHECK: %[[B:.+]] = kiln.read @b
// CHECK: %[[Y:.+]] = kiln.pow %[[A]], %[[B]] : tensor<4xf32>
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<4xf32>
// CHECK: %[[BM1:.+]] = kiln.sub %[[B]], %{{.+}} : tensor<4xf32>
// CHECK: %[[LOWER:.+]] = kiln.pow %[[A]], %[[BM1]] : tensor<4xf32>
// CHECK: %[[POS:.+]] = kiln.compare gt, %[[A]], %{{.+}} : tensor<4xf32>
// CHECK: %[[SAFE:.+]] = kiln.select %[[POS]], %[[A]], %{{.+}} : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[LOG:.+]] = kiln.log %[[SAFE]] : tensor<4xf32>
// CHECK: %[[BZERO:.+]] = kiln.compare eq, %[[B]], %{{.+}} : tensor<4xf32>
// CHECK-DAG: %[[BL:.+]] = kiln.mul %[[B]], %[[LOWER]] : tensor<4xf32>
// CHECK-DAG: %[[GBL:.+]] = kiln.mul %[[G]], %[[BL]] : tensor<4xf32>
// CHECK-DAG: %[[DA:.+]] = kiln.select %[[BZERO]], %{{.+}}, %[[GBL]] : tensor<4xi1>, tensor<4xf32>
// CHECK-DAG: %[[YL:.+]] = kiln.mul %[[Y]], %[[LOG]] : tensor<4xf32>
// CHECK-DAG: %[[GYL:.+]] = kiln.mul %[[G]], %[[YL]] : tensor<4xf32>
// CHECK: %[[DB:.+]] = kiln.select %[[POS]], %[[GYL]], %{{.+}} : tensor<4xi1>, tensor<4xf32>
// CHECK: return %{{.+}}, %[[DA]], %[[DB]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @a : tensor<4xf32> init <zeros>
  kiln.variable @b : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %a = kiln.read @a : tensor<4xf32>
    %b = kiln.read @b : tensor<4xf32>
    %e = kiln.pow %a, %b : tensor<4xf32>
    %l = kiln.reduce_sum %e axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that mod's gradients are g for the dividend and -g * (a - r) / b (the
// quotient, constant almost everywhere) for the divisor.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<4xf32> {kiln.gradient = @a}, tensor<4xf32> {kiln.gradient = @b}
// CHECK: %[[A:.+]] = kiln.read @a
// CHECK: %[[B:.+]] = kiln.read @b
// CHECK: %[[R:.+]] = kiln.mod %[[A]], %[[B]] {fmod} : tensor<4xf32>
// CHECK: %[[G:.+]] = kiln.broadcast %{{.+}} -> tensor<4xf32>
// CHECK: %[[AR:.+]] = kiln.sub %[[A]], %[[R]] : tensor<4xf32>
// CHECK: %[[Q:.+]] = kiln.div %[[AR]], %[[B]] : tensor<4xf32>
// CHECK: %[[GQ:.+]] = kiln.mul %[[G]], %[[Q]] : tensor<4xf32>
// CHECK: %[[DB:.+]] = kiln.neg %[[GQ]] : tensor<4xf32>
// CHECK: return %{{.+}}, %[[G]], %[[DB]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @a : tensor<4xf32> init <zeros>
  kiln.variable @b : tensor<4xf32> init <zeros>
  func.func @forward() -> (tensor<f32> {kiln.name = "loss"}) {
    %a = kiln.read @a : tensor<4xf32>
    %b = kiln.read @b : tensor<4xf32>
    %e = kiln.mod %a, %b {fmod} : tensor<4xf32>
    %l = kiln.reduce_sum %e axes [0] : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a table read by an embedding bag and a gather keeps a sparse
// gradient: the bag's ids as they are (padding -1 included) and each id's
// row the list's gradient times its weight (1/n for mean, 0 for padding),
// after the gather's.
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<14xi64> {kiln.gradient_indices = @emb}, tensor<14x3xf32> {kiln.gradient_rows = @emb}
// CHECK: %[[SPREAD:.+]] = kiln.broadcast %{{.+}} : tensor<2x1x3xf32> -> tensor<2x4x3xf32>
// CHECK: %[[PAD:.+]] = kiln.constant dense<-1> : tensor<2x4xi64>
// CHECK-NEXT: %[[PRESENT:.+]] = kiln.compare ne, %[[A:.+]], %[[PAD]] : tensor<2x4xi64>
// CHECK: %[[COUNT:.+]] = kiln.reduce_sum %{{.+}} axes [1] {keep_dims} : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK: %[[W:.+]] = kiln.broadcast %{{.+}} : tensor<2x4x1xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT: %[[ROWS:.+]] = kiln.mul %[[SPREAD]], %[[W]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[IDS:.+]] = kiln.reshape %[[A]] : tensor<2x4xi64> -> tensor<8xi64>
// CHECK-NEXT: %[[FLAT:.+]] = kiln.reshape %[[ROWS]] : tensor<2x4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: kiln.concat %{{.+}}, %[[IDS]] axis = 0 : (tensor<6xi64>, tensor<8xi64>) -> tensor<14xi64>
// CHECK-NEXT: kiln.concat %{{.+}}, %[[FLAT]] axis = 0 : (tensor<6x3xf32>, tensor<8x3xf32>) -> tensor<14x3xf32>
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<100x3xf32> init <zeros>
  func.func @forward(%a: tensor<2x4xi64>, %c: tensor<6xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<100x3xf32>
    %ga = kiln.embedding_bag %e[%a] combiner = mean : (tensor<100x3xf32>, tensor<2x4xi64>) -> tensor<2x3xf32>
    %gc = kiln.gather %e[%c] : (tensor<100x3xf32>, tensor<6xi64>) -> tensor<6x3xf32>
    %sa = kiln.reduce_sum %ga axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
    %sc = kiln.reduce_mean %gc axes [0, 1] : tensor<6x3xf32> -> tensor<f32>
    %l = kiln.add %sa, %sc : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a bag's table also multiplied gets one dense gradient: the
// weighted rows scattered by id (-1 adds to no row).
// CHECK-LABEL: func @train_step
// CHECK-SAME: tensor<5x3xf32> {kiln.gradient = @emb}
// CHECK: kiln.scatter_add_rows %{{.+}}[%{{.+}}] : (tensor<8x3xf32>, tensor<8xi64>) -> tensor<5x3xf32>
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @emb : tensor<5x3xf32> init <zeros>
  func.func @forward(%ids: tensor<4x2xi64>, %labels: tensor<4xi64>) -> (tensor<f32> {kiln.name = "loss"}) {
    %e = kiln.read @emb : tensor<5x3xf32>
    %h = kiln.embedding_bag %e[%ids] combiner = sum : (tensor<5x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
    %logits = kiln.matmul %h, %e {transpose_b} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
    %l = kiln.softmax_cross_entropy %logits, %labels : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a ReLU's gradient masks where its output is > 0 (the same
// positions as its input's), so that the input need not be kept for it.
// CHECK-LABEL: func @train_step
// CHECK: %[[H:.+]] = kiln.matmul
// CHECK: %[[R:.+]] = kiln.relu %[[H]]
// CHECK: %[[POSITIVE:.+]] = kiln.compare gt, %[[R]], %{{.+}} : tensor<8x2xf32>
// CHECK-NOT: kiln.compare gt, %[[H]]
// CHECK: kiln.select %[[POSITIVE]]
module attributes {kiln.train_spec = {loss = "loss"}} {
  kiln.variable @w : tensor<4x2xf32> init <zeros>
  func.func @forward(%x: tensor<8x4xf32>, %t: tensor<8x2xf32>) -> (tensor<f32> {kiln.name = "loss"}) {
    %w = kiln.read @w : tensor<4x2xf32>
    %h = kiln.matmul %x, %w : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
    %r = kiln.relu %h : tensor<8x2xf32>
    %l = kiln.mean_squared_error %r, %t : tensor<8x2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
