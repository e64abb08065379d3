//===- KilnShapes.h - Shape and type rules of kiln ops ----------*- C++ -*-===//
//
// One rule per op family, shared by the ops' `inferReturnTypes` (and so by the
// verifier and `kiln-infer-shapes`) and by the importers, which call a rule
// before building an op so that bad input becomes a diagnostic, not a crash.
//
// Every rule accepts any `Type` (the parser may call it before the operand
// constraints are checked) and reports a failure through its `ShapeDiag`.
// A `?` dimension is compatible with any size; a result dimension is `?` only
// where the rule cannot know it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNSHAPES_H
#define KILN_DIALECTS_KILN_KILNSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace kiln {

/// Where and for which op a shape rule reports its errors. Without a location
/// (a speculative query) errors are silent.
class ShapeDiag {
public:
  ShapeDiag(std::optional<mlir::Location> loc, llvm::StringRef opName)
      : loc(loc), opName(opName) {}

  /// Emits "'<op>' op <args...>" and returns failure.
  template <typename... Args>
  mlir::LogicalResult fail(Args &&...args) const {
    if (!loc)
      return mlir::failure();
    mlir::InFlightDiagnostic diag = mlir::emitError(*loc);
    diag << "'" << opName << "' op ";
    (diag << ... << std::forward<Args>(args));
    return diag;
  }

  llvm::StringRef getOpName() const { return opName; }

private:
  std::optional<mlir::Location> loc;
  llvm::StringRef opName;
};

using InferredType = mlir::FailureOr<mlir::RankedTensorType>;

/// "[4, ?, 8]" and "?" or "8" for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);
std::string formatDim(int64_t d);

/// `type` as a ranked tensor, or a diagnostic naming it as `what`.
mlir::FailureOr<mlir::RankedTensorType> ranked(const ShapeDiag &diag, mlir::Type type,
                                               llvm::StringRef what);

/// Appends a successful inference to `types` (the `inferReturnTypes` shape).
mlir::LogicalResult appendInferred(InferredType inferred,
                                   llvm::SmallVectorImpl<mlir::Type> &types);

/// Same element types and pairwise compatible shapes.
bool areCompatibleTensorTypes(mlir::TypeRange inferred, mlir::TypeRange actual);

/// The numpy broadcast of two shapes, or failure when a pair of dimensions is
/// neither equal nor 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Number of elements of a static shape, or failure if a dimension is dynamic
/// or negative or the product overflows int64.
mlir::FailureOr<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape);

/// Operands of one element type and compatible shapes; the result is their
/// most static common shape.
InferredType inferElementwiseType(const ShapeDiag &diag, mlir::TypeRange operands);
InferredType inferCompareType(const ShapeDiag &diag, mlir::Type lhs, mlir::Type rhs);
InferredType inferSelectType(const ShapeDiag &diag, mlir::Type condition,
                             mlir::Type onTrue, mlir::Type onFalse);
InferredType inferMatmulType(const ShapeDiag &diag, mlir::Type lhs, mlir::Type rhs,
                             bool transposeA, bool transposeB);
InferredType inferTransposeType(const ShapeDiag &diag, mlir::Type operand,
                                llvm::ArrayRef<int64_t> permutation);
InferredType inferConcatType(const ShapeDiag &diag, mlir::TypeRange inputs,
                             int64_t axis);
InferredType inferSliceType(const ShapeDiag &diag, mlir::Type operand,
                            llvm::ArrayRef<int64_t> start,
                            llvm::ArrayRef<int64_t> limit,
                            llvm::ArrayRef<int64_t> step);
InferredType inferReduceType(const ShapeDiag &diag, mlir::Type operand,
                             llvm::ArrayRef<int64_t> axes, bool keepDims);
InferredType inferSoftmaxType(const ShapeDiag &diag, mlir::Type operand,
                              int64_t axis);
InferredType inferLayerNormType(const ShapeDiag &diag, mlir::Type input,
                                mlir::Type scale, mlir::Type bias, int64_t axis,
                                double epsilon);
InferredType inferGatherType(const ShapeDiag &diag, mlir::Type table,
                             mlir::Type indices, int64_t axis);
/// kiln.embedding_bag: `ids` [batch..., L] of i32/i64, `table` [R, row...] of
/// floats; the result is [batch..., row...].
InferredType inferEmbeddingBagType(const ShapeDiag &diag, mlir::Type table,
                                   mlir::Type ids);
InferredType inferSoftmaxCrossEntropyType(const ShapeDiag &diag, mlir::Type logits,
                                          mlir::Type labels);
InferredType inferPointwiseLossType(const ShapeDiag &diag, mlir::TypeRange operands);

InferredType inferGatherElementsType(const ShapeDiag &diag, mlir::Type input,
                                     mlir::Type indices, int64_t axis);

/// A convolution's or pooling op's window, one entry per spatial dimension
/// (KilnConvOps.td). `kernel` is empty for a convolution (the filter gives
/// it); `ceilMode` rounds pooled sizes up.
struct WindowAttrs {
  llvm::ArrayRef<int64_t> kernel, strides, dilations, padLow, padHigh;
  bool ceilMode = false;
};

/// The result of `kiln.conv` over `input` [N, C, D...] with `filter`
/// [F, C / groups, K...].
InferredType inferConvType(const ShapeDiag &diag, mlir::Type input,
                           mlir::Type filter, const WindowAttrs &window,
                           int64_t groups);
/// The result of a pooling op over `input` [N, C, D...], with
/// `elementType` (the input's when null).
InferredType inferPoolType(const ShapeDiag &diag, mlir::Type input,
                           const WindowAttrs &window,
                           mlir::Type elementType = {});
/// One spatial dimension of a window's output: floor (or with `ceilMode`
/// PyTorch's ceil) of (size + low + high - dilation * (kernel - 1) - 1) /
/// stride + 1; failure when the window does not fit.
mlir::FailureOr<int64_t> windowOutputSize(int64_t size, int64_t kernel,
                                          int64_t stride, int64_t dilation,
                                          int64_t low, int64_t high,
                                          bool ceilMode);

/// Checks a reshape from `operand` to `result`: same element type and, where
/// both are static, the same element count.
mlir::LogicalResult verifyReshape(const ShapeDiag &diag, mlir::Type operand,
                                  mlir::Type result);
/// Checks a numpy broadcast_to from `operand` to `result`.
mlir::LogicalResult verifyBroadcast(const ShapeDiag &diag, mlir::Type operand,
                                    mlir::Type result);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_KILNSHAPES_H
