//===- SplitWideConcats.cpp - Concats of many inputs made a tree ----------===//
//
// kiln-split-wide-concats (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/KilnOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITWIDECONCATS
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The most inputs one concat keeps.
constexpr size_t kMaxConcatInputs = 32;

/// `inputs` concatenated along `axis` by concats of at most
/// kMaxConcatInputs inputs each, nested as deep as needed.
Value concatTree(OpBuilder &builder, Location loc, SmallVector<Value> inputs, int64_t axis) {
  while (inputs.size() > kMaxConcatInputs) {
    SmallVector<Value> groups;
    for (size_t first = 0; first < inputs.size(); first += kMaxConcatInputs) {
      ArrayRef<Value> group =
          ArrayRef<Value>(inputs).slice(first, std::min(kMaxConcatInputs, inputs.size() - first));
      if (group.size() == 1) {
        groups.push_back(group.front());
        continue;
      }
      groups.push_back(builder.create<ConcatOp>(loc, ValueRange(group), axis));
    }
    inputs = std::move(groups);
  }
  return builder.create<ConcatOp>(loc, ValueRange(inputs), axis);
}

struct SplitWideConcatsPass
    : public kiln::impl::KilnSplitWideConcatsBase<SplitWideConcatsPass> {
  void runOnOperation() override {
    SmallVector<ConcatOp> wide;
    getOperation().walk([&](ConcatOp concat) {
      if (concat.getInputs().size() > kMaxConcatInputs)
        wide.push_back(concat);
    });
    for (ConcatOp concat : wide) {
      OpBuilder builder(concat);
      Value tree = concatTree(builder, concat.getLoc(), SmallVector<Value>(concat.getInputs()),
                              concat.getAxis());
      concat.replaceAllUsesWith(tree);
      concat.erase();
    }
  }
};

} // namespace
