//===- GradientRulesConv.cpp - Gradients of convolution and pooling -------===//
//
// A convolution's gradients are the two ops that compute them directly
// (the runtime's library has a primitive for each), and a transposed
// convolution's (conv_backward_data used forward) a convolution and a
// filter gradient; a max pool's gradient
// goes to the first maximum of each window, which kiln.max_pool_indices
// recomputes from the input, as PyTorch's max_pool2d_with_indices records.
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/GradientRules.h"

using namespace mlir;

namespace kiln {

FailureOr<bool> windowGradients(Operation *op, Value g, GradientBuilder &gb,
                                SmallVectorImpl<Value> &grads) {
  OpBuilder &b = gb.builder();
  Location loc = gb.location();
  if (auto conv = llvm::dyn_cast<ConvOp>(op)) {
    Value dx = b.create<ConvBackwardDataOp>(
        loc, conv.getInput().getType(), g, conv.getFilter(), conv.getStrides(),
        conv.getDilations(), conv.getPadLow(), conv.getPadHigh(), conv.getGroups());
    Value dw = b.create<ConvBackwardFilterOp>(
        loc, conv.getFilter().getType(), conv.getInput(), g, conv.getStrides(),
        conv.getDilations(), conv.getPadLow(), conv.getPadHigh(), conv.getGroups());
    grads.assign({dx, dw});
    return true;
  }
  if (auto transposed = llvm::dyn_cast<ConvBackwardDataOp>(op)) {
    // y = conv^T(x; w), a transposed convolution (ONNX ConvTranspose): its
    // adjoint is the convolution, dx = conv(g; w), and <g, conv^T(x; w)> =
    // <conv(g; w), x> gives dw as the filter gradient of convolving g into x.
    Value dx = b.create<ConvOp>(loc, transposed.getGrad().getType(), g, transposed.getFilter(),
                                transposed.getStrides(), transposed.getDilations(),
                                transposed.getPadLow(), transposed.getPadHigh(),
                                transposed.getGroups());
    Value dw = b.create<ConvBackwardFilterOp>(
        loc, transposed.getFilter().getType(), g, transposed.getGrad(), transposed.getStrides(),
        transposed.getDilations(), transposed.getPadLow(), transposed.getPadHigh(),
        transposed.getGroups());
    grads.assign({dx, dw});
    return true;
  }
  if (auto pool = llvm::dyn_cast<MaxPoolOp>(op)) {
    auto pooled = tensorType(pool.getResult());
    auto indicesType = RankedTensorType::get(pooled.getShape(), b.getI32Type());
    Value indices = b.create<MaxPoolIndicesOp>(
        loc, indicesType, pool.getInput(), pool.getKernel(), pool.getStrides(),
        pool.getDilations(), pool.getPadLow(), pool.getPadHigh(), pool.getCeilMode());
    grads.assign({b.create<MaxPoolGradOp>(loc, pool.getInput().getType(), g, indices,
                                          pool.getKernel(), pool.getStrides(),
                                          pool.getDilations(), pool.getPadLow(),
                                          pool.getPadHigh(), pool.getCeilMode())});
    return true;
  }
  if (auto pool = llvm::dyn_cast<AvgPoolOp>(op)) {
    grads.assign({b.create<AvgPoolGradOp>(loc, pool.getInput().getType(), g,
                                          pool.getKernel(), pool.getStrides(),
                                          pool.getDilations(), pool.getPadLow(),
                                          pool.getPadHigh(), pool.getCeilMode(),
                                          pool.getExcludePad())});
    return true;
  }
  if (llvm::isa<ConvBackwardFilterOp, MaxPoolIndicesOp,
                MaxPoolGradOp, AvgPoolGradOp>(op))
    return op->emitOpError("has no gradient rule (a gradient of a gradient)"), false;
  return failure();
}

} // namespace kiln
