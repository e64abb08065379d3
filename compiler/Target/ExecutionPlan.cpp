//===- ExecutionPlan.cpp - From @forward to steps over planned memory -----===//

#include "compiler/Target/ExecutionPlan.h"

#include "compiler/Target/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {

uint64_t tensorBytes(RankedTensorType type) {
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * std::max(1u, bits / 8);
}

unsigned ExecutionPlan::numKernels() const {
  return llvm::count_if(steps, [](const Step &step) {
    return std::holds_alternative<KernelStep>(step);
  });
}

namespace {

class Planner {
public:
  explicit Planner(ModuleOp module) : module(module) {}

  FailureOr<ExecutionPlan> run();

private:
  int newSlot(Region region, uint64_t bytes) {
    plan.slots.push_back({region, 0, bytes});
    ranges.push_back({kNotPlaced, kNotPlaced});
    return plan.slots.size() - 1;
  }
  int newBuffer(int slot, RankedTensorType type) {
    plan.buffers.push_back({slot, type});
    return plan.buffers.size() - 1;
  }
  /// A buffer whose bytes are a fresh arena slot, alive from step `step`.
  int newArenaBuffer(RankedTensorType type, int step) {
    int buffer = newBuffer(newSlot(Region::Arena, tensorBytes(type)), type);
    ranges[plan.buffers[buffer].slot] = {step, step};
    return buffer;
  }
  /// Keeps the buffer's slot alive through `step`.
  void use(int buffer, int step) {
    LiveRange &range = ranges[plan.buffers[buffer].slot];
    if (range.first != kNotPlaced)
      range.last = std::max(range.last, step);
  }

  LogicalResult planVariables();
  void planFeeds(func::FuncOp forward);
  LogicalResult planOp(Operation *op);
  /// The buffer of `value`, giving a constant a constants slot on first need.
  int bufferOf(Value value);
  void planFetches(func::FuncOp forward);
  void placeRegions();

  static constexpr int kNotPlaced = -2;
  ModuleOp module;
  ExecutionPlan plan;
  SmallVector<LiveRange> ranges; // by slot; arena slots only
  DenseMap<Value, int> buffers;
  llvm::StringMap<int> variableBuffers;
};

LogicalResult Planner::planVariables() {
  for (auto variable : module.getOps<VariableOp>()) {
    RankedTensorType type = variable.getTensorType();
    int buffer = newBuffer(newSlot(Region::State, tensorBytes(type)), type);
    variableBuffers[variable.getSymName()] = buffer;
    plan.variables.push_back({variable, buffer});
  }
  return success();
}

void Planner::planFeeds(func::FuncOp forward) {
  for (BlockArgument arg : forward.getArguments()) {
    auto type = llvm::cast<RankedTensorType>(arg.getType());
    int buffer = newArenaBuffer(type, /*step=*/-1);
    buffers[arg] = buffer;
    auto name = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     KilnDialect::kNameAttrName);
    plan.feeds.push_back(
        {name ? name.str() : "arg" + std::to_string(arg.getArgNumber()), buffer});
  }
}

int Planner::bufferOf(Value value) {
  auto it = buffers.find(value);
  if (it != buffers.end())
    return it->second;
  // Only constants get memory lazily: the ones no kernel could inline.
  auto constant = value.getDefiningOp<ConstantOp>();
  assert(constant && "values are planned before their uses");
  auto type = llvm::cast<RankedTensorType>(constant.getType());
  int slot = newSlot(Region::Constants, tensorBytes(type));
  plan.constantData[slot] = llvm::cast<DenseElementsAttr>(constant.getValue());
  int buffer = newBuffer(slot, type);
  buffers[value] = buffer;
  return buffer;
}

