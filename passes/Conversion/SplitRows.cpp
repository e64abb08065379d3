//===- SplitRows.cpp - The kiln-split-rows pass ---------------------------===//
//
// See Passes.td. Runs on kernels after convert-linalg-to-loops and before
// the loops become control flow. The check is conservative: what it cannot
// see through (views, copies, calls, dynamic trip counts) keeps the kernel
// whole, which is always correct.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITROWS
#include "passes/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

std::optional<int64_t> constantIndex(Value value) {
  APInt constant;
  if (!matchPattern(value, m_ConstantInt(&constant)))
    return std::nullopt;
  return constant.getSExtValue();
}

/// The trip count of `loop` when it runs from a constant to a constant by
/// a constant step.
std::optional<int64_t> tripCount(scf::ForOp loop) {
  auto lower = constantIndex(loop.getLowerBound());
  auto upper = constantIndex(loop.getUpperBound());
  auto step = constantIndex(loop.getStep());
  if (!lower || !upper || !step || *step <= 0 || *upper < *lower)
    return std::nullopt;
  return (*upper - *lower + *step - 1) / *step;
}

/// The innermost iterations of the nest `loop` heads (loops inside loops
/// multiply, loops side by side add), or nullopt when a trip count is not
/// constant.
std::optional<int64_t> iterations(scf::ForOp loop) {
  std::optional<int64_t> trips = tripCount(loop);
  if (!trips)
    return std::nullopt;
  int64_t inner = 0;
  bool hasInner = false;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto nested = llvm::dyn_cast<scf::ForOp>(op);
    if (!nested)
      continue;
    std::optional<int64_t> count = iterations(nested);
    if (!count)
      return std::nullopt;
    inner += *count;
    hasInner = true;
  }
  return *trips * (hasInner ? inner : 1);
}

/// Whether every access in the nest `loop` heads stays on the row of its
/// induction variable: stores, and loads of memrefs the kernel writes
/// (`written`), index their first dimension by it; nothing else writes.
bool staysOnItsRow(scf::ForOp loop, const DenseSet<Value> &written) {
  Value row = loop.getInductionVar();
  auto onRow = [&](ValueRange indices) { return !indices.empty() && indices[0] == row; };
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (auto store = llvm::dyn_cast<memref::StoreOp>(op))
      return onRow(store.getIndices()) ? WalkResult::advance() : WalkResult::interrupt();
    if (auto load = llvm::dyn_cast<memref::LoadOp>(op))
      return !written.contains(load.getMemRef()) || onRow(load.getIndices())
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    if (llvm::isa<scf::ForOp, scf::YieldOp>(op) || isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether `buffer` is the kernel's own scratch: each call (each thread's
/// range) gets its own.
bool isScratch(Value buffer) {
  return buffer.getDefiningOp<memref::AllocaOp>() || buffer.getDefiningOp<memref::AllocOp>();
}

/// Whether `op`, outside the row loops, may run once per range: it writes
/// nothing (or only the kernel's scratch) and reads nothing another range
/// writes. A load of what the kernel does not write (an optimizer's
/// learning rate), a copy into scratch from scratch or from what the kernel
/// does not write (a reduction's zeros copied for a second reduction; rows
/// outside the range are copied too, and never read).
bool runsPerRange(Operation &op, const DenseSet<Value> &written) {
  if (llvm::isa<memref::AllocaOp, memref::AllocOp, memref::DeallocOp>(op) ||
      isMemoryEffectFree(&op))
    return true;
  if (auto load = llvm::dyn_cast<memref::LoadOp>(op))
    return !written.contains(load.getMemRef());
  if (auto copy = llvm::dyn_cast<memref::CopyOp>(op))
    return isScratch(copy.getTarget()) &&
           (isScratch(copy.getSource()) || !written.contains(copy.getSource()));
  return false;
}

/// The rows of `kernel` when it can be split, else 0.
int64_t splittableRows(func::FuncOp kernel, int64_t minIterations) {
  if (kernel.isExternal() || !kernel.getBody().hasOneBlock())
    return 0;
  DenseSet<Value> written;
  bool hasView = false;
  kernel.walk([&](Operation *op) {
    if (auto store = llvm::dyn_cast<memref::StoreOp>(op))
      written.insert(store.getMemRef());
    // A view aliases its source under another shape: rows would not match.
    if (llvm::isa<ViewLikeOpInterface>(op))
      hasView = true;
  });
  if (hasView)
    return 0;
  // A block of rows of a product, read as if whole: only at its own rows,
  // like what the kernel writes.
  auto blocked = kernel->getAttrOfType<IntegerAttr>(kiln::kRowsRequiredAttrName);
  if (blocked) {
    if (blocked.getInt() < 0 || blocked.getInt() >= kernel.getNumArguments())
      return 0;
    written.insert(kernel.getArgument(blocked.getInt()));
  }
  int64_t rows = 0, total = 0;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (auto loop = llvm::dyn_cast<scf::ForOp>(op)) {
      auto lower = constantIndex(loop.getLowerBound());
      auto step = constantIndex(loop.getStep());
      std::optional<int64_t> trips = tripCount(loop);
      std::optional<int64_t> count = iterations(loop);
      // A loop that carries values from row to row (iter_args) would give
      // each range its own partial result.
      if (!lower || *lower != 0 || !step || *step != 1 || !trips || !count ||
          loop.getNumResults() > 0 || (rows && *trips != rows) ||
          !staysOnItsRow(loop, written))
        return 0;
      rows = *trips;
      total += *count;
      continue;
    }
    if (runsPerRange(op, written))
      continue;
    return 0;
  }
  return rows >= 2 && (blocked || total >= minIterations) ? rows : 0;
}

struct SplitRowsPass : public kiln::impl::KilnSplitRowsBase<SplitRowsPass> {
  using KilnSplitRowsBase::KilnSplitRowsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder builder(&getContext());
    SmallVector<NamedAttribute> recorded;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      int64_t rows = splittableRows(kernel, minIterations);
      kernel->removeAttr(kiln::kRowsRequiredAttrName);
      if (rows == 0)
        continue;
      Location loc = kernel.getLoc();
      unsigned count = kernel.getNumArguments();
      (void)kernel.insertArgument(count, builder.getIndexType(), {}, loc);
      (void)kernel.insertArgument(count + 1, builder.getIndexType(), {}, loc);
      Value begin = kernel.getArgument(count), end = kernel.getArgument(count + 1);
      for (auto loop : kernel.getBody().front().getOps<scf::ForOp>()) {
        loop.getLowerBoundMutable().assign(begin);
        loop.getUpperBoundMutable().assign(end);
      }
      recorded.push_back(builder.getNamedAttr(kernel.getSymName(), builder.getI64IntegerAttr(rows)));
    }
    if (!recorded.empty())
      module->setAttr(kiln::kKernelRowsAttrName, builder.getDictionaryAttr(recorded));
  }
};

} // namespace
