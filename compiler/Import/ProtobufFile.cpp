//===- ProtobufFile.cpp - Reads a protobuf model file safely --------------===//

#include "compiler/Import/ProtobufFile.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"

#include <climits>

using namespace mlir;

namespace kiln {

std::unique_ptr<llvm::MemoryBuffer>
readProtobufFile(StringRef path, Location loc, StringRef tooLargeHint) {
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size)) {
    emitError(loc) << "cannot read file: " << ec.message();
    return nullptr;
  }
  if (size == 0) {
    emitError(loc) << "empty file";
    return nullptr;
  }
  // Protobuf parses at most INT_MAX bytes.
  if (size > static_cast<uint64_t>(INT_MAX)) {
    InFlightDiagnostic error = emitError(loc);
    error << "file of " << size << " bytes exceeds protobuf's limit of "
          << INT_MAX << " bytes";
    if (!tooLargeHint.empty())
      error << " (" << tooLargeHint << ")";
    return nullptr;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(loc) << "cannot read file: " << buffer.getError().message();
    return nullptr;
  }
  return std::move(*buffer);
}

} // namespace kiln
