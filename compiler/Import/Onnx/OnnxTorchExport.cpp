//===- OnnxTorchExport.cpp - What torch.onnx.export records ---------------===//

#include "compiler/Import/Onnx/OnnxTorchExport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <google/protobuf/unknown_field_set.h>

namespace kiln {
namespace {

/// GraphProto.metadata_props and NodeProto.metadata_props (onnx.proto, IR
/// version 10).
constexpr int kGraphMetadataProps = 16;
constexpr int kNodeMetadataProps = 9;
constexpr llvm::StringLiteral kFxNodeKey = "pkg.torch.onnx.fx_node";
constexpr llvm::StringLiteral kSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";

/// `target='NAME'` of a signature line, or "".
llvm::StringRef targetOf(llvm::StringRef line) {
  size_t at = line.find("target='");
  if (at == llvm::StringRef::npos)
    return "";
  llvm::StringRef rest = line.drop_front(at + 8);
  return rest.take_until([](char c) { return c == '\''; });
}

void parseSignature(llvm::StringRef text, TorchExportSignature &signature) {
  signature.present = true;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    // "p_fc_weight: PARAMETER target='fc.weight'", "b_bn_running_mean:
    // BUFFER target='bn.running_mean' persistent=True"
    llvm::StringRef target = targetOf(line);
    if (target.empty())
      continue;
    if (line.contains(": PARAMETER ")) {
      signature.parameters.push_back(target.str());
      signature.placeholders[target] = line.trim().take_until([](char c) { return c == ':'; }).str();
    } else if (line.contains(": BUFFER "))
      signature.buffers.insert(target);
  }
}

/// The value of metadata entry `key` among `message`'s unknown fields
/// numbered `number` (Debian's libonnx predates them), or "".
std::string unknownMetadata(const google::protobuf::Message &message, int number,
                            llvm::StringRef key) {
  const google::protobuf::UnknownFieldSet &unknown =
      message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    if (field.number() != number ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == key)
      return entry.value();
  }
  return "";
}

} // namespace

TorchExportSignature readTorchExportSignature(const onnx::GraphProto &graph) {
  TorchExportSignature signature;
  std::string text = unknownMetadata(graph, kGraphMetadataProps, kSignatureKey);
  if (!text.empty())
    parseSignature(text, signature);
  return signature;
}

std::string torchFxNodeOf(const onnx::NodeProto &node) {
  return unknownMetadata(node, kNodeMetadataProps, kFxNodeKey);
}

bool fxNodeReads(llvm::StringRef fxNode, llvm::StringRef placeholder) {
  auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (size_t at = fxNode.find(placeholder); at != llvm::StringRef::npos;
       at = fxNode.find(placeholder, at + 1)) {
    size_t end = at + placeholder.size();
    if (end == fxNode.size() || !isNameChar(fxNode[end]))
      return true;
  }
  return false;
}

std::optional<int64_t> torchEmbeddingPaddingIndex(llvm::StringRef fxNode) {
  constexpr llvm::StringLiteral kTarget = "target=torch.ops.aten.embedding.default](args = (";
  size_t at = fxNode.find(kTarget);
  if (at == llvm::StringRef::npos)
    return std::nullopt;
  llvm::StringRef args = fxNode.drop_front(at + kTarget.size());
  args = args.take_front(args.find(')'));
  llvm::SmallVector<llvm::StringRef> parts;
  args.split(parts, ',');
  int64_t index;
  if (parts.size() < 3 || parts[2].trim().getAsInteger(10, index) || index < 0)
    return std::nullopt;
  return index;
}

} // namespace kiln
