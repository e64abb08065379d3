//===- TfSparseLookups.h - SparseTensor embedding lookups -------*- C++ -*-===//
//
// TensorFlow's multi-hot feature is a SparseTensor of ids looked up by
// tf.nn.embedding_lookup_sparse or tf.nn.safe_embedding_lookup_sparse (what
// feature columns and Keras layers over sparse inputs call). Frozen, the
// SparseTensor is three Placeholders (indices [n, 2], values [n],
// dense_shape [2]) whose sizes change with every batch, and the lookup is
// Unique, a gather, SparseSegmentSum/Mean/SqrtN over the indices' first
// column and, in the safe form, the pruning of negative ids and the filling
// of empty rows (Where, SparseReshape, SparseFillEmptyRows, Select, ...).
//
// Kiln's shapes are static, and its multi-hot feature is kiln.embedding_bag
// over id lists padded with -1, [batch, L], which training data fills
// ragged or padded (docs/runtime.md). Before the graph is read, each lookup
// recognized whole is rewritten into one node that reads the table and the
// SparseTensor's indices Placeholder, which then stands for the id lists:
// the Placeholder keeps its name (the SparseTensor's) and takes the values'
// element type and the shape [batch, L].
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_TENSORFLOW_TFSPARSELOOKUPS_H
#define KILN_COMPILER_IMPORT_TENSORFLOW_TFSPARSELOOKUPS_H

#include "compiler/Import/TensorFlow/TfGraphFile.h"
#include "dialects/Kiln/KilnOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace kiln {

/// What the rewrite made of the graph's lookups.
struct TfSparseLookups {
  /// The nodes that now compute a lookup, by index: their data inputs are
  /// the table and the id lists (kiln.embedding_bag with this combiner).
  llvm::DenseMap<int, EmbeddingCombiner> bags;
  /// The Placeholders that now hold id lists [batch, L] padded with -1.
  llvm::DenseSet<int> idLists;
};

/// Finds the lookups over SparseTensor Placeholders in `graph` and rewrites
/// each into one node (its other nodes become NoOps). A lookup that does not
/// match whole, or one of whose inner nodes `outputs` names (--outputs), is
/// left as it is (its ops are then refused one by one).
/// One error, at `nodeLoc(i)`, for a SparseTensor that a lookup reads and
/// another node reads too, for indices and values that two lookups pair
/// differently, and for a malformed constant inside a lookup.
mlir::FailureOr<TfSparseLookups>
rewriteTfSparseLookups(tensorflow::GraphDef &graph,
                       std::function<mlir::Location(int)> nodeLoc,
                       const llvm::StringSet<> &outputs);

/// Whether `op` is one of the ops only a recognized lookup imports: the
/// error for it points at docs/tensorflow.md.
bool isTfSparseLookupOp(llvm::StringRef op);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_TENSORFLOW_TFSPARSELOOKUPS_H
