//===- RematPlan.cpp - Which activations to recompute, on a model ---------===//

#include "passes/Optimize/RematPlan.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <climits>
#include <cmath>

using namespace mlir;

namespace kiln {

namespace {

/// The simulation of one drop set (see RematPlan.h).
class Simulation {
public:
  Simulation(const ArenaModel &model, const llvm::DenseSet<int> &dropped)
      : model(model), dropped(dropped), last(model.values.size(), INT_MIN),
        cloneFirst(model.values.size(), INT_MAX), cloneLast(model.values.size(), INT_MIN),
        cloned(model.values.size(), false) {}

  RematOutcome run();

private:
  /// Whether the op at `pos` reads `value` from a clone; keeps what it
  /// reads alive through `pos`.
  bool need(int value, int pos);
  void ensureClone(int value, int pos);
  /// Whether a clone of `value`'s op at `pos` reads no variable written
  /// before `pos`.
  bool canCloneAt(int value, int pos) const {
    if (cloned[value])
      return true;
    for (int operand : model.ops[model.values[value].def].operands)
      if (operand >= 0 && model.values[operand].stateWrite <= pos)
        return false;
    return true;
  }
  void touchClone(int root, int pos) {
    cloneFirst[root] = std::min(cloneFirst[root], pos);
    cloneLast[root] = std::max(cloneLast[root], pos);
  }

  const ArenaModel &model;
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
  // (the chain back to what is still alive is recomputed too), unless the
  // clone would read a variable already updated: then the original stays.
  if (((dropped.count(root) && pos > model.gaps[root].split) ||
       (model.cloneable[root] && pos > model.lastUse[root] + 1)) &&
      canCloneAt(value, pos)) {
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
  const ArenaModel::OpInfo &op = model.ops[model.values[value].def];
  RematOutcome::Clone clone{model.values[value].def, pos, {}};
  for (int operand : op.operands)
    clone.cloneOperand.push_back(need(operand, pos));
  outcome.clones.push_back(std::move(clone));
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
    const ArenaModel::OpInfo &op = model.ops[i];
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

RematOutcome simulateRemat(const ArenaModel &model, const llvm::DenseSet<int> &dropped) {
  return Simulation(model, dropped).run();
}

llvm::SmallVector<int> rematCandidates(const ArenaModel &model, const RematOutcome &outcome,
                                       const llvm::DenseSet<int> &dropped) {
  int at = outcome.peakAt - 1;
  llvm::SmallVector<int> candidates;
  for (auto [id, gap] : llvm::enumerate(model.gaps))
    if (gap.split >= 0 && gap.split < at && at < gap.resume && !dropped.count(id))
      candidates.push_back(id);
  return candidates;
}

llvm::DenseSet<int> chooseGreedy(const ArenaModel &model, uint64_t target) {
  constexpr size_t kTriedPerRound = 12;
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

namespace {

/// The candidates where the unchanged function peaks, in program order.
llvm::SmallVector<int> candidatesInOrder(const ArenaModel &model) {
  llvm::SmallVector<int> candidates = rematCandidates(model, simulateRemat(model, {}), {});
  llvm::stable_sort(candidates, [&](int a, int b) {
    return model.values[a].def < model.values[b].def;
  });
  return candidates;
}

/// Keeps every `segment`-th of `candidates`, drops the others.
llvm::DenseSet<int> segments(llvm::ArrayRef<int> candidates, size_t segment) {
  llvm::DenseSet<int> dropped;
  for (size_t j = 0; j < candidates.size(); ++j)
    if ((j + 1) % segment != 0)
      dropped.insert(candidates[j]);
  return dropped;
}

} // namespace

llvm::DenseSet<int> chooseSqrt(const ArenaModel &model) {
  llvm::SmallVector<int> candidates = candidatesInOrder(model);
  return segments(candidates,
                  std::max<size_t>(1, size_t(std::ceil(std::sqrt(double(candidates.size()))))));
}

llvm::DenseSet<int> chooseForTarget(const ArenaModel &model, uint64_t target) {
  llvm::SmallVector<llvm::DenseSet<int>> choices{chooseGreedy(model, target)};
  llvm::SmallVector<int> candidates = candidatesInOrder(model);
  // Segment lengths 2, 3, 4, 5, 6, 7, 8, 10, 12, ... (a quarter more each
  // time: the peak changes little between neighbours) and sqrt(n).
  size_t sqrtN = size_t(std::ceil(std::sqrt(double(candidates.size()))));
  for (size_t segment = 2; segment <= candidates.size();
       segment = std::max(segment + 1, segment * 5 / 4))
    if (segment != sqrtN)
      choices.push_back(segments(candidates, segment));
  if (sqrtN >= 2)
    choices.push_back(segments(candidates, sqrtN));
  // The cheapest that fits; else the lowest peak (then the cheapest).
  std::optional<size_t> best;
  RematOutcome bestOutcome;
  for (size_t i = 0; i < choices.size(); ++i) {
    RematOutcome outcome = simulateRemat(model, choices[i]);
    bool fits = outcome.peak <= target;
    bool better =
        !best ||
        (fits ? bestOutcome.peak > target || outcome.extraCost < bestOutcome.extraCost
              : bestOutcome.peak > target &&
                    (outcome.peak < bestOutcome.peak ||
                     (outcome.peak == bestOutcome.peak &&
                      outcome.extraCost < bestOutcome.extraCost)));
    if (better) {
      best = i;
      bestOutcome = std::move(outcome);
    }
  }
  return choices[*best];
}

} // namespace kiln
