//===- KernelLibrary.h - An artifact's kernels, placed ----------*- C++ -*-===//
//
// The kernels of an artifact are one shared object held in the artifact. It
// is loaded without leaving a file behind: written to an anonymous memory
// file (memfd_create) and opened as /proc/self/fd/N or, where that is not
// possible, written to a private temporary file in $TMPDIR (else /tmp) that is
// removed right after dlopen. Every kernel symbol is looked up at load, so a
// missing one is a load error rather than a failure mid-step.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_KERNELLIBRARY_H
#define KILN_RUNTIME_CPU_KERNELLIBRARY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::cpu {

/// The kernel ABI: the address of each buffer argument, inputs first, then
/// outputs.
using KernelFunction = void (*)(void **args);

/// How the shared object reaches dlopen.
enum class KernelPlacement {
  MemoryFile,    ///< memfd_create; falls back to TemporaryFile.
  TemporaryFile, ///< A private file, removed right after dlopen.
};

class KernelLibrary {
public:
  /// Loads the `size`-byte shared object at `object` and looks up `symbols`.
  /// On failure sets `error` to "FIELD: PROBLEM", FIELD being
  /// `kernels.object` or `kernels.symbols[i]`, and returns null.
  static std::unique_ptr<KernelLibrary>
  load(const uint8_t *object, size_t size,
       const std::vector<std::string> &symbols, KernelPlacement placement,
       std::string &error);

  /// Unloads the shared object.
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  /// The kernel at `index` in the symbol list given to load().
  KernelFunction function(size_t index) const { return functions_[index]; }
  /// Any other function of the object by its symbol; null if it has none.
  KernelFunction lookup(const std::string &symbol) const;
  size_t size() const { return functions_.size(); }
  /// Where the object was actually placed (after any fallback).
  KernelPlacement placement() const { return placement_; }

private:
  KernelLibrary() = default;

  void *handle_ = nullptr;
  /// Kept open while the object is loaded: its /proc/self/fd/N name must not
  /// be reused by another library, or dlopen would return this one for it.
  int fd_ = -1;
  KernelPlacement placement_ = KernelPlacement::MemoryFile;
  std::vector<KernelFunction> functions_;
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_KERNELLIBRARY_H
