//===- KilnConvOps.cpp - Convolution and pooling: types and verifiers -----===//

#include "dialects/Kiln/KilnOps.h"

using namespace mlir;
using namespace kiln;

namespace {

template <typename OpTy>
ShapeDiag diagFor(std::optional<Location> loc) {
  return ShapeDiag(loc, OpTy::getOperationName());
}

template <typename Adaptor>
WindowAttrs convWindow(Adaptor op) {
  WindowAttrs window;
  window.strides = op.getStrides();
  window.dilations = op.getDilations();
  window.padLow = op.getPadLow();
  window.padHigh = op.getPadHigh();
  return window;
}

template <typename Adaptor>
WindowAttrs poolWindow(Adaptor op) {
  WindowAttrs window = convWindow(op);
  window.kernel = op.getKernel();
  window.ceilMode = op.getCeilMode();
  return window;
}

/// Checks that `inferred` (the type the forward op computes) is `expected`,
/// the type the gradient op was given: "expects <what> of type T, got U".
LogicalResult expectType(Operation *op, InferredType inferred, Type expected,
                         StringRef what) {
  if (failed(inferred))
    return failure();
  if (*inferred == expected)
    return success();
  return op->emitOpError("expects ")
         << what << " of type " << *inferred << ", got " << expected;
}

} // namespace

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return appendInferred(inferConvType(diagFor<ConvOp>(loc), adaptor.getInput().getType(),
                                      adaptor.getFilter().getType(), convWindow(adaptor),
                                      adaptor.getGroups()),
                        types);
}

LogicalResult ConvBackwardDataOp::verify() {
  // The result is the convolution's input: convolving it must give `grad`.
  InferredType forward = inferConvType(diagFor<ConvBackwardDataOp>(getLoc()), getType(),
                                       getFilter().getType(), convWindow(*this), getGroups());
  return expectType(*this, forward, getGrad().getType(), "a gradient");
}

LogicalResult ConvBackwardFilterOp::verify() {
  InferredType forward = inferConvType(diagFor<ConvBackwardFilterOp>(getLoc()),
                                       getInput().getType(), getType(), convWindow(*this),
                                       getGroups());
  return expectType(*this, forward, getGrad().getType(), "a gradient");
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return appendInferred(inferPoolType(diagFor<MaxPoolOp>(loc), adaptor.getInput().getType(),
                                      poolWindow(adaptor)),
                        types);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  return appendInferred(inferPoolType(diagFor<AvgPoolOp>(loc), adaptor.getInput().getType(),
                                      poolWindow(adaptor)),
                        types);
}

/// Average pooling's divisor counts window elements: no dilation.
template <typename OpTy>
LogicalResult verifyUndilated(OpTy op) {
  if (llvm::any_of(op.getDilations(), [](int64_t d) { return d != 1; }))
    return op.emitOpError("expects dilations of 1, got ")
           << formatShape(op.getDilations());
  return success();
}

LogicalResult AvgPoolOp::verify() { return verifyUndilated(*this); }

LogicalResult MaxPoolIndicesOp::verify() {
  InferredType pooled =
      inferPoolType(diagFor<MaxPoolIndicesOp>(getLoc()), getInput().getType(),
                    poolWindow(*this), IntegerType::get(getContext(), 32));
  return expectType(*this, pooled, getType(), "a result");
}

LogicalResult MaxPoolGradOp::verify() {
  InferredType pooled = inferPoolType(diagFor<MaxPoolGradOp>(getLoc()), getType(),
                                      poolWindow(*this));
  if (failed(expectType(*this, pooled, getGrad().getType(), "a gradient")))
    return failure();
  auto indices = llvm::cast<RankedTensorType>(getIndices().getType());
  if (indices.getShape() != llvm::cast<RankedTensorType>(getGrad().getType()).getShape())
    return emitOpError("expects indices shaped like the gradient, got ") << indices;
  return success();
}

LogicalResult AvgPoolGradOp::verify() {
  if (failed(verifyUndilated(*this)))
    return failure();
  InferredType pooled = inferPoolType(diagFor<AvgPoolGradOp>(getLoc()), getType(),
                                      poolWindow(*this));
  return expectType(*this, pooled, getGrad().getType(), "a gradient");
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  return appendInferred(inferGatherElementsType(diagFor<GatherElementsOp>(loc),
                                                adaptor.getInput().getType(),
                                                adaptor.getIndices().getType(),
                                                adaptor.getAxis()),
                        types);
}
