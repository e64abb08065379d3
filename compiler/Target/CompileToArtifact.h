//===- CompileToArtifact.h - kiln module → artifact bytes -------*- C++ -*-===//
//
// The whole back end in one call, for kilnc and for tests that compile and
// run in one process: plan @forward, build and lower the kernels, compile
// them for the host, and serialize the artifact.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_COMPILETOARTIFACT_H
#define KILN_COMPILER_TARGET_COMPILETOARTIFACT_H

#include "compiler/Target/CpuCodegen.h"
#include "compiler/Target/ExecutionPlan.h"
#include "compiler/Target/KernelCache.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace kiln {

/// What compiling produced, kept for reports and --emit=llvm.
struct CompiledModel {
  ExecutionPlan plan;
  /// Bytes of constants the artifact holds: its constants region, the
  /// variables' constant initializers and those its kernels embed.
  uint64_t constantBytes = 0;
  HostTarget host;
  llvm::LLVMContext llvmContext;
  /// Null when the kernels' object came from the cache.
  std::unique_ptr<llvm::Module> kernelsIR;
  /// The kernels' shared object, when the cache had it.
  std::optional<std::vector<uint8_t>> cachedObject;
  /// Where a new object is filed (null: no cache), and under what key.
  const KernelCache *cache = nullptr;
  std::string cacheKey;
  /// "hit", "miss" or "off", for reports.
  std::string cacheOutcome = "off";
  /// The new object could not be filed (finishArtifact): the caller says so.
  bool cacheUnwritable = false;
  /// The artifact's FlatBuffer (without the file footer); empty until
  /// `finishArtifact`.
  std::vector<uint8_t> artifact;
};

/// Plans @forward of a verified kiln module and compiles its kernels to
/// optimized LLVM IR for `cpu` ("host": this machine's CPU and features;
/// otherwise an LLVM CPU name such as "x86-64-v3", with its features). Emits
/// one error and returns null on failure. With `cache`, kernels compiled
/// before for the same target come from it (`kernelsIR` stays null) and new
/// ones are filed there by finishArtifact.
std::unique_ptr<CompiledModel> compileKernels(mlir::ModuleOp module,
                                              llvm::StringRef cpu = "host",
                                              const PlanOptions &options = {},
                                              const KernelCache *cache = nullptr);

/// Links the kernels into a shared object and serializes the artifact.
mlir::LogicalResult finishArtifact(CompiledModel &model, mlir::ModuleOp module);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_COMPILETOARTIFACT_H
