//===- TrainFlags.cpp - kilnc's --train flags -----------------------------===//

#include "compiler/Import/Graph/TrainFlags.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

LogicalResult applyTrainOverrides(const TrainFlags &flags, graph::TrainSpec &spec,
                                  Location loc) {
  graph::Optimizer &optimizer = *spec.mutable_optimizer();
  if (!flags.optimizer.empty()) {
    std::optional<graph::Optimizer::Kind> kind =
        llvm::StringSwitch<std::optional<graph::Optimizer::Kind>>(flags.optimizer)
            .Case("sgd", graph::Optimizer::SGD)
            .Case("momentum", graph::Optimizer::MOMENTUM)
            .Case("adam", graph::Optimizer::ADAM)
            .Case("adamw", graph::Optimizer::ADAMW)
            .Case("adagrad", graph::Optimizer::ADAGRAD)
            .Default(std::nullopt);
    if (!kind)
      return emitError(loc) << "--optimizer=" << flags.optimizer
                            << ": expected sgd, momentum, adam, adamw or adagrad";
    // Another optimizer's rate is no default for this one: PyTorch's
    // default for the new kind applies unless --lr is given.
    if (*kind != optimizer.kind())
      optimizer.clear_learning_rate();
    optimizer.set_kind(*kind);
  }
  if (flags.learningRate)
    optimizer.set_learning_rate(*flags.learningRate);
  if (flags.batchSize)
    spec.set_batch_size(*flags.batchSize);
  if (flags.accumulateSteps)
    spec.set_accumulate_steps(*flags.accumulateSteps);
  return success();
}

} // namespace kiln
