//===- ArtifactCache.cpp - Whole artifacts kept by content ----------------===//

#include "compiler/Target/ArtifactCache.h"

#include "compiler/Target/CpuCodegen.h"
#include "compiler/Target/KernelCache.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <sys/stat.h>

namespace kiln {
namespace {

/// Bumped with any change to what an artifact holds that the other parts
/// of the key do not show.
constexpr const char *kArtifactCacheVersion = "kiln-artifact-1";

/// Whether argument `arg` names the output: -o PATH (the next argument),
/// -o=PATH or --o=PATH.
bool isOutputFlag(llvm::StringRef arg) { return arg == "-o" || arg == "--o"; }
bool isOutputAssignment(llvm::StringRef arg) {
  return arg.starts_with("-o=") || arg.starts_with("--o=");
}

} // namespace

std::optional<std::string> artifactCacheKey(llvm::ArrayRef<const char *> arguments,
                                            llvm::StringRef inputPath) {
  struct stat self {};
  if (stat("/proc/self/exe", &self) != 0)
    return std::nullopt;
  auto input = llvm::MemoryBuffer::getFile(inputPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!input)
    return std::nullopt;
  HostTarget host = detectHostTarget();
  llvm::SHA256 sha;
  auto part = [&](llvm::StringRef text) {
    sha.update(text);
    sha.update(llvm::StringRef("\0", 1));
  };
  part(kArtifactCacheVersion);
  part(std::to_string(self.st_size) + ":" + std::to_string(self.st_mtim.tv_sec) + "." +
       std::to_string(self.st_mtim.tv_nsec) + ":" + std::to_string(self.st_ino));
  part(LLVM_VERSION_STRING);
  part(host.triple);
  part(host.cpu);
  part(host.features);
  for (size_t i = 0; i < arguments.size(); ++i) {
    llvm::StringRef arg = arguments[i];
    if (isOutputFlag(arg)) {
      ++i; // And its value.
      continue;
    }
    if (!isOutputAssignment(arg))
      part(arg);
  }
  part((*input)->getBuffer());
  return hexDigest(sha.final());
}

} // namespace kiln
