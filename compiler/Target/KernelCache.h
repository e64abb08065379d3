//===- KernelCache.h - Compiled kernels kept by content ---------*- C++ -*-===//
//
// kilnc's cache of compiled kernel objects: the shared object LLVM makes
// from a model's kernels, filed under a SHA-256 of everything that decides
// its bytes (the kernels lowered to the LLVM dialect, printed; the target
// triple, CPU and features; LLVM's version; kCodegenVersion, bumped with
// any change to Kiln's own LLVM settings). A second compile of the same
// kernels for the same CPU skips LLVM, which takes most of a compile.
//
// Where: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
// Each entry is one file KEY.so (KEY.kiln for the artifact cache of
// ArtifactCache.h, which files whole artifacts the same way) written whole
// (temporary file + rename),
// its first 32 bytes the SHA-256 of the rest, checked on every read: an
// entry that does not match is ignored (and rewritten). Nothing is ever
// evicted: delete the folder to reclaim it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_KERNELCACHE_H
#define KILN_COMPILER_TARGET_KERNELCACHE_H

#include "compiler/Target/CpuCodegen.h"

#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// A SHA-256 digest in lowercase hex: a cache key.
std::string hexDigest(const std::array<uint8_t, 32> &digest);

class KernelCache {
public:
  /// The cache folder the environment names; empty when none can be found
  /// (no HOME): then nothing is cached.
  static std::string defaultDirectory();

  /// Entries are KEY`suffix` files in `directory`.
  explicit KernelCache(std::string directory, std::string suffix = ".so")
      : directory_(std::move(directory)), suffix_(std::move(suffix)) {}

  /// The key of `kernels` (lowered to the LLVM dialect) compiled for `host`.
  static std::string keyOf(mlir::ModuleOp kernels, const HostTarget &host);
  /// The object filed under `key`, if there is a sound one.
  std::optional<std::vector<uint8_t>> find(const std::string &key) const;
  /// The folder of the entries.
  const std::string &directory() const { return directory_; }
  /// Files `object` under `key`; false (and nothing half-written) when the
  /// folder cannot be written, which costs only the next compile's time.
  bool store(const std::string &key, const std::vector<uint8_t> &object) const;

private:
  std::string directory_, suffix_;
};

} // namespace kiln

#endif // KILN_COMPILER_TARGET_KERNELCACHE_H
