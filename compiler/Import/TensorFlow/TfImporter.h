//===- TfImporter.h - TensorFlow GraphDef → kiln module ---------*- C++ -*-===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFIMPORTER_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace kiln {

struct TfImportOptions {
  /// Full shapes of Placeholders, by node name (kilnc --input-shape
  /// x=8,16): they fill the sizes a Placeholder leaves unknown (-1).
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Size for an unknown dimension 0 that `inputShapes` does not give: the
  /// batch (kilnc --train --batch=N); 0 = none.
  int64_t batchSize = 0;
  /// The graph's outputs, "node" or "node:k" (kilnc --outputs); empty: the
  /// outputs nothing consumes.
  llvm::SmallVector<std::string> outputs;
};

/// Reads a TensorFlow GraphDef (text when `text`, else binary) into a kiln
/// module: Placeholders become the arguments of @forward and the outputs its
/// results, each named by its node (`kiln.name`); frozen variables (float
/// Consts read through an Identity or gathered from) become
/// `kiln.variable`s holding their values, trainable except BatchNorm's
/// moving statistics. On failure, emits
/// one error (naming the file and the node) and returns null.
/// docs/tensorflow.md describes what is accepted.
mlir::OwningOpRef<mlir::ModuleOp>
importTfGraphFile(llvm::StringRef path, bool text, mlir::MLIRContext &context,
                  const TfImportOptions &options);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFIMPORTER_H
