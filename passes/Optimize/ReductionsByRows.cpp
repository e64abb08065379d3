//===- ReductionsByRows.cpp - The kept axis of a reduction made leading ---===//
//
// kiln-reductions-by-rows (Passes.td). A sum over every axis but one
// non-leading axis (a convolution's bias gradient: [N, C, H, W] to C) is a
// kernel whose output's first dimension is 1, so its rows cannot be split
// over threads. Read through a transpose that puts the kept axis first, the
// same sum has C rows, each summed over the other axes in the same nesting
// as before; kiln-fuse-elementwise then reads the input permuted inside the
// reduction's kernel (nothing is copied). The code generator vectorizes
// sums by reassociating them, and does so differently for the two loop
// nests: the sums can differ in the last bit (a convnet's losses by 1e-7
// relative).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/KilnOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNREDUCTIONSBYROWS
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The one axis of `type` that `axes` keep when it is neither the first nor
/// the last (the innermost loop then still runs along the row-major
/// layout: a [N, C] bias gradient stays as it is, its sum vectorized along
/// C) and spans more than one element; -1 otherwise.
int64_t keptNonLeadingAxis(RankedTensorType type, ArrayRef<int64_t> axes) {
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || rank < 2 || static_cast<int64_t>(axes.size()) != rank - 1)
    return -1;
  int64_t kept = -1;
  for (int64_t axis = 0; axis < rank; ++axis)
    if (!llvm::is_contained(axes, axis)) {
      if (kept >= 0)
        return -1;
      kept = axis;
    }
  return kept > 0 && kept < rank - 1 && type.getDimSize(kept) > 1 ? kept : -1;
}

void leadWithKeptAxis(ReduceSumOp sum) {
  auto type = llvm::dyn_cast<RankedTensorType>(sum.getOperand().getType());
  if (!type)
    return;
  int64_t kept = keptNonLeadingAxis(type, sum.getAxes());
  if (kept < 0)
    return;
  SmallVector<int64_t> permutation = {kept};
  SmallVector<int64_t> axes;
  for (int64_t axis = 0; axis < type.getRank(); ++axis)
    if (axis != kept) {
      permutation.push_back(axis);
      axes.push_back(static_cast<int64_t>(permutation.size()) - 1);
    }
  OpBuilder builder(sum);
  Location loc = sum.getLoc();
  Value leading = builder.create<TransposeOp>(loc, sum.getOperand(), permutation);
  Value rows = builder.create<ReduceSumOp>(loc, leading, axes, /*keep_dims=*/false);
  Value result = rows;
  if (rows.getType() != sum.getType())
    result = builder.create<ReshapeOp>(loc, sum.getType(), rows);
  sum.getResult().replaceAllUsesWith(result);
  sum->erase();
}

struct ReductionsByRowsPass
    : public kiln::impl::KilnReductionsByRowsBase<ReductionsByRowsPass> {
  void runOnOperation() override {
    SmallVector<ReduceSumOp> sums;
    getOperation().walk([&](ReduceSumOp sum) { sums.push_back(sum); });
    for (ReduceSumOp sum : sums)
      leadWithKeptAxis(sum);
  }
};

} // namespace
