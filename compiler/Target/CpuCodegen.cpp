//===- CpuCodegen.cpp - Kernel module to a host shared object -------------===//

#include "compiler/Target/CpuCodegen.h"

#include "compiler/RegisterAll.h"
#include "compiler/Target/BoolBytes.h"
#include "compiler/Support/CompileTimings.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace kiln {

namespace {

/// kiln → linalg on tensors → buffers (in place into the output argument,
/// temporaries on the stack when small) → loops → the LLVM dialect, with
/// memref arguments passed as bare pointers.
/// (Anchored on the module the pass manager runs on.)
constexpr const char *kLoweringPipeline =
    "convert-kiln-to-linalg, func.func(kiln-write-in-place),"
    "eliminate-empty-tensors, canonicalize, cse,"
    "one-shot-bufferize, canonicalize,"
    "func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=65536}),"
    "buffer-deallocation-pipeline,"
    "convert-linalg-to-loops,";
/// Then kiln-split-rows (its option from the caller), then the rest.
constexpr const char *kLoweringPipelineAfterSplit =
    // expand-strided-metadata first: a view at a computed offset (a row of
    // scatter_add_rows) becomes affine.apply, which lower-affine lowers.
    "expand-strided-metadata, lower-affine, convert-scf-to-cf,"
    "math-legalize-to-f32, kiln-approximate-math,"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm, convert-math-to-libm,"
    // bf16 arithmetic through f32: without avx512_bf16 LLVM would call
    // __truncsfbf2, which Debian 12's libgcc lacks.
    "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32},"
    "kiln-expand-arith,"
    "convert-arith-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-cf-to-llvm, reconcile-unrealized-casts";

/// LLVM's loop unrolling, bounded. O3's defaults (a cost threshold of 300,
/// full unrolling of any trip count) turn the loop nest of one elementwise
/// kernel over a [16, 32, 512] tensor into 180,000 lines of straight-line
/// IR, and the machine schedulers are superlinear in a block's length: a
/// two-layer ONNX TransformerEncoder took 285 s in kilnc, the transformer
/// example 23 s. With a threshold of 50 and at most 8 iterations unrolled
/// fully they take 5 s and 6 s, and the small loops that gain from
/// unrolling (a 3x3 window of the generated convolutions) still unroll;
/// docs/performance.md has the step times measured both ways.
///
/// And the vectorizer takes loops of 4 iterations or more (its default: 16).
/// A convnet's planes are 7x7 to 28x28, and a kernel over [N, C, 14, 14]
/// runs its innermost loop 14 times: scalar under the default, the MNIST
/// convnet's bias-and-ReLU over [32, 64, 14, 14] took 0.9 ns an element
/// against 0.3 ns over [32, 32, 28, 28]; vectorized, 0.14 ns (timed with a
/// scratch per-instruction timer while this was chosen, not a command kept
/// here; `kiln run --profile` times instructions the same way but lists only
/// the slowest). The cost model still weighs each loop at its known trip
/// count.
///
/// LLVM reads these only from its command-line options, so they are set
/// here as occurrences of those options, unless the command line already
/// gave one (`kilnc --unroll-threshold=300 --unroll-full-max-count=4294967295`
/// is O3's unbounded unrolling, `--vectorizer-min-trip-count=16` its
/// vectorizer's default).
void tuneLoopOptimizations() {
  static const std::pair<const char *, const char *> kLimits[] = {
      {"unroll-threshold", "50"},
      {"unroll-full-max-count", "8"},
      {"vectorizer-min-trip-count", "4"}};
  llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
  for (auto [name, value] : kLimits) {
    auto found = options.find(name);
    if (found != options.end() && found->second->getNumOccurrences() == 0)
      (void)found->second->addOccurrence(0, name, value);
  }
}

/// Adds `void <name>(void **args)` calling `body` with the pointers in
/// args. With `rows` > 0 the body's last two parameters are a row range:
/// `rangeFromArgs` reads it through the two pointers after the buffers,
/// else the entry passes [0, rows).
void addEntryPoint(ModuleOp module, LLVM::LLVMFuncOp body, StringRef name, int64_t rows,
                   bool rangeFromArgs) {
  MLIRContext *context = module.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(context);
  auto i64Type = IntegerType::get(context, 64);
  auto entryType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptrType});
  OpBuilder b(context);
  Location loc = body.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  auto entry = b.create<LLVM::LLVMFuncOp>(loc, name, entryType);
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  unsigned count = body.getNumArguments();
  unsigned buffers = rows > 0 ? count - 2 : count;
  auto loadArg = [&](unsigned i) -> Value {
    Value slot = b.create<LLVM::GEPOp>(loc, ptrType, ptrType, block->getArgument(0),
                                       ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    return b.create<LLVM::LoadOp>(loc, ptrType, slot);
  };
  SmallVector<Value> args;
  for (unsigned i = 0; i < buffers; ++i)
    args.push_back(loadArg(i));
  if (rows > 0) {
    for (unsigned i = 0; i < 2; ++i) {
      if (rangeFromArgs)
        args.push_back(b.create<LLVM::LoadOp>(loc, i64Type, loadArg(buffers + i)));
      else
        args.push_back(b.create<LLVM::ConstantOp>(loc, i64Type, i == 0 ? 0 : rows));
    }
  }
  b.create<LLVM::CallOp>(loc, body, args);
  b.create<LLVM::ReturnOp>(loc, ValueRange{});
}

