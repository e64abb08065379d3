//===- RegisterAll.cpp - Every dialect and pass kiln tools know -----------===//

#include "compiler/RegisterAll.h"

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Dist/KDistDialect.h"
#include "dialects/Kiln/KilnDialect.h"
#include "passes/Conversion/Passes.h"
#include "passes/Distribute/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Optimize/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace kiln {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<KilnDialect, dist::KDistDialect>();
  // The lowering to native code runs upstream passes over upstream dialects
  // with their bufferization and LLVM translation interfaces.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void registerAllPasses() {
  // Idempotent: tools call it at start-up, and the back end calls it before
  // it parses its pipeline, whoever its caller is.
  static bool registered = [] {
    registerGraphPasses();
    registerDistributePasses();
    registerOptimizePasses();
    registerConversionPasses();
    registerPipelines();
    mlir::registerAllPasses();
    return true;
  }();
  (void)registered;
}

} // namespace kiln