LogicalResult Planner::planOp(Operation *op) {
  if (!llvm::isa_and_nonnull<KilnDialect>(op->getDialect()))
    return op->emitOpError("cannot be compiled for the CPU yet");
  for (Type type : op->getResultTypes())
    if (!llvm::cast<RankedTensorType>(type).hasStaticShape())
      return op->emitOpError("needs static shapes, got ") << type;

  if (auto read = llvm::dyn_cast<ReadOp>(op)) {
    buffers[read.getResult()] = variableBuffers.lookup(read.getVariable());
    return success();
  }
  if (llvm::isa<ConstantOp>(op))
    return success(); // Inlined into kernels, or placed by bufferOf.
  int step = plan.steps.size();
  if (auto reshape = llvm::dyn_cast<ReshapeOp>(op)) {
    // A view: the same bytes, another shape.
    int source = bufferOf(reshape.getOperand());
    buffers[reshape.getResult()] = newBuffer(plan.buffers[source].slot, reshape.getType());
    return success();
  }
  auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  auto matmul = llvm::dyn_cast<MatmulOp>(op);
  if (matmul && resultType.getElementType().isF32()) {
    auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    int64_t rank = resultType.getRank();
    int64_t batch = 1;
    for (int64_t d = 0; d < rank - 2; ++d)
      batch *= resultType.getDimSize(d);
    int64_t k = matmul.getTransposeA() ? lhs.getDimSize(lhs.getRank() - 2)
                                       : lhs.getDimSize(lhs.getRank() - 1);
    GemmStep gemm{bufferOf(matmul.getLhs()),
                  bufferOf(matmul.getRhs()),
                  -1,
                  batch,
                  resultType.getDimSize(rank - 2),
                  resultType.getDimSize(rank - 1),
                  k,
                  matmul.getTransposeA(),
                  matmul.getTransposeB(),
                  rank > 2 && rhs.getRank() == 2};
    use(gemm.a, step);
    use(gemm.b, step);
    gemm.c = newArenaBuffer(resultType, step);
    buffers[matmul.getResult()] = gemm.c;
    plan.steps.push_back(gemm);
    return success();
  }

  KernelStep kernel{op, {}, {}, -1};
  for (Value operand : op->getOperands()) {
    if (operand.getDefiningOp<ConstantOp>() && !buffers.count(operand)) {
      kernel.operandInputs.push_back(-1); // Cloned into the kernel.
      continue;
    }
    int buffer = bufferOf(operand);
    auto *position = llvm::find(kernel.inputs, buffer);
    kernel.operandInputs.push_back(position - kernel.inputs.begin());
    if (position == kernel.inputs.end())
      kernel.inputs.push_back(buffer);
    use(buffer, step);
  }
  kernel.output = newArenaBuffer(resultType, step);
  buffers[op->getResult(0)] = kernel.output;
  plan.steps.push_back(kernel);
  return success();
}

void Planner::planFetches(func::FuncOp forward) {
  auto ret = llvm::cast<func::ReturnOp>(forward.getBody().back().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    int buffer = bufferOf(value);
    use(buffer, std::numeric_limits<int>::max());
    auto name = forward.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    plan.fetches.push_back({name ? name.str() : "result" + std::to_string(i), buffer});
  }
}

void Planner::placeRegions() {
  SmallVector<int> arena;
  uint64_t state = 0, constants = 0;
  for (auto [index, slot] : llvm::enumerate(plan.slots)) {
    switch (slot.region) {
    case Region::Arena:
      arena.push_back(index);
      break;
    case Region::State:
      slot.offset = state;
      state = alignTo(state + slot.bytes);
      break;
    case Region::Constants:
      slot.offset = constants;
      constants = alignTo(constants + slot.bytes);
      break;
    }
  }
  plan.stateBytes = state;
  plan.constantsBytes = constants;
  plan.arenaBytes = assignArenaOffsets(plan.slots, arena, ranges);
}

FailureOr<ExecutionPlan> Planner::run() {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return module.emitError("the module has no @forward function to compile");
  if (!forward.getBody().hasOneBlock())
    return forward.emitOpError("must have one block to be compiled");
  if (failed(planVariables()))
    return failure();
  planFeeds(forward);
  for (Operation &op : forward.getBody().front().without_terminator())
    if (failed(planOp(&op)))
      return failure();
  planFetches(forward);
  placeRegions();
  return std::move(plan);
}

} // namespace

FailureOr<ExecutionPlan> planForward(ModuleOp module) {
  return Planner(module).run();
}

} // namespace kiln
