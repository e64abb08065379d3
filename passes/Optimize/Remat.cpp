//===- Remat.cpp - The kiln-remat pass ------------------------------------===//
//
// See Passes.td. The choice is made on ArenaModel (RematPlan.h); this file
// reads the policy and applies the chosen clones to the IR.
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/Passes.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Optimize/RematPlan.h"

#include "mlir/IR/IRMapping.h"

namespace kiln {
#define GEN_PASS_DEF_KILNREMAT
#include "passes/Optimize/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// Clones and redirects as `outcome` says.
void applyRemat(const ArenaModel &model, const RematOutcome &outcome) {
  DenseMap<Value, Value> cloneOf;
  for (const RematOutcome::Clone &clone : outcome.clones) {
    Operation *source = model.ops[clone.op].op;
    IRMapping mapping;
    for (auto [operand, fromClone] : llvm::zip(source->getOperands(), clone.cloneOperand))
      if (fromClone)
        mapping.map(operand, cloneOf.lookup(operand));
    OpBuilder builder(model.ops[clone.before].op);
    Operation *copy = builder.clone(*source, mapping);
    copy->setAttr(KilnDialect::kRecomputedAttrName, builder.getUnitAttr());
    for (auto [original, recomputed] : llvm::zip(source->getResults(), copy->getResults()))
      cloneOf[original] = recomputed;
  }
  for (const RematOutcome::Redirect &redirect : outcome.redirects) {
    Operation *op = model.ops[redirect.op].op;
    op->setOperand(redirect.operand, cloneOf.lookup(op->getOperand(redirect.operand)));
  }
}

class KilnRematPass : public kiln::impl::KilnRematBase<KilnRematPass> {
public:
  using KilnRematBase::KilnRematBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.getSymName() != "train_step" && func.getSymName() != "accumulate_step")
      return;
    RematSettings spec;
    if (auto module = func->getParentOfType<ModuleOp>())
      spec = RematSettings::of(module);
    std::string kind = policy.empty() ? spec.policy : std::string(policy);
    int64_t budget = memoryBudget ? int64_t(memoryBudget) : spec.budgetBytes;
    if (kind == "none")
      return;
    if (kind != "auto" && kind != "sqrt" && kind != "all") {
      func.emitOpError("unknown recomputation policy '") << kind
          << "' (expected none, auto, sqrt or all)";
      return signalPassFailure();
    }
    if (kind == "auto" && budget <= 0) {
      func.emitOpError("recomputation policy 'auto' needs a memory budget > 0, got ") << budget;
      return signalPassFailure();
    }

    ArenaModel model = ArenaModel::build(func.getBody().front());
    uint64_t target = memoryTarget > 0 ? uint64_t(memoryTarget) : uint64_t(budget);
    llvm::DenseSet<int> dropped = kind == "sqrt" ? chooseSqrt(model)
                                  : kind == "all" ? chooseForTarget(model, 0)
                                                  : chooseForTarget(model, target);
    RematOutcome outcome = simulateRemat(model, dropped);
    if (kind == "auto" && outcome.peak > target) {
      func.emitError("cannot fit the memory budget of ")
          << budget << " bytes in @" << func.getSymName() << ": recomputation reaches "
          << outcome.peak << " bytes at best (recomputing " << dropped.size() << " values)";
      return signalPassFailure();
    }
    applyRemat(model, outcome);
  }
};

} // namespace
