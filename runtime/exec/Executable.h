//===- Executable.h - An artifact with its kernels placed -------*- C++ -*-===//
//
// What a loaded artifact is to the runtime: the VerifiedArtifact, checked to
// target this runtime ("cpu") and this CPU, with its kernel library placed
// and every kernel symbol resolved. Immutable once loaded, so any number of
// sessions on any threads may share one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_EXECUTABLE_H
#define KILN_RUNTIME_EXEC_EXECUTABLE_H

#include "runtime/artifact/VerifiedArtifact.h"
#include "runtime/cpu/KernelLibrary.h"

#include <memory>
#include <vector>
#include <string>

namespace kiln::exec {

/// The target this runtime runs.
constexpr const char *kTarget = "cpu";
/// The kernel object format this host loads.
constexpr const char *kKernelFormat = "elf-x86_64-shared";

class Executable {
public:
  /// Loads and checks the artifact file at `path` and places its kernels.
  /// On failure sets `error` to "PATH: error: WHAT" and returns null.
  static std::shared_ptr<const Executable>
  load(const std::string &path, std::string &error,
       cpu::KernelPlacement placement = cpu::KernelPlacement::MemoryFile);

  /// The same for an artifact already verified.
  static std::shared_ptr<const Executable> fromArtifact(
      std::unique_ptr<artifact::VerifiedArtifact> artifact, std::string &error,
      cpu::KernelPlacement placement = cpu::KernelPlacement::MemoryFile);

  const artifact::VerifiedArtifact &artifact() const { return *artifact_; }
  /// The kernel at `index` in `kernels.symbols`.
  cpu::KernelFunction kernel(uint32_t index) const {
    return kernels_->function(index);
  }
  /// The row entry (`<symbol>_rows`) of the kernel at `index`, or null when
  /// the library has none (then no KernelCall of it has rows: load checks).
  cpu::KernelFunction rowKernel(uint32_t index) const { return rowKernels_[index]; }
  /// The placed kernel library; null when the artifact declares no kernels.
  const cpu::KernelLibrary *kernels() const { return kernels_.get(); }

private:
  Executable() = default;

  std::unique_ptr<artifact::VerifiedArtifact> artifact_;
  std::unique_ptr<cpu::KernelLibrary> kernels_;
  std::vector<cpu::KernelFunction> rowKernels_; ///< By kernel index; null: none.
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_EXECUTABLE_H
