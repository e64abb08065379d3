//===- LinalgBuilders.h - Small builders for kiln-to-linalg -----*- C++ -*-===//
//
// The lowering patterns build `linalg.generic` ops over static shapes again
// and again: elementwise maps with broadcast operands, reductions into a
// filled init, scalar constants of the element type. These helpers keep
// each pattern to what its op computes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H
#define KILN_PASSES_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace kiln {

/// Computes one element of a generic op's result from its block arguments
/// (one per input, in order).
using ElementFn = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                 mlir::ValueRange)>;

/// An uninitialized tensor of `type`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// A scalar constant of a float or integer element type.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type elementType, double value);

/// The type that sums of `elementType` accumulate in: f32 for f16 and bf16
/// (whose 11- and 8-bit significands stop counting at 2048 and 256), the
/// element type otherwise.
mlir::Type accumulatorType(mlir::Type elementType);

/// A float converted to another float type: extf to a wider one, truncf to
/// a narrower one, through f32 between f16 and bf16.
mlir::Value castFloat(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Type to);

/// A float tensor with its elements converted to `elementType` by
/// `castFloat`; the tensor itself when it has that type already.
mlir::Value castFloatElements(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value tensor, mlir::Type elementType);

/// The lowest value of an element type (-inf for floats).
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Type elementType);

/// A tensor of `type` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value value);

/// The map that reads an operand of `operandShape` while iterating over
/// `resultShape`, numpy-broadcasting it (dimensions aligned from the right,
/// size-1 dimensions read at 0).
mlir::AffineMap broadcastMap(mlir::MLIRContext *context,
                             llvm::ArrayRef<int64_t> operandShape,
                             llvm::ArrayRef<int64_t> resultShape);

/// An elementwise `linalg.generic` producing `resultType` from `inputs`,
/// each read through its map.
mlir::Value mapElements(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType resultType, mlir::ValueRange inputs,
                        llvm::ArrayRef<mlir::AffineMap> inputMaps, ElementFn body);

/// `mapElements` over operands of the result's own shape.
mlir::Value mapSameShape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType resultType, mlir::ValueRange inputs,
                         ElementFn body);

/// How a reduction combines an element into its accumulator.
using CombineFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::Value element, mlir::Value acc)>;

/// Reduces over the sorted `axes` of the first input's shape (the result
/// drops them), starting from `init` and combining each element given by
/// `element` (computed from the inputs' block arguments) into the
/// accumulator. The accumulator and the result have `init`'s type; a float
/// element of another type is cast to it first. Inputs are read through
/// `inputMaps`, or numpy-broadcast against the first input when it is empty.
mlir::Value reduceAxes(mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange inputs,
                       llvm::ArrayRef<int64_t> axes, mlir::Value init,
                       ElementFn element, CombineFn combine,
                       llvm::ArrayRef<mlir::AffineMap> inputMaps = {});

/// `reduceAxes` over the iteration shape `shape`, each input read through its
/// map in `inputMaps`.
mlir::Value reduceOver(mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<int64_t> shape,
                       mlir::ValueRange inputs, llvm::ArrayRef<mlir::AffineMap> inputMaps,
                       llvm::ArrayRef<int64_t> axes, mlir::Value init, ElementFn element,
                       CombineFn combine);

/// The map over `rank` loop dimensions that reads the dimensions `dims`.
mlir::AffineMap selectDims(mlir::MLIRContext *context, int64_t rank,
                           llvm::ArrayRef<int64_t> dims);

/// How a one_hot of rank `rank` reads its indices: its leading dimensions.
mlir::AffineMap oneHotIndicesMap(mlir::MLIRContext *context, int64_t rank);

/// A one_hot's element inside a generic over its `rank` dimensions: 1 of
/// type `element` where the last dimension's position is the integer `id`,
/// else 0.
mlir::Value oneHotElement(mlir::OpBuilder &b, mlir::Location loc, int64_t rank, mlir::Value id,
                          mlir::Type element);

/// A reduction's accumulation: add, with the float add free to reassociate
/// so that LLVM vectorizes the loop (partial sums in vector lanes).
mlir::Value sumValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);

/// The element type's add, multiply, max and divide.
mlir::Value addValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value mulValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value maxValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value divValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);

/// Reshapes a static tensor (a view after bufferization).
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                          mlir::RankedTensorType resultType);

/// The map reading a tensor without dimension `axis` while iterating over
/// all `rank` dimensions.
mlir::AffineMap withoutAxis(mlir::MLIRContext *context, int64_t rank, int64_t axis);

/// exp(x - max) computed in the float type `type`.
mlir::Value expOfDifference(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, mlir::Value max, mlir::Type type);

/// max(x) and sum(exp(x - max(x))) along `axis` of a float tensor: the
/// stable pieces of softmax, log_softmax and softmax cross-entropy. The max
/// has x's element type; exp and the sum are computed in its
/// `accumulatorType`.
std::pair<mlir::Value, mlir::Value> maxAndSumOfExp(mlir::OpBuilder &b,
                                                   mlir::Location loc,
                                                   mlir::Value x, int64_t axis);

/// A softmax along `axis` with the pieces it is made of: `max` (x's element
/// type) and `sum` of exp(x - max) (its accumulatorType) per row, and
/// `probs`. An f32 softmax takes one exp an element: the pass that sums
/// writes e = exp(x - max) where the result goes, and the last divides it
/// in place; other types compute exp twice, in f32, and round once.
/// With `finish`, `probs` is finish(p, row) for each element's softmax p
/// instead (same type), `row` holding the element of each of `perRow`
/// (tensors of the rows' shape, x's without `axis`) at its row: the
/// softmax is never stored.
struct SoftmaxParts {
  mlir::Value max, sum, probs;
};
using SoftmaxFinish = llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                                     mlir::Value, mlir::ValueRange)>;
SoftmaxParts softmaxParts(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, int64_t axis,
                          mlir::ValueRange perRow = {}, SoftmaxFinish finish = nullptr);

/// The dimensions in [0, rank) that are not in `axes`, in order.
llvm::SmallVector<int64_t> keptAxes(int64_t rank, llvm::ArrayRef<int64_t> axes);

} // namespace kiln

#endif // KILN_PASSES_CONVERSION_KILNTOLINALG_LINALGBUILDERS_H
