//===- OnnxTorchExport.h - What torch.onnx.export records -------*- C++ -*-===//
//
// PyTorch's torch.export-based exporter (torch.onnx.export(dynamo=True))
// writes the exported program's graph signature into the graph's
// metadata_props (field 16 of GraphProto, newer than Debian's libonnx, so
// read from the unknown fields): which inputs of the program were
// parameters and which buffers, by their module names. kiln uses it to tell
// trainable parameters from buffers (BatchNorm's running statistics) and
// from constants the exporter stored as initializers, and to notice when
// the exporter's graph optimizer removed or merged parameters.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace kiln {

struct TorchExportSignature {
  /// Whether the graph carries a signature at all.
  bool present = false;
  /// Module names (initializer names) of parameters and buffers, the
  /// parameters in signature order.
  llvm::SmallVector<std::string> parameters;
  llvm::StringSet<> buffers;
};

/// The signature of a graph written by torch.onnx.export(dynamo=True), or
/// one with `present` false.
TorchExportSignature readTorchExportSignature(const onnx::GraphProto &graph);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXTORCHEXPORT_H
