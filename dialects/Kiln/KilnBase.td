//===- KilnBase.td - kiln dialect, types, enums, attributes -*- tablegen -*-===//
//
// The `kiln` dialect holds the tensor program of a model: value-semantics ops
// over ranked tensors of f32/f16/bf16/i32/i64/i1, plus module-level variables.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BASE_TD
#define KILN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor ops of a model, before distribution and lowering";
  let description = [{
    Value-semantics tensor ops (matmul, elementwise math, reductions, softmax,
    layer norm, gather, losses) and `kiln.variable` symbols for model state.
    Elementwise ops take operands of one shape: importers insert explicit
    `kiln.broadcast` ops, so every later pass sees where data is replicated.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Module attribute holding the training specification (a dictionary).
    static constexpr ::llvm::StringLiteral kTrainSpecAttrName = "kiln.train_spec";
    /// Argument and result attribute naming a graph input or output.
    static constexpr ::llvm::StringLiteral kNameAttrName = "kiln.name";
    /// Unit attribute on an op kiln-remat cloned to compute a value again
    /// (the report counts its work as recomputation).
    static constexpr ::llvm::StringLiteral kRecomputedAttrName = "kiln.recomputed";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F32, F16, BF16], "float">;
def Kiln_IntElement : AnyTypeOf<[I32, I64], "integer">;
def Kiln_Element : AnyTypeOf<[F32, F16, BF16, I32, I64, I1]>;

def Kiln_Tensor : RankedTensorOf<[F32, F16, BF16, I32, I64, I1]>;
def Kiln_NumericTensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;
def Kiln_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Kiln_IndexTensor : RankedTensorOf<[I32, I64]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
def Kiln_FloatScalar : 0DTensorOf<[F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kiln_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::kiln";
}

def Kiln_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "gelu approximation", [
      I32EnumAttrCase<"exact", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::kiln";
}

def Kiln_EmbeddingCombiner : I32EnumAttr<"EmbeddingCombiner",
    "how an embedding bag combines its rows", [
      I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
      I32EnumAttrCase<"sqrtn", 2>]> {
  let cppNamespace = "::kiln";
}

def Kiln_OptimizerKind : I32EnumAttr<"OptimizerKind", "optimizer", [
      I32EnumAttrCase<"sgd", 0>, I32EnumAttrCase<"momentum", 1>,
      I32EnumAttrCase<"adam", 2>, I32EnumAttrCase<"adagrad", 3>]> {
  let cppNamespace = "::kiln";
}

def Kiln_InitKind : I32EnumAttr<"InitKind", "variable initializer kind", [
      I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"ones", 1>,
      I32EnumAttrCase<"constant", 2>, I32EnumAttrCase<"uniform", 3>,
      I32EnumAttrCase<"normal", 4>, I32EnumAttrCase<"truncated_normal", 5>,
      I32EnumAttrCase<"glorot_uniform", 6>, I32EnumAttrCase<"glorot_normal", 7>]> {
  let cppNamespace = "::kiln";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Kiln_InitializerAttr : AttrDef<Kiln_Dialect, "Initializer"> {
  let mnemonic = "init";
  let summary = "How a variable gets its first value";
  let description = [{
    One of:
    ```
    #kiln.init<zeros>
    #kiln.init<ones>
    #kiln.init<constant dense<[1.0, 2.0]> : tensor<2xf32>>
    #kiln.init<uniform(-0.05, 0.05), seed = 3>
    #kiln.init<normal(0.0, 0.01), seed = 3>
    #kiln.init<truncated_normal(0.0, 0.01), seed = 3>
    #kiln.init<glorot_uniform, seed = 3>
    #kiln.init<glorot_normal, seed = 3>
    ```
    `uniform(min, max)`, `normal(mean, stddev)`; random kinds carry a seed so
    initialization is reproducible.
  }];
  let parameters = (ins
    "::kiln::InitKind":$kind,
    APFloatParameter<"first parameter (uniform min, normal mean)">:$a,
    APFloatParameter<"second parameter (uniform max, normal stddev)">:$b,
    "uint64_t":$seed,
    "::mlir::ElementsAttr":$value);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "::kiln::InitKind":$kind), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(0.0), ::llvm::APFloat(0.0), 0,
                   ::mlir::ElementsAttr());
    }]>,
  ];
  let extraClassDeclaration = [{
    double getFirst() const { return getA().convertToDouble(); }
    double getSecond() const { return getB().convertToDouble(); }
    /// Whether the kind draws random numbers (and so uses the seed).
    bool isRandom() const;
    /// Checks the initializer against the type of the variable it initializes.
    ::mlir::LogicalResult verifyFor(::mlir::RankedTensorType type,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError) const;
  }];
}

#endif // KILN_BASE_TD
