//===- Pipelines.cpp - Named pass pipelines of kilnc ----------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "passes/Distribute/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Optimize/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kiln {

void buildImportCleanupPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createKilnInferShapes());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void buildLayoutPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createKilnSinkTransposes());
  pm.addPass(mlir::createCSEPass());
}

void buildTrainingPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createKilnAutodiff());
  pm.addPass(createKilnAccumulateGradients());
  // One value for equal gradients (two biases added to one sum), which the
  // all-reduce then averages once.
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createKilnInsertAllReduce());
  pm.addPass(createKilnInsertPsOps());
  pm.addPass(createKilnExpandOptimizer());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void buildOptimizationPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createKilnFuseSoftmaxCrossEntropy());
  pm.addNestedPass<mlir::func::FuncOp>(createKilnMaskPooledGradients());
  pm.addNestedPass<mlir::func::FuncOp>(createKilnReductionsByRows());
  pm.addNestedPass<mlir::func::FuncOp>(createKilnSplitWideConcats());
  pm.addNestedPass<mlir::func::FuncOp>(createKilnFuseElementwise());
}

void buildMixedPrecisionPipeline(mlir::OpPassManager &pm, llvm::StringRef precision,
                                 bool roundInKernels, bool storeActivations) {
  KilnMixedPrecisionOptions options;
  options.precision = precision.str();
  options.roundInKernels = roundInKernels;
  options.storeActivations = storeActivations;
  pm.addPass(createKilnMixedPrecision(options));
}

void buildSchedulingPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createKilnSchedule());
}

void buildRecomputationPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createKilnRemat());
}

void registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "kiln-training", "Autodiff and the optimizer update, then clean-up",
      buildTrainingPipeline);
  mlir::PassPipelineRegistration<>(
      "kiln-import-cleanup",
      "Shape refinement, canonicalization and CSE after import",
      buildImportCleanupPipeline);
  mlir::PassPipelineRegistration<>("kiln-optimize",
                                   "Fusion of elementwise chains, before planning",
                                   buildOptimizationPipeline);
}

} // namespace kiln
