//===- GraphFile.h - Reads a kiln graph file --------------------*- C++ -*-===//
//
// Reads a binary (.pb) or text (.pbtxt) GraphDef and remembers where in a
// text file each variable, input, node and the train spec start, so that
// diagnostics can point at the line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_GRAPH_GRAPHFILE_H
#define KILN_COMPILER_IMPORT_GRAPH_GRAPHFILE_H

#include "compiler/Import/ProtobufFile.h"

#include "proto/kiln/graph.pb.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

struct GraphFile {
  std::string path;
  graph::GraphDef graph;
  std::vector<LineCol> variableLines;
  std::vector<LineCol> inputLines;
  std::vector<LineCol> nodeLines;
  std::vector<LineCol> outputLines;
  LineCol trainLine;

  /// Location of a place in the file, labelled (e.g. "node 'fc1'") when
  /// `label` is not empty.
  mlir::Location locate(mlir::MLIRContext &context, LineCol at,
                        llvm::StringRef label) const;
};

/// Reads and parses the file at `path` (format by extension). On failure,
/// emits one error naming the file (and line and column for text syntax
/// errors) and returns null.
std::unique_ptr<GraphFile> readGraphFile(llvm::StringRef path,
                                         mlir::MLIRContext &context);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_GRAPH_GRAPHFILE_H
