//===- MaskPooledGradients.cpp - A ReLU's mask applied before max_pool_grad ===//
//
// kiln-mask-pooled-gradients (Passes.td). max_pool_grad sends each window's
// gradient to the window's maximum, whose value is the window's pooled
// output; so masking the spread gradient where the pooled input is > 0 (a
// ReLU's gradient read from its output) equals masking the window's
// gradient where the pooled output is > 0, on a tensor as many times
// smaller as the window is large. Bit for bit: where the mask is false both
// give +0, else the same terms in the same order (NaN: a window holding one
// pools to NaN and has its maximum there, false both ways).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"
#include "passes/Optimize/SplatConstants.h"

#include "dialects/Kiln/KilnOps.h"


namespace kiln {
#define GEN_PASS_DEF_KILNMASKPOOLEDGRADIENTS
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Whether `value` is a splat 0 constant.
bool isZero(Value value) {
  std::optional<APFloat> splat = splatFloat(value);
  return splat && splat->isZero();
}

/// Whether two pooling ops have the same window.
template <typename A, typename B> bool sameWindow(A a, B b) {
  return a.getKernel() == b.getKernel() && a.getStrides() == b.getStrides() &&
         a.getDilations() == b.getDilations() && a.getPadLow() == b.getPadLow() &&
         a.getPadHigh() == b.getPadHigh() && a.getCeilMode() == b.getCeilMode();
}

/// The max_pool of `input` with `indices`' window computed before `before`,
/// or null.
MaxPoolOp pooledBefore(Value input, MaxPoolIndicesOp indices, Operation *before) {
  for (Operation *user : input.getUsers())
    if (auto pool = llvm::dyn_cast<MaxPoolOp>(user))
      if (sameWindow(pool, indices) && pool->getBlock() == before->getBlock() &&
          pool->isBeforeInBlock(before))
        return pool;
  return nullptr;
}

/// Rewrites `select(x > 0, max_pool_grad(g, max_pool_indices(x)), 0)` to
/// `max_pool_grad(select(max_pool(x) > 0, g, 0), max_pool_indices(x))` when
/// that max_pool is computed before the gradient; returns whether it did.
bool maskBeforeSpreading(SelectOp select) {
  auto spread = select.getOnTrue().getDefiningOp<MaxPoolGradOp>();
  auto compare = select.getCondition().getDefiningOp<CompareOp>();
  if (!spread || !compare || !isZero(select.getOnFalse()) || !spread->hasOneUse() ||
      compare.getPredicate() != ComparePredicate::gt || !isZero(compare.getRhs()))
    return false;
  auto indices = spread.getIndices().getDefiningOp<MaxPoolIndicesOp>();
  if (!indices || indices.getInput() != compare.getLhs() || !sameWindow(indices, spread))
    return false;
  MaxPoolOp pool = pooledBefore(indices.getInput(), indices, spread);
  if (!pool || pool.getType() != spread.getGrad().getType())
    return false;

  OpBuilder builder(spread);
  Location loc = spread.getLoc();
  auto pooledType = llvm::cast<RankedTensorType>(pool.getType());
  Value zero = builder.create<ConstantOp>(
      loc, DenseElementsAttr::get(pooledType, builder.getFloatAttr(pooledType.getElementType(),
                                                                   0.0)));
  Value positive = builder.create<CompareOp>(loc, ComparePredicate::gt, pool.getResult(), zero);
  Value masked = builder.create<SelectOp>(loc, positive, spread.getGrad(), zero);
  spread.getGradMutable().set(masked);
  select.getResult().replaceAllUsesWith(spread.getResult());
  select->erase();
  if (compare->use_empty())
    compare->erase();
  return true;
}

struct MaskPooledGradientsPass
    : public kiln::impl::KilnMaskPooledGradientsBase<MaskPooledGradientsPass> {
  void runOnOperation() override {
    SmallVector<SelectOp> selects;
    getOperation().walk([&](SelectOp select) { selects.push_back(select); });
    for (SelectOp select : selects)
      maskBeforeSpreading(select);
  }
};

} // namespace