/// Renames each kernel to `<name>.body` (internal) and adds the entry point
/// `void <name>(void **args)` that loads each argument and calls it, and
/// for a kernel with `rows` also `<name>_rows`, taking a row range.
void addPackedEntryPoints(ModuleOp module, const llvm::StringMap<int64_t> &rows) {
  for (auto body : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
    if (body.isExternal() || !body.getName().starts_with("kiln_kernel_"))
      continue;
    std::string name = body.getName().str();
    int64_t count = rows.lookup(name);
    body.setName(name + ".body");
    body.setLinkage(LLVM::Linkage::Internal);
    addEntryPoint(module, body, name, count, /*rangeFromArgs=*/false);
    if (count > 0)
      addEntryPoint(module, body, name + "_rows", count, /*rangeFromArgs=*/true);
  }
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const HostTarget &host,
                                                         std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      host.triple, host.cpu, host.features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

} // namespace

HostTarget detectHostTarget() {
  HostTarget host;
  host.triple = llvm::sys::getProcessTriple();
  host.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> enabled;
  for (const auto &feature : features)
    if (feature.getValue())
      enabled.push_back("+" + feature.getKey().str());
  llvm::sort(enabled);
  host.features = llvm::join(enabled, ",");
  return host;
}

LogicalResult checkTarget(const HostTarget &target, Location loc) {
  llvm::InitializeNativeTarget();
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!llvmTarget)
    return emitError(loc) << "cannot target " << target.triple << ": " << error;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      llvmTarget->createMCSubtargetInfo(target.triple, "", ""));
  if (!info || !info->isCPUStringValid(target.cpu))
    return emitError(loc) << "unknown CPU '" << target.cpu << "' for "
                          << target.triple
                          << " (LLVM names such as x86-64-v3, skylake, znver4)";
  return success();
}

LogicalResult lowerKernelsToLLVMDialect(ModuleOp kernels, int64_t minRowIterations,
                                        llvm::StringMap<int64_t> &rows) {
  registerAllPasses(); // The pipeline below is parsed by pass names.
  PassManager pm(kernels.getContext());
  // --mlir-print-ir-after-all and friends apply to the lowering too. This
  // fails only where a tool registered no such options: nothing to apply.
  (void)applyPassManagerCLOptions(pm);
  if (CompileTimings *timings = CompileTimings::active())
    timings->instrument(pm);
  std::string pipeline = std::string(kLoweringPipeline) + "kiln-split-rows{min-iterations=" +
                         std::to_string(minRowIterations) + "}," + kLoweringPipelineAfterSplit;
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return kernels.emitError("internal error: the lowering pipeline does not parse");
  if (failed(pm.run(kernels)))
    return failure();
  rows.clear();
  if (auto recorded = kernels->getAttrOfType<DictionaryAttr>(kiln::kKernelRowsAttrName)) {
    for (NamedAttribute entry : recorded)
      rows[entry.getName()] = llvm::cast<IntegerAttr>(entry.getValue()).getInt();
    kernels->removeAttr(kiln::kKernelRowsAttrName);
  }
  addPackedEntryPoints(kernels, rows);
  return success();
}

std::unique_ptr<llvm::Module> translateAndOptimize(ModuleOp kernels,
                                                   llvm::LLVMContext &context,
                                                   const HostTarget &host) {
  registerBuiltinDialectTranslation(*kernels.getContext());
  registerLLVMDialectTranslation(*kernels.getContext());
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(kernels, context, "kiln_kernels");
  if (!module)
    return nullptr;
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(host, error);
  if (!machine) {
    kernels.emitError("cannot target ") << host.triple << ": " << error;
    return nullptr;
  }
  module->setTargetTriple(host.triple);
  module->setDataLayout(machine->createDataLayout());
  accessBoolsAsBytes(*module);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  tuneLoopOptimizations();
  llvm::PassBuilder builder(machine.get());
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*module, mam);
  return module;
}

FailureOr<std::vector<uint8_t>> buildSharedObject(llvm::Module &module,
                                                  const HostTarget &host,
                                                  Location loc) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(host, error);
  if (!machine)
    return emitError(loc) << "cannot target " << host.triple << ": " << error;

  llvm::SmallString<128> objectPath, libraryPath;
  if (llvm::sys::fs::createTemporaryFile("kiln-kernels", "o", objectPath) ||
      llvm::sys::fs::createTemporaryFile("kiln-kernels", "so", libraryPath))
    return emitError(loc) << "cannot create temporary files for the kernels";
  llvm::FileRemover removeObject(objectPath), removeLibrary(libraryPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return emitError(loc) << "cannot write " << objectPath << ": " << ec.message();
    llvm::legacy::PassManager passes;
    if (machine->addPassesToEmitFile(passes, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return emitError(loc) << "the target cannot emit object files";
    passes.run(module);
  }

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return emitError(loc) << "no system linker: 'cc' is not on PATH";
  llvm::SmallVector<llvm::StringRef> args = {*cc, "-shared", "-o", libraryPath,
                                             objectPath, "-lm"};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &message);
  if (status != 0)
    return emitError(loc) << "linking the kernels failed (" << *cc
                          << " exit " << status << ") " << message;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(libraryPath, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!library)
    return emitError(loc) << "cannot read the linked kernels: "
                          << library.getError().message();
  StringRef bytes = (*library)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

} // namespace kiln
