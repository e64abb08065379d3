//===- ArenaModel.cpp - A function's arena, as the plan will see it -------===//

#include "passes/Optimize/ArenaModel.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/OpCost.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <climits>

using namespace mlir;

namespace kiln {

namespace {

constexpr uint64_t kAlignment = 64; // The execution plan's slot alignment.

uint64_t arenaBytes(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  uint64_t bytes = tensor.getNumElements() *
                   std::max<uint64_t>(1, (tensor.getElementTypeBitWidth() + 7) / 8);
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// Whether a clone of `op` computes the same values anywhere its operands
/// are available: a kiln op other than state and constants (kiln ops have
/// value semantics; not every one declares itself Pure).
bool isRecomputable(Operation *op) {
  return llvm::isa_and_nonnull<KilnDialect>(op->getDialect()) &&
         !llvm::isa<ReadOp, ConstantOp, AssignOp, SparseApplyOp>(op);
}

/// Sets `stateVariable` and `stateWrite` of every value that views a
/// variable's state: the first op writing that variable, in place or by
/// kiln.assign (the op computing an assigned value read by nothing else may
/// write it in place; kiln.sparse_apply updates its operands' variables).
void markStateWrites(ArenaModel &model) {
  llvm::DenseMap<int, StringAttr> variableOf; // State views, by value index.
  llvm::DenseMap<StringAttr, int> firstWrite;
  auto write = [&](StringAttr variable, int position) {
    auto [it, added] = firstWrite.try_emplace(variable, position);
    if (!added)
      it->second = std::min(it->second, position);
  };
  for (auto [position, info] : llvm::enumerate(model.ops)) {
    Operation *op = info.op;
    if (auto read = llvm::dyn_cast<ReadOp>(op))
      variableOf[info.results.front()] = read.getVariableAttr().getAttr();
    if (info.view && !info.operands.empty() && variableOf.count(info.operands.front()))
      variableOf[info.results.front()] = variableOf.lookup(info.operands.front());
    if (auto assign = llvm::dyn_cast<AssignOp>(op)) {
      int at = position;
      if (int value = info.operands.front();
          value >= 0 && assign.getValue().hasOneUse() && model.values[value].def >= 0)
        at = std::min(at, model.values[value].def);
      write(assign.getVariableAttr().getAttr(), at);
    }
    if (llvm::isa<SparseApplyOp>(op))
      for (int operand : info.operands)
        if (variableOf.count(operand))
          write(variableOf.lookup(operand), position);
  }
  for (auto [id, variable] : variableOf) {
    model.values[id].stateVariable = variable;
    if (auto found = firstWrite.find(variable); found != firstWrite.end())
      model.values[id].stateWrite = found->second;
  }
}

} // namespace

ArenaModel ArenaModel::build(Block &block) {
  ArenaModel model;
  llvm::DenseMap<Value, int> index;
  auto addValue = [&](Value value, int def, int root, uint64_t bytes, bool recomputable) {
    int id = model.values.size();
    model.values.push_back({value, def, root == -2 ? id : root, bytes, recomputable, {}, {}, INT_MAX});
    index[value] = id;
    return id;
  };
  for (BlockArgument arg : block.getArguments())
    addValue(arg, -1, arenaBytes(arg.getType()) ? -2 : -1, arenaBytes(arg.getType()), false);
  for (Operation &op : block) {
    int position = model.ops.size();
    ArenaModel::OpInfo info{&op, {}, {}, estimateFlops(&op),
                            llvm::isa<ReshapeOp, StopGradientOp>(op)};
    if (!info.view)
      for (Type type : op.getResultTypes())
        if (auto tensor = llvm::dyn_cast<RankedTensorType>(type); tensor && tensor.hasStaticShape())
          info.cost += tensor.getNumElements();
    for (Value operand : op.getOperands()) {
      auto found = index.find(operand);
      info.operands.push_back(found == index.end() ? -1 : found->second);
    }
    bool recomputable = isRecomputable(&op);
    for (Value result : op.getResults()) {
      uint64_t bytes = arenaBytes(result.getType());
      if (info.view) {
        int source = info.operands.empty() ? -1 : info.operands.front();
        int root = source < 0 ? -1 : model.values[source].root;
        info.results.push_back(addValue(result, position, root, 0, recomputable));
      } else if (llvm::isa<ReadOp, ConstantOp>(op) || bytes == 0) {
        info.results.push_back(addValue(result, position, -1, 0, false));
      } else {
        info.results.push_back(addValue(result, position, -2, bytes, recomputable));
      }
    }
    if (!info.view)
      for (int operand : info.operands)
        if (operand >= 0)
          model.values[operand].uses.push_back(position);
    model.ops.push_back(std::move(info));
  }
  markStateWrites(model);
  // A value only assigned to variables is written in place: no arena bytes.
  for (ArenaModel::ValueInfo &info : model.values)
    if (info.root >= 0 && !info.value.use_empty() &&
        llvm::all_of(info.value.getUsers(), [](Operation *user) { return llvm::isa<AssignOp>(user); }))
      info.bytes = 0;

  // The widest gap between uses of each root with its views.
  int numOps = model.ops.size();
  llvm::DenseMap<int, llvm::SmallVector<int>> members;
  for (auto [id, info] : llvm::enumerate(model.values))
    if (info.root >= 0)
      members[info.root].push_back(id);
  model.gaps.assign(model.values.size(), {});
  model.lastUse.assign(model.values.size(), -1);
  model.cloneable.assign(model.values.size(), false);
  for (auto &[root, group] : members) {
    const ValueInfo &rootInfo = model.values[root];
    llvm::SmallVector<int> positions{rootInfo.def};
    for (int id : group)
      positions.append(model.values[id].uses);
    llvm::sort(positions);
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    model.lastUse[root] = positions.back();
    if (rootInfo.bytes == 0 || rootInfo.def < 0 ||
        !llvm::all_of(group, [&](int id) { return model.values[id].recomputable; }))
      continue;
    model.cloneable[root] = true;
    if (positions.back() == numOps - 1)
      continue; // Returned: it must be there at the end anyway.
    Gap widest;
    for (size_t j = 1; j + 1 < positions.size(); ++j)
      if (positions[j + 1] - positions[j] > widest.resume - widest.split)
        widest = {positions[j], positions[j + 1]};
    if (widest.resume - widest.split >= 2)
      model.gaps[root] = widest;
  }
  return model;
}

} // namespace kiln
