//===- KilnFusionOps.cpp - Verifier of kiln.fusion ------------------------===//

#include "dialects/Kiln/KilnOps.h"

using namespace mlir;
using namespace kiln;

YieldOp FusionOp::getYield() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("expects one block argument per input (")
           << getInputs().size() << "), got " << body.getNumArguments();
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError("expects block argument ")
             << i << " to have its input's type " << input.getType() << ", got "
             << arg.getType();
  if (body.empty() || !llvm::isa<YieldOp>(body.back()))
    return emitOpError("expects its body to end in kiln.yield");
  YieldOp yield = getYield();
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("expects kiln.yield of its result types, got ")
           << yield.getValues().getTypes().size() << " values of other types";
  for (Operation &op : body.without_terminator())
    if (!llvm::isa<KilnDialect>(op.getDialect()))
      return op.emitOpError("cannot be in a kiln.fusion: only kiln ops can");
  return success();
}
