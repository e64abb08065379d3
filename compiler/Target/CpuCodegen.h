//===- CpuCodegen.h - Kernel module to a host shared object -----*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_CPUCODEGEN_H
#define KILN_COMPILER_TARGET_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace kiln {

/// The host CPU the kernels are compiled for.
struct HostTarget {
  std::string triple;
  std::string cpu;      // LLVM CPU name, e.g. "znver3".
  std::string features; // e.g. "+avx2,+fma,...".
};

HostTarget detectHostTarget();

/// Fails with one error at `loc` if LLVM does not know the target's CPU.
mlir::LogicalResult checkTarget(const HostTarget &target, mlir::Location loc);

/// Lowers the kernel module (kiln ops in destination-passing functions) to
/// the LLVM dialect: kiln → linalg → bufferization → loops → LLVM, with
/// `void <symbol>(void **args)` entry points for the runtime. A kernel
/// kiln-split-rows made splittable also gets `void <symbol>_rows(void **args)`,
/// computing rows [*args[n], *args[n + 1]) (two int64 after its n buffers),
/// when it has at least `minRowIterations` innermost iterations;
/// `rows` receives its row count by symbol. Emits one error and fails if a
/// pass does.
mlir::LogicalResult lowerKernelsToLLVMDialect(mlir::ModuleOp kernels, int64_t minRowIterations,
                                              llvm::StringMap<int64_t> &rows);

/// Translates an LLVM-dialect module to LLVM IR optimized at -O3 for the
/// host.
std::unique_ptr<llvm::Module> translateAndOptimize(mlir::ModuleOp kernels,
                                                   llvm::LLVMContext &context,
                                                   const HostTarget &host);

/// Compiles LLVM IR to an object file and links it with the system linker
/// (`cc -shared`) into a shared object; returns its bytes, or fails after
/// one error at `loc`.
mlir::FailureOr<std::vector<uint8_t>>
buildSharedObject(llvm::Module &module, const HostTarget &host, mlir::Location loc);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_CPUCODEGEN_H
