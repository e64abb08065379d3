//===- RematPlan.cpp - Which activations to recompute, on a model ---------===//

#include "passes/Optimize/RematPlan.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/OpCost.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <climits>
#include <cmath>

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
/// are available: a pure kiln op that is neither state nor a constant.
bool isRecomputable(Operation *op) {
  return llvm::isa<KilnDialect>(op->getDialect()) &&
         !llvm::isa<ReadOp, ConstantOp, AssignOp, SparseApplyOp>(op) &&
         isMemoryEffectFree(op);
}

/// The simulation of one drop set (see RematPlan.h).
class Simulation {
public:
  Simulation(const RematModel &model, const llvm::DenseSet<int> &dropped)
      : model(model), dropped(dropped), last(model.values.size(), INT_MIN),
        cloneFirst(model.values.size(), INT_MAX), cloneLast(model.values.size(), INT_MIN),
        cloned(model.values.size(), false) {}

  RematOutcome run();

private:
  /// Whether the op at `pos` reads `value` from a clone; keeps what it
  /// reads alive through `pos`.
  bool need(int value, int pos);
  void ensureClone(int value, int pos);
  void touchClone(int root, int pos) {
    cloneFirst[root] = std::min(cloneFirst[root], pos);
    cloneLast[root] = std::max(cloneLast[root], pos);
  }

  const RematModel &model;
  const llvm::DenseSet<int> &dropped;
  std::vector<int> last, cloneFirst, cloneLast;
  std::vector<bool> cloned;
  RematOutcome outcome;
};

bool Simulation::need(int value, int pos) {
  if (value < 0)
    return false;
  int root = model.values[value].root;
  if (root < 0)
    return false;
  // A dropped value after its gap, or one dead by now that a clone needs
  // (the chain back to what is still alive is recomputed too).
  if ((dropped.count(root) && pos > model.gaps[root].split) ||
      (model.cloneable[root] && pos > model.lastUse[root] + 1)) {
    ensureClone(value, pos);
    touchClone(root, pos);
    return true;
  }
  last[root] = std::max(last[root], pos);
  return false;
}

void Simulation::ensureClone(int value, int pos) {
  if (cloned[value])
    return;
  const RematModel::OpInfo &op = model.ops[model.values[value].def];
  RematOutcome::Clone clone{model.values[value].def, pos, {}};
  for (int operand : op.operands)
    clone.cloneOperand.push_back(need(operand, pos));
  outcome.clones.push_back(std::move(clone));
  outcome.extraFlops += op.flops;
  outcome.extraCost += op.cost;
  for (int result : op.results) {
    if (result < 0)
      continue;
    cloned[result] = true;
    if (int root = model.values[result].root; root >= 0)
      touchClone(root, pos);
  }
}

RematOutcome Simulation::run() {
  int numOps = model.ops.size();
  for (auto [index, info] : llvm::enumerate(model.values))
    if (info.root == int(index))
      last[index] = info.def;
  for (int i = 0; i < numOps; ++i) {
    const RematModel::OpInfo &op = model.ops[i];
    if (op.view)
      continue;
    for (auto [k, operand] : llvm::enumerate(op.operands))
      if (need(operand, i))
        outcome.redirects.push_back({i, unsigned(k)});
  }
  // live[p + 1]: bytes alive at op p; returned values stay to the end.
  std::vector<int64_t> delta(numOps + 2, 0);
  auto add = [&](int first, int lastOp, uint64_t bytes) {
    delta[first + 1] += bytes;
    delta[lastOp + 2] -= bytes;
  };
  for (auto [index, info] : llvm::enumerate(model.values)) {
    if (info.root != int(index) || info.bytes == 0)
      continue;
    add(info.def, std::max(last[index], info.def), info.bytes);
    if (cloneLast[index] != INT_MIN)
      add(cloneFirst[index], cloneLast[index], info.bytes);
  }
  outcome.live.assign(numOps + 1, 0);
  int64_t running = 0;
  for (int p = 0; p <= numOps; ++p) {
    running += delta[p];
    outcome.live[p] = running;
    if (uint64_t(running) > outcome.peak) {
      outcome.peak = running;
      outcome.peakAt = p;
    }
  }
  return std::move(outcome);
}

} // namespace

