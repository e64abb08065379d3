//===- TfGraphFile.cpp - Reads a TensorFlow GraphDef ----------------------===//

#include "compiler/Import/TensorFlow/TfGraphFile.h"

#include "compiler/Import/ProtobufFile.h"
#include "compiler/Import/ProtobufWireCheck.h"

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <optional>

using namespace mlir;
namespace pb = google::protobuf;

namespace kiln {
namespace {

/// Collects nothing: the tokenizer's errors only mean "not this format".
class IgnoreErrors : public pb::io::ErrorCollector {
public:
  void AddError(int, pb::io::ColumnNumber, const std::string &) override {}
};

/// The first identifier of a text-format file: its first field's name.
std::string firstTextField(StringRef text) {
  pb::io::ArrayInputStream stream(text.data(), static_cast<int>(text.size()));
  IgnoreErrors errors;
  pb::io::Tokenizer tokenizer(&stream, &errors);
  tokenizer.set_comment_style(pb::io::Tokenizer::SH_COMMENT_STYLE);
  if (tokenizer.Next() &&
      tokenizer.current().type == pb::io::Tokenizer::TYPE_IDENTIFIER)
    return tokenizer.current().text;
  return "";
}

/// Why `bytes` is not a TensorFlow GraphDef, or the empty string when it is
/// one with at least one node that has an op.
std::string whyNotTfGraph(StringRef bytes) {
  tensorflow::GraphDef graph;
  if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return protobufParseFailure(bytes, *tensorflow::GraphDef::descriptor());
  for (const tensorflow::NodeDef &node : graph.node())
    if (!node.op().empty())
      return "";
  return "no node has an op";
}

} // namespace

Location TfGraphFile::locate(MLIRContext &context, LineCol at,
                             StringRef label) const {
  return locateInFile(context, path, at, label);
}

bool isTfTextPath(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".pbtxt" || ext == ".txt";
}

std::unique_ptr<TfGraphFile> readTfGraphFile(StringRef path, bool text,
                                             MLIRContext &context) {
  auto file = std::make_unique<TfGraphFile>();
  file->path = path.str();
  Location fileLoc = file->locate(context, {}, "");
  std::unique_ptr<llvm::MemoryBuffer> buffer = readProtobufFile(path, fileLoc);
  if (!buffer)
    return nullptr;
  StringRef bytes = buffer->getBuffer();

  if (text) {
    pb::TextFormat::ParseInfoTree tree;
    // proto/tensorflow/ declares only the fields Kiln reads.
    if (failed(parseTextProtobuf(bytes, file->graph, tree,
                                 /*allowUnknownFields=*/true, context, path)))
      return nullptr;
    const pb::FieldDescriptor *nodes =
        tensorflow::GraphDef::descriptor()->FindFieldByName("node");
    for (int i = 0, e = file->graph.node_size(); i < e; ++i)
      file->nodeLines.push_back(lineColOf(tree.GetLocation(nodes, i)));
    return file;
  }
  if (!file->graph.ParseFromArray(bytes.data(),
                                  static_cast<int>(bytes.size()))) {
    emitError(fileLoc) << "not a TensorFlow GraphDef ("
                       << protobufParseFailure(bytes, *tensorflow::GraphDef::descriptor()) << ")";
    return nullptr;
  }
  file->nodeLines.resize(file->graph.node_size());
  return file;
}

FailureOr<GraphFileKind> detectGraphFileKind(StringRef path,
                                             MLIRContext &context) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  std::unique_ptr<llvm::MemoryBuffer> buffer = readProtobufFile(path, fileLoc);
  if (!buffer)
    return failure();
  StringRef bytes = buffer->getBuffer();
  if (llvm::sys::path::extension(path) == ".pbtxt") {
    std::string field = firstTextField(bytes);
    bool tensorflow = field == "node" || field == "versions" ||
                      field == "library" || field == "version";
    return tensorflow ? GraphFileKind::TensorFlow : GraphFileKind::Kiln;
  }

  graph::GraphDef kilnGraph;
  bool kilnParsed =
      kilnGraph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  std::optional<int> unknown;
  if (kilnParsed)
    unknown = firstUnknownField(kilnGraph);
  bool kilnContent = kilnGraph.variables_size() || kilnGraph.inputs_size() ||
                     kilnGraph.nodes_size() || kilnGraph.outputs_size() ||
                     kilnGraph.has_train();
  if (kilnParsed && !unknown && kilnContent)
    return GraphFileKind::Kiln;
  std::string notTf = whyNotTfGraph(bytes);
  if (notTf.empty())
    return GraphFileKind::TensorFlow;
  // An empty but valid Kiln graph gets the Kiln importer's own errors.
  if (kilnParsed && !unknown)
    return GraphFileKind::Kiln;
  InFlightDiagnostic error = emitError(fileLoc);
  error << "not a binary graph file (";
  if (!kilnParsed)
    error << protobufParseFailure(bytes, *graph::GraphDef::descriptor());
  else
    error << "unknown field number " << *unknown;
  return error << "), nor a TensorFlow GraphDef (" << notTf << ")";
}

} // namespace kiln
