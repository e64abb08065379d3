//===- KilnTrainingOps.td - Ops the training step adds ----*- tablegen -*-===//
//
// What kiln-autodiff and kiln-expand-optimizer build: gradient helpers,
// variable assignment, and the optimizer updates. Updates have value
// semantics (they return the new parameter and slots); `kiln.assign` stores
// them, and the execution plan writes them in place into the variables.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRAINING_OPS_TD
#define KILN_TRAINING_OPS_TD

//===----------------------------------------------------------------------===//
// Gradient helpers
//===----------------------------------------------------------------------===//

def Kiln_GeluGradOp : Kiln_ElementwiseOp<"gelu_grad"> {
  let summary = "The gradient of gelu at x, times the incoming gradient";
  let description = [{
    ```
    %dx = kiln.gelu_grad %x, %dy approximation(exact) : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$operand, Kiln_FloatTensor:$grad,
                       Kiln_GeluApproximation:$approximation);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `,` $grad `approximation` `(` $approximation `)` attr-dict `:` type($result)
  }];
}

def Kiln_StopGradientOp : Kiln_Op<"stop_gradient", [Pure, SameOperandsAndResultType]> {
  let summary = "The operand, through which no gradient flows";
  let description = [{
    The identity in the forward pass; kiln-autodiff gives its operand no
    gradient from it (TensorFlow's StopGradient, PyTorch's detach). The
    execution plan makes it a view of its operand: it costs nothing.
    ```
    %m = kiln.stop_gradient %mean : tensor<4x1xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

def Kiln_OneHotOp : Kiln_Op<"one_hot", [Pure]> {
  let summary = "1.0 at each index's position along a new last dimension, else 0.0";
  let description = [{
    The result is `indices` shape plus `[depth]`; an index outside
    `[0, depth)` gives a row of zeros.
    ```
    %h = kiln.one_hot %labels : tensor<32xi64> -> tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$indices);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$indices attr-dict `:` type($indices) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_ScatterAddRowsOp : Kiln_Op<"scatter_add_rows", [Pure]> {
  let summary = "Rows summed into a table of zeros at their ids (an embedding's table gradient)";
  let description = [{
    `rows` is `[N, rest...]`, `ids` is `[N]`, the result `[R, rest...]`:
    zeros, then row i added at `ids[i]`, in order of i; an id outside
    `[0, R)` adds nothing. The same as `one_hot(ids)ᵀ × rows` without the
    `[N, R]` one-hot matrix or its product (R × N × row multiply-adds).
    ```
    %t = kiln.scatter_add_rows %rows[%ids] : (tensor<512x128xf32>, tensor<512xi64>) -> tensor<1000x128xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$rows, Kiln_IndexTensor:$ids);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $rows `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_SoftmaxCrossEntropyRowsOp : Kiln_Op<"softmax_cross_entropy_rows", [Pure]> {
  let summary = "Each position's softmax cross-entropy, and the softmax, from one pass";
  let description = [{
    `logits` is `[B..., C]`, `labels` `[B...]`; `losses[i...]` is
    `log(sum(exp(logits[i..., :]))) - logits[i..., labels[i...]]` (the
    label clamped to `[0, C)`), `probs` the softmax over the last axis.
    `kiln-fuse-softmax-cross-entropy` makes it from a
    `kiln.softmax_cross_entropy` (then the `kiln.reduce_mean` of `losses`)
    and a `kiln.softmax` of the same logits (its gradient needs one): one
    kernel whose positions are independent (so it can be split by rows),
    where the two ops were two kernels computing each row's maximum and sum
    of exponentials twice, the loss's on one thread. With `ignore_index`
    (the loss's), a position whose label is that value has loss 0; with
    `label_smoothing`, the losses are the loss's smoothed ones.
    ```
    %l, %p = kiln.softmax_cross_entropy_rows %logits, %labels : (tensor<512x1000xf32>, tensor<512xi64>) -> (tensor<512xf32>, tensor<512x1000xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Kiln_FloatTensor:$losses, Kiln_FloatTensor:$probs);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_SoftmaxCrossEntropyGradRowsOp
    : Kiln_Op<"softmax_cross_entropy_grad_rows", [Pure]> {
  let summary = "Each position's softmax cross-entropy, and its scaled gradient, from one pass";
  let description = [{
    `losses` as `kiln.softmax_cross_entropy_rows` computes them; `grad` is
    `scale * (softmax(logits) - one_hot(labels))` over the last axis (a label
    outside `[0, C)` selects no class, as `kiln.one_hot`): the gradient of
    `scale * sum(losses)` with respect to the logits.
    `kiln-fuse-softmax-cross-entropy` makes it from a
    `kiln.softmax_cross_entropy_rows` whose softmax only that gradient
    reads (a train step whose model does not also output the softmax), so
    the softmax is never stored and the gradient is written by the kernel
    that computes the loss.
    With `weights` (the labels' shape), each position's gradient is also
    multiplied by its weight; with `ignore_index`, a position whose label is
    that value has loss 0 and gradient 0; with `label_smoothing` e, the
    losses are smoothed as the loss's and the one-hot is `(1 - e) *
    one_hot + e / C`. Autodiff writes this op, with weights, for a loss with
    either: an ignore_index's scale, the upstream gradient over the count of
    the kept labels, depends on the labels.
    ```
    %l, %g = kiln.softmax_cross_entropy_grad_rows %logits, %labels scale = 0.001953125 : (tensor<512x1000xf32>, tensor<512xi64>) -> (tensor<512xf32>, tensor<512x1000xf32>)
    %m, %h = kiln.softmax_cross_entropy_grad_rows %logits, %labels weights %w scale = 1.0 {ignore_index = -100 : i64} : (tensor<512x1000xf32>, tensor<512xi64>, tensor<512xf32>) -> (tensor<512xf32>, tensor<512x1000xf32>)
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_IndexTensor:$labels,
                       Optional<Kiln_FloatTensor>:$weights, F64Attr:$scale,
                       OptionalAttr<I64Attr>:$ignore_index,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Kiln_FloatTensor:$losses, Kiln_FloatTensor:$grad);
  let assemblyFormat = [{
    $logits `,` $labels (`weights` $weights^)? `scale` `=` $scale attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [Pure]> {
  let summary = "Zero padding: `low` before, `high` after, `interior` between elements";
  let description = [{
    Result dimension i is `low[i] + size[i] + (size[i] - 1) * interior[i] +
    high[i]`: the gradient of a strided `kiln.slice`.
    ```
    %p = kiln.pad %g low [0, 2] high [0, 1] interior [0, 1] : tensor<4x3xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high, DenseI64ArrayAttr:$interior);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `low` $low `high` $high `interior` $interior attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Variable updates
//===----------------------------------------------------------------------===//

def Kiln_AssignOp : Kiln_Op<"assign",
    [MemoryEffects<[MemWrite]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Stores a new value into a variable";
  let description = [{
    Reads of the variable before the assign see the old value. The training
    step assigns every variable at most once, after its last read.
    ```
    kiln.assign @fc1.w, %w2 : tensor<784x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable, Kiln_Tensor:$value);
  let assemblyFormat = "$variable `,` $value attr-dict `:` type($value)";
}

/// A dense update: `param` and every slot and `grad` have one type, `lr` is a
/// scalar of its element type.
class Kiln_ApplyOp<string mnemonic, list<string> sameType, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, AllTypesMatch<sameType>])> {
  let hasVerifier = 1;
}

def Kiln_ApplySgdOp : Kiln_ApplyOp<"apply_sgd", ["param", "grad", "new_param"]> {
  let summary = "param - lr * grad";
  let description = [{
    ```
    %w2 = kiln.apply_sgd %w, %g, %lr : tensor<8x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$param, Kiln_FloatTensor:$grad,
                       Kiln_FloatScalar:$lr);
  let results = (outs Kiln_FloatTensor:$new_param);
  let assemblyFormat = "$param `,` $grad `,` $lr attr-dict `:` type($param) `,` type($lr)";
}

def Kiln_ApplyMomentumOp : Kiln_ApplyOp<"apply_momentum",
    ["param", "velocity", "grad", "new_param", "new_velocity"]> {
  let summary = "PyTorch's SGD with momentum: v = mu v + g; param -= lr v";
  let description = [{
    With `nesterov`, `param -= lr (g + mu v)` after updating v.
    ```
    %w2, %v2 = kiln.apply_momentum %w, %v, %g, %lr momentum = 9.0e-01 : tensor<8x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$param, Kiln_FloatTensor:$velocity,
                       Kiln_FloatTensor:$grad, Kiln_FloatScalar:$lr,
                       F64Attr:$momentum, UnitAttr:$nesterov);
  let results = (outs Kiln_FloatTensor:$new_param, Kiln_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $param `,` $velocity `,` $grad `,` $lr `momentum` `=` $momentum attr-dict
    `:` type($param) `,` type($lr)
  }];
}

def Kiln_ApplyAdamOp : Kiln_ApplyOp<"apply_adam",
    ["param", "m", "v", "grad", "new_param", "new_m", "new_v"],
    [AllTypesMatch<["lr", "step"]>]> {
  let summary = "Adam with bias correction; AdamW's decoupled decay when weight_decay > 0";
  let description = [{
    `step` is the 1-based step count as a float scalar. PyTorch's order:
    `param *= 1 - lr * weight_decay`, then `m = b1 m + (1 - b1) g`,
    `v = b2 v + (1 - b2) g^2`,
    `param -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon)`.
    ```
    %w2, %m2, %v2 = kiln.apply_adam %w, %m, %v, %g, %lr, %t beta1 = 9.0e-01 beta2 = 9.99e-01 epsilon = 1.0e-08 weight_decay = 0.0 : tensor<8x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$param, Kiln_FloatTensor:$m,
                       Kiln_FloatTensor:$v, Kiln_FloatTensor:$grad,
                       Kiln_FloatScalar:$lr, Kiln_FloatScalar:$step,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$epsilon,
                       F64Attr:$weight_decay);
  let results = (outs Kiln_FloatTensor:$new_param, Kiln_FloatTensor:$new_m,
                      Kiln_FloatTensor:$new_v);
  let assemblyFormat = [{
    $param `,` $m `,` $v `,` $grad `,` $lr `,` $step `beta1` `=` $beta1
    `beta2` `=` $beta2 `epsilon` `=` $epsilon `weight_decay` `=` $weight_decay
    attr-dict `:` type($param) `,` type($lr)
  }];
}

def Kiln_ApplyAdagradOp : Kiln_ApplyOp<"apply_adagrad",
    ["param", "accumulator", "grad", "new_param", "new_accumulator"]> {
  let summary = "acc += g^2; param -= lr g / (sqrt(acc) + epsilon)";
  let description = [{
    ```
    %w2, %a2 = kiln.apply_adagrad %w, %a, %g, %lr epsilon = 1.0e-10 : tensor<8x4xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$param, Kiln_FloatTensor:$accumulator,
                       Kiln_FloatTensor:$grad, Kiln_FloatScalar:$lr,
                       F64Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$new_param, Kiln_FloatTensor:$new_accumulator);
  let assemblyFormat = [{
    $param `,` $accumulator `,` $grad `,` $lr `epsilon` `=` $epsilon attr-dict
    `:` type($param) `,` type($lr)
  }];
}

def Kiln_SparseApplyOp : Kiln_Op<"sparse_apply", [Pure, AttrSizedOperandSegments]> {
  let summary = "An optimizer update of `param` from a gradient given as rows";
  let description = [{
    The gradient is sparse: row `indices[i]` of `param` (`[R, ...]`) has
    gradient `rows[i]` (`[N, ...]`). Duplicate ids are summed first, in order
    of first appearance. Without `dense`, only the named rows of `param` and
    of the slots change (TensorFlow's LazyAdam, PyTorch's SparseAdam); with
    `dense`, every row gets the dense optimizer's update with a zero gradient
    where it was not named (torch.optim on an nn.Embedding's gradient). SGD
    and Adagrad give exactly the dense update either way. Slots are as in the dense ops: momentum's
    velocity, Adam's m and v, Adagrad's accumulator. With `when` (an i1
    scalar), nothing changes where it is false: the step fp16 loss scaling
    skips (its gradients not all finite). The runtime runs it (the
    parameter server will too), in place on the variables.
    ```
    %t2, %a2 = kiln.sparse_apply adagrad %t, [%a], %ids, %g, %lr, %step {epsilon = 1.0e-10}
        : (tensor<1000x16xf32>, tensor<1000x16xf32>, tensor<64xi64>, tensor<64x16xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<1000x16xf32>, tensor<1000x16xf32>)
    %t3 = kiln.sparse_apply sgd %t, [], %ids, %g, %lr, %step when %finite
        : (tensor<1000x16xf32>, tensor<64xi64>, tensor<64x16xf32>, tensor<f32>, tensor<f32>, tensor<i1>)
        -> tensor<1000x16xf32>
    ```
  }];
  let arguments = (ins Kiln_OptimizerKind:$optimizer, Kiln_FloatTensor:$param,
                       Variadic<Kiln_FloatTensor>:$slots,
                       Kiln_IndexTensor:$indices, Kiln_FloatTensor:$rows,
                       Kiln_FloatScalar:$lr, Kiln_FloatScalar:$step,
                       Optional<0DTensorOf<[I1]>>:$when,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       UnitAttr:$nesterov,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$dense);
  let results = (outs Kiln_FloatTensor:$new_param,
                      Variadic<Kiln_FloatTensor>:$new_slots);
  let assemblyFormat = [{
    $optimizer $param `,` `[` $slots `]` `,` $indices `,` $rows `,` $lr `,` $step
    (`when` $when^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Slots the optimizer keeps per parameter.
    static unsigned slotCount(::kiln::OptimizerKind kind);
  }];
}

#endif // KILN_TRAINING_OPS_TD