RematModel RematModel::build(Block &block) {
  RematModel model;
  llvm::DenseMap<Value, int> index;
  auto addValue = [&](Value value, int def, int root, uint64_t bytes, bool recomputable) {
    int id = model.values.size();
    model.values.push_back({value, def, root == -2 ? id : root, bytes, recomputable, {}});
    index[value] = id;
    return id;
  };
  for (BlockArgument arg : block.getArguments())
    addValue(arg, -1, arenaBytes(arg.getType()) ? -2 : -1, arenaBytes(arg.getType()), false);
  for (Operation &op : block) {
    int position = model.ops.size();
    RematModel::OpInfo info{&op, {}, {}, estimateFlops(&op), 0,
                            llvm::isa<ReshapeOp, StopGradientOp>(op)};
    info.cost = info.flops;
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
  // A value only assigned to variables is written in place: no arena bytes.
  for (RematModel::ValueInfo &info : model.values)
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

RematOutcome simulateRemat(const RematModel &model, const llvm::DenseSet<int> &dropped) {
  return Simulation(model, dropped).run();
}

llvm::SmallVector<int> rematCandidates(const RematModel &model, const RematOutcome &outcome,
                                       const llvm::DenseSet<int> &dropped) {
  int at = outcome.peakAt - 1;
  llvm::SmallVector<int> candidates;
  for (auto [id, gap] : llvm::enumerate(model.gaps))
    if (gap.split >= 0 && gap.split < at && at < gap.resume && !dropped.count(id))
      candidates.push_back(id);
  return candidates;
}

llvm::DenseSet<int> chooseGreedy(const RematModel &model, uint64_t target) {
  constexpr size_t kTriedPerRound = 48;
  llvm::DenseSet<int> dropped, best;
  RematOutcome current = simulateRemat(model, dropped);
  uint64_t bestPeak = current.peak;
  while (current.peak > target) {
    llvm::SmallVector<int> candidates = rematCandidates(model, current, dropped);
    // Try the most bytes per cost of their own op first.
    auto ratio = [&](int id) {
      return double(model.values[id].bytes) / double(model.ops[model.values[id].def].cost + 1);
    };
    llvm::stable_sort(candidates, [&](int a, int b) { return ratio(a) > ratio(b); });
    if (candidates.size() > kTriedPerRound)
      candidates.resize(kTriedPerRound);
    int pick = -1;
    double pickScore = 0;
    int64_t pickBenefit = 0;
    std::optional<RematOutcome> pickOutcome;
    for (int candidate : candidates) {
      dropped.insert(candidate);
      RematOutcome tried = simulateRemat(model, dropped);
      dropped.erase(candidate);
      int64_t benefit =
          int64_t(current.live[current.peakAt]) - int64_t(tried.live[current.peakAt]);
      if (benefit <= 0)
        continue;
      double score = double(benefit) / double(tried.extraCost - current.extraCost + 1);
      if (pick < 0 || score > pickScore || (score == pickScore && benefit > pickBenefit)) {
        pick = candidate;
        pickScore = score;
        pickBenefit = benefit;
        pickOutcome = std::move(tried);
      }
    }
    if (pick < 0)
      break;
    dropped.insert(pick);
    current = std::move(*pickOutcome);
    if (current.peak < bestPeak) {
      bestPeak = current.peak;
      best = dropped;
    }
  }
  return best;
}

llvm::DenseSet<int> chooseSqrt(const RematModel &model) {
  llvm::SmallVector<int> candidates = rematCandidates(model, simulateRemat(model, {}), {});
  llvm::stable_sort(candidates, [&](int a, int b) {
    return model.values[a].def < model.values[b].def;
  });
  size_t segment = std::max<size_t>(1, size_t(std::ceil(std::sqrt(double(candidates.size())))));
  llvm::DenseSet<int> dropped;
  for (size_t j = 0; j < candidates.size(); ++j)
    if ((j + 1) % segment != 0)
      dropped.insert(candidates[j]);
  return dropped;
}

} // namespace kiln
