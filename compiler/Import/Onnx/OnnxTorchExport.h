//===- OnnxTorchExport.h - What torch.onnx.export records -------*- C++ -*-===//
//
// PyTorch's torch.export-based exporter (torch.onnx.export(dynamo=True))
// writes the exported program's graph signature into the graph's
// metadata_props (field 16 of GraphProto, newer than Debian's libonnx, so
// read from the unknown fields): which inputs of the program were
// parameters and which buffers, by their module names. kiln uses it to tell
// trainable parameters from buffers (BatchNorm's running statistics) and
// from constants the exporter stored as initializers, and to notice when
// the exporter's graph optimizer removed or merged parameters. Each node
// also carries the torch.fx node it came from (NodeProto metadata_props,
// field 9, "pkg.torch.onnx.fx_node"), which names the parameters that op
// reads: a node reading one its op does not was rewired by the optimizer
// (an equal-valued constant replaced by the parameter).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>

namespace kiln {

struct TorchExportSignature {
  /// Whether the graph carries a signature at all.
  bool present = false;
  /// Module names (initializer names) of parameters and buffers, the
  /// parameters in signature order.
  llvm::SmallVector<std::string> parameters;
  llvm::StringSet<> buffers;
  /// Each parameter's placeholder in the exported program, by module name:
  /// "fc.weight" -> "p_fc_weight".
  llvm::StringMap<std::string> placeholders;
};

/// The signature of a graph written by torch.onnx.export(dynamo=True), or
/// one with `present` false.
TorchExportSignature readTorchExportSignature(const onnx::GraphProto &graph);

/// The text of the torch.fx node `node` was exported from ("%layer_norm :
/// ... = call_function[...](args = (%linear, [32], %p_ln_weight, ...))"), or
/// "" where the exporter did not record one.
std::string torchFxNodeOf(const onnx::NodeProto &node);

/// Whether `fxNode` (torchFxNodeOf) reads `placeholder` ("%p_fc_weight" as
/// a whole name).
bool fxNodeReads(llvm::StringRef fxNode, llvm::StringRef placeholder);

/// The padding_idx of an `aten.embedding` fx node (torchFxNodeOf) that has
/// one (its third argument, not -1), else std::nullopt: the row whose
/// gradient PyTorch keeps at zero (nn.Embedding(padding_idx=...), which
/// transformers' BERT and RoBERTa set to their pad token).
std::optional<int64_t> torchEmbeddingPaddingIndex(llvm::StringRef fxNode);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H
