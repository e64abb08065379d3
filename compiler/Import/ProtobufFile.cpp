//===- ProtobufFile.cpp - Reads a protobuf model file safely --------------===//

#include "compiler/Import/ProtobufFile.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/unknown_field_set.h>

#include <climits>

using namespace mlir;
namespace pb = google::protobuf;

namespace kiln {

namespace {

/// Keeps the first syntax error of a text file instead of logging it.
class FirstErrorCollector : public pb::io::ErrorCollector {
public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string &message) override {
    if (!text.empty())
      return;
    at.line = line + 1;
    at.column = column + 1;
    // Kiln's messages end without a period; protobuf's do.
    text = llvm::StringRef(message).rtrim('.').str();
  }
  LineCol at;
  std::string text;
};

} // namespace

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

Location locateInFile(MLIRContext &context, StringRef path, LineCol at,
                      StringRef label) {
  Location loc = FileLineColLoc::get(&context, path, at.line, at.column);
  if (label.empty())
    return loc;
  // A label quoting a name from the file stays one line of text: bytes
  // that are not UTF-8, and control characters, escaped.
  return NameLoc::get(StringAttr::get(&context, printable(label)), loc);
}

LineCol lineColOf(const pb::TextFormat::ParseLocation &at) {
  if (at.line < 0)
    return {};
  return {static_cast<unsigned>(at.line + 1),
          static_cast<unsigned>(at.column + 1)};
}

LogicalResult parseTextProtobuf(StringRef text, pb::Message &message,
                                pb::TextFormat::ParseInfoTree &tree,
                                bool allowUnknownFields, MLIRContext &context,
                                StringRef path) {
  pb::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  parser.AllowUnknownField(allowUnknownFields);
  if (parser.ParseFromString(text.str(), &message))
    return success();
  return emitError(locateInFile(context, path, errors.at, ""))
         << "syntax error: " << errors.text;
}

std::optional<int> firstUnknownField(const pb::Message &message) {
  const pb::Reflection *reflection = message.GetReflection();
  const pb::UnknownFieldSet &unknown = reflection->GetUnknownFields(message);
  if (!unknown.empty())
    return unknown.field(0).number();
  std::vector<const pb::FieldDescriptor *> fields;
  reflection->ListFields(message, &fields);
  for (const pb::FieldDescriptor *field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    int count =
        field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      const pb::Message &child =
          field->is_repeated()
              ? reflection->GetRepeatedMessage(message, field, i)
              : reflection->GetMessage(message, field);
      if (std::optional<int> number = firstUnknownField(child))
        return number;
    }
  }
  return std::nullopt;
}

} // namespace kiln
