//===- ProtobufFile.h - Reads a protobuf model file safely ------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_PROTOBUFFILE_H
#define KILN_COMPILER_IMPORT_PROTOBUFFILE_H

#include "mlir/IR/Location.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace kiln {

/// The bytes of a protobuf model file (graph or ONNX). The size is checked
/// before anything is read; on failure emits one error at `loc` (the file
/// cannot be read, is empty, or is beyond the 2 GiB protobuf parses, with
/// `tooLargeHint` appended to that message) and returns null.
std::unique_ptr<llvm::MemoryBuffer>
readProtobufFile(llvm::StringRef path, mlir::Location loc,
                 llvm::StringRef tooLargeHint = "");

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_PROTOBUFFILE_H
