//===- TfSparseLookups.cpp - SparseTensor embedding lookups ---------------===//
//
// The shapes matched, as TensorFlow 2 builds them (embedding_ops.py):
//
//   embedding_lookup_sparse(table, sp_ids, None, combiner)
//     ids, idx = Unique(values)               (or, allow_fast_lookup: none)
//     rows = GatherV2(table, ids, axis 0)     (or the table itself)
//     SparseSegment{Sum,Mean,SqrtN}(rows, idx, indices[:, 0])
//
//   safe_embedding_lookup_sparse(table, sp_ids, None, combiner)
//     the SparseTensor reshaped to 2-D (SparseReshape), its negative ids
//     pruned (GatherV2 of indices and values at Where(values >= 0)), empty
//     rows filled (SparseFillEmptyRows), the lookup above, the filled rows
//     zeroed (Select(Tile(empty rows), ZerosLike(x), x)) and the result
//     reshaped to dense_shape[:-1] + [dim].
//
// kiln.embedding_bag computes both on id lists padded with -1: a list's
// rows combined, zeros for an empty list.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/TensorFlow/TfSparseLookups.h"

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/TensorFlow/TfGraph.h"
#include "compiler/Import/TensorFlow/TfRewrites.h"
#include "compiler/Import/TensorFlow/TfTensor.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;

namespace kiln {
namespace {

std::optional<EmbeddingCombiner> segmentCombiner(StringRef op) {
  if (op == "SparseSegmentSum")
    return EmbeddingCombiner::sum;
  if (op == "SparseSegmentMean")
    return EmbeddingCombiner::mean;
  if (op == "SparseSegmentSqrtN")
    return EmbeddingCombiner::sqrtn;
  return std::nullopt;
}

/// The ops the safe form computes shapes with (never ids or rows).
bool isShapeArithmetic(StringRef op) {
  return llvm::is_contained({"Pack", "StridedSlice", "Shape", "Slice", "Cast",
                             "ConcatV2", "Prod", "GatherV2", "Reshape", "Identity"},
                            op);
}

/// A SparseTensor input: its Placeholders (shape -1 where no lookup reads
/// it).
struct SparseInput {
  int indices = -1, values = -1, shape = -1;
};

/// One lookup recognized whole.
struct Lookup {
  /// The node whose result is the lookup's.
  int root = -1;
  EmbeddingCombiner combiner = EmbeddingCombiner::sum;
  /// The GatherV2 of the table's rows at the unique ids; -1 when the
  /// segment reduction reads the table itself.
  int gather = -1;
  /// The table, as the gather or the segment reduction reads it: its
  /// input string ("name" or "name:k").
  std::string table;
  SparseInput input;
  /// The nodes between the Placeholders and the root, which become NoOps.
  SmallVector<int> absorbed;
};

class LookupMatcher : public TfPatternMatcher {
public:
  LookupMatcher(const TfGraph &graph, const std::function<Location(int)> &nodeLoc)
      : TfPatternMatcher(graph, nodeLoc) {}

  /// The lookup whose segment reduction is node `segment`, if it matches.
  std::optional<Lookup> match(int segment);

private:
  /// Follows Identity nodes back from `ref`, absorbing them.
  TfOutputRef through(TfOutputRef ref);
  bool isConstant(TfOutputRef ref, ArrayRef<int64_t> values) {
    std::optional<SmallVector<int64_t>> ints = constantInts(ref);
    return ints && llvm::equal(*ints, values);
  }
  /// The 2-D int64 tensor of which `ref` (through a Cast) is column 0,
  /// absorbing the slice; an invalid ref when it is not.
  TfOutputRef firstColumnOf(TfOutputRef ref);
  /// Absorbs the shape arithmetic behind `ref` down to `stops` and Consts;
  /// false if it reads anything else.
  bool absorbShapeArithmetic(TfOutputRef ref, ArrayRef<int> stops);
  /// The safe form around the segment reduction of `lookup`, whose ids and
  /// positions come from SparseFillEmptyRows `fill`.
  bool matchSafe(Lookup &lookup, int segment, int fill);
  /// Whether `ref` is a Placeholder of `dataType` whose shape has `rank`
  /// dimensions, dimension 1 (if any) of size `columns` or unknown.
  bool isPlaceholder(TfOutputRef ref, llvm::ArrayRef<int> dataTypes, int rank,
                     int64_t columns) const;

