//===- KilnOpBuilder.h - Builds kiln ops from untrusted input ---*- C++ -*-===//
//
// Importers build ops from files anyone may have written. Each method here
// checks its operands with the op's shape rule (KilnShapes.h) first, so a bad
// model becomes one diagnostic at the current location instead of a crash,
// then builds the op with its result type. Binary ops broadcast their
// operands numpy-style by inserting `kiln.broadcast`, as both the graph
// format and ONNX define them. An op whose operands are all constants is
// folded as it is built, so the shape arithmetic exported graphs compute at
// run time (Shape -> Gather -> Concat -> Reshape) becomes constants; other
// simplifications are left to canonicalization.
//
// Every method returns failure after emitting exactly one error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_KILNOPBUILDER_H
#define KILN_COMPILER_IMPORT_KILNOPBUILDER_H

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"

namespace kiln {

class KilnOpBuilder {
public:
  explicit KilnOpBuilder(mlir::OpBuilder &builder)
      : builder(builder), loc(builder.getUnknownLoc()) {}

  /// Location given to the ops built next and to their diagnostics.
  void setLoc(mlir::Location newLoc) { loc = newLoc; }
  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &getBuilder() { return builder; }

  /// Emits an error at the current location.
  mlir::InFlightDiagnostic emitError() const { return mlir::emitError(loc); }

  using Result = mlir::FailureOr<mlir::Value>;

  Result constant(mlir::ElementsAttr value);
  /// A splat of `value` with the shape and element type of `like`.
  Result splatLike(mlir::Value like, double value);

  /// Elementwise binary op with numpy broadcasting of the operands.
  template <typename OpTy>
  Result binary(mlir::Value lhs, mlir::Value rhs) {
    mlir::FailureOr<llvm::SmallVector<mlir::Value>> operands =
        broadcastOperands(OpTy::getOperationName(), {lhs, rhs});
    if (mlir::failed(operands))
      return mlir::failure();
    return create<OpTy>((*operands)[0].getType(), (*operands)[0], (*operands)[1]);
  }

  /// Elementwise unary op.
  template <typename OpTy>
  Result unary(mlir::Value operand) {
    return create<OpTy>(operand.getType(), operand);
  }

  Result gelu(mlir::Value operand, GeluApproximation approximation);
  Result compare(ComparePredicate predicate, mlir::Value lhs, mlir::Value rhs);
  Result select(mlir::Value condition, mlir::Value onTrue, mlir::Value onFalse);
  Result cast(mlir::Value operand, mlir::Type elementType);

  Result matmul(mlir::Value lhs, mlir::Value rhs, bool transposeA = false,
                bool transposeB = false);

  /// Reshape to a static shape with the same element count.
  Result reshape(mlir::Value operand, llvm::ArrayRef<int64_t> shape);
  /// numpy broadcast_to; returns the operand itself when the shape is its own.
  Result broadcastTo(mlir::Value operand, llvm::ArrayRef<int64_t> shape);
  Result transpose(mlir::Value operand, llvm::ArrayRef<int64_t> permutation);
  Result concat(mlir::ValueRange inputs, int64_t axis);
  Result slice(mlir::Value operand, llvm::ArrayRef<int64_t> start,
               llvm::ArrayRef<int64_t> limit, llvm::ArrayRef<int64_t> step);

  /// A reduction (ReduceSumOp, ReduceMeanOp, ReduceMaxOp) over sorted axes.
  template <typename OpTy>
  Result reduce(mlir::Value operand, llvm::ArrayRef<int64_t> axes, bool keepDims) {
    InferredType type = inferReduceType(diag(OpTy::getOperationName()),
                                        operand.getType(), axes, keepDims);
    if (mlir::failed(type))
      return mlir::failure();
    return create<OpTy>(*type, operand, builder.getDenseI64ArrayAttr(axes),
                        keepDims ? builder.getUnitAttr() : mlir::UnitAttr());
  }

  /// SoftmaxOp or LogSoftmaxOp along a non-negative axis.
  template <typename OpTy>
  Result softmax(mlir::Value operand, int64_t axis) {
    InferredType type = inferSoftmaxType(diag(OpTy::getOperationName()),
                                         operand.getType(), axis);
    if (mlir::failed(type))
      return mlir::failure();
    return create<OpTy>(*type, operand, builder.getI64IntegerAttr(axis));
  }

