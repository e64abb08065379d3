//===- KilnConvOps.td - Convolution and pooling ops -------*- tablegen -*-===//
//
// Convolution and pooling over channels-first tensors `[N, C, spatial...]`
// with one, two or three spatial dimensions (ONNX's and PyTorch's layout),
// and the ops their gradients are made of. Padding is explicit per side; an
// importer resolves `auto_pad` / `padding="same"` into it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONV_OPS_TD
#define KILN_CONV_OPS_TD

/// The window of a convolution: per spatial dimension.
defvar ConvWindowArgs = (ins DenseI64ArrayAttr:$strides,
                             DenseI64ArrayAttr:$dilations,
                             DenseI64ArrayAttr:$pad_low,
                             DenseI64ArrayAttr:$pad_high,
                             DefaultValuedAttr<I64Attr, "1">:$groups);

def Kiln_ConvOp : Kiln_InferredOp<"conv", [Pure]> {
  let summary = "Grouped, strided, dilated, padded convolution (cross-correlation)";
  let description = [{
    `input` is `[N, C, D...]`, `filter` `[F, C / groups, K...]`; the result
    is `[N, F, O...]` with `O = (D + pad_low + pad_high - dilation * (K - 1)
    - 1) / stride + 1`. Output channel `f` reads the input channels of its
    group `f / (F / groups)`. No bias: a model adds it.
    ```
    %y = kiln.conv %x, %w strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]
        : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$filter),
                       ConvWindowArgs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_ConvBackwardDataOp : Kiln_Op<"conv_backward_data", [Pure]> {
  let summary = "The gradient of a convolution with respect to its input";
  let description = [{
    `grad` is the gradient of the convolution's result, `filter` its filter;
    the result has the convolution input's type (which the window does not
    determine alone, so it is stated).
    ```
    %dx = kiln.conv_backward_data %dy, %w strides [1, 1] dilations [1, 1] pad_low [1, 1]
        pad_high [1, 1] : (tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x32x32xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$grad, Kiln_FloatTensor:$filter),
                       ConvWindowArgs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $filter `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_ConvBackwardFilterOp : Kiln_Op<"conv_backward_filter", [Pure]> {
  let summary = "The gradient of a convolution with respect to its filter";
  let description = [{
    ```
    %dw = kiln.conv_backward_filter %x, %dy strides [1, 1] dilations [1, 1] pad_low [1, 1]
        pad_high [1, 1] : (tensor<8x3x32x32xf32>, tensor<8x16x32x32xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$grad),
                       ConvWindowArgs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

/// The window of a pooling op: per spatial dimension.
defvar PoolWindowArgs = (ins DenseI64ArrayAttr:$kernel,
                             DenseI64ArrayAttr:$strides,
                             DenseI64ArrayAttr:$dilations,
                             DenseI64ArrayAttr:$pad_low,
                             DenseI64ArrayAttr:$pad_high,
                             UnitAttr:$ceil_mode);

class Kiln_PoolOp<string mnemonic> : Kiln_InferredOp<mnemonic, [Pure]> {
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` type($input) `->` type($result)
  }];
}

def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool"> {
  let summary = "Maximum over each window; padding never wins";
  let description = [{
    `input` is `[N, C, D...]`; the result `[N, C, O...]` with `O = (D +
    pad_low + pad_high - dilation * (K - 1) - 1) / stride + 1`, rounded up
    with `ceil_mode` (a last window that would start in the high padding is
    dropped, as in PyTorch).
    ```
    %y = kiln.max_pool %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0]
        pad_high [0, 0] : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input), PoolWindowArgs);
}

def Kiln_AvgPoolOp : Kiln_PoolOp<"avg_pool"> {
  let summary = "Mean over each window";
  let description = [{
    Windows as `kiln.max_pool`'s, with dilations of 1. The divisor is PyTorch's: the window's size
    clipped to the padded input, or with `exclude_pad` the number of input
    elements in it (ONNX count_include_pad = 0).
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input), PoolWindowArgs,
                       (ins UnitAttr:$exclude_pad));
  let hasVerifier = 1;
}

def Kiln_MaxPoolIndicesOp : Kiln_Op<"max_pool_indices", [Pure]> {
  let summary = "Where each window's maximum is: its flat offset in the input's spatial plane";
  let description = [{
    The first maximum in row-major window order, as PyTorch's
    `max_pool2d(return_indices=True)`; a result shaped like `kiln.max_pool`'s
    with i32 elements. The gradient of `kiln.max_pool` reads it.
    ```
    %i = kiln.max_pool_indices %x kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0]
        pad_high [0, 0] : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xi32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$input), PoolWindowArgs);
  let results = (outs RankedTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $input `kernel` $kernel `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kiln_MaxPoolGradOp : Kiln_Op<"max_pool_grad", [Pure]> {
  let summary = "The gradient of `kiln.max_pool`: each window's gradient to its maximum";
  let description = [{
    `grad` is the pooled result's gradient, `indices` the windows' maxima
    (`kiln.max_pool_indices`); the result has the pooled input's type.
    ```
    %dx = kiln.max_pool_grad %dy, %i kernel [2, 2] strides [2, 2] dilations [1, 1]
        pad_low [0, 0] pad_high [0, 0]
        : (tensor<8x16x16x16xf32>, tensor<8x16x16x16xi32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$grad, RankedTensorOf<[I32]>:$indices),
                       PoolWindowArgs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices `kernel` $kernel `strides` $strides `dilations` $dilations
    `pad_low` $pad_low `pad_high` $pad_high attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_AvgPoolGradOp : Kiln_Op<"avg_pool_grad", [Pure]> {
  let summary = "The gradient of `kiln.avg_pool`: each window's gradient shared by its elements";
  let description = [{
    ```
    %dx = kiln.avg_pool_grad %dy kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0]
        pad_high [0, 0] : tensor<8x16x16x16xf32> -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = !con((ins Kiln_FloatTensor:$grad), PoolWindowArgs,
                       (ins UnitAttr:$exclude_pad));
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `kernel` $kernel `strides` $strides `dilations` $dilations `pad_low` $pad_low
    `pad_high` $pad_high attr-dict `:` type($grad) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KILN_CONV_OPS_TD
