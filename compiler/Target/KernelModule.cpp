//===- KernelModule.cpp - One function per kernel step --------------------===//

#include "compiler/Target/KernelModule.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {

std::string kernelSymbol(unsigned index) {
  return "kiln_kernel_" + std::to_string(index);
}

namespace {

MemRefType memrefOf(const ExecutionPlan &plan, int buffer) {
  RankedTensorType type = plan.buffers[buffer].type;
  return MemRefType::get(type.getShape(), type.getElementType());
}

void buildKernel(const ExecutionPlan &plan, const KernelStep &step,
                 unsigned index, OpBuilder &builder) {
  Location loc = step.op->getLoc();
  SmallVector<Type> argTypes;
  for (int buffer : step.inputs)
    argTypes.push_back(memrefOf(plan, buffer));
  for (int buffer : step.outputs)
    argTypes.push_back(memrefOf(plan, buffer));
  auto func = builder.create<func::FuncOp>(loc, kernelSymbol(index),
                                           builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);

  // An output written in place over an input (the planner's in-place
  // updates) is materialized into that input's argument: the kernel then
  // reads and writes one pointer, and LLVM's vectorizer needs no runtime
  // alias check between them (which fails when the two arguments are equal,
  // falling back to scalar code). The output's own argument goes unused.
  SmallVector<int> overInput(step.outputs.size(), -1);
  for (auto [i, output] : llvm::enumerate(step.outputs))
    if (auto *found = llvm::find(step.inputs, output); found != step.inputs.end())
      overInput[i] = found - step.inputs.begin();
  SmallVector<Value> tensors;
  for (unsigned i = 0; i < step.inputs.size(); ++i)
    tensors.push_back(b.create<bufferization::ToTensorOp>(
        loc, body->getArgument(i), /*restrict=*/true,
        /*writable=*/llvm::is_contained(overInput, static_cast<int>(i))));
  IRMapping mapping;
  for (auto [operand, position] :
       llvm::zip(step.op->getOperands(), step.operandInputs)) {
    if (position >= 0) {
      mapping.map(operand, tensors[position]);
      continue;
    }
    Operation *constant = b.clone(*operand.getDefiningOp());
    mapping.map(operand, constant->getResult(0));
  }
  Operation *computed = b.clone(*step.op, mapping);
  for (auto [i, result] : llvm::enumerate(computed->getResults())) {
    bool inPlace = overInput[i] >= 0;
    unsigned destination = inPlace ? overInput[i] : step.inputs.size() + i;
    b.create<bufferization::MaterializeInDestinationOp>(
        loc, TypeRange{}, result, body->getArgument(destination),
        /*restrict=*/!inPlace, /*writable=*/true);
  }
  b.create<func::ReturnOp>(loc);
}

} // namespace

OwningOpRef<ModuleOp> buildKernelModule(const ExecutionPlan &plan,
                                        MLIRContext &context) {
  context.loadDialect<bufferization::BufferizationDialect, func::FuncDialect>();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  unsigned index = 0;
  for (const ProgramPlan &program : plan.programs)
    for (const Step &step : program.steps)
      if (const auto *kernel = std::get_if<KernelStep>(&step))
        buildKernel(plan, *kernel, index++, builder);
  return module;
}

} // namespace kiln
