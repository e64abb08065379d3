//===- GradientRules.cpp - Gradients of elementwise and shape ops ---------===//
//
// Rules reuse forward results where that is cheaper (exp, sqrt, tanh,
// sigmoid use y rather than recomputing from x). Ties of maximum/minimum go
// to the left operand, as in TensorFlow.
//
//===----------------------------------------------------------------------===//

#include "passes/Graph/GradientRules.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

bool isFloatTensor(Value v) {
  return llvm::isa<FloatType>(tensorType(v).getElementType());
}

/// Operand gradients are kept only for float operands.
void keepFloat(Operation *op, SmallVectorImpl<Value> &grads) {
  for (auto [operand, grad] : llvm::zip(op->getOperands(), grads))
    if (grad && !isFloatTensor(operand))
      grad = Value();
}

} // namespace

FailureOr<bool> elementwiseGradients(Operation *op, Value g, GradientBuilder &gb,
                                     SmallVectorImpl<Value> &grads) {
  Value y = op->getNumResults() == 1 ? op->getResult(0) : Value();
  auto operand = [&](unsigned i) { return op->getOperand(i); };
  if (llvm::isa<AddOp>(op)) {
    grads.assign({g, g});
  } else if (llvm::isa<SubOp>(op)) {
    grads.assign({g, gb.neg(g)});
  } else if (llvm::isa<MulOp>(op)) {
    grads.assign({gb.mul(g, operand(1)), gb.mul(g, operand(0))});
  } else if (llvm::isa<DivOp>(op)) {
    Value gOverB = gb.div(g, operand(1));
    grads.assign({gOverB, gb.neg(gb.mul(gOverB, y))});
  } else if (llvm::isa<MaximumOp>(op)) {
    Value left = gb.compare(ComparePredicate::ge, operand(0), operand(1));
    grads.assign({gb.where(left, g), gb.whereNot(left, g)});
  } else if (llvm::isa<MinimumOp>(op)) {
    Value left = gb.compare(ComparePredicate::le, operand(0), operand(1));
    grads.assign({gb.where(left, g), gb.whereNot(left, g)});
  } else if (llvm::isa<NegOp>(op)) {
    grads.assign({gb.neg(g)});
  } else if (llvm::isa<ExpOp>(op)) {
    grads.assign({gb.mul(g, y)});
  } else if (llvm::isa<LogOp>(op)) {
    grads.assign({gb.div(g, operand(0))});
  } else if (llvm::isa<SqrtOp>(op)) {
    grads.assign({gb.scale(gb.div(g, y), 0.5)});
  } else if (llvm::isa<RsqrtOp>(op)) {
    // d/dx x^-1/2 = -1/2 y^3.
    grads.assign({gb.scale(gb.mul(g, gb.mul(y, gb.mul(y, y))), -0.5)});
  } else if (llvm::isa<TanhOp>(op)) {
    grads.assign({gb.mul(g, gb.sub(gb.splatLike(y, 1.0), gb.mul(y, y)))});
  } else if (llvm::isa<SigmoidOp>(op)) {
    grads.assign({gb.mul(g, gb.mul(y, gb.sub(gb.splatLike(y, 1.0), y)))});
  } else if (llvm::isa<ReluOp>(op)) {
    // relu(x) > 0 exactly where x > 0 (NaN and -0 included): the mask reads
    // the output, which the forward keeps anyway, so the input (a product
    // plus its bias, a convolution's) need not be kept for it.
    Value positive = gb.compare(ComparePredicate::gt, y, gb.splatLike(y, 0.0));
    grads.assign({gb.where(positive, g)});
  } else if (llvm::isa<SinOp>(op)) {
    grads.assign({gb.mul(g, gb.builder().create<CosOp>(gb.location(), operand(0)))});
  } else if (llvm::isa<CosOp>(op)) {
    grads.assign({gb.neg(gb.mul(g, gb.builder().create<SinOp>(gb.location(), operand(0))))});
  } else if (llvm::isa<AtanOp>(op)) {
    // 1 / (1 + x^2)
    Value x = operand(0);
    grads.assign({gb.div(g, gb.add(gb.splatLike(x, 1.0), gb.mul(x, x)))});
  } else if (llvm::isa<ErfOp>(op)) {
    // 2 / sqrt(pi) * exp(-x^2)
    Value x = operand(0);
    Value bell = gb.builder().create<ExpOp>(gb.location(), gb.neg(gb.mul(x, x)));
    grads.assign({gb.scale(gb.mul(g, bell), 2.0 / std::sqrt(M_PI))});
  } else if (llvm::isa<AbsOp>(op)) {
    // g * sign(x), with sign(0) = 0 as in PyTorch.
    Value x = operand(0), zero = gb.splatLike(x, 0.0);
    grads.assign({gb.sub(gb.where(gb.compare(ComparePredicate::gt, x, zero), g),
                         gb.where(gb.compare(ComparePredicate::lt, x, zero), g))});
  } else if (llvm::isa<PowOp>(op)) {
    // d/da = b a^(b-1); d/db = a^b log(a), taken as 0 where a <= 0 (where
    // the real power of a negative base is undefined or b is integral).
    Value a = operand(0), b = operand(1);
    Value lower = gb.builder().create<PowOp>(gb.location(), a,
                                             gb.sub(b, gb.splatLike(b, 1.0)));
    Value positive = gb.compare(ComparePredicate::gt, a, gb.splatLike(a, 0.0));
    Value safeA = gb.builder().create<SelectOp>(gb.location(), positive, a,
                                                gb.splatLike(a, 1.0));
    Value logA = gb.builder().create<LogOp>(gb.location(), safeA);
    // PyTorch's d/da is 0 where b is 0 (b a^(b-1) is NaN there at a = 0).
    Value exponentZero = gb.compare(ComparePredicate::eq, b, gb.splatLike(b, 0.0));
    grads.assign({gb.whereNot(exponentZero, gb.mul(g, gb.mul(b, lower))),
                  gb.where(positive, gb.mul(g, gb.mul(y, logA)))});
  } else if (llvm::isa<ModOp>(op)) {
    // a = q b + r with q = (a - r) / b constant almost everywhere.
    Value a = operand(0), b = operand(1);
    grads.assign({g, gb.neg(gb.mul(g, gb.div(gb.sub(a, y), b)))});
  } else if (auto gelu = llvm::dyn_cast<GeluOp>(op)) {
    grads.assign({gb.builder().create<GeluGradOp>(gb.location(), operand(0), g,
                                             gelu.getApproximation())});
  } else if (llvm::isa<SelectOp>(op)) {
    grads.assign({Value(), gb.where(operand(0), g), gb.whereNot(operand(0), g)});
  } else if (auto cast = llvm::dyn_cast<CastOp>(op)) {
    if (!isFloatTensor(operand(0)))
      grads.assign({Value()});
    else
      grads.assign({gb.builder().create<CastOp>(gb.location(), operand(0).getType(), g)});
  } else if (llvm::isa<CompareOp, OneHotOp, StopGradientOp, FloorOp, CeilOp, RoundOp>(op)) {
    // Floor, ceil and round are steps: zero gradient almost everywhere, none
    // taken (as TensorFlow; PyTorch gives zeros).
    grads.assign(op->getNumOperands(), Value());
  } else {
    return failure();
  }
  keepFloat(op, grads);
  return true;
}

