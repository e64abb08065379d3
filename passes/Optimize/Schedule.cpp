//===- Schedule.cpp - The kiln-schedule pass ------------------------------===//
//
// See Passes.td. A list scheduler over the function's top-level ops: the
// dependencies are the operands, plus the order the state needs (a write of
// a variable after every earlier read of it and every user of what such a
// read returned; a read after the write before it; collectives in their
// order; any other op with effects a barrier). Among the ready ops it takes,
// in turn: a collective's start or a parameter-server pull or push
// (communication starts as early as its inputs allow); the op that frees the
// most arena bytes net of what it allocates, when it allocates at most a few
// scalars net (so an optimizer update follows its gradient); else the op
// first in program order.
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Dist/KDistDialect.h"
#include "dialects/Kiln/KilnOps.h"
#include "passes/Optimize/ArenaModel.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace kiln {
#define GEN_PASS_DEF_KILNSCHEDULE
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

bool isCommunication(Operation *op) {
  return llvm::isa_and_nonnull<dist::KDistDialect>(op->getDialect());
}

/// Communication to start as soon as it can: a collective's start, a
/// parameter-server pull or push (consecutive ones also stay together: the
/// runtime sends them as one round).
bool startsCommunication(Operation *op) {
  StringRef name = op->getName().stripDialect();
  return isCommunication(op) && (name.ends_with("_start") || name.starts_with("ps_"));
}

/// The predecessors of each op (indices into `model.ops`).
std::vector<llvm::SmallSetVector<int, 4>> dependencies(const ArenaModel &model) {
  int numOps = model.ops.size();
  std::vector<llvm::SmallSetVector<int, 4>> preds(numOps);
  llvm::DenseMap<StringAttr, int> lastWrite;
  llvm::DenseMap<StringAttr, SmallVector<int>> readers; // Since the last write.
  int lastCommunication = -1, lastBarrier = -1;
  SmallVector<int> sinceBarrier;
  for (int i = 0; i < numOps; ++i) {
    const ArenaModel::OpInfo &info = model.ops[i];
    Operation *op = info.op;
    for (int operand : info.operands)
      if (operand >= 0 && model.values[operand].def >= 0)
        preds[i].insert(model.values[operand].def);
    if (lastBarrier >= 0)
      preds[i].insert(lastBarrier);
    SmallVector<StringAttr> written;
    if (llvm::isa<ReadOp>(op)) {
      if (auto found = lastWrite.find(model.values[info.results.front()].stateVariable);
          found != lastWrite.end())
        preds[i].insert(found->second);
    } else if (auto assign = llvm::dyn_cast<AssignOp>(op)) {
      written.push_back(assign.getVariableAttr().getAttr());
    } else if (llvm::isa<SparseApplyOp>(op)) {
      // It updates its param and slots in place: it writes what they read.
      for (int operand : info.operands)
        if (operand >= 0 && model.values[operand].stateVariable)
          written.push_back(model.values[operand].stateVariable);
    }
    for (int operand : info.operands)
      if (operand >= 0 && model.values[operand].stateVariable)
        readers[model.values[operand].stateVariable].push_back(i);
    // The op computing an assigned value may write it into the variable in
    // place (the execution plan does that for an elementwise update read by
    // nothing else): it too comes after the readers of the old value that
    // came before it. Every edge goes forward in program order: no cycles.
    int computing = -1;
    if (auto assign = llvm::dyn_cast<AssignOp>(op))
      if (int value = info.operands.front(); value >= 0 && assign.getValue().hasOneUse())
        computing = model.values[value].def;
    for (StringAttr variable : written) {
      for (int reader : readers[variable]) {
        if (reader != i)
          preds[i].insert(reader);
        if (computing >= 0 && reader < computing)
          preds[computing].insert(reader);
      }
      readers[variable].clear();
      if (auto found = lastWrite.find(variable); found != lastWrite.end())
        preds[i].insert(found->second);
      lastWrite[variable] = i;
    }
    if (isCommunication(op)) {
      if (lastCommunication >= 0)
        preds[i].insert(lastCommunication);
      lastCommunication = i;
    }
    // Kiln ops have value semantics but for reads and assigns (not every
    // one declares itself Pure); an unknown op with effects orders all.
    bool barrier = i == numOps - 1 || (!isCommunication(op) &&
                                       !llvm::isa_and_nonnull<KilnDialect>(op->getDialect()) &&
                                       !isMemoryEffectFree(op));
    if (barrier) {
      for (int earlier : sinceBarrier)
        preds[i].insert(earlier);
      sinceBarrier.clear();
      lastBarrier = i;
    } else {
      sinceBarrier.push_back(i);
    }
  }
  return preds;
}

