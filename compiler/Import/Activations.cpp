//===- Activations.cpp - Activation functions from kiln ops ---------------===//

#include "compiler/Import/Activations.h"

#include "compiler/Import/DiagnosticText.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = ActivationResult;

/// `x * value`, `value` a splat like x.
Result scaled(KilnOpBuilder &b, Value x, double value) {
  Result factor = b.splatLike(x, value);
  return succeeded(factor) ? b.binary<MulOp>(x, *factor) : factor;
}

/// `x + value`, `value` a splat like x.
Result shifted(KilnOpBuilder &b, Value x, double value) {
  Result term = b.splatLike(x, value);
  return succeeded(term) ? b.binary<AddOp>(x, *term) : term;
}

/// x > threshold ? x : otherwise.
Result aboveOr(KilnOpBuilder &b, Value x, double threshold, Value otherwise) {
  Result bound = b.splatLike(x, threshold);
  Result above = succeeded(bound) ? b.compare(ComparePredicate::gt, x, *bound) : bound;
  return succeeded(above) ? b.select(*above, x, otherwise) : above;
}

/// alpha * (exp(min(x, 0) / alpha) - 1): the negative branch of Elu (and
/// of Celu, with `divide`), finite for any x.
Result expBranch(KilnOpBuilder &b, Value x, double alpha, bool divide) {
  Result zero = b.splatLike(x, 0);
  Result clipped = succeeded(zero) ? b.binary<MinimumOp>(x, *zero) : zero;
  if (succeeded(clipped) && divide)
    clipped = scaled(b, *clipped, 1 / alpha);
  Result e = succeeded(clipped) ? b.unary<ExpOp>(*clipped) : clipped;
  Result minusOne = succeeded(e) ? shifted(b, *e, -1) : e;
  return succeeded(minusOne) ? scaled(b, *minusOne, alpha) : minusOne;
}

} // namespace

Result buildLeakyRelu(KilnOpBuilder &b, Value x, double alpha) {
  Result negative = scaled(b, x, alpha);
  return succeeded(negative) ? aboveOr(b, x, 0, *negative) : negative;
}

Result buildElu(KilnOpBuilder &b, Value x, double alpha, double scale) {
  Result negative = expBranch(b, x, alpha, /*divide=*/false);
  Result y = succeeded(negative) ? aboveOr(b, x, 0, *negative) : negative;
  if (failed(y) || scale == 1)
    return y;
  return scaled(b, *y, scale);
}

Result buildCelu(KilnOpBuilder &b, Value x, double alpha) {
  if (!(alpha != 0))
    return b.emitError() << "expects a nonzero alpha";
  Result negative = expBranch(b, x, alpha, /*divide=*/true);
  return succeeded(negative) ? aboveOr(b, x, 0, *negative) : negative;
}

/// log(1 + exp(v)).
Result logOnePlusExp(KilnOpBuilder &b, Value v) {
  Result e = b.unary<ExpOp>(v);
  Result onePlus = succeeded(e) ? shifted(b, *e, 1) : e;
  return succeeded(onePlus) ? b.unary<LogOp>(*onePlus) : onePlus;
}

Result buildSoftplus(KilnOpBuilder &b, Value x) {
  // x > 0 ? x + log(1 + exp(-x)) : log(1 + exp(x)), each branch reading x
  // only where it is chosen (0 elsewhere), so that neither overflows and
  // the gradient at 0 is sigmoid(0) = 1/2 (max(x, 0) + log(1 + exp(-|x|))
  // gave the tie's whole gradient to max and none to |x|).
  Result zero = b.splatLike(x, 0);
  Result positive = succeeded(zero) ? b.compare(ComparePredicate::gt, x, *zero) : zero;
  if (failed(positive))
    return failure();
  Result above = b.select(*positive, x, *zero), below = b.select(*positive, *zero, x);
  Result negatedAbove = succeeded(above) ? b.unary<NegOp>(*above) : above;
  Result tailAbove = succeeded(negatedAbove) ? logOnePlusExp(b, *negatedAbove) : negatedAbove;
  Result branchAbove = succeeded(tailAbove) ? b.binary<AddOp>(*above, *tailAbove) : tailAbove;
  Result branchBelow = succeeded(below) ? logOnePlusExp(b, *below) : below;
  if (failed(branchAbove) || failed(branchBelow))
    return failure();
  return b.select(*positive, *branchAbove, *branchBelow);
}

Result buildMish(KilnOpBuilder &b, Value x) {
  Result soft = buildSoftplus(b, x);
  Result squashed = succeeded(soft) ? b.unary<TanhOp>(*soft) : soft;
  return succeeded(squashed) ? b.binary<MulOp>(x, *squashed) : squashed;
}

Result buildHardSigmoid(KilnOpBuilder &b, Value x, double alpha, double beta) {
  Result line = scaled(b, x, alpha);
  if (succeeded(line))
    line = shifted(b, *line, beta);
  Result one = b.splatLike(x, 1), zero = b.splatLike(x, 0);
  if (failed(line) || failed(one) || failed(zero))
    return failure();
  Result capped = b.binary<MinimumOp>(*line, *one);
  return succeeded(capped) ? b.binary<MaximumOp>(*capped, *zero) : capped;
}

Result buildHardSwish(KilnOpBuilder &b, Value x) {
  Result gate = buildHardSigmoid(b, x, 1.0 / 6.0, 0.5);
  return succeeded(gate) ? b.binary<MulOp>(x, *gate) : gate;
}

Result buildThresholdedRelu(KilnOpBuilder &b, Value x, double alpha) {
  Result zero = b.splatLike(x, 0);
  return succeeded(zero) ? aboveOr(b, x, alpha, *zero) : zero;
}

Result buildPRelu(KilnOpBuilder &b, Value x, Value slope) {
  Result negative = b.binary<MulOp>(x, slope);
  if (failed(negative))
    return failure();
  if (KilnOpBuilder::shapeOf(*negative) != KilnOpBuilder::shapeOf(x))
    return b.emitError() << "expects a slope that broadcasts to the input's shape "
                         << formatIntList(KilnOpBuilder::shapeOf(x)) << ", got "
                         << formatIntList(KilnOpBuilder::shapeOf(slope));
  Result zero = b.splatLike(x, 0);
  Result positive = succeeded(zero) ? b.compare(ComparePredicate::gt, x, *zero) : zero;
  return succeeded(positive) ? b.select(*positive, x, *negative) : positive;
}

} // namespace kiln
