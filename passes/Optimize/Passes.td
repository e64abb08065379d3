//===- Passes.td - Optimization passes over kiln ----------*- tablegen -*-===//

#ifndef KILN_PASSES_OPTIMIZE_PASSES_TD
#define KILN_PASSES_OPTIMIZE_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnSinkTransposes : Pass<"kiln-sink-transposes", "::mlir::func::FuncOp"> {
  let summary = "Moves transposes below elementwise ops so inverse pairs cancel";
  let description = [{
    A channels-last model (TensorFlow's NHWC convolutions and pooling)
    imports as channels-first kiln ops between transposes: the bias, the
    activation and any other elementwise op run on the channels-last value
    between a convolution's transpose back and the next convolution's or
    pooling's transpose in. An elementwise op whose operands are each a
    transpose by one permutation (read by nothing else), a broadcast (of a
    bias, laid out again for the untransposed shape) or a constant becomes
    the same op on the untransposed values followed by one transpose; where
    that transpose meets its inverse both fold away. Run before autodiff, so
    the backward pass has none of them either.

    Before:
    ```
    %t = kiln.transpose %conv [0, 2, 3, 1] : tensor<8x16x5x5xf32> -> tensor<8x5x5x16xf32>
    %b = kiln.broadcast %bias : tensor<16xf32> -> tensor<8x5x5x16xf32>
    %a = kiln.add %t, %b : tensor<8x5x5x16xf32>
    %r = kiln.relu %a : tensor<8x5x5x16xf32>
    %u = kiln.transpose %r [0, 3, 1, 2] : tensor<8x5x5x16xf32> -> tensor<8x16x5x5xf32>
    ```
    After:
    ```
    %0 = kiln.reshape %bias : tensor<16xf32> -> tensor<1x16x1x1xf32>
    %b = kiln.broadcast %0 : tensor<1x16x1x1xf32> -> tensor<8x16x5x5xf32>
    %a = kiln.add %conv, %b : tensor<8x16x5x5xf32>
    %u = kiln.relu %a : tensor<8x16x5x5xf32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFuseSoftmaxCrossEntropy
    : Pass<"kiln-fuse-softmax-cross-entropy", "::mlir::func::FuncOp"> {
  let summary = "A softmax cross-entropy and a softmax of the same logits become one op";
  let description = [{
    The gradient of `kiln.softmax_cross_entropy` is `(softmax(x) -
    one_hot(labels)) * g / n`, so a train step computes each row's maximum
    and sum of exponentials twice: in the loss (one kernel that reduces to a
    scalar, hence on one thread) and in the softmax. Where an f32 loss over
    the last axis and one or more `kiln.softmax` of the same logits along
    that axis lie in one block (the gradient's, or a model's own
    probabilities output), they become one `kiln.softmax_cross_entropy_rows`
    (each position's loss and the softmax, one kernel whose positions are
    independent) and the `kiln.reduce_mean` of its losses, at the place of
    the first of them. A loss with no softmax beside it is left alone.
    When that softmax is then read only by its gradient, `kiln.mul` of
    `kiln.sub(softmax, kiln.one_hot(labels))` by a splat f32 constant (a
    train step whose model does not also output the softmax), the two become
    one `kiln.softmax_cross_entropy_grad_rows` computing the losses and the
    gradient: the softmax is never stored.
    A loss with an `ignore_index` or a `label_smoothing` has its gradient
    written by autodiff as a weighted `kiln.softmax_cross_entropy_grad_rows`
    already (an ignore_index's scale, one over the kept labels, depends on
    them); when every reader of the loss comes after that op, the loss
    becomes the mean of its losses over the kept positions (the sum of the
    losses over that of `kiln.select`s of 1 and 0) and no kernel computes
    it apart. Fused with a softmax instead,
    the rows op takes the ignore_index and the label smoothing, and the
    mean is the same.

    Before:
    ```
    %l = kiln.softmax_cross_entropy %x, %t : (tensor<512x1000xf32>, tensor<512xi64>) -> tensor<f32>
    %p = kiln.softmax %x axis = 1 : tensor<512x1000xf32>
    ```
    After:
    ```
    %r, %p = kiln.softmax_cross_entropy_rows %x, %t : (tensor<512x1000xf32>, tensor<512xi64>) -> (tensor<512xf32>, tensor<512x1000xf32>)
    %l = kiln.reduce_mean %r axes [0] : tensor<512xf32> -> tensor<f32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnMaskPooledGradients
    : Pass<"kiln-mask-pooled-gradients", "::mlir::func::FuncOp"> {
  let summary = "A mask over a max pool's gradient becomes one over its pooled gradient";
  let description = [{
    A convnet's ReLU followed by a max pool has, in its gradient, the pool's
    gradient spread back over the ReLU's output (`kiln.max_pool_grad`), then
    masked where that output is > 0 (the ReLU's gradient): two passes over
    the large tensor, and the spread one stored. Each window's gradient goes
    to the window's maximum, whose value is the pooled output, so the mask
    can be applied before spreading, on the pooled gradient, from the pooled
    output the forward computed: the same bits (the rewrite's comment says
    why), a tensor four times smaller for 2x2 windows, and the large mask
    pass gone. Applies where the pooled output `max_pool(x)` with the same
    window is computed before the gradient; anything else is left alone.

    Before:
    ```
    %i = kiln.max_pool_indices %y kernel [2, 2] ... : tensor<32x32x28x28xf32> -> tensor<32x32x14x14xi32>
    %s = kiln.max_pool_grad %g, %i kernel [2, 2] ... -> tensor<32x32x28x28xf32>
    %m = kiln.compare gt, %y, %zero : tensor<32x32x28x28xf32>
    %dx = kiln.select %m, %s, %zero : tensor<32x32x28x28xi1>, tensor<32x32x28x28xf32>
    ```
    After (`%z = kiln.max_pool %y ...` from the forward):
    ```
    %m = kiln.compare gt, %z, %zero14 : tensor<32x32x14x14xf32>
    %g2 = kiln.select %m, %g, %zero14 : tensor<32x32x14x14xi1>, tensor<32x32x14x14xf32>
    %dx = kiln.max_pool_grad %g2, %i kernel [2, 2] ... -> tensor<32x32x28x28xf32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnReductionsByRows : Pass<"kiln-reductions-by-rows", "::mlir::func::FuncOp"> {
  let summary = "A sum to one non-leading axis reads its input with that axis first";
  let description = [{
    A `kiln.reduce_sum` over every axis but one that is neither the first
    nor the last (a convolution's bias gradient, [N, C, H, W] to
    [1, C, 1, 1]) has an output whose first dimension is 1: its kernel
    cannot be split over threads by rows. It becomes the sum of a
    `kiln.transpose` that puts the kept axis first, over the other axes in
    their order, reshaped to the original result. The fusion pass then reads
    the input through the permutation inside the sum's kernel, which has C
    rows. (The vectorized sums may round differently in the last bit.)

    Before:
    ```
    %b = kiln.reduce_sum %g axes [0, 2, 3] {keep_dims} : tensor<32x32x28x28xf32> -> tensor<1x32x1x1xf32>
    ```
    After:
    ```
    %t = kiln.transpose %g [1, 0, 2, 3] : tensor<32x32x28x28xf32> -> tensor<32x32x28x28xf32>
    %s = kiln.reduce_sum %t axes [1, 2, 3] : tensor<32x32x28x28xf32> -> tensor<32xf32>
    %b = kiln.reshape %s : tensor<32xf32> -> tensor<1x32x1x1xf32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnSplitWideConcats : Pass<"kiln-split-wide-concats", "::mlir::func::FuncOp"> {
  let summary = "Concatenations of many inputs become concatenations of concatenations";
  let description = [{
    A concat is one kernel whose loop nests, one per input, carry the result
    tensor in turn; bufferizing such a chain costs more than the square of
    its length (an unrolled recurrent layer of 512 steps concatenates 512
    step outputs, and its gradients as many: minutes of compile time). A
    concat of more than 32 inputs becomes a concat of concats of at most 32
    each (nested again while the outer one has more than 32): each element
    is copied once more per level, in kernels that compile in linear time.
    ```
    %y = kiln.concat %a0, ..., %a63 axis = 0 : (...) -> tensor<64x8xf32>
    ```
    becomes
    ```
    %l = kiln.concat %a0, ..., %a31 axis = 0 : (...) -> tensor<32x8xf32>
    %h = kiln.concat %a32, ..., %a63 axis = 0 : (...) -> tensor<32x8xf32>
    %y = kiln.concat %l, %h axis = 0 : (...) -> tensor<64x8xf32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFuseElementwise : Pass<"kiln-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Groups producer-consumer chains of elementwise ops into kiln.fusion";
  let description = [{
    Walks a function's ops in order. An elementwise op (the `Elementwise`
    kiln ops, which include compare, select, cast, gelu and gelu_grad), a
    broadcast, a one_hot (of indices not constant) or a stop_gradient joins
    the groups of its operands' producers
    that compute the same shape, when no op outside them reads one of their
    values before it (so the group can move to where its last op is, and no
    path leaves the group and comes back) and no op writing memory (a
    kiln.assign) lies in between. A reduce_sum, reduce_mean or reduce_max
    of a group's value ends the group when nothing else reads the group's
    values. Each group of two or more ops becomes one `kiln.fusion` at the
    place of its last op, yielding every value read outside it; splat
    constants are copied into the body. The CPU lowering computes a fusion
    as one loop nest.

    Before:
    ```
    %0 = kiln.broadcast %b : tensor<16xf32> -> tensor<8x16xf32>
    %1 = kiln.add %x, %0 : tensor<8x16xf32>
    %2 = kiln.relu %1 : tensor<8x16xf32>
    ```
    After:
    ```
    %2 = kiln.fusion (%x, %b) : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32> {
    ^bb0(%a: tensor<8x16xf32>, %c: tensor<16xf32>):
      %0 = kiln.broadcast %c : tensor<16xf32> -> tensor<8x16xf32>
      %1 = kiln.add %a, %0 : tensor<8x16xf32>
      %r = kiln.relu %1 : tensor<8x16xf32>
      kiln.yield %r : tensor<8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnSchedule : Pass<"kiln-schedule", "::mlir::func::FuncOp"> {
  let summary = "Orders the training step's ops to lower its peak memory and start communication early";
  let description = [{
    Works on @train_step and @accumulate_step. A list scheduler over the
    top-level ops: an op is ready when its operands are computed and, for
    state, when the order of reads and writes of each variable allows (a
    kiln.assign or kiln.sparse_apply after every earlier reader of the old
    value, a kiln.read after the write before it; kdist ops keep their
    relative order; any other op with effects is a barrier). Of the ready
    ops it takes a collective's start or a parameter-server pull or push
    first, then
    the one that frees the most arena bytes net of what it allocates (when it
    allocates at most 256 bytes net: the step's scalars, such as a learning
    rate, run as soon as they can), else the first in program order. So an optimizer update
    follows its gradient instead of waiting for the whole backward pass, and
    gradients' all-reduces start as soon as they are computed.

    Before (`%gw1` alive until the end):
    ```
    %gw1 = kiln.matmul ...           // gradient of w1
    %gx = kiln.matmul ...            // the backward pass goes on
    ...
    %new1 = kiln.fusion(%w1, %gw1) ...
    kiln.assign @w1, %new1
    ```
    After:
    ```
    %gw1 = kiln.matmul ...
    %new1 = kiln.fusion(%w1, %gw1) ...
    kiln.assign @w1, %new1
    %gx = kiln.matmul ...
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnRemat : Pass<"kiln-remat", "::mlir::func::FuncOp"> {
  let summary = "Drops forward activations and recomputes them where backward reads them";
  let description = [{
    Works on @train_step and @accumulate_step; other functions are left
    alone. The policy comes from the train spec's `remat` (kind none,
    memory_budget, sqrt or all, and memory_budget_bytes); the options
    override it. Over a model of the function's arena (RematPlan.h: liveness
    as the execution plan computes it, work as the report counts it), a
    value alive but unused where the function peaks can be dropped: the uses
    before its widest gap of uses keep it, and the first use after the gap
    gets a clone of its defining op (marked `kiln.recomputed`), cloning in
    turn dropped operands already dead there.

      - `auto` (memory_budget): the cheapest choice whose modeled peak fits
        `memory-target` (default: the budget) among a greedy one (drop the
        value that frees the most bytes at the current peak per unit of
        recomputation cost, until the peak fits or no value helps) and
        segmentings (of the n values alive across the peak, in program
        order, every k-th kept and the others dropped, for k from 2 to n);
        fails naming the smallest peak it reached when none fits.
      - `sqrt`: Chen et al. 2016: the segmenting with k = ceil(sqrt(n)).
      - `all`: the choice with the lowest modeled peak among `auto`'s.

    Before (`%h` alive from the forward to the backward):
    ```
    %h = kiln.tanh %x : tensor<64x256xf32>
    %y = kiln.matmul %h, %w ...
    ...                                  // the peak: %h unused here
    %g = kiln.mul %h, %dy : tensor<64x256xf32>
    ```
    After:
    ```
    %h = kiln.tanh %x : tensor<64x256xf32>
    %y = kiln.matmul %h, %w ...
    ...
    %h2 = kiln.tanh %x {kiln.recomputed} : tensor<64x256xf32>
    %g = kiln.mul %h2, %dy : tensor<64x256xf32>
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"",
           "none, auto, sqrt or all (default: the train spec's)">,
    Option<"memoryBudget", "memory-budget", "int64_t", /*default=*/"0",
           "auto: arena bytes the function may take at most (default: the train spec's)">,
    Option<"memoryTarget", "memory-target", "int64_t", /*default=*/"0",
           "auto: the modeled peak to reach, when the arena needs more than the "
           "model says (default: the budget)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnMixedPrecision : Pass<"kiln-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Computes matrix products (and, in bf16, convolutions) in 16 bits with f32 sums";
  let description = [{
    With bf16, also marks the convolutions and convolution gradients of f32
    operands that gain from it (`kiln.compute_precision = bf16`): 4 or more
    input channels per group, 16 or more for a data gradient (the ones
    oneDNN runs with its blocked kernels; an image's first layer, one
    channel, is slower in bf16). The runtime runs oneDNN's bf16 kernel
    where the CPU has bf16 instructions, converting the two tensors read as
    it lays them out, f32 otherwise.

    Marks every kiln.matmul of f32 operands with
    `kiln.compute_precision = bf16` (or `f16`): both inputs are rounded to
    that type (round to nearest, ties to even) and the products summed in
    f32 into an f32 result, as PyTorch's autocast and Keras'
    `mixed_bfloat16` policy compute a matrix product (oneDNN's bf16 matmul
    where the CPU has AVX512_BF16 or AMX-BF16, else emulated). Variables
    (the master weights), optimizer state, gradients, reductions and
    elementwise ops stay f32. The forward and the backward products are
    both marked: the gradient products read the rounded activations and
    output gradients, as the frameworks' do.

    With bf16, each product then reads its inputs through a `kiln.cast` to
    bf16, one per value however many products read it (a reshape's through
    the reshape of its operand's cast). The cast of a value an op fusion
    computes (elementwise ops, transposes) follows it, so that
    kiln-fuse-elementwise (which runs after) makes the cast a second result
    of the value's kernel, or its only one when the products are its only
    readers; the cast of any other value (a variable, a layer norm, another
    product) comes right before its first product. The runtime multiplies
    the bf16 tensors as they are. With fp16, which the CPU multiplies only
    emulated in f32, and with `round-in-kernels=false`, the runtime rounds
    the f32 inputs of each product itself (the same bits).

    With bf16 (and `store-activations` and `round-in-kernels`, the
    defaults), the f32 values of
    4,096 elements or more that a train step's forward pass computes (the
    ops its loss and its other results, such as predictions, are computed
    from: those keep reading f32) and its backward sweep reads are kept
    between the two as bf16 copies: the kernel that computes the value (an
    elementwise op's) writes the copy as a second result, or the copy is
    the one a product reads already, and each backward reader widens it as
    it loads it (a `kiln.cast` back to f32 right before the reader, which
    fusion puts into the reader's kernel). Only values whose backward
    readers are all elementwise ops of the value's shape or reductions are
    kept so, and only values computed from the step's inputs (never a
    weight, a variable read or a parameter-server pull, nor what is
    computed from weights and constants alone) and not broadcasts; the f32
    value then dies with its last forward reader.
    kilnc runs it only with fusion (without it, each copy and each
    widening would be a kernel of its own). As with
    PyTorch's autocast, backward reads the activations rounded to bf16 (the
    forward pass reads them in f32).

    The precision is the pass option, else the train spec's (`bf16_mixed`,
    `fp16_mixed`); `fp32` marks nothing. A training module in `fp16` must
    have been trained with the spec's precision `fp16_mixed` (dynamic loss
    scaling: passes/Graph/LossScaling.h); an error says so otherwise.

    Before:
    ```
    %y = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    ```
    After (`precision=bf16`):
    ```
    %x16 = kiln.cast %x : tensor<8x16xf32> to tensor<8x16xbf16>
    %w16 = kiln.cast %w : tensor<16x4xf32> to tensor<16x4xbf16>
    %y = kiln.matmul %x16, %w16 {kiln.compute_precision = bf16} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"",
           "fp32, bf16 or fp16 (default: the train spec's)">,
    Option<"roundInKernels", "round-in-kernels", "bool", /*default=*/"true",
           "bf16: cast each product's inputs where they are computed (false: "
           "the runtime converts them)">,
    Option<"storeActivations", "store-activations", "bool", /*default=*/"true",
           "bf16: keep the forward values the backward sweep reads as bf16 "
           "copies between the two (false: f32, for comparison)">,
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

#endif // KILN_PASSES_OPTIMIZE_PASSES_TD