/// Net allocations this small run as soon as they can: they are scalars of
/// the step (a learning rate, a step count, a norm) whose consumers would
/// otherwise wait, such as every optimizer update on the step count.
constexpr int64_t kSmallBytes = 256;

/// The schedule: op indices in the order to run them.
std::vector<int> schedule(const ArenaModel &model) {
  int numOps = model.ops.size();
  std::vector<llvm::SmallSetVector<int, 4>> preds = dependencies(model);
  std::vector<SmallVector<int>> succs(numOps);
  std::vector<int> waiting(numOps);
  for (int i = 0; i < numOps; ++i) {
    waiting[i] = preds[i].size();
    for (int pred : preds[i])
      succs[pred].push_back(i);
  }
  // Ops still to run that read each root (or a view of it).
  std::vector<int> readersLeft(model.values.size(), 0);
  std::vector<SmallVector<int>> rootsRead(numOps);
  for (int i = 0; i < numOps; ++i) {
    if (model.ops[i].view)
      continue;
    for (int operand : model.ops[i].operands)
      if (operand >= 0 && model.values[operand].root >= 0 &&
          !llvm::is_contained(rootsRead[i], model.values[operand].root))
        rootsRead[i].push_back(model.values[operand].root);
    for (int root : rootsRead[i])
      ++readersLeft[root];
  }
  auto netFreed = [&](int i) {
    int64_t freed = 0;
    for (int root : rootsRead[i])
      if (readersLeft[root] == 1)
        freed += model.values[root].bytes;
    if (!model.ops[i].view)
      for (int result : model.ops[i].results)
        if (result >= 0 && model.values[result].root == result)
          freed -= model.values[result].bytes;
    return freed;
  };
  std::vector<bool> starts(numOps);
  for (int i = 0; i < numOps; ++i)
    starts[i] = startsCommunication(model.ops[i].op);
  std::set<int> ready, readyStarts;
  auto makeReady = [&](int i) {
    ready.insert(i);
    if (starts[i])
      readyStarts.insert(i);
  };
  for (int i = 0; i < numOps; ++i)
    if (!waiting[i])
      makeReady(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int pick = readyStarts.empty() ? -1 : *readyStarts.begin();
    if (pick < 0) {
      int64_t best = -kSmallBytes - 1;
      for (int i : ready)
        if (int64_t freed = netFreed(i); freed >= -kSmallBytes && freed > best) {
          best = freed;
          pick = i;
        }
    }
    if (pick < 0)
      pick = *ready.begin();
    ready.erase(pick);
    readyStarts.erase(pick);
    order.push_back(pick);
    for (int root : rootsRead[pick])
      --readersLeft[root];
    for (int succ : succs[pick])
      if (--waiting[succ] == 0)
        makeReady(succ);
  }
  assert(int(order.size()) == numOps && "the dependencies have a cycle");
  return order;
}

class KilnSchedulePass : public kiln::impl::KilnScheduleBase<KilnSchedulePass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getSymName() != "train_step" && func.getSymName() != "accumulate_step")
      return;
    Block &body = func.getBody().front();
    ArenaModel model = ArenaModel::build(body);
    Operation *terminator = body.getTerminator();
    for (int i : schedule(model))
      if (model.ops[i].op != terminator)
        model.ops[i].op->moveBefore(terminator);
  }
};

} // namespace
