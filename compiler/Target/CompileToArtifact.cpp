//===- CompileToArtifact.cpp - kiln module → artifact bytes ---------------===//

#include "compiler/Target/CompileToArtifact.h"

#include "compiler/Support/CompileTimings.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/KernelModule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <algorithm>

#include <limits>

using namespace mlir;

namespace kiln {

namespace {

/// The most bytes an artifact's constants may take, and one constant a
/// kernel embeds: an artifact is one FlatBuffer, under 2 GiB with its
/// kernels (a splat a kernel reads as a scalar takes nothing).
constexpr uint64_t kMaxConstantBytes = uint64_t(1) << 30;

/// The message for a constant of `bytes` where `where` puts it.
InFlightDiagnostic constantTooLarge(Location loc, uint64_t bytes, const std::string &where) {
  return emitError(loc) << "a constant of " << bytes << " bytes " << where
                        << ": an artifact holds at most " << kMaxConstantBytes
                        << " bytes of constants (one FlatBuffer of under 2 GiB)";
}

/// Refuses constants the artifact's constants region would hold beyond
/// kMaxConstantBytes (one a fold made, as of ONNX's ConstantOfShape of a
/// large shape), at the largest one's node, before the writer copies them.
LogicalResult checkConstantsRegion(const ExecutionPlan &plan) {
  if (plan.constantsBytes <= kMaxConstantBytes)
    return success();
  auto largest = std::max_element(
      plan.constantData.begin(), plan.constantData.end(), [](const auto &a, const auto &b) {
        return tensorBytes(llvm::cast<RankedTensorType>(a.second.getType())) <
               tensorBytes(llvm::cast<RankedTensorType>(b.second.getType()));
      });
  Location loc = plan.constantLocs.find(largest->first)->second; // Every slot has one.
  uint64_t bytes = tensorBytes(llvm::cast<RankedTensorType>(largest->second.getType()));
  return constantTooLarge(loc, bytes,
                          "is the largest of the " + std::to_string(plan.constantsBytes) +
                              " bytes of constants the artifact would hold");
}

/// Refuses a kernel that would embed a constant beyond kMaxConstantBytes
/// (a large constant a kernel reads element by element), before LLVM would
/// write its bytes out.
LogicalResult checkKernelConstants(ModuleOp kernels) {
  WalkResult walk = kernels.walk([](LLVM::GlobalOp global) {
    auto value = llvm::dyn_cast_if_present<DenseElementsAttr>(global.getValueOrNull());
    if (!value)
      return WalkResult::advance();
    auto type = llvm::cast<ShapedType>(value.getType());
    uint64_t bytes = uint64_t(type.getNumElements()) *
                     std::max(1u, type.getElementType().getIntOrFloatBitWidth() / 8);
    if (bytes <= kMaxConstantBytes)
      return WalkResult::advance();
    constantTooLarge(global.getLoc(), bytes, "is read element by element by a kernel");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Refuses an artifact whose constants, variables' constant initializers
/// and kernels together exceed what one FlatBuffer can hold.
LogicalResult checkArtifactSize(const ExecutionPlan &plan, size_t objectBytes, Location loc) {
  constexpr uint64_t kMaxArtifactBytes = (uint64_t(1) << 31) - (uint64_t(1) << 24);
  uint64_t initializers = 0;
  for (const PlannedVariable &planned : plan.variables)
    if (VariableOp op = planned.op; op.getInitializer().getKind() == InitKind::constant)
      initializers += tensorBytes(op.getTensorType());
  uint64_t total = plan.constantsBytes + initializers + objectBytes;
  if (total < kMaxArtifactBytes)
    return success();
  return emitError(loc) << "the artifact would hold " << plan.constantsBytes
                        << " bytes of constants, " << initializers
                        << " of variables' constant initializers and " << objectBytes
                        << " of kernels: more than one FlatBuffer can (under 2 GiB)";
}

/// Gives each kernel step the rows its kernel splits into. A kernel that
/// reads a view of the bytes it writes (another buffer of an output's slot)
/// stays whole: its rows would not line up; so does one with an output
/// whose first dimension is not its row count. The same buffer as input and
/// output is an elementwise update in place, read on the row it writes.
void setKernelRows(ExecutionPlan &plan, const llvm::StringMap<int64_t> &rows) {
  for (ProgramPlan &program : plan.programs)
    for (Step &step : program.steps) {
      auto *kernel = std::get_if<KernelStep>(&step);
      if (!kernel)
        continue;
      kernel->rows = rows.lookup(kernelSymbol(kernel->kernel));
      for (int output : kernel->outputs) {
        // The runtime checks that a row range stays inside every output.
        llvm::ArrayRef<int64_t> shape = plan.buffers[output].type.getShape();
        if (shape.empty() || shape.front() != kernel->rows)
          kernel->rows = 0;
        for (int input : kernel->inputs)
          if (input != output && plan.buffers[input].slot == plan.buffers[output].slot)
            kernel->rows = 0;
      }
    }
}

/// The first product computed by blocks whose reader (the KernelStep after
/// it) did not get a row entry over the product's rows, or null.
/// kiln-split-rows refuses what it cannot see through; an optimizer update
/// or an elementwise epilogue it always can.
const GemmStep *blockedWithoutRows(const ExecutionPlan &plan) {
  for (const ProgramPlan &program : plan.programs)
    for (auto [i, step] : llvm::enumerate(program.steps)) {
      const auto *gemm = std::get_if<GemmStep>(&step);
      if (!gemm || gemm->blockRows == 0)
        continue;
      const auto *reader = i + 1 < program.steps.size()
                               ? std::get_if<KernelStep>(&program.steps[i + 1])
                               : nullptr;
      if (!reader || reader->blockedInput < 0 ||
          reader->rows * gemm->rowsPerKernelRow != gemm->m)
        return gemm;
    }
  return nullptr;
}

} // namespace

std::unique_ptr<CompiledModel> compileKernels(ModuleOp module, StringRef cpu,
                                              const PlanOptions &options,
                                              const KernelCache *cache) {
  auto model = std::make_unique<CompiledModel>();
  model->host = detectHostTarget();
  if (cpu != "host") {
    // The CPU's own features, not this machine's.
    model->host.cpu = cpu.str();
    model->host.features.clear();
  }
  if (failed(checkTarget(model->host, module.getLoc())))
    return nullptr;
  int64_t minRowIterations =
      options.rowParallel ? options.rowParallelMinIterations : std::numeric_limits<int64_t>::max();
  OwningOpRef<ModuleOp> kernels;
  PlanOptions attempt = options;
  while (true) {
    FailureOr<ExecutionPlan> plan = [&] {
      CompileTimings::Phase phase("execution-plan");
      return planModule(module, attempt);
    }();
    if (failed(plan) || failed(checkConstantsRegion(*plan)))
      return nullptr;
    model->plan = std::move(*plan);
    kernels = [&] {
      CompileTimings::Phase phase("kernel-module");
      return buildKernelModule(model->plan, *module.getContext());
    }();
    llvm::StringMap<int64_t> rows;
    if (failed(lowerKernelsToLLVMDialect(*kernels, minRowIterations, rows)) ||
        failed(checkKernelConstants(*kernels)))
      return nullptr;
    setKernelRows(model->plan, rows);
    const GemmStep *refused = blockedWithoutRows(model->plan);
    if (!refused)
      break;
    // Plan again with every product of that kind whole.
    (refused->epilogue ? attempt.gemmEpilogues : attempt.blockedGradients) = false;
  }
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
    // A folder that cannot be written costs only the next compile's time.
    if (model.cache && !model.cache->store(model.cacheKey, *object))
      model.cacheUnwritable = true;
  }
  if (failed(checkArtifactSize(model.plan, object->size(), module.getLoc())))
    return failure();
  model.artifact = serializeArtifact(model.plan, *object, model.host,
                                     module.getName().value_or("model"));
  return success();
}

} // namespace kiln
