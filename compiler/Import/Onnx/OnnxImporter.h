//===- OnnxImporter.h - ONNX model → kiln module ----------------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

namespace kiln {

struct OnnxImportOptions {
  /// Sizes for symbolic (dim_param) dimensions of graph inputs, by name,
  /// e.g. {"batch": 32} (kilnc --dim batch=32).
  llvm::StringMap<int64_t> dimSizes;
  /// Size for a symbolic dimension 0 that `dimSizes` does not bind: the
  /// batch (kilnc --train --batch=N); 0 = none.
  int64_t batchSize = 0;
  /// Whether the model is imported to be trained (kilnc --train): a model
  /// whose exporter lost parameters is refused then.
  bool forTraining = false;
};

/// Reads an ONNX model file into a kiln module: float initializers become
/// variables holding their values (non-trainable buffers, or constants,
/// where torch.onnx.export's graph signature says so), graph inputs become arguments and graph
/// outputs results of @forward. On failure, emits one error (naming the file
/// and the node, tensor or field) on the context and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext &context,
               const OnnxImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
