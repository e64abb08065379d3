//===- TfInlineCalls.h - Function calls of a GraphDef inlined ---*- C++ -*-===//
//
// Freezing inlines a graph's functions, except those it must not: Keras 3
// on TensorFlow compiles some layers' kernels with XLA (`jit_compile`, as
// ConvNeXt's grouped convolutions), and a frozen graph keeps such a
// function in its library, called by a StatefulPartitionedCall node with
// the frozen weights as arguments. Kiln inlines every call before it reads
// the graph: the function's nodes join the graph named `<call>/<node>`,
// their references to the function's arguments become the call's inputs,
// and the call itself becomes an IdentityN of what the function returns, so
// that `<call>:k` reads result k. Calls in the function's nodes are inlined
// in turn, at most 16 deep.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFINLINECALLS_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFINLINECALLS_H

#include "compiler/Import/TensorFlow/TfGraphFile.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln {

/// Inlines every call of a function of the file's library (a
/// PartitionedCall or StatefulPartitionedCall, or a node whose op names the
/// function). Nodes added take the call's line in `file.nodeLines`. One
/// error at the call's location (`nodeLoc(i)`) for a function the library
/// lacks, a call whose inputs do not match the function's arguments, a
/// function left polymorphic, a malformed reference in its body, or calls
/// nested too deep.
mlir::LogicalResult
inlineTfFunctionCalls(TfGraphFile &file,
                      llvm::function_ref<mlir::Location(int)> nodeLoc);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFINLINECALLS_H
