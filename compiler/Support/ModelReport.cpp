//===- ModelReport.cpp - What kilnc made of a model -----------------------===//

#include "compiler/Support/ModelReport.h"

#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/OpCost.h"
#include "dialects/Kiln/TrainSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace kiln {
namespace {

int64_t byteSize(RankedTensorType type) {
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

void printValues(func::FuncOp forward, bool results, llvm::raw_ostream &os) {
  unsigned count = results ? forward.getNumResults() : forward.getNumArguments();
  for (unsigned i = 0; i < count; ++i) {
    auto name = results ? forward.getResultAttrOfType<StringAttr>(
                              i, KilnDialect::kNameAttrName)
                        : forward.getArgAttrOfType<StringAttr>(
                              i, KilnDialect::kNameAttrName);
    Type type = results ? forward.getResultTypes()[i] : forward.getArgumentTypes()[i];
    os << (i ? ", " : "") << (name ? name.getValue() : "?") << " " << type;
  }
  os << "\n";
}

/// The recomputation line: the policy and what kiln-remat cloned in the
/// step's forward and backward (a micro-batch's under accumulation).
void printRecomputation(ModuleOp module, llvm::raw_ostream &os) {
  RematSettings remat = RematSettings::of(module);
  auto step = module.lookupSymbol<func::FuncOp>("accumulate_step");
  if (!step)
    step = module.lookupSymbol<func::FuncOp>("train_step");
  if (remat.policy == "none" || !step)
    return;
  int64_t ops = 0;
  int64_t flops = estimateRecomputedFlops(step, &ops);
  int64_t stepFlops = estimateFlopsWithin(step);
  os << "  recomputation: " << remat.policy;
  if (remat.budgetBytes)
    os << " (budget " << remat.budgetBytes << " bytes)";
  os << ", " << ops << " ops recomputed, " << flops << " flops ("
     << llvm::format("%.1f", stepFlops ? 100.0 * flops / stepFlops : 0.0) << "% of the step)\n";
}

} // namespace

void printModelReport(ModuleOp module, llvm::raw_ostream &os) {
  os << "model: " << module.getName().value_or("(unnamed)") << "\n";

  int64_t variables = 0, trainable = 0, parameters = 0, bytes = 0;
  for (auto var : module.getOps<VariableOp>()) {
    ++variables;
    trainable += var.getTrainable();
    parameters += var.getTensorType().getNumElements();
    bytes += byteSize(var.getTensorType());
  }
  os << "  variables: " << variables << " (" << trainable << " trainable), "
     << parameters << " parameters, " << bytes << " bytes\n";

  if (auto forward = module.lookupSymbol<func::FuncOp>("forward")) {
    os << "  inputs:    ";
    printValues(forward, /*results=*/false, os);
    os << "  outputs:   ";
    printValues(forward, /*results=*/true, os);
    llvm::MapVector<StringRef, int> counts;
    int total = 0;
    forward.walk([&](Operation *op) {
      // A fusion's ops count one by one, as in the graph.
      if (llvm::isa<KilnDialect>(op->getDialect()) && !llvm::isa<FusionOp, YieldOp>(op)) {
        ++counts[op->getName().getStringRef()];
        ++total;
      }
    });
    os << "  ops:       " << total;
    SmallVector<std::pair<StringRef, int>> sorted(counts.begin(), counts.end());
    llvm::stable_sort(sorted, [](auto &a, auto &b) { return a.second > b.second; });
    for (auto [i, entry] : llvm::enumerate(sorted))
      os << (i ? ", " : " (") << entry.first << " " << entry.second;
    os << (sorted.empty() ? "\n" : ")\n");
  }

  auto spec = module->getAttrOfType<DictionaryAttr>(KilnDialect::kTrainSpecAttrName);
  if (!spec) {
    os << "  train:     none (inference graph)\n";
    return;
  }
  auto optimizer = spec.getAs<DictionaryAttr>("optimizer");
  auto strategy = spec.getAs<DictionaryAttr>("strategy");
  os << "  train:     loss '" << spec.getAs<StringAttr>("loss").getValue() << "'";
  if (optimizer)
    os << ", " << optimizer.getAs<StringAttr>("kind").getValue() << " lr "
       << llvm::format(
              "%g", optimizer.getAs<FloatAttr>("learning_rate").getValueAsDouble());
  if (auto batch = spec.getAs<IntegerAttr>("batch_size"))
    os << ", batch " << batch.getInt();
  if (strategy)
    os << ", strategy " << strategy.getAs<StringAttr>("kind").getValue();
  os << "\n";
  printRecomputation(module, os);
}

} // namespace kiln