FailureOr<bool> shapeGradients(Operation *op, Value g, GradientBuilder &gb,
                               SmallVectorImpl<Value> &grads) {
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    grads.assign({gb.reshape(g, tensorType(reshape.getOperand()))});
  } else if (auto broadcast = llvm::dyn_cast<BroadcastOp>(op)) {
    grads.assign({gb.sumTo(g, tensorType(broadcast.getOperand()))});
  } else if (auto transpose = llvm::dyn_cast<TransposeOp>(op)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    grads.assign({gb.builder().create<TransposeOp>(gb.location(), g, inverse)});
  } else if (auto concat = llvm::dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    RankedTensorType type = tensorType(g);
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      RankedTensorType inputType = tensorType(input);
      SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
          step(type.getRank(), 1);
      start[axis] = offset;
      limit[axis] = offset + inputType.getDimSize(axis);
      offset = limit[axis];
      grads.push_back(gb.builder().create<SliceOp>(gb.location(), g, start, limit, step));
    }
  } else if (auto slice = llvm::dyn_cast<SliceOp>(op)) {
    RankedTensorType from = tensorType(slice.getOperand());
    RankedTensorType to = tensorType(g);
    SmallVector<int64_t> low, high, interior;
    for (int64_t d = 0; d < from.getRank(); ++d) {
      int64_t start = slice.getStart()[d], step = slice.getStep()[d];
      int64_t size = to.getDimSize(d);
      int64_t last = size == 0 ? start : start + (size - 1) * step + 1;
      low.push_back(start);
      high.push_back(from.getDimSize(d) - last);
      interior.push_back(size > 1 ? step - 1 : 0);
    }
    grads.assign({gb.builder().create<PadOp>(gb.location(), from, g, low, high, interior)});
  } else {
    return failure();
  }
  keepFloat(op, grads);
  return true;
}

LogicalResult buildOperandGradients(Operation *op, Value resultGrad, GradientBuilder &gb,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.clear();
  for (auto rule :
       {elementwiseGradients, shapeGradients, networkGradients, windowGradients}) {
    FailureOr<bool> done = rule(op, resultGrad, gb, operandGrads);
    if (succeeded(done))
      return success(*done);
  }
  return op->emitOpError("has no gradient rule, but the loss depends on it through "
                         "a trainable variable");
}

} // namespace kiln
