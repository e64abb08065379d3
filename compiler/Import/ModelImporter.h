//===- ModelImporter.h - Any model file → kiln module -----------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_MODELIMPORTER_H
#define KILN_COMPILER_IMPORT_MODELIMPORTER_H

#include "compiler/Import/Onnx/OnnxImporter.h"

namespace kiln {

struct ImportOptions {
  OnnxImportOptions onnx;
};

/// Reads a model by its extension: .pb/.pbtxt (graph format), .onnx or
/// .mlir. Returns a verified module, or null after emitting one error.
mlir::OwningOpRef<mlir::ModuleOp> importModelFile(llvm::StringRef path,
                                                  mlir::MLIRContext &context,
                                                  const ImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_MODELIMPORTER_H
