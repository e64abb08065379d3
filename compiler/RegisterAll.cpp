//===- RegisterAll.cpp - Every dialect and pass kiln tools know -----------===//

#include "compiler/RegisterAll.h"

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Kiln/KilnDialect.h"
#include "passes/Graph/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<KilnDialect, mlir::func::FuncDialect>();
}

void registerAllPasses() {
  registerGraphPasses();
  registerPipelines();
  mlir::registerTransformsPasses();
}

} // namespace kiln
