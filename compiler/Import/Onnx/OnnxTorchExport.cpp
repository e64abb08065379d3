//===- OnnxTorchExport.cpp - What torch.onnx.export records ---------------===//

#include "compiler/Import/Onnx/OnnxTorchExport.h"

#include "llvm/ADT/StringRef.h"

#include <google/protobuf/unknown_field_set.h>

namespace kiln {
namespace {

/// GraphProto.metadata_props (onnx.proto, IR version 10).
constexpr int kGraphMetadataProps = 16;
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
    if (line.contains(": PARAMETER "))
      signature.parameters.push_back(target.str());
    else if (line.contains(": BUFFER "))
      signature.buffers.insert(target);
  }
}

} // namespace

TorchExportSignature readTorchExportSignature(const onnx::GraphProto &graph) {
  TorchExportSignature signature;
  const google::protobuf::UnknownFieldSet &unknown =
      graph.GetReflection()->GetUnknownFields(graph);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    if (field.number() != kGraphMetadataProps ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited()) && entry.key() == kSignatureKey)
      parseSignature(entry.value(), signature);
  }
  return signature;
}

} // namespace kiln
