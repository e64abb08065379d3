//===- ArtifactCache.h - Whole artifacts kept by content --------*- C++ -*-===//
//
// A compile repeated with the same input, flags, kilnc and target makes the
// same artifact byte for byte: kilnc files each artifact it writes under a
// SHA-256 of all of those and, the next time, copies it instead of
// compiling. The key holds: kArtifactCacheVersion; kilnc's executable
// (its size, modification time and inode: a rebuilt kilnc misses); LLVM's
// version; the host's triple, CPU and features; the command line less the
// output path; and the input file's bytes. Entries live beside the kernel
// cache's (KernelCache.h), as KEY.kiln, with the same checks.
//
// Not cached: a compile asked for a report (it describes the compile) or
// for anything but an artifact, one with --no-cache, and ONNX models, whose
// tensors may live in other files.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_ARTIFACTCACHE_H
#define KILN_COMPILER_TARGET_ARTIFACTCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace kiln {

/// The key of compiling `inputPath` with kilnc's command line `arguments`
/// (argv without the program name; the output path is left out here) for
/// the host; std::nullopt when the input or kilnc cannot be read (then the
/// compile goes on uncached and reports what it finds).
std::optional<std::string> artifactCacheKey(llvm::ArrayRef<const char *> arguments,
                                            llvm::StringRef inputPath);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_ARTIFACTCACHE_H
