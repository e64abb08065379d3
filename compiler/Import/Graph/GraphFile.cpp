//===- GraphFile.cpp - Reads a kiln graph file ----------------------------===//

#include "compiler/Import/Graph/GraphFile.h"

#include "compiler/Import/ProtobufFile.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

using namespace mlir;
namespace pb = google::protobuf;

namespace kiln {
namespace {

/// Keeps the first syntax error of a text file instead of logging it.
class FirstErrorCollector : public pb::io::ErrorCollector {
public:
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string &message) override {
    if (!message_.empty())
      return;
    at.line = line + 1;
    at.column = column + 1;
    // Kiln's messages end without a period; protobuf's do.
    message_ = llvm::StringRef(message).rtrim('.').str();
  }
  LineCol at;
  std::string message_;
};

/// The first field, anywhere in the message tree, that this version of the
/// format does not know (a sign of a foreign or corrupt binary file).
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
    if (field->is_repeated()) {
      for (int i = 0, e = reflection->FieldSize(message, field); i < e; ++i)
        if (auto number =
                firstUnknownField(reflection->GetRepeatedMessage(message, field, i)))
          return number;
    } else if (auto number =
                   firstUnknownField(reflection->GetMessage(message, field))) {
      return number;
    }
  }
  return std::nullopt;
}

LineCol toLineCol(pb::TextFormat::ParseLocation at) {
  if (at.line < 0)
    return {};
  return {static_cast<unsigned>(at.line + 1), static_cast<unsigned>(at.column + 1)};
}

void recordLines(const pb::TextFormat::ParseInfoTree &tree, GraphFile &file) {
  const pb::Descriptor *descriptor = graph::GraphDef::descriptor();
  auto collect = [&](const char *name, int count, std::vector<LineCol> &lines) {
    const pb::FieldDescriptor *field = descriptor->FindFieldByName(name);
    for (int i = 0; i < count; ++i)
      lines.push_back(toLineCol(tree.GetLocation(field, i)));
  };
  collect("variables", file.graph.variables_size(), file.variableLines);
  collect("inputs", file.graph.inputs_size(), file.inputLines);
  collect("nodes", file.graph.nodes_size(), file.nodeLines);
  collect("outputs", file.graph.outputs_size(), file.outputLines);
  file.trainLine =
      toLineCol(tree.GetLocation(descriptor->FindFieldByName("train"), -1));
}

} // namespace

Location GraphFile::locate(MLIRContext &context, LineCol at,
                           StringRef label) const {
  Location loc = FileLineColLoc::get(&context, path, at.line, at.column);
  if (label.empty())
    return loc;
  return NameLoc::get(StringAttr::get(&context, label), loc);
}

std::unique_ptr<GraphFile> readGraphFile(StringRef path, MLIRContext &context) {
  auto file = std::make_unique<GraphFile>();
  file->path = path.str();
  Location fileLoc = file->locate(context, {}, "");

  std::unique_ptr<llvm::MemoryBuffer> buffer = readProtobufFile(path, fileLoc);
  if (!buffer)
    return nullptr;
  StringRef bytes = buffer->getBuffer();

  if (llvm::sys::path::extension(path) == ".pbtxt") {
    pb::TextFormat::Parser parser;
    FirstErrorCollector errors;
    pb::TextFormat::ParseInfoTree tree;
    parser.RecordErrorsTo(&errors);
    parser.WriteLocationsTo(&tree);
    if (!parser.ParseFromString(bytes.str(), &file->graph)) {
      emitError(file->locate(context, errors.at, ""))
          << "syntax error: " << errors.message_;
      return nullptr;
    }
    recordLines(tree, *file);
    return file;
  }

  if (!file->graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(fileLoc) << "not a binary graph file (protobuf parse failed)";
    return nullptr;
  }
  if (std::optional<int> number = firstUnknownField(file->graph)) {
    emitError(fileLoc) << "not a binary graph file (unknown field number "
                       << *number << ")";
    return nullptr;
  }
  file->variableLines.resize(file->graph.variables_size());
  file->inputLines.resize(file->graph.inputs_size());
  file->nodeLines.resize(file->graph.nodes_size());
  file->outputLines.resize(file->graph.outputs_size());
  return file;
}

} // namespace kiln
