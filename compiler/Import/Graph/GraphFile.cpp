//===- GraphFile.cpp - Reads a kiln graph file ----------------------------===//

#include "compiler/Import/Graph/GraphFile.h"

#include "compiler/Import/ProtobufFile.h"
#include "compiler/Import/ProtobufWireCheck.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/text_format.h>

using namespace mlir;
namespace pb = google::protobuf;

namespace kiln {
namespace {

void recordLines(const pb::TextFormat::ParseInfoTree &tree, GraphFile &file) {
  const pb::Descriptor *descriptor = graph::GraphDef::descriptor();
  auto collect = [&](const char *name, int count, std::vector<LineCol> &lines) {
    const pb::FieldDescriptor *field = descriptor->FindFieldByName(name);
    for (int i = 0; i < count; ++i)
      lines.push_back(lineColOf(tree.GetLocation(field, i)));
  };
  collect("variables", file.graph.variables_size(), file.variableLines);
  collect("inputs", file.graph.inputs_size(), file.inputLines);
  collect("nodes", file.graph.nodes_size(), file.nodeLines);
  collect("outputs", file.graph.outputs_size(), file.outputLines);
  file.trainLine =
      lineColOf(tree.GetLocation(descriptor->FindFieldByName("train"), -1));
}

} // namespace

Location GraphFile::locate(MLIRContext &context, LineCol at,
                           StringRef label) const {
  return locateInFile(context, path, at, label);
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
    pb::TextFormat::ParseInfoTree tree;
    if (failed(parseTextProtobuf(bytes, file->graph, tree,
                                 /*allowUnknownFields=*/false, context, path)))
      return nullptr;
    recordLines(tree, *file);
    return file;
  }

  if (!file->graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(fileLoc) << "not a binary graph file ("
                       << protobufParseFailure(bytes, *graph::GraphDef::descriptor()) << ")";
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
