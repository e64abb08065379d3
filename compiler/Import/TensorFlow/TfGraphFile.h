//===- TfGraphFile.h - Reads a TensorFlow GraphDef --------------*- C++ -*-===//
//
// Reads a TensorFlow GraphDef, binary (.pb) or text (.pbtxt), remembering
// where in a text file each node starts so diagnostics can point at its
// line, and tells a TensorFlow GraphDef from a Kiln graph file (both use the
// .pb and .pbtxt extensions).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHFILE_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHFILE_H

#include "compiler/Import/ProtobufFile.h"

#include "proto/tensorflow/graph.pb.h"

#include "mlir/IR/Location.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct TfGraphFile {
  std::string path;
  tensorflow::GraphDef graph;
  /// Where each node starts in a text file; {0, 0} in a binary one.
  std::vector<LineCol> nodeLines;

  /// Location of a place in the file, labelled when `label` is not empty.
  mlir::Location locate(mlir::MLIRContext &context, LineCol at,
                        llvm::StringRef label) const;
};

/// Whether a path names a text GraphDef: it ends in .pbtxt or .txt.
bool isTfTextPath(llvm::StringRef path);

/// Reads and parses a GraphDef, text when `text`, else binary. On failure,
/// emits one error naming the file (and the line and column of a text
/// syntax error) and returns null. Fields of TensorFlow's schema that Kiln
/// does not declare (proto/tensorflow/) are skipped.
std::unique_ptr<TfGraphFile> readTfGraphFile(llvm::StringRef path, bool text,
                                             mlir::MLIRContext &context);

/// What a .pb or .pbtxt file holds.
enum class GraphFileKind { Kiln, TensorFlow };

/// Tells the two formats apart by content. A text file is a TensorFlow
/// GraphDef when its first field is one of GraphDef's (`node`, `versions`,
/// `library`, `version`), else a Kiln graph file. A binary file is a Kiln
/// graph file when it parses as one with every field known and something
/// in it, else a TensorFlow GraphDef when it parses as one with at least one
/// node that has an op. A binary file that is neither is one error naming
/// both formats.
mlir::FailureOr<GraphFileKind> detectGraphFileKind(llvm::StringRef path,
                                                   mlir::MLIRContext &context);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFGRAPHFILE_H
