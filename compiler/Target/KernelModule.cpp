//===- KernelModule.cpp - One function per kernel step --------------------===//

#include "compiler/Target/KernelModule.h"

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

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

func::FuncOp buildKernel(const ExecutionPlan &plan, const KernelStep &step,
                         OpBuilder &builder) {
  Location loc = step.op->getLoc();
  SmallVector<Type> argTypes;
  for (int buffer : step.inputs)
    argTypes.push_back(memrefOf(plan, buffer));
  if (step.blockedInput >= 0) {
    // One block's buffer, addressed as the whole product (read by rows).
    auto operand = llvm::find(step.operandInputs, step.blockedInput);
    auto type = llvm::cast<RankedTensorType>(
        step.op->getOperand(operand - step.operandInputs.begin()).getType());
    argTypes[step.blockedInput] = MemRefType::get(type.getShape(), type.getElementType());
  }
  for (int buffer : step.outputs)
    argTypes.push_back(memrefOf(plan, buffer));
  auto func = builder.create<func::FuncOp>(loc, "kernel",
                                           builder.getFunctionType(argTypes, {}));
  if (step.blockedInput >= 0) // Rows needed, and only its own of that argument read.
    func->setAttr(kRowsRequiredAttrName, builder.getI64IntegerAttr(step.blockedInput));
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
  // A recomputed op is the same code as the original: same kernel.
  computed->removeAttr(KilnDialect::kRecomputedAttrName);
  for (auto [i, result] : llvm::enumerate(computed->getResults())) {
    bool inPlace = overInput[i] >= 0;
    unsigned destination = inPlace ? overInput[i] : step.inputs.size() + i;
    b.create<bufferization::MaterializeInDestinationOp>(
        loc, TypeRange{}, result, body->getArgument(destination),
        /*restrict=*/!inPlace, /*writable=*/true);
  }
  b.create<func::ReturnOp>(loc);
  return func;
}

/// The text of `kernel` (still named "kernel"): equal for two kernels that
/// compile to the same code. Locations are not printed.
std::string fingerprint(func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().printGenericOpForm());
  return text;
}

} // namespace

OwningOpRef<ModuleOp> buildKernelModule(ExecutionPlan &plan, MLIRContext &context) {
  context.loadDialect<bufferization::BufferizationDialect, func::FuncDialect>();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  llvm::StringMap<int> built; // Fingerprint → function index.
  plan.kernelFunctions = 0;
  for (ProgramPlan &program : plan.programs)
    for (Step &step : program.steps) {
      auto *kernel = std::get_if<KernelStep>(&step);
      if (!kernel)
        continue;
      func::FuncOp func = buildKernel(plan, *kernel, builder);
      auto [found, added] = built.try_emplace(fingerprint(func), plan.kernelFunctions);
      kernel->kernel = found->second;
      if (!added) {
        func.erase();
        continue;
      }
      func.setSymName(kernelSymbol(plan.kernelFunctions++));
    }
  return module;
}

} // namespace kiln