  SmallVector<int> absorbed;
};

TfOutputRef LookupMatcher::through(TfOutputRef ref) {
  for (int steps = 0; steps < graph.size() && is(ref, "Identity") &&
                      !graph.getInputs(ref.node).empty();
       ++steps) {
    absorbed.push_back(ref.node);
    ref = graph.getInputs(ref.node).front();
  }
  return ref;
}


TfOutputRef LookupMatcher::firstColumnOf(TfOutputRef ref) {
  if (is(ref, "Cast")) {
    absorbed.push_back(ref.node);
    ref = through(input(ref.node, 0));
  }
  if (!is(ref, "StridedSlice") || ref.output != 0)
    return {};
  int slice = ref.node;
  // indices[:, 0]: rows from the start to the end (begin_mask, end_mask bit
  // 0), column 0 with its axis dropped (shrink_axis_mask bit 1).
  if (!isConstant(input(slice, 1), {0, 0}) || !isConstant(input(slice, 2), {0, 1}) ||
      !isConstant(input(slice, 3), {1, 1}) || intAttr(slice, "shrink_axis_mask") != 2 ||
      !(intAttr(slice, "end_mask") & 1) || intAttr(slice, "ellipsis_mask") != 0 ||
      intAttr(slice, "new_axis_mask") != 0)
    return {};
  absorbed.push_back(slice);
  return through(input(slice, 0));
}

bool LookupMatcher::absorbShapeArithmetic(TfOutputRef ref, ArrayRef<int> stops) {
  SmallVector<int> work{ref.node};
  llvm::DenseSet<int> seen;
  while (!work.empty()) {
    int node = work.pop_back_val();
    if (node < 0)
      return false;
    if (llvm::is_contained(stops, node) || is({node, 0}, "Const") ||
        !seen.insert(node).second)
      continue;
    if (!isShapeArithmetic(graph.node(node).op()))
      return false;
    absorbed.push_back(node);
    for (TfOutputRef in : graph.getInputs(node))
      work.push_back(in.node);
  }
  return true;
}

bool LookupMatcher::isPlaceholder(TfOutputRef ref, ArrayRef<int> dataTypes, int rank,
                                  int64_t columns) const {
  if (!is(ref, "Placeholder") || ref.output != 0 ||
      !llvm::is_contained(dataTypes, dataType(ref.node, "dtype")))
    return false;
  auto shape = graph.node(ref.node).attr().find("shape");
  if (shape == graph.node(ref.node).attr().end())
    return false;
  FailureOr<SmallVector<int64_t>> dims = getTfShape(shape->second.shape());
  return succeeded(dims) && static_cast<int>(dims->size()) == rank &&
         (rank < 2 || (*dims)[1] == columns || (*dims)[1] < 0);
}

bool LookupMatcher::matchSafe(Lookup &lookup, int segment, int fill) {
  TfOutputRef result{segment, 0};
  // Rows whose lists were empty (filled with a default id) zeroed.
  int select = -1;
  for (int consumer : graph.getConsumers(segment))
    if (is({consumer, 0}, "Select") && input(consumer, 2) == result)
      select = consumer;
  if (select < 0)
    return false;
  TfOutputRef zeros = through(input(select, 1));
  if (!is(zeros, "ZerosLike") || input(zeros.node, 0) != result)
    return false;
  TfOutputRef tile = through(input(select, 0));
  if (!is(tile, "Tile"))
    return false;
  absorbed.append({segment, select, zeros.node, tile.node});
  TfOutputRef emptyRows = through(input(tile.node, 0));
  if (is(emptyRows, "Reshape")) {
    absorbed.push_back(emptyRows.node);
    emptyRows = through(input(emptyRows.node, 0));
  }
  if (emptyRows != TfOutputRef{fill, 2} || !absorbShapeArithmetic(input(tile.node, 1), {segment}))
    return false;
  // The result reshaped to dense_shape[:-1] + [dim]: the lookup's result.
  for (int consumer : graph.getConsumers(select))
    if (is({consumer, 0}, "Reshape") && input(consumer, 0) == TfOutputRef{select, 0})
      lookup.root = consumer;
  if (lookup.root == segment)
    return false;

  // Negative ids pruned: indices and values gathered where values >= 0.
  if (graph.getInputs(fill).size() != 4)
    return false;
  absorbed.push_back(fill);
  TfOutputRef keptIndices = through(input(fill, 0)), keptValues = through(input(fill, 1));
  TfOutputRef reshaped = through(input(fill, 2));
  if (!is(keptIndices, "GatherV2") || !is(keptValues, "GatherV2") ||
      !is(reshaped, "SparseReshape") || reshaped.output != 1)
    return false;
  absorbed.append({keptIndices.node, keptValues.node, reshaped.node});
  int sparseReshape = reshaped.node;
  TfOutputRef values = through(input(keptValues.node, 0));
  TfOutputRef kept = through(input(keptIndices.node, 1));
  if (through(input(keptIndices.node, 0)) != TfOutputRef{sparseReshape, 0} ||
      through(input(keptValues.node, 1)) != kept ||
      !isConstant(input(keptIndices.node, 2), {0}) ||
      !isConstant(input(keptValues.node, 2), {0}))
    return false;
  if (is(kept, "Reshape")) {
    absorbed.push_back(kept.node);
    kept = through(input(kept.node, 0));
  }
  if (!is(kept, "Where"))
    return false;
  TfOutputRef valid = through(input(kept.node, 0));
  if (!is(valid, "GreaterEqual") || through(input(valid.node, 0)) != values ||
      !isConstant(input(valid.node, 1), {0}))
    return false;
  absorbed.append({kept.node, valid.node});

  // The SparseTensor reshaped to 2-D: the same for a 2-D one.
  TfOutputRef indices = through(input(sparseReshape, 0));
  TfOutputRef shape = through(input(sparseReshape, 1));
  if (!isPlaceholder(indices, {tensorflow::DT_INT64}, 2, 2) ||
      !isPlaceholder(shape, {tensorflow::DT_INT64}, 1, 0) ||
      !absorbShapeArithmetic(input(sparseReshape, 2), {shape.node}) ||
      !absorbShapeArithmetic(input(lookup.root, 1), {shape.node, select}))
    return false;
  lookup.input = {indices.node, values.node, shape.node};
  return true;
}

std::optional<Lookup> LookupMatcher::match(int segment) {
  absorbed.clear();
  std::optional<EmbeddingCombiner> combiner = segmentCombiner(graph.node(segment).op());
  if (!combiner || graph.getInputs(segment).size() != 3)
    return std::nullopt;
  Lookup lookup;
  lookup.root = segment;
  lookup.combiner = *combiner;
  TfOutputRef values;
  TfOutputRef unique = through(input(segment, 1));
  if (is(unique, "Unique") && unique.output == 1) {
    absorbed.push_back(unique.node);
    TfOutputRef gather = through(input(segment, 0));
    if (!is(gather, "GatherV2") || gather.output != 0 ||
        dataType(gather.node, "Tparams") == tensorflow::DT_INVALID ||
        through(input(gather.node, 1)) != TfOutputRef{unique.node, 0} ||
        !isConstant(input(gather.node, 2), {0}) || intAttr(gather.node, "batch_dims") != 0)
      return std::nullopt;
    lookup.gather = gather.node;
    lookup.table = graph.node(gather.node).name();
    values = through(input(unique.node, 0));
  } else {
    // The table's rows gathered by the reduction itself (TensorFlow's fast
    // path: allow_fast_lookup, or a table computed in the graph).
    lookup.table = firstDataInput(graph.node(segment));
    values = unique;
  }
  TfOutputRef indices = firstColumnOf(through(input(segment, 2)));
  if (indices.node < 0)
    return std::nullopt;
  const std::initializer_list<int> idTypes = {tensorflow::DT_INT64, tensorflow::DT_INT32};
  if (is(indices, "SparseFillEmptyRows")) {
    if (indices.output != 0 || values != TfOutputRef{indices.node, 1} ||
        !matchSafe(lookup, segment, indices.node) ||
        !isPlaceholder({lookup.input.values, 0}, idTypes, 1, 0))
      return std::nullopt;
  } else {
    if (!isPlaceholder(indices, {tensorflow::DT_INT64}, 2, 2) ||
        !isPlaceholder(values, idTypes, 1, 0))
      return std::nullopt;
    lookup.input = {indices.node, values.node, -1};
  }
  if (broken)
    return std::nullopt;
  llvm::sort(absorbed);
  absorbed.erase(std::unique(absorbed.begin(), absorbed.end()), absorbed.end());
  // What the lookup absorbs, nothing else may read (the gathered rows
  // included: the gather becomes the table's read). The root and the
  // gather are rewritten to read other inputs.
  auto readsOnlyInside = [&](int node) {
    return llvm::all_of(graph.getConsumers(node), [&](int consumer) {
      return consumer == lookup.root || consumer == lookup.gather ||
             llvm::binary_search(absorbed, consumer);
    });
  };
  if (!llvm::all_of(absorbed, readsOnlyInside) ||
      (lookup.gather >= 0 && !readsOnlyInside(lookup.gather)))
    return std::nullopt;
  lookup.absorbed = absorbed;
  return lookup;
}

/// Which of a SparseTensor's Placeholders `node` is, for messages.
StringRef partOf(const SparseInput &input, int node) {
  return node == input.indices ? "indices" : node == input.values ? "values" : "dense_shape";
}

/// One error for a SparseTensor read outside its lookups, or paired
/// differently by two of them.
LogicalResult checkSparseInputs(const TfGraph &graph, ArrayRef<Lookup> lookups,
                                const std::function<Location(int)> &nodeLoc) {
  llvm::DenseSet<int> inside;
  llvm::DenseMap<int, int> valuesOf, indicesOf;
  for (const Lookup &lookup : lookups) {
    // The root reads the values itself where the reduction gathers the
    // table's rows (no Unique).
    inside.insert(lookup.root);
    inside.insert(lookup.absorbed.begin(), lookup.absorbed.end());
    auto [v, newV] = valuesOf.try_emplace(lookup.input.indices, lookup.input.values);
    auto [i, newI] = indicesOf.try_emplace(lookup.input.values, lookup.input.indices);
    if (v->second != lookup.input.values || i->second != lookup.input.indices)
      return emitError(nodeLoc(lookup.root))
             << "looks up ids '" << printable(graph.node(lookup.input.values).name())
             << "' at indices '" << printable(graph.node(lookup.input.indices).name())
             << "', which another lookup pairs differently; kiln reads a SparseTensor "
                "input as one set of id lists";
  }
  for (const Lookup &lookup : lookups) {
    const SparseInput &input = lookup.input;
    for (int placeholder : {input.indices, input.values, input.shape}) {
      if (placeholder < 0)
        continue;
      for (int consumer : graph.getConsumers(placeholder))
        if (!inside.contains(consumer))
          return emitError(nodeLoc(consumer))
                 << "reads the " << partOf(input, placeholder) << " of SparseTensor '"
                 << printable(graph.node(input.indices).name())
                 << "', which kiln takes only as the id lists of "
                    "tf.nn.embedding_lookup_sparse and safe_embedding_lookup_sparse "
                    "(docs/tensorflow.md, \"Sparse features\")";
    }
  }
  return success();
}

} // namespace

bool isTfSparseLookupOp(StringRef op) {
  return segmentCombiner(op) ||
         llvm::is_contained({"Unique", "SparseFillEmptyRows", "SparseReshape",
                             "SparseSegmentSumWithNumSegments",
                             "SparseSegmentMeanWithNumSegments",
                             "SparseSegmentSqrtNWithNumSegments"},
                            op);
}

FailureOr<TfSparseLookups>
rewriteTfSparseLookups(tensorflow::GraphDef &graphDef,
                       std::function<Location(int)> nodeLoc,
                       const llvm::StringSet<> &outputs) {
  TfSparseLookups result;
  if (llvm::none_of(graphDef.node(), [](const tensorflow::NodeDef &node) {
        return segmentCombiner(node.op()).has_value();
      }))
    return result;
  TfGraph graph(graphDef, nodeLoc);
  if (failed(graph.index()))
    return failure();
  LookupMatcher matcher(graph, nodeLoc);
  SmallVector<Lookup> lookups;
  for (int i = 0, e = graph.size(); i < e; ++i) {
    std::optional<Lookup> lookup = matcher.match(i);
    if (matcher.broken)
      return failure();
    auto named = [&](int n) { return n >= 0 && outputs.contains(graph.node(n).name()); };
    if (lookup && !named(lookup->gather) && llvm::none_of(lookup->absorbed, named))
      lookups.push_back(std::move(*lookup));
  }
  if (failed(checkSparseInputs(graph, lookups, nodeLoc)))
    return failure();

  // Names first: the rewrite changes the nodes the graph indexes.
  for (const Lookup &lookup : lookups) {
    std::string ids = graphDef.node(lookup.input.indices).name();
    int idType = graphDef.node(lookup.input.values).attr().find("dtype")->second.type();
    for (int node : lookup.absorbed)
      makeNoOp(*graphDef.mutable_node(node));
    if (lookup.gather >= 0) {
      // The gather becomes the table's read (a frozen variable's Identity).
      tensorflow::NodeDef &gather = *graphDef.mutable_node(lookup.gather);
      std::string source = firstDataInput(gather);
      tensorflow::AttrValue type = gather.attr().find("Tparams")->second;
      gather.set_op("Identity");
      gather.clear_input();
      gather.add_input(source);
      gather.clear_attr();
      (*gather.mutable_attr())["T"] = type;
    }
    tensorflow::NodeDef &root = *graphDef.mutable_node(lookup.root);
    root.clear_input();
    root.add_input(lookup.table);
    root.add_input(ids);
    tensorflow::NodeDef &lists = *graphDef.mutable_node(lookup.input.indices);
    (*lists.mutable_attr())["dtype"].set_type(static_cast<tensorflow::DataType>(idType));
    tensorflow::TensorShapeProto *shape = (*lists.mutable_attr())["shape"].mutable_shape();
    shape->Clear();
    shape->add_dim()->set_size(-1);
    shape->add_dim()->set_size(-1);
    result.bags[lookup.root] = lookup.combiner;
    result.idLists.insert(lookup.input.indices);
  }
  return result;
}

} // namespace kiln
