//===- ForwardFunction.cpp - The @forward function of an import -----------===//

#include "compiler/Import/ForwardFunction.h"

#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnOps.h"

using namespace mlir;

namespace kiln {

func::FuncOp createForward(OpBuilder &builder, ModuleOp module, Location loc,
                           TypeRange argTypes, ArrayRef<std::string> argNames) {
  builder.setInsertionPointToEnd(module.getBody());
  auto forward = builder.create<func::FuncOp>(
      loc, kForwardName, builder.getFunctionType(argTypes, {}));
  Block *entry = forward.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames))
    forward.setArgAttr(i, KilnDialect::kNameAttrName,
                       builder.getStringAttr(name));
  builder.setInsertionPointToEnd(entry);
  return forward;
}

void returnFromForward(OpBuilder &builder, func::FuncOp forward, Location loc,
                       ValueRange results, ArrayRef<std::string> resultNames) {
  builder.create<func::ReturnOp>(loc, results);
  forward.setFunctionType(
      builder.getFunctionType(forward.getArgumentTypes(), results.getTypes()));
  for (auto [i, name] : llvm::enumerate(resultNames))
    forward.setResultAttr(i, KilnDialect::kNameAttrName,
                          builder.getStringAttr(name));
}

OpBuilder ForwardPrologue::atEnd() {
  OpBuilder builder(forward.getContext());
  if (last)
    builder.setInsertionPointAfter(last);
  else
    builder.setInsertionPointToStart(&forward.getBody().front());
  return builder;
}

Value ForwardPrologue::readVariable(Location loc, StringRef name,
                                    DenseElementsAttr value, bool trainable) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  OpBuilder moduleBuilder(forward);
  auto init = InitializerAttr::get(forward.getContext(), InitKind::constant,
                                   llvm::APFloat(0.0), llvm::APFloat(0.0),
                                   /*seed=*/0, value);
  auto variable = moduleBuilder.create<VariableOp>(loc, name, type, init);
  if (!trainable)
    variable.setTrainable(false);
  last = atEnd().create<ReadOp>(loc, type, name);
  return last->getResult(0);
}

Value ForwardPrologue::constant(Location loc, DenseElementsAttr value) {
  last = atEnd().create<ConstantOp>(loc, value);
  return last->getResult(0);
}

} // namespace kiln
