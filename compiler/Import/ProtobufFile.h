//===- ProtobufFile.h - Reads a protobuf model file safely ------*- C++ -*-===//
//
// What the graph-format and TensorFlow readers (and the ONNX one, for the
// bytes) share: the file's bytes, size-checked; text-format parsing that
// keeps the first syntax error and where each field starts; and the checks
// that tell a foreign binary file from this format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_PROTOBUFFILE_H
#define KILN_COMPILER_IMPORT_PROTOBUFFILE_H

#include "mlir/IR/Location.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>

#include <memory>
#include <optional>

namespace kiln {

/// A 1-based line and column; {0, 0} when unknown (binary files).
struct LineCol {
  unsigned line = 0;
  unsigned column = 0;
};

/// The bytes of a protobuf model file (graph or ONNX). The size is checked
/// before anything is read; on failure emits one error at `loc` (the file
/// cannot be read, is empty, or is beyond the 2 GiB protobuf parses, with
/// `tooLargeHint` appended to that message) and returns null.
std::unique_ptr<llvm::MemoryBuffer>
readProtobufFile(llvm::StringRef path, mlir::Location loc,
                 llvm::StringRef tooLargeHint = "");

/// Location of a place in the file at `path`, labelled (e.g. "node 'fc1'")
/// when `label` is not empty.
mlir::Location locateInFile(mlir::MLIRContext &context, llvm::StringRef path,
                            LineCol at, llvm::StringRef label);

/// Where a text-format parse saw a field; {0, 0} when it did not.
LineCol lineColOf(const google::protobuf::TextFormat::ParseLocation &at);

/// Parses the text-format `text` of the file at `path` into `message`,
/// recording where each field starts in `tree`; with `allowUnknownFields`,
/// fields the schema does not declare are skipped. A syntax error is one
/// error at its line and column ("syntax error: ...").
mlir::LogicalResult
parseTextProtobuf(llvm::StringRef text, google::protobuf::Message &message,
                  google::protobuf::TextFormat::ParseInfoTree &tree,
                  bool allowUnknownFields, mlir::MLIRContext &context,
                  llvm::StringRef path);

/// The number of the first field, anywhere in the message tree, that the
/// schema does not declare (a sign of a foreign or corrupt binary file).
std::optional<int> firstUnknownField(const google::protobuf::Message &message);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_PROTOBUFFILE_H
