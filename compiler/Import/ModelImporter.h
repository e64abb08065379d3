//===- ModelImporter.h - Any model file → kiln module -----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_MODELIMPORTER_H
#define KILN_COMPILER_IMPORT_MODELIMPORTER_H

#include "compiler/Import/Graph/TrainFlags.h"
#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Import/TensorFlow/TfImporter.h"

#include <string>

namespace kiln {

struct ImportOptions {
  /// kilnc --from: "kiln", "tensorflow", "onnx" or "mlir"; empty: by the
  /// extension, and for .pb/.pbtxt by the content (Kiln graph file or
  /// TensorFlow GraphDef).
  std::string format;
  OnnxImportOptions onnx;
  TfImportOptions tensorflow;
  /// kilnc --train: overrides of a graph file's train spec, or the loss to
  /// add to a model without one.
  TrainFlags train;
};

/// Reads a model in `options.format`, or by its extension: .pb/.pbtxt (a
/// Kiln graph file or a TensorFlow GraphDef, told apart by content), .onnx
/// or .mlir, and applies the --train flags (TrainFromFlags.h). Returns a
/// verified module, or null after emitting one error.
mlir::OwningOpRef<mlir::ModuleOp> importModelFile(llvm::StringRef path,
                                                  mlir::MLIRContext &context,
                                                  const ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_MODELIMPORTER_H
