//===- FuseElementwise.cpp - The kiln-fuse-elementwise pass ---------------===//
//
// See Passes.td. Groups grow in program order: an op joins the groups of
// its operands' producers when they compute its shape and nothing outside
// them reads their values before the op. That one rule keeps each group
// convex (a path out of the group and back in would pass through such a
// reader) and lets the fusion take the place of the group's last op, where
// every operand is defined and every outside reader comes later.
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "passes/Optimize/Fusible.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISE
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

bool kiln::isFusible(Operation *op) {
  if (op->getNumResults() != 1 || !llvm::isa<KilnDialect>(op->getDialect()))
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  if (auto oneHot = llvm::dyn_cast<OneHotOp>(op))
    return !oneHot.getIndices().getDefiningOp<ConstantOp>();
  if (llvm::isa<TransposeOp>(op))
    return true; // Reads an input of the group through its permutation.
  return op->hasTrait<OpTrait::Elementwise>() || llvm::isa<BroadcastOp, StopGradientOp>(op);
}

namespace {

/// A reduction that can end a group: its elements computed by the group,
/// only its result leaving it.
bool isClosingReduction(Operation *op) {
  if (!llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op))
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape();
}

/// A splat constant the body can hold as a scalar.
bool isSplatConstant(Value value) {
  DenseElementsAttr attr;
  return value.getDefiningOp<ConstantOp>() && matchPattern(value, m_Constant(&attr)) &&
         attr.isSplat();
}

struct Group {
  SmallVector<Operation *> members; ///< In program order.
  ArrayRef<int64_t> shape;
  bool dissolved = false; ///< Merged into another group.
  bool closed = false;    ///< Ends in a reduction: nothing more joins.
};

class GroupBuilder {
public:
  explicit GroupBuilder(Block &block) {
    unsigned position = 0;
    for (Operation &op : block)
      positions[&op] = position++;
  }

  /// Forms the groups of the block's ops.
  void run(Block &block) {
    for (Operation &op : block.without_terminator()) {
      if (isFusible(&op))
        place(&op);
      else if (isClosingReduction(&op))
        close(&op);
      else if (!isMemoryEffectFree(&op) && !llvm::isa<ReadOp>(op))
        lastWriter = positions.lookup(&op);
    }
  }

  /// The groups worth a fusion: two ops or more.
  SmallVector<Group *> fusions() {
    SmallVector<Group *> result;
    for (Group &group : groups)
      if (!group.dissolved && group.members.size() > 1)
        result.push_back(&group);
    return result;
  }

private:
  ArrayRef<int64_t> shapeOf(Operation *op) {
    return llvm::cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  }

  /// Whether `op` may join `candidates` (merging them): every reader of
  /// their values that is not among them or `op` comes after `op`.
  bool canJoin(ArrayRef<unsigned> candidates, Operation *op) {
    unsigned at = positions.lookup(op);
    for (unsigned index : candidates) {
      // Moving a group's reads past a write (a kiln.assign) would read the
      // new value.
      if (lastWriter >= 0 && positions.lookup(groups[index].members.front()) < unsigned(lastWriter))
        return false;
      for (Operation *member : groups[index].members)
        for (Operation *user : member->getUsers()) {
          Operation *reader = member->getBlock()->findAncestorOpInBlock(*user);
          if (!reader || reader == op)
            continue;
          auto group = groupOf.find(reader);
          if (group != groupOf.end() && llvm::is_contained(candidates, group->second))
            continue;
          if (positions.lookup(reader) < at)
            return false;
        }
    }
    return true;
  }

  /// Ends the group that computes reduction `op`'s operand with `op` when
  /// nothing else reads the group's values.
  void close(Operation *op) {
    Operation *producer = op->getOperand(0).getDefiningOp();
    auto found = producer ? groupOf.find(producer) : groupOf.end();
    if (found == groupOf.end())
      return;
    Group &group = groups[found->second];
    if (group.closed)
      return;
    for (Operation *member : group.members)
      for (Operation *user : member->getUsers())
        if (user != op && !llvm::is_contained(group.members, user))
          return;
    if (!canJoin({found->second}, op))
      return;
    group.members.push_back(op);
    group.closed = true;
    groupOf[op] = found->second;
  }