  /// `bias` may be null.
  Result layerNorm(mlir::Value input, mlir::Value scale, mlir::Value bias,
                   int64_t axis, double epsilon);
  Result gather(mlir::Value table, mlir::Value indices, int64_t axis);
  /// `indices`' shape plus [depth] of `elementType`: 1 at each index, a
  /// row of zeros for one outside [0, depth).
  Result oneHot(mlir::Value indices, int64_t depth, mlir::Type elementType);
  /// A multi-hot lookup: each list of `ids` (padded with -1) combined.
  Result embeddingBag(mlir::Value table, mlir::Value ids, EmbeddingCombiner combiner);
  /// `rows` [N, rest...] summed into `numRows` rows of zeros at `ids` [N]
  /// (an id outside [0, numRows) adds nothing): a segment sum.
  Result scatterAddRows(mlir::Value rows, mlir::Value ids, int64_t numRows);
  /// `y` moved by `k` positions along `axis` (toward the end, or toward the
  /// start with `backward`), zeros filling in.
  Result shifted(mlir::Value y, int64_t axis, int64_t k, bool backward);
  /// The running sum along `axis` (from the end with `reverse`): log2(N)
  /// steps, each adding the sums shifted by 1, 2, 4, ... positions, so an
  /// inf or NaN reaches only the positions after it and it trains.
  Result cumulativeSum(mlir::Value x, int64_t axis, bool reverse);
  /// `operand` reversed along a non-negative `axis` of static size: a gather
  /// of constant indices.
  Result reverse(mlir::Value operand, int64_t axis);
  Result gatherElements(mlir::Value input, mlir::Value indices, int64_t axis);
  /// Floored remainder, or truncated (C's fmod) with `fmod`, broadcast.
  Result mod(mlir::Value lhs, mlir::Value rhs, bool fmod);

  /// kiln.conv of `input` [N, C, D...] with `filter` (window.kernel unused).
  Result conv(mlir::Value input, mlir::Value filter, const WindowAttrs &window,
              int64_t groups);
  /// A transposed convolution: kiln.conv_backward_data of `input` (the
  /// convolution's output side) with `filter`, giving `resultShape`, which
  /// convolving with the same window must map back to `input`'s shape.
  Result convTranspose(mlir::Value input, mlir::Value filter, const WindowAttrs &window,
                       int64_t groups, llvm::ArrayRef<int64_t> resultShape);
  Result maxPool(mlir::Value input, const WindowAttrs &window);
  Result avgPool(mlir::Value input, const WindowAttrs &window, bool excludePad);

  /// With `ignoreIndex`, labels of that value are left out of the mean;
  /// `labelSmoothing` e, when given, smooths the target to (1 - e) one_hot
  /// + e / classes.
  Result softmaxCrossEntropy(mlir::Value logits, mlir::Value labels,
                             std::optional<int64_t> ignoreIndex = std::nullopt,
                             std::optional<double> labelSmoothing = std::nullopt);
  Result sigmoidCrossEntropy(mlir::Value logits, mlir::Value targets);
  Result meanSquaredError(mlir::Value prediction, mlir::Value target);

  /// Broadcasts all operands to their numpy common shape; checks that they
  /// share an element type. `opName` names the op in diagnostics.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  broadcastOperands(llvm::StringRef opName, mlir::ValueRange operands);

  /// The rank of a value known to be a ranked tensor.
  static int64_t rankOf(mlir::Value value);
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
  /// The value of a kiln.constant (one the builder folded to, say), else
  /// null; `value` may be null.
  static mlir::DenseElementsAttr constantValueOf(mlir::Value value);

private:
  ShapeDiag diag(llvm::StringRef opName) const { return ShapeDiag(loc, opName); }

  template <typename OpTy, typename... Args>
  Result create(Args &&...args) {
    auto op = builder.create<OpTy>(loc, std::forward<Args>(args)...);
    return foldOverConstants(op.getOperation());
  }

  /// `op`'s result, or the constant it folds to when every operand is one.
  mlir::Value foldOverConstants(mlir::Operation *op);

  mlir::OpBuilder &builder;
  mlir::Location loc;
};

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_KILNOPBUILDER_H
