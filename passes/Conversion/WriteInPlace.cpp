//===- WriteInPlace.cpp - The kiln-write-in-place pass --------------------===//
//
// See Passes.td. Runs on kernel functions after convert-kiln-to-linalg and
// before eliminate-empty-tensors and one-shot bufferization.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln {
#define GEN_PASS_DEF_KILNWRITEINPLACE
#include "passes/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The input tensor `result` may be written over, or null: the generic's
/// operand that reads `destination` through a to_tensor, at the same
/// (identity) index as the result is written.
Value overwritableInput(linalg::GenericOp generic, OpResult result,
                        Value destination) {
  if (generic.getNumLoops() != generic.getNumParallelLoops())
    return nullptr;
  OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
  if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
      !generic.getIndexingMapMatchingResult(result).isIdentity() ||
      !generic.getMatchingBlockArgument(init).use_empty())
    return nullptr;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto toTensor = input->get().getDefiningOp<bufferization::ToTensorOp>();
    if (toTensor && toTensor.getMemref() == destination &&
        toTensor.getWritable() && input->get().getType() == result.getType() &&
        generic.getMatchingIndexingMap(input).isIdentity())
      return input->get();
  }
  return nullptr;
}

struct WriteInPlacePass
    : public kiln::impl::KilnWriteInPlaceBase<WriteInPlacePass> {
  void runOnOperation() override {
    getOperation().walk([](bufferization::MaterializeInDestinationOp materialize) {
      auto result = llvm::dyn_cast<OpResult>(materialize.getSource());
      auto generic =
          result ? llvm::dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
      if (!generic || !llvm::isa<BaseMemRefType>(materialize.getDest().getType()))
        return;
      if (Value input = overwritableInput(generic, result, materialize.getDest()))
        generic.getDpsInitOperand(result.getResultNumber())->set(input);
    });
  }
};

} // namespace
