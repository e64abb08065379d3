//===- ModelImporter.h - Any model file → kiln module -----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_MODELIMPORTER_H
#define KILN_COMPILER_IMPORT_MODELIMPORTER_H

#include "compiler/Import/Graph/TrainFlags.h"
#include "compiler/Import/Onnx/OnnxImporter.h"

namespace kiln {

struct ImportOptions {
  OnnxImportOptions onnx;
  /// kilnc --train: overrides of a graph file's train spec, or the loss to
  /// add to a model without one.
  TrainFlags train;
};

/// Reads a model by its extension: .pb/.pbtxt (graph format), .onnx or
/// .mlir, and applies the --train flags (TrainFromFlags.h). Returns a
/// verified module, or null after emitting one error.
mlir::OwningOpRef<mlir::ModuleOp> importModelFile(llvm::StringRef path,
                                                  mlir::MLIRContext &context,
                                                  const ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_MODELIMPORTER_H