  /// Whether every transpose among `candidates` and `op` would still read
  /// a value from outside them (the fusion reads its input permuted).
  bool transposesReadInputs(ArrayRef<unsigned> candidates, Operation *op) {
    auto inside = [&](Value value) {
      Operation *producer = value.getDefiningOp();
      auto group = producer ? groupOf.find(producer) : groupOf.end();
      return group != groupOf.end() && llvm::is_contained(candidates, group->second);
    };
    for (unsigned index : candidates)
      for (Operation *member : groups[index].members)
        if (llvm::isa<TransposeOp>(member) && inside(member->getOperand(0)))
          return false;
    return true;
  }

  void place(Operation *op) {
    SmallVector<unsigned> candidates;
    // A transpose starts a group: its operand is the fusion's input.
    for (Value operand : llvm::isa<TransposeOp>(op) ? ValueRange() : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto group = producer ? groupOf.find(producer) : groupOf.end();
      if (group != groupOf.end() && groups[group->second].shape == shapeOf(op) &&
          !groups[group->second].closed && !llvm::is_contained(candidates, group->second))
        candidates.push_back(group->second);
    }
    // All of them at once, else the first that may be joined alone.
    SmallVector<unsigned> chosen;
    if (canJoin(candidates, op) && transposesReadInputs(candidates, op)) {
      chosen = candidates;
    } else {
      for (unsigned candidate : candidates)
        if (canJoin({candidate}, op) && transposesReadInputs({candidate}, op)) {
          chosen = {candidate};
          break;
        }
    }
    if (chosen.empty()) {
      groups.push_back({{op}, shapeOf(op)});
      groupOf[op] = groups.size() - 1;
      return;
    }
    unsigned into = chosen.front();
    for (unsigned other : llvm::drop_begin(chosen)) {
      for (Operation *member : groups[other].members) {
        groups[into].members.push_back(member);
        groupOf[member] = into;
      }
      groups[other].dissolved = true;
      groups[other].members.clear();
    }
    groups[into].members.push_back(op);
    groupOf[op] = into;
    llvm::sort(groups[into].members, [&](Operation *a, Operation *b) {
      return positions.lookup(a) < positions.lookup(b);
    });
  }

  DenseMap<Operation *, unsigned> positions;
  /// The position of the last op that writes memory, -1 before the first.
  int lastWriter = -1;
  std::deque<Group> groups;
  DenseMap<Operation *, unsigned> groupOf;
};

/// Replaces the group's ops by one kiln.fusion at the place of the last.
void buildFusion(Group &group) {
  llvm::SmallPtrSet<Operation *, 16> members(group.members.begin(), group.members.end());
  SmallVector<Value> inputs, yielded;
  llvm::SetVector<Operation *> constants;
  for (Operation *member : group.members) {
    for (Value operand : member->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (isSplatConstant(operand))
        constants.insert(producer);
      if ((producer && members.contains(producer)) || isSplatConstant(operand) ||
          llvm::is_contained(inputs, operand))
        continue;
      inputs.push_back(operand);
    }
    Value result = member->getResult(0);
    if (llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return !members.contains(user); }))
      yielded.push_back(result);
  }

  Operation *last = group.members.back();
  OpBuilder builder(last);
  auto fusion = builder.create<FusionOp>(last->getLoc(), ValueRange(yielded).getTypes(),
                                         inputs);
  Block *body = builder.createBlock(&fusion.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *member : group.members) {
    for (Value operand : member->getOperands())
      if (!mapping.contains(operand) && isSplatConstant(operand))
        mapping.map(operand, builder.clone(*operand.getDefiningOp())->getResult(0));
    builder.clone(*member, mapping);
  }
  SmallVector<Value> values;
  for (Value value : yielded)
    values.push_back(mapping.lookup(value));
  builder.create<YieldOp>(last->getLoc(), values);

  for (auto [value, result] : llvm::zip(yielded, fusion.getResults()))
    value.replaceAllUsesWith(result);
  for (Operation *member : llvm::reverse(group.members))
    member->erase();
  for (Operation *constant : constants)
    if (constant->use_empty())
      constant->erase();
}

struct FuseElementwisePass
    : public kiln::impl::KilnFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody()) {
      GroupBuilder builder(block);
      builder.run(block);
      for (Group *group : builder.fusions())
        buildFusion(*group);
    }
  }
};

} // namespace
