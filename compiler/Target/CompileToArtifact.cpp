//===- CompileToArtifact.cpp - kiln module → artifact bytes ---------------===//

#include "compiler/Target/CompileToArtifact.h"

#include "compiler/Support/CompileTimings.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/KernelModule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <cassert>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln {

namespace {

/// The most bytes of constants an artifact may hold: those of the
/// constants region, the variables' constant initializers and the ones its
/// kernels embed (a splat an elementwise kernel reads as a scalar takes
/// nothing). An artifact is one FlatBuffer, under 2 GiB with its code.
constexpr uint64_t kMaxConstantBytes = uint64_t(1) << 30;

/// The largest constant of an artifact, and where it is in the model.
struct LargestConstant {
  uint64_t bytes = 0;
  std::optional<Location> loc;
  void offer(uint64_t size, Location at) {
    if (size > bytes) {
      bytes = size;
      loc = at;
    }
  }
};

/// The constants `plan` places in the artifact (its constants region and
/// its variables' constant initializers), in bytes, and the largest.
uint64_t plannedConstantBytes(const ExecutionPlan &plan, LargestConstant &largest) {
  for (const auto &[slot, data] : plan.constantData) {
    auto found = plan.constantLocs.find(slot);
    assert(found != plan.constantLocs.end() && "bufferOf records every constant's place");
    largest.offer(tensorBytes(llvm::cast<RankedTensorType>(data.getType())), found->second);
  }
  uint64_t initializers = 0;
  for (const PlannedVariable &planned : plan.variables)
    if (VariableOp op = planned.op; op.getInitializer().getKind() == InitKind::constant) {
      initializers += tensorBytes(op.getTensorType());
      largest.offer(tensorBytes(op.getTensorType()), op.getLoc());
    }
  return plan.constantsBytes + initializers;
}

/// Refuses `total` bytes of constants beyond kMaxConstantBytes, at the
/// largest one's node.
LogicalResult checkConstantBytes(uint64_t total, const LargestConstant &largest) {
  if (total <= kMaxConstantBytes || !largest.loc)
    return success();
  return emitError(*largest.loc) << "a constant of " << largest.bytes
                                 << " bytes is the largest of the " << total
                                 << " bytes of constants the artifact would hold: an artifact "
                                    "holds at most "
                                 << kMaxConstantBytes
                                 << " bytes of constants (one FlatBuffer of under 2 GiB)";
}

/// Adds the constants `kernels` embed (a constant a kernel reads element
/// by element) to `total` and `largest`, before LLVM writes their bytes.
void addKernelConstants(ModuleOp kernels, uint64_t &total, LargestConstant &largest) {
  kernels.walk([&](LLVM::GlobalOp global) {
    auto value = llvm::dyn_cast_if_present<DenseElementsAttr>(global.getValueOrNull());
    if (!value)
      return;
    auto type = llvm::cast<ShapedType>(value.getType());
    uint64_t bytes = uint64_t(type.getNumElements()) *
                     std::max(1u, type.getElementType().getIntOrFloatBitWidth() / 8);
    total += bytes;
    largest.offer(bytes, global.getLoc());
  });
}

/// Refuses an artifact whose constants and kernels' code together exceed
/// what one FlatBuffer can hold.
LogicalResult checkArtifactSize(uint64_t constantBytes, size_t objectBytes, Location loc) {
  constexpr uint64_t kMaxArtifactBytes = (uint64_t(1) << 31) - (uint64_t(1) << 24);
  if (constantBytes + objectBytes < kMaxArtifactBytes)
    return success();
  return emitError(loc) << "the artifact would hold " << constantBytes
                        << " bytes of constants and " << objectBytes
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
    if (failed(plan))
      return nullptr;
    LargestConstant largest;
    uint64_t constantBytes = plannedConstantBytes(*plan, largest);
    if (failed(checkConstantBytes(constantBytes, largest)))
      return nullptr;
    model->plan = std::move(*plan);
    kernels = [&] {
      CompileTimings::Phase phase("kernel-module");
      return buildKernelModule(model->plan, *module.getContext());
    }();
    llvm::StringMap<int64_t> rows;
    if (failed(lowerKernelsToLLVMDialect(*kernels, minRowIterations, rows)))
      return nullptr;
    addKernelConstants(*kernels, constantBytes, largest);
    if (failed(checkConstantBytes(constantBytes, largest)))
      return nullptr;
    model->constantBytes = constantBytes;
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
  if (failed(checkArtifactSize(model.constantBytes, object->size(), module.getLoc())))
    return failure();
  model.artifact = serializeArtifact(model.plan, *object, model.host,
                                     module.getName().value_or("model"));
  return success();
}

} // namespace kiln
