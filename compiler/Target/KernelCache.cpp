//===- KernelCache.cpp - Compiled kernels kept by content -----------------===//

#include "compiler/Target/KernelCache.h"

#include "runtime/support/Directories.h"
#include "runtime/support/StagedFile.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln {
namespace {

/// Bumped whenever Kiln changes how LLVM compiles a kernel module (its
/// optimization pipeline or options, CpuCodegen.cpp), so that no entry made
/// the old way is found.
constexpr const char *kCodegenVersion = "kiln-codegen-5";

} // namespace

std::string hexDigest(const std::array<uint8_t, 32> &digest) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : digest) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

std::string KernelCache::defaultDirectory() {
  if (const char *dir = std::getenv("KILN_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kiln";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kiln";
  return "";
}

std::string KernelCache::keyOf(mlir::ModuleOp kernels, const HostTarget &host) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernels->print(os, mlir::OpPrintingFlags().enableDebugInfo(false));
  llvm::SHA256 sha;
  for (llvm::StringRef part : {llvm::StringRef(kCodegenVersion), llvm::StringRef(LLVM_VERSION_STRING),
                               llvm::StringRef(host.triple), llvm::StringRef(host.cpu),
                               llvm::StringRef(host.features), llvm::StringRef(text)}) {
    sha.update(part);
    sha.update(llvm::StringRef("\0", 1));
  }
  return hexDigest(sha.final());
}

std::optional<std::vector<uint8_t>> KernelCache::find(const std::string &key) const {
  if (directory_.empty())
    return std::nullopt;
  std::ifstream file(directory_ + "/" + key + suffix_, std::ios::binary);
  if (!file)
    return std::nullopt;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (bytes.size() < 32)
    return std::nullopt;
  std::vector<uint8_t> object(bytes.begin() + 32, bytes.end());
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(object);
  if (std::memcmp(digest.data(), bytes.data(), 32) != 0)
    return std::nullopt; // Damaged: compiled again and rewritten.
  return object;
}

bool KernelCache::store(const std::string &key, const std::vector<uint8_t> &object) const {
  if (directory_.empty() || makeDirectories(directory_) != 0)
    return false;
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(object);
  std::string error;
  return writeFileAtomically(directory_ + "/" + key + suffix_,
                             {{digest.data(), digest.size()}, {object.data(), object.size()}},
                             error);
}

} // namespace kiln
