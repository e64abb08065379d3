//===- CompileToArtifact.cpp - kiln module → artifact bytes ---------------===//

#include "compiler/Target/CompileToArtifact.h"

#include "compiler/Support/CompileTimings.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/KernelModule.h"

using namespace mlir;

namespace kiln {

std::unique_ptr<CompiledModel> compileKernels(ModuleOp module, StringRef cpu,
                                              const PlanOptions &options,
                                              const KernelCache *cache) {
  auto model = std::make_unique<CompiledModel>();
  FailureOr<ExecutionPlan> plan = [&] {
    CompileTimings::Phase phase("execution-plan");
    return planModule(module, options);
  }();
  if (failed(plan))
    return nullptr;
  model->plan = std::move(*plan);
  model->host = detectHostTarget();
  if (cpu != "host") {
    // The CPU's own features, not this machine's.
    model->host.cpu = cpu.str();
    model->host.features.clear();
  }
  if (failed(checkTarget(model->host, module.getLoc())))
    return nullptr;
  OwningOpRef<ModuleOp> kernels = [&] {
    CompileTimings::Phase phase("kernel-module");
    return buildKernelModule(model->plan, *module.getContext());
  }();
  if (failed(lowerKernelsToLLVMDialect(*kernels)))
    return nullptr;
  if (cache) {
    CompileTimings::Phase phase("kernel-cache-lookup");
    model->cache = cache;
    model->cacheKey = KernelCache::keyOf(*kernels, model->host);
    model->cachedObject = cache->find(model->cacheKey);
    model->cacheOutcome = model->cachedObject ? "hit" : "miss";
    if (model->cachedObject)
      return model;
  }
  CompileTimings::Phase phase("llvm-translate-and-optimize");
  model->kernelsIR = translateAndOptimize(*kernels, model->llvmContext, model->host);
  if (!model->kernelsIR)
    return nullptr;
  return model;
}

LogicalResult finishArtifact(CompiledModel &model, ModuleOp module) {
  FailureOr<std::vector<uint8_t>> object = failure();
  if (model.cachedObject) {
    object = *model.cachedObject;
  } else {
    CompileTimings::Phase phase("llvm-codegen-and-link");
    object = buildSharedObject(*model.kernelsIR, model.host, module.getLoc());
    if (failed(object))
      return failure();
    if (model.cache)
      (void)model.cache->store(model.cacheKey, *object); // Only the next compile's time.
  }
  model.artifact = serializeArtifact(model.plan, *object, model.host,
                                     module.getName().value_or("model"));
  return success();
}

} // namespace kiln
