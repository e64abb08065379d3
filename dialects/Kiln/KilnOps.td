//===- KilnOps.td - kiln dialect ops ----------------------*- tablegen -*-===//
//
// Shapes are checked by each op's `inferReturnTypes`, which calls the shape
// rules in KilnShapes.h; importers call the same rules before building an op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/Kiln/KilnBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

/// An op whose result type follows from its operands and attributes. The
/// result may be less static than the inferred type (a `?` where the rule
/// knows a size); `kiln-infer-shapes` refines it.
class Kiln_InferredOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptorWithIsCompatible])> {
  code compatibleReturnTypes = [{
    bool $cppClass::isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                            ::mlir::TypeRange actual) {
      return ::kiln::areCompatibleTensorTypes(inferred, actual);
    }
  }];
  let extraClassDefinition = compatibleReturnTypes;
}

//===----------------------------------------------------------------------===//
// Constants and variables
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor";
  let description = [{
    ```
    %c = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_VariableOp : Kiln_Op<"variable",
    [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A model variable: persistent state with an initializer";
  let description = [{
    Declares a variable at module level. `kiln.read` reads its value.
    ```
    kiln.variable @fc1.w : tensor<784x128xf32> init <glorot_uniform, seed = 1>
    kiln.variable @steps : tensor<i64> init <zeros> {trainable = false}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Kiln_Tensor>:$type,
                       Kiln_InitializerAttr:$initializer,
                       DefaultValuedAttr<BoolAttr, "true">:$trainable);
  let assemblyFormat = "$sym_name `:` $type `init` $initializer attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Kiln_ReadOp : Kiln_Op<"read",
    [MemoryEffects<[MemRead]>, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads the current value of a variable";
  let description = [{
    ```
    %w = kiln.read @fc1.w : tensor<784x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$variable);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$variable attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Elementwise ops take operands of one shape and element type.
class Kiln_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits,
        [Pure, Elementwise, SameOperandsAndResultType])>;

class Kiln_UnaryOp<string mnemonic, Type type, list<Trait> traits = []>
    : Kiln_ElementwiseOp<mnemonic, traits> {
  let arguments = (ins type:$operand);
  let results = (outs type:$result);
  let assemblyFormat = "$operand attr-dict `:` type($result)";
}

class Kiln_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Kiln_ElementwiseOp<mnemonic, traits> {
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", [Commutative]> {
  let summary = "Elementwise sum";
  let hasFolder = 1;
}
def Kiln_SubOp : Kiln_BinaryOp<"sub"> {
  let summary = "Elementwise difference";
  let hasFolder = 1;
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", [Commutative]> {
  let summary = "Elementwise product";
  let hasFolder = 1;
}
def Kiln_DivOp : Kiln_BinaryOp<"div"> {
  let summary = "Elementwise quotient (integers truncate toward zero)";
  let hasFolder = 1;
}
def Kiln_MaximumOp : Kiln_BinaryOp<"maximum", [Commutative]> {
  let summary = "Elementwise maximum";
  let hasFolder = 1;
}
def Kiln_MinimumOp : Kiln_BinaryOp<"minimum", [Commutative]> {
  let summary = "Elementwise minimum";
  let hasFolder = 1;
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor, [Involution]> {
  let summary = "Elementwise negation";
  let hasFolder = 1;
}
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor> {
  let summary = "Elementwise e^x";
}
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor> {
  let summary = "Elementwise natural logarithm";
}
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor> {
  let summary = "Elementwise square root";
}
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", Kiln_FloatTensor> {
  let summary = "Elementwise reciprocal square root";
}
def Kiln_CosOp : Kiln_UnaryOp<"cos", Kiln_FloatTensor> {
  let summary = "Elementwise cosine";
}
def Kiln_SinOp : Kiln_UnaryOp<"sin", Kiln_FloatTensor> {
  let summary = "Elementwise sine";
}
def Kiln_AtanOp : Kiln_UnaryOp<"atan", Kiln_FloatTensor> {
  let summary = "Elementwise arctangent, in (-pi/2, pi/2)";
}
def Kiln_FloorOp : Kiln_UnaryOp<"floor", Kiln_FloatTensor, [Idempotent]> {
  let summary = "Elementwise largest integer not above x (no gradient: zero almost everywhere)";
  let hasFolder = 1;
}
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", Kiln_FloatTensor, [Idempotent]> {
  let summary = "Elementwise smallest integer not below x (no gradient)";
  let hasFolder = 1;
}
def Kiln_RoundOp : Kiln_UnaryOp<"round", Kiln_FloatTensor, [Idempotent]> {
  let summary = "Elementwise nearest integer, halves to even (no gradient)";
  let description = [{
    As `torch.round`, ONNX `Round` and TensorFlow's `Round`: 0.5 and -2.5
    round to 0 and -2.
  }];
  let hasFolder = 1;
}
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor> {
  let summary = "Elementwise hyperbolic tangent";
}
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor> {
  let summary = "Elementwise logistic function 1 / (1 + e^-x)";
}
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor, [Idempotent]> {
  let summary = "Elementwise max(x, 0)";
}
def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor> {
  let summary = "Elementwise Gauss error function";
}
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor, [Idempotent]> {
  let summary = "Elementwise absolute value";
}

def Kiln_PowOp : Kiln_ElementwiseOp<"pow"> {
  let summary = "Elementwise lhs raised to the power rhs (floats)";
  let description = [{
    As C's `pow`: a negative base with an integral exponent is defined, with
    any other exponent it is NaN.
    ```
    %y = kiln.pow %x, %e : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$lhs, Kiln_FloatTensor:$rhs);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Kiln_ModOp : Kiln_ElementwiseOp<"mod"> {
  let summary = "Elementwise remainder: floored (sign of rhs), or truncated with `fmod`";
  let description = [{
    Without `fmod` the result has the sign of the divisor, as Python's `%`
    and ONNX's `Mod` with fmod = 0; with `fmod` it has the sign of the
    dividend, as C's `fmod`. An integer remainder by zero is 0.
    ```
    %r = kiln.mod %a, %b : tensor<4xi64>
    %f = kiln.mod %x, %y {fmod} : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                       UnitAttr:$fmod);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_GeluOp : Kiln_ElementwiseOp<"gelu"> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `exact`: x * Phi(x) with the normal CDF; `tanh`: the tanh approximation
    (PyTorch's `approximate='tanh'`).
    ```
    %y = kiln.gelu %x approximation(tanh) : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$operand,
                       Kiln_GeluApproximation:$approximation);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $operand `approximation` `(` $approximation `)` attr-dict `:` type($result)
  }];
}

def Kiln_CompareOp : Kiln_InferredOp<"compare",
    [Pure, Elementwise, SameTypeOperands]> {
  let summary = "Elementwise comparison giving booleans";
  let description = [{
    ```
    %m = kiln.compare lt, %a, %b : tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_ComparePredicate:$predicate,
                       Kiln_Tensor:$lhs, Kiln_Tensor:$rhs);
  let results = (outs Kiln_BoolTensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)";
  let hasFolder = 1;
}

def Kiln_SelectOp : Kiln_InferredOp<"select",
    [Pure, Elementwise, AllTypesMatch<["on_true", "on_false"]>]> {
  let summary = "Elementwise choice: on_true where condition, else on_false";
  let description = [{
    ```
    %r = kiln.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,` type($on_true)
  }];
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Elementwise conversion to another element type";
  let description = [{
    Floats to integers truncate toward zero; to bool, nonzero is true.
    ```
    %h = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `to` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Kiln_MatmulOp : Kiln_InferredOp<"matmul", [Pure]> {
  let summary = "Matrix product, optionally batched and transposed";
  let description = [{
    `lhs` is `[batch..., M, K]` (`[batch..., K, M]` with `transpose_a`), `rhs`
    is `[batch..., K, N]` (`[batch..., N, K]` with `transpose_b`); the result
    is `[batch..., M, N]`. Batch dimensions are equal, or `rhs` is a matrix
    shared by every batch (a dense layer over a sequence). A product marked
    `kiln.compute_precision = bf16` (or f16; kiln-mixed-precision) sums in
    f32: its result is f32, and either operand may be f32 or already of
    that type (rounded by a kiln.cast before it).
    ```
    %y = kiln.matmul %x, %w {transpose_b} : (tensor<32x784xf32>, tensor<128x784xf32>) -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "Same elements in row-major order, another shape";
  let description = [{
    The result type gives the shape. One `?` in it is inferred from the
    element count (like -1 in numpy) by `kiln-infer-shapes`.
    ```
    %f = kiln.reshape %x : tensor<32x28x28xf32> -> tensor<32x784xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_BroadcastOp : Kiln_Op<"broadcast", [Pure]> {
  let summary = "Replicates a tensor to a larger shape (numpy broadcast_to)";
  let description = [{
    Dimensions align from the right; each operand dimension equals the result's
    or is 1; missing leading dimensions are added.
    ```
    %b = kiln.broadcast %bias : tensor<128xf32> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_InferredOp<"transpose", [Pure]> {
  let summary = "Permutes dimensions: result dim i is operand dim permutation[i]";
  let description = [{
    ```
    %t = kiln.transpose %x [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand $permutation attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_InferredOp<"concat", [Pure]> {
  let summary = "Joins tensors along one axis";
  let description = [{
    ```
    %c = kiln.concat %a, %b axis = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` functional-type($inputs, $result)
  }];
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_InferredOp<"slice", [Pure]> {
  let summary = "Static strided slice: [start, limit) with a step per dim";
  let description = [{
    ```
    %s = kiln.slice %x start [0, 2] limit [4, 8] step [1, 2] : tensor<4x8xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$operand, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $operand `start` $start `limit` $limit `step` $step attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, Type type>
    : Kiln_InferredOp<mnemonic, [Pure]> {
  let arguments = (ins type:$operand, DenseI64ArrayAttr:$axes, UnitAttr:$keep_dims);
  let results = (outs type:$result);
  let assemblyFormat = [{
    $operand `axes` $axes attr-dict `:` type($operand) `->` type($result)
  }];
  let hasFolder = 1;
  let extraClassDefinition = compatibleReturnTypes # [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::appendInferred(
          ::kiln::inferReduceType(
              ::kiln::ShapeDiag(location, getOperationName()),
              adaptor.getOperand().getType(), adaptor.getAxes(),
              adaptor.getKeepDims()),
          types);
    }
  }];
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", Kiln_NumericTensor> {
  let summary = "Sum over the given axes";
  let description = [{
    ```
    %s = kiln.reduce_sum %x axes [1] : tensor<4x8xf32> -> tensor<4xf32>
    %k = kiln.reduce_sum %x axes [1] {keep_dims} : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
}
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", Kiln_FloatTensor> {
  let summary = "Mean over the given axes";
}
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", Kiln_NumericTensor> {
  let summary = "Maximum over the given axes";
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

class Kiln_SoftmaxLikeOp<string mnemonic>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let hasVerifier = 1;
  let arguments = (ins Kiln_FloatTensor:$operand, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = "$operand `axis` `=` $axis attr-dict `:` type($result)";
}

def Kiln_SoftmaxOp : Kiln_SoftmaxLikeOp<"softmax"> {
  let summary = "exp(x) / sum(exp(x)) along one axis";
  let description = [{
    ```
    %p = kiln.softmax %x axis = 1 : tensor<4x10xf32>
    ```
  }];
}
def Kiln_LogSoftmaxOp : Kiln_SoftmaxLikeOp<"log_softmax"> {
  let summary = "x - log(sum(exp(x))) along one axis";
}

def Kiln_LayerNormOp : Kiln_InferredOp<"layer_norm", [Pure]> {
  let summary = "Normalizes over the trailing dimensions from `axis`, then scales and shifts";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and
    (biased) variance over dimensions `[axis, rank)`; `scale` and the optional
    `bias` have the shape of those dimensions.
    ```
    %y = kiln.layer_norm %x, %g, %b axis = 1 epsilon = 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? `axis` `=` $axis `epsilon` `=` $epsilon attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def Kiln_GatherOp : Kiln_InferredOp<"gather", [Pure]> {
  let summary = "Takes slices of `table` at `indices` along `axis` (embedding lookup)";
  let description = [{
    The result shape is `table[:axis] + indices + table[axis+1:]`; with
    `axis = 0` each index selects a row, as in an embedding lookup.
    ```
    %e = kiln.gather %table[%ids] : (tensor<10000x16xf32>, tensor<32x4xi64>) -> tensor<32x4x16xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$table, Kiln_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $table `[` $indices `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Kiln_EmbeddingBagOp : Kiln_InferredOp<"embedding_bag", [Pure]> {
  let summary = "Combines the rows of `table` named by each list of `ids` (multi-hot lookup)";
  let description = [{
    A multi-hot feature: `ids` is `[batch..., L]`, each list of L ids padded
    with -1 (ids of -1 read nothing and get no gradient). Each list's rows are
    combined into one: `sum`, `mean` (sum / n) or `sqrtn` (sum / sqrt(n)),
    with n the list's ids that are not -1; an empty list gives zeros. The
    result is `[batch..., table[1:]...]`, as TensorFlow's
    `embedding_lookup_sparse` (ids < 0 pruned, as its `safe_` form) and
    PyTorch's `nn.EmbeddingBag` on a padded 2-D input. Other ids outside the
    table are clamped, as in `kiln.gather`.
    ```
    %e = kiln.embedding_bag %table[%ids] combiner = mean : (tensor<1000x8xf32>, tensor<32x5xi64>) -> tensor<32x8xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$table, Kiln_IndexTensor:$ids,
                       Kiln_EmbeddingCombiner:$combiner);
  let results = (outs Kiln_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` `combiner` `=` $combiner attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The id that pads a list.
    static constexpr int64_t kPaddingId = -1;
    /// Each id's weight in its list's combination (`ids`' shape, of
    /// `floatType`): 0 for padding, else 1, 1/n or 1/sqrt(n).
    static ::mlir::Value buildWeights(::mlir::OpBuilder &b, ::mlir::Location loc,
                                      ::mlir::Value ids, ::kiln::EmbeddingCombiner combiner,
                                      ::mlir::Type floatType);
    /// `rows` (`[ids..., row...]`, one row per id) weighted by `weights`
    /// (`ids`' shape) and summed over each list: the op's result.
    static ::mlir::Value buildCombination(::mlir::OpBuilder &b, ::mlir::Location loc,
                                          ::mlir::Value rows, ::mlir::Value weights);
  }];
}

def Kiln_GatherElementsOp : Kiln_InferredOp<"gather_elements", [Pure]> {
  let summary = "Picks input elements along `axis` at per-element indices";
  let description = [{
    `result[i][j][k] = input[index[i][j][k]][j][k]` for `axis = 0` (and so on
    for other axes), as ONNX `GatherElements` and `torch.gather`. The indices
    have the input's rank and at most its size in every other dimension; the
    result has their shape. A negative index counts from the end; an index
    outside the dimension is clamped.
    ```
    %g = kiln.gather_elements %x[%idx] axis = 1 : (tensor<4x8xf32>, tensor<4x2xi64>) -> tensor<4x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Kiln_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` `axis` `=` $axis attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Losses: each is the mean over the batch, a scalar of the input's float type.
//===----------------------------------------------------------------------===//

def Kiln_SoftmaxCrossEntropyOp : Kiln_InferredOp<"softmax_cross_entropy", [Pure]> {
  let summary = "Mean softmax cross-entropy of logits [B..., C] against class ids [B...]";
  let description = [{
    The mean is over every position of the leading dimensions: logits `[B,
    T, C]` with labels `[B, T]` average over B * T tokens, as PyTorch's
    `cross_entropy` on flattened tokens and Keras' sparse categorical
    cross-entropy do. With `ignore_index`, positions whose label is that
    value are left out: the mean is over the others (PyTorch's
    `ignore_index`, Keras' `ignore_class`; NaN when every label is ignored,
    as in PyTorch), and they get no gradient. With `label_smoothing` e in
    [0, 1], each position's target is `(1 - e) * one_hot(label) + e / C`
    (PyTorch's `label_smoothing`): its loss is `logsumexp(x) - (1 - e) *
    x[label] - e * mean(x)`.
    ```
    %l = kiln.softmax_cross_entropy %logits, %labels : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
    %m = kiln.softmax_cross_entropy %logits, %tokens {ignore_index = -100 : i64} : (tensor<8x64x100xf32>, tensor<8x64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_IndexTensor:$labels,
                       OptionalAttr<I64Attr>:$ignore_index,
                       OptionalAttr<F64Attr>:$label_smoothing);
  let results = (outs Kiln_FloatScalar:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// 1 (of `floatType`) at each position whose label is not
    /// `ignoreIndex`, else 0: `labels`' shape.
    static ::mlir::Value buildKept(::mlir::OpBuilder &b, ::mlir::Location loc,
                                   ::mlir::Value labels, int64_t ignoreIndex,
                                   ::mlir::Type floatType);
    /// Fails, on `op`, when `labels`' integer type cannot hold `ignored` or
    /// `smoothing` is not in [0, 1] (this op's checks, and the loss-by-rows
    /// ops').
    static ::llvm::LogicalResult verifyTargets(::mlir::Operation *op, ::mlir::Value labels,
                                               std::optional<int64_t> ignored,
                                               ::mlir::FloatAttr smoothing);
    /// A label_smoothing attribute's value, 0 when absent.
    static double smoothingOf(::mlir::FloatAttr smoothing) {
      return smoothing ? smoothing.getValueAsDouble() : 0.0;
    }
    /// Whether the loss differs from the plain mean of each position's
    /// cross-entropy (an ignore_index, or a label smoothing above 0).
    bool hasTargetOptions() {
      return getIgnoreIndex() || smoothingOf(getLabelSmoothingAttr()) != 0.0;
    }
  }];
}

class Kiln_PointwiseLossOp<string mnemonic>
    : Kiln_InferredOp<mnemonic, [Pure, SameTypeOperands]> {
  let results = (outs Kiln_FloatScalar:$result);
  let extraClassDefinition = compatibleReturnTypes # [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *, std::optional<::mlir::Location> location,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::kiln::appendInferred(
          ::kiln::inferPointwiseLossType(
              ::kiln::ShapeDiag(location, getOperationName()),
              adaptor.getOperands().getTypes()),
          types);
    }
  }];
}

def Kiln_SigmoidCrossEntropyOp : Kiln_PointwiseLossOp<"sigmoid_cross_entropy"> {
  let summary = "Mean sigmoid cross-entropy of logits against targets in [0, 1]";
  let description = [{
    ```
    %l = kiln.sigmoid_cross_entropy %logits, %targets : tensor<32x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$logits, Kiln_FloatTensor:$targets);
  let assemblyFormat = "$logits `,` $targets attr-dict `:` type($logits) `->` type($result)";
}

def Kiln_MeanSquaredErrorOp : Kiln_PointwiseLossOp<"mean_squared_error"> {
  let summary = "Mean of (prediction - target)^2 over all elements";
  let description = [{
    ```
    %l = kiln.mean_squared_error %pred, %target : tensor<32x1xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$prediction, Kiln_FloatTensor:$target);
  let assemblyFormat = "$prediction `,` $target attr-dict `:` type($prediction) `->` type($result)";
}

include "dialects/Kiln/KilnTrainingOps.td"
include "dialects/Kiln/KilnConvOps.td"
include "dialects/Kiln/KilnFusionOps.td"

#endif // KILN_OPS_TD
