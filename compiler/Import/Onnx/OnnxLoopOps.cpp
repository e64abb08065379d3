//===- OnnxLoopOps.cpp - ONNX Loop: PyTorch's EmbeddingBag with offsets ---===//
//
// torch.onnx.export writes nn.EmbeddingBag (and F.embedding_bag) called with
// 1-D ids and offsets as a Loop over the bags, each iteration reducing the
// rows of ids[offsets[b] : offsets[b + 1]]: slices whose sizes only the data
// knows, which a static graph cannot hold. Kiln recognizes that loop by what
// it computes and imports all bags at once:
//
//   segment(i) = (the number of offsets <= i) - 1       a cumulative sum
//   result[b]  = the sum of weight(i) * row(i) over the ids i of segment b
//
// as kiln.gather, kiln.scatter_add_rows and a scan, which train: the table's
// gradient is the gather's (rows scattered by id). Ids past the last bag's
// end fall in no bag; an id outside the table adds nothing (PyTorch refuses
// one), as kiln.embedding_bag's padding id -1 does.
//
// The forms recognized (torch 2.x):
//  - the TorchScript exporter (dynamo=False): Loop(bags, true), its body
//    slicing the ids by Gather(offsets + [N], i) and Gather(offsets[1:], i),
//    gathering the table's rows at them, optionally times the sliced
//    per_sample_weights, reduced over axis 0: a scan output [bags, D];
//  - the dynamo exporter: the table gathered at every id (times the
//    per-sample weights) before the loop, which carries a counter and a
//    sequence; each iteration slices those rows by Slice(offsets', i, i + 1)
//    and (i + 1, i + 2), reduces them (zeros for an empty bag) and appends
//    the row; ConcatFromSequence joins them. With padding_idx an inner Loop
//    collects the positions whose id is not padding_idx and the rows are
//    gathered at those.
// Modes sum and mean; mode max is refused, as is any other Loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/DiagnosticText.h"
#include "compiler/Import/Onnx/OnnxOps.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "dialects/Kiln/FeedAttrs.h"
#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>
#include <optional>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;
using Node = onnx::NodeProto;

bool isOneOf(StringRef opType, std::initializer_list<StringRef> types) {
  return llvm::is_contained(types, opType);
}

/// Input `i` of `node`, or "" past its inputs (a malformed file).
const std::string &in(const Node &node, int i) {
  static const std::string none;
  return i < node.input_size() ? node.input(i) : none;
}

int64_t intAttribute(const Node &node, StringRef name, int64_t defaultValue) {
  for (const onnx::AttributeProto &attribute : node.attribute())
    if (attribute.name() == name)
      return attribute.i();
  return defaultValue;
}

/// A one-element integer or boolean tensor's value, read from the proto.
std::optional<int64_t> scalarOf(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::INT64:
    if (tensor.int64_data_size() == 1)
      return tensor.int64_data(0);
    if (tensor.raw_data().size() == 8) {
      int64_t value;
      std::memcpy(&value, tensor.raw_data().data(), 8);
      return value;
    }
    return std::nullopt;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL:
    if (tensor.int32_data_size() == 1)
      return tensor.int32_data(0);
    if (tensor.raw_data().size() == 4) {
      int32_t value;
      std::memcpy(&value, tensor.raw_data().data(), 4);
      return value;
    }
    if (tensor.data_type() == onnx::TensorProto::BOOL && tensor.raw_data().size() == 1)
      return tensor.raw_data()[0] != 0;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// The nodes of a Loop's body and of every graph nested in it that can run,
/// by output: of an If whose condition its own constants decide (the dynamo
/// exporter, unoptimized, chooses EmbeddingBag's mode so), the branch taken.
class BodyNodes {
public:
  explicit BodyNodes(const onnx::GraphProto &body) { add(body); }
  const Node *producer(StringRef name) const { return producers.lookup(name); }
  bool isInside(StringRef name) const { return defined.contains(name); }
  ArrayRef<const Node *> all() const { return nodes; }
  /// Whether `graph` (the body or a graph nested in it) can run.
  bool isLive(const onnx::GraphProto &graph) const { return live.contains(&graph); }

  /// Whether `name` holds zeros only: a Constant, a subgraph initializer or
  /// an Expand of one (an empty bag's row).
  bool isZeros(StringRef name) const {
    const Node *node = producer(name);
    while (node && isOneOf(node->op_type(), {"Cast", "CastLike", "Identity", "Expand"})) {
      name = in(*node, 0);
      node = producer(name);
    }
    const onnx::TensorProto *tensor = nullptr;
    if (node && node->op_type() == "Constant") {
      for (const onnx::AttributeProto &attribute : node->attribute()) {
        if (attribute.name() == "value_float" || attribute.name() == "value_int")
          return attribute.f() == 0 && attribute.i() == 0;
        if (attribute.name() == "value_floats" || attribute.name() == "value_ints")
          return llvm::all_of(attribute.floats(), [](float v) { return v == 0; }) &&
                 llvm::all_of(attribute.ints(), [](int64_t v) { return v == 0; });
        if (attribute.name() == "value" && attribute.has_t())
          tensor = &attribute.t();
      }
    } else if (!node) {
      tensor = initializers.lookup(name);
    }
    if (!tensor)
      return false;
    return llvm::all_of(tensor->raw_data(), [](char c) { return c == 0; }) &&
           llvm::all_of(tensor->float_data(), [](float v) { return v == 0; }) &&
           llvm::all_of(tensor->int64_data(), [](int64_t v) { return v == 0; }) &&
           llvm::all_of(tensor->int32_data(), [](int32_t v) { return v == 0; });
  }

  /// A condition the body's constants decide: a constant, Equal of two, Not.
  std::optional<bool> condition(StringRef name) const {
    const Node *node = producer(name);
    if (node && node->op_type() == "Not")
      if (std::optional<bool> inner = condition(in(*node, 0)))
        return !*inner;
    if (node && node->op_type() == "Equal" && node->input_size() == 2) {
      std::optional<int64_t> lhs = constant(in(*node, 0)), rhs = constant(in(*node, 1));
      if (lhs && rhs)
        return *lhs == *rhs;
    }
    if (std::optional<int64_t> value = constant(name))
      return *value != 0;
    return std::nullopt;
  }

private:
  void add(const onnx::GraphProto &graph) {
    live.insert(&graph);
    for (const onnx::ValueInfoProto &input : graph.input())
      defined.insert(input.name());
    for (const onnx::TensorProto &initializer : graph.initializer()) {
      defined.insert(initializer.name());
      initializers[initializer.name()] = &initializer;
    }
    for (const Node &node : graph.node()) {
      nodes.push_back(&node);
      for (const std::string &output : node.output()) {
        defined.insert(output);
        producers[output] = &node;
      }
      std::optional<bool> taken;
      if (node.op_type() == "If" && node.input_size() == 1)
        taken = condition(node.input(0));
      for (const onnx::AttributeProto &attribute : node.attribute()) {
        if (taken && attribute.name() != (*taken ? "then_branch" : "else_branch"))
          continue;
        if (attribute.has_g())
          add(attribute.g());
        for (const onnx::GraphProto &nested : attribute.graphs())
          add(nested);
      }
    }
  }

  /// A Constant's value, when it is one integer (a Cast to bool makes it 0
  /// or 1).
  std::optional<int64_t> constant(StringRef name) const {
    const Node *node = producer(name);
    bool toBool = false;
    while (node && isOneOf(node->op_type(), {"Cast", "CastLike", "Identity"})) {
      if (node->op_type() == "Cast") {
        int64_t to = intAttribute(*node, "to", 0);
        if (to == onnx::TensorProto::BOOL)
          toBool = true;
        else if (to != onnx::TensorProto::INT64 && to != onnx::TensorProto::INT32)
          return std::nullopt;
      }
      node = producer(in(*node, 0));
    }
    if (!node || node->op_type() != "Constant")
      return std::nullopt;
    std::optional<int64_t> value;
    for (const onnx::AttributeProto &attribute : node->attribute()) {
      if (attribute.name() == "value_int")
        value = attribute.i();
      if (attribute.name() == "value" && attribute.has_t())
        value = scalarOf(attribute.t());
    }
    if (value && toBool)
      return *value != 0;
    return value;
  }

  llvm::StringMap<const Node *> producers;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringSet<> defined;
  llvm::SmallPtrSet<const onnx::GraphProto *, 8> live;
  SmallVector<const Node *> nodes;
};

/// offsets[i + shift] for the loop's counter i: an outer tensor and a shift.
struct Bound {
  std::string offsets;
  int64_t shift = 0;
  bool operator==(const Bound &other) const {
    return offsets == other.offsets && shift == other.shift;
  }
};

/// What one reduction in the body reads: rows from `start` to `end`.
struct BagRows {
  /// The outer [N, D] rows sliced (dynamo), or empty with `table` and `ids`.
  std::string rows;
  /// The outer table gathered at the sliced outer ids (TorchScript).
  std::string table, ids;
  /// The outer per_sample_weights, sliced as the ids; may be empty.
  std::string sampleWeights;
  /// padding_idx and the outer ids it is compared with (dynamo).
  std::optional<int64_t> paddingIdx;
  std::string paddingIds;
  Bound start, end;
  bool operator==(const BagRows &o) const {
    return rows == o.rows && table == o.table && ids == o.ids &&
           sampleWeights == o.sampleWeights && paddingIdx == o.paddingIdx &&
           paddingIds == o.paddingIds && start == o.start && end == o.end;
  }
};

/// Reads a Loop's body as PyTorch's EmbeddingBag; each `match*` sets `why`
/// (what it did not find) when it fails.
class EmbeddingBagLoop {
public:
  EmbeddingBagLoop(OnnxNode &loop, const onnx::GraphProto &body)
      : loop(loop), body(body), nodes(body) {}

  LogicalResult convert();

private:
  LogicalResult refuse(const Twine &why) {
    return loop.emitError() << "kiln imports a Loop only as the one torch.onnx.export writes "
                               "for nn.EmbeddingBag with offsets (mode 'sum' or 'mean'); "
                            << why;
  }

  /// `name` through ops that keep its values (casts, reshapes).
  StringRef strip(StringRef name) const {
    while (const Node *node = nodes.producer(name)) {
      if (!isOneOf(node->op_type(),
                   {"Identity", "Cast", "CastLike", "Reshape", "Unsqueeze", "Squeeze"}))
        break;
      name = in(*node, 0);
    }
    return name;
  }
  const Node *producerOf(StringRef name) const { return nodes.producer(strip(name)); }
  bool isOuter(StringRef name) const { return !name.empty() && !nodes.isInside(name); }

  std::optional<SmallVector<int64_t>> constantInts(StringRef name);
  std::optional<int64_t> counterPlus(StringRef name);
  std::optional<Bound> readBound(StringRef name);
  bool sliceAlongRows(const Node &slice);
  std::optional<BagRows> matchRows(StringRef name);
  std::optional<BagRows> matchBagSlice(const Node &slice);
  std::optional<BagRows> matchPaddingLoop(const Node &inner, StringRef rows);
  void findCounters();
  std::optional<int64_t> tripCount();
  /// Whether `name` is a bag's row: a reduction's, an If's whose branches
  /// give one or zeros, the dynamo exporter's division of mean's last bag.
  bool isBagRow(StringRef name, ArrayRef<const Node *> reductions, bool mean) const;
  LogicalResult checkContiguous(const BagRows &rows, int64_t bags);
  Result build(const BagRows &rows, int64_t bags, bool mean);
  Result idWeights(const BagRows &rows, Value ids, int64_t tableRows);

  OnnxNode &loop;
  const onnx::GraphProto &body;
  BodyNodes nodes;
  llvm::StringSet<> counters;
  std::string why;
};

std::optional<SmallVector<int64_t>> EmbeddingBagLoop::constantInts(StringRef name) {
  name = strip(name);
  DenseElementsAttr value;
  if (const Node *node = nodes.producer(name)) {
    if (node->op_type() != "Constant")
      return std::nullopt;
    for (const onnx::AttributeProto &attribute : node->attribute()) {
      if (attribute.name() == "value_int")
        return SmallVector<int64_t>{attribute.i()};
      if (attribute.name() == "value_ints")
        return SmallVector<int64_t>(attribute.ints().begin(), attribute.ints().end());
      if (attribute.name() == "value" && attribute.has_t()) {
        FailureOr<DenseElementsAttr> decoded =
            decodeOnnxTensor(attribute.t(), loop.getModelDir(), loop.getLoc());
        if (failed(decoded))
          return std::nullopt;
        value = *decoded;
      }
    }
  } else if (isOuter(name)) {
    value = loop.lookupOuterConstant(name);
  }
  if (!value || !llvm::isa<IntegerType>(value.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &v : value.getValues<APInt>())
    ints.push_back(v.getSExtValue());
  return ints;
}

std::optional<int64_t> EmbeddingBagLoop::counterPlus(StringRef name) {
  name = strip(name);
  if (counters.contains(name))
    return 0;
  const Node *node = nodes.producer(name);
  if (!node || node->op_type() != "Add" || node->input_size() != 2)
    return std::nullopt;
  for (int side : {0, 1}) {
    std::optional<int64_t> k = counterPlus(in(*node, side));
    std::optional<SmallVector<int64_t>> c = constantInts(in(*node, 1 - side));
    if (k && c && c->size() == 1)
      return *k + c->front();
  }
  return std::nullopt;
}

bool EmbeddingBagLoop::sliceAlongRows(const Node &slice) {
  if (slice.input_size() < 3)
    return false;
  if (slice.input_size() > 3 && !in(slice, 3).empty()) {
    std::optional<SmallVector<int64_t>> axes = constantInts(in(slice, 3));
    if (!axes || *axes != SmallVector<int64_t>{0})
      return false;
  }
  if (slice.input_size() > 4 && !in(slice, 4).empty()) {
    std::optional<SmallVector<int64_t>> steps = constantInts(in(slice, 4));
    if (!steps || *steps != SmallVector<int64_t>{1})
      return false;
  }
  return true;
}

std::optional<Bound> EmbeddingBagLoop::readBound(StringRef name) {
  const Node *node = producerOf(name);
  if (!node)
    return std::nullopt;
  if (node->op_type() == "Gather" && intAttribute(*node, "axis", 0) == 0 &&
      isOuter(in(*node, 0)))
    if (std::optional<int64_t> k = counterPlus(in(*node, 1)))
      return Bound{in(*node, 0), *k};
  if (node->op_type() == "Slice" && sliceAlongRows(*node) && isOuter(in(*node, 0))) {
    std::optional<int64_t> from = counterPlus(in(*node, 1));
    std::optional<int64_t> to = counterPlus(in(*node, 2));
    if (from && to && *to == *from + 1)
      return Bound{in(*node, 0), *from};
  }
  return std::nullopt;
}

/// The dynamo exporter's padding_idx loop: positions j from offsets[i] to
/// offsets[i + 1] whose id is not padding_idx, the rows gathered there.
std::optional<BagRows> EmbeddingBagLoop::matchPaddingLoop(const Node &inner, StringRef rows) {
  const onnx::GraphProto *innerBody = nullptr;
  for (const onnx::AttributeProto &attribute : inner.attribute())
    if (attribute.name() == "body" && attribute.has_g())
      innerBody = &attribute.g();
  if (!innerBody || innerBody->output_size() < 1) {
    why = "its inner Loop is not the one that skips padding_idx";
    return std::nullopt;
  }
  BagRows found;
  found.rows = rows.str();
  // Its condition Less(j + 1, offsets[i + 1]), j carried from offsets[i].
  std::optional<Bound> start, end;
  const Node *condition = producerOf(innerBody->output(0).name());
  const Node *next = condition && condition->op_type() == "Less"
                         ? producerOf(in(*condition, 0)) : nullptr;
  if (next && next->op_type() == "Add") {
    end = readBound(in(*condition, 1));
    for (int k = 2; k < inner.input_size() && k < innerBody->input_size(); ++k)
      if (llvm::is_contained({strip(in(*next, 0)), strip(in(*next, 1))},
                             StringRef(innerBody->input(k).name())))
        start = readBound(in(inner, k));
  }
  // Inside the inner loop: Equal(id, padding_idx) and Gather(ids, j).
  BodyNodes innerNodes(*innerBody);
  for (const Node *node : innerNodes.all()) {
    if (node->op_type() == "Equal")
      for (int side : {0, 1})
        if (std::optional<SmallVector<int64_t>> c = constantInts(in(*node, side));
            c && c->size() == 1)
          found.paddingIdx = c->front();
    if (node->op_type() == "Gather" && isOuter(in(*node, 0)) &&
        getElementTypeOrSelf(loop.lookupOuter(in(*node, 0)).getType()).isInteger(64))
      found.paddingIds = in(*node, 0);
  }
  if (!start || !end || !found.paddingIdx || found.paddingIds.empty()) {
    why = "its inner Loop is not the one that skips padding_idx";
    return std::nullopt;
  }
  found.start = *start;
  found.end = *end;
  return found;
}

std::optional<BagRows> EmbeddingBagLoop::matchRows(StringRef name) {
  const Node *node = producerOf(name);
  if (!node) {
    why = "a reduction reads no slice of rows";
    return std::nullopt;
  }
  if (node->op_type() == "Mul" && node->input_size() == 2) {
    // The rows times per_sample_weights sliced as the ids.
    for (int side : {0, 1}) {
      const Node *weights = producerOf(in(*node, side));
      if (!weights || weights->op_type() != "Slice" || !sliceAlongRows(*weights) ||
          !isOuter(in(*weights, 0)))
        continue;
      std::optional<BagRows> rows = matchRows(in(*node, 1 - side));
      std::optional<Bound> start = readBound(in(*weights, 1));
      std::optional<Bound> end = readBound(in(*weights, 2));
      if (!rows || !start || !end || !(*start == rows->start) || !(*end == rows->end))
        break;
      rows->sampleWeights = in(*weights, 0);
      return rows;
    }
    why = "a reduction reads a product that is not rows times per_sample_weights";
    return std::nullopt;
  }
  if (node->op_type() == "Gather" && intAttribute(*node, "axis", 0) == 0 &&
      isOuter(in(*node, 0))) {
    const Node *positions = producerOf(in(*node, 1));
    if (positions && positions->op_type() == "Loop")
      return matchPaddingLoop(*positions, in(*node, 0));
    if (positions)
      if (std::optional<BagRows> rows = matchBagSlice(*positions)) {
        rows->table = in(*node, 0);
        rows->ids = in(*positions, 0);
        return rows;
      }
    why = "a reduction reads a gather that is not of the bag's ids";
    return std::nullopt;
  }
  if (std::optional<BagRows> rows = matchBagSlice(*node)) {
    rows->rows = in(*node, 0);
    return rows;
  }
  why = "a reduction reads no slice of rows from offsets[i] to offsets[i + 1]";
  return std::nullopt;
}

/// A Slice of an outer tensor's rows from offsets[i] to offsets[i + 1]: the
/// bounds of a BagRows.
std::optional<BagRows> EmbeddingBagLoop::matchBagSlice(const Node &slice) {
  if (slice.op_type() != "Slice" || !sliceAlongRows(slice) || !isOuter(in(slice, 0)))
    return std::nullopt;
  std::optional<Bound> start = readBound(in(slice, 1));
  std::optional<Bound> end = readBound(in(slice, 2));
  if (!start || !end)
    return std::nullopt;
  BagRows rows;
  rows.start = *start;
  rows.end = *end;
  return rows;
}

/// The iteration number, and any carried value that starts at 0 and grows by 1.
void EmbeddingBagLoop::findCounters() {
  if (body.input_size() > 0)
    counters.insert(body.input(0).name());
  for (int k = 2; k < loop.getProto().input_size() && k < body.input_size(); ++k) {
    std::optional<SmallVector<int64_t>> initial = constantInts(loop.getProto().input(k));
    if (!initial || *initial != SmallVector<int64_t>{0} || k - 1 >= body.output_size())
      continue;
    const Node *next = nodes.producer(body.output(k - 1).name());
    if (!next || next->op_type() != "Add")
      continue;
    for (int side : {0, 1}) {
      std::optional<SmallVector<int64_t>> one = constantInts(in(*next, 1 - side));
      if (strip(in(*next, side)) == body.input(k).name() && one &&
          *one == SmallVector<int64_t>{1})
        counters.insert(body.input(k).name());
    }
  }
}

/// The number of iterations: the trip count, or the bound of the counter's
/// `Less(i + 1, bags)` condition.
std::optional<int64_t> EmbeddingBagLoop::tripCount() {
  // The first iteration's condition must hold.
  if (loop.hasInput(1)) {
    std::optional<SmallVector<int64_t>> first = constantInts(loop.getProto().input(1));
    if (!first || first->size() != 1 || first->front() == 0)
      return std::nullopt;
  }
  std::optional<int64_t> count;
  if (loop.hasInput(0)) {
    std::optional<SmallVector<int64_t>> given = constantInts(loop.getProto().input(0));
    if (!given || given->size() != 1)
      return std::nullopt;
    count = given->front();
  }
  StringRef next = body.output(0).name();
  std::optional<SmallVector<int64_t>> always = constantInts(next);
  if (nodes.condition(next) == true || (always && always->size() == 1 && always->front() != 0))
    return count;
  const Node *condition = producerOf(next);
  if (!condition || condition->op_type() != "Less" || counterPlus(in(*condition, 0)) != 1)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> bound = constantInts(in(*condition, 1));
  if (!bound || bound->size() != 1)
    return std::nullopt;
  return count ? std::min(*count, bound->front()) : bound->front();
}

bool EmbeddingBagLoop::isBagRow(StringRef name, ArrayRef<const Node *> reductions,
                                bool mean) const {
  const Node *node = producerOf(name);
  if (!node)
    return false;
  if (llvm::is_contained(reductions, node))
    return true;
  // The dynamo exporter's mean divides the last bag's sum by the ids left.
  if (node->op_type() == "Div" && mean)
    return isBagRow(in(*node, 0), reductions, mean);
  if (node->op_type() != "If")
    return false;
  // Every branch that can run gives the row, or zeros (an empty bag).
  int index = llvm::find(node->output(), strip(name)) - node->output().begin();
  for (const onnx::AttributeProto &attribute : node->attribute()) {
    if (!attribute.has_g() || !nodes.isLive(attribute.g()))
      continue;
    if (index >= attribute.g().output_size())
      return false;
    StringRef out = attribute.g().output(index).name();
    if (!isBagRow(out, reductions, mean) && !nodes.isZeros(strip(out)))
      return false;
  }
  return true;
}

/// Bag b must end where bag b + 1 starts: ends read the starts' tensor one
/// further, or that tensor from its element 1.
LogicalResult EmbeddingBagLoop::checkContiguous(const BagRows &rows, int64_t bags) {
  Value starts = loop.lookupOuter(rows.start.offsets);
  bool vector = KilnOpBuilder::rankOf(starts) == 1;
  if (!vector || rows.start.shift < 0 ||
      rows.start.shift + bags + 1 > KilnOpBuilder::shapeOf(starts)[0])
    return refuse("its offsets '" + printable(rows.start.offsets) + "' do not hold " +
                  Twine(bags + 1) + " bounds from position " + Twine(rows.start.shift));
  if (rows.end.offsets == rows.start.offsets && rows.end.shift == rows.start.shift + 1)
    return success();
  Value ends = loop.lookupOuter(rows.end.offsets);
  auto slice = ends.getDefiningOp<SliceOp>();
  if (slice && slice.getOperand() == starts && slice.getStart().size() == 1 &&
      slice.getStart()[0] == 1 && slice.getStep()[0] == 1 && rows.end.shift == rows.start.shift)
    return success();
  // Offsets known at import time (the slice folded): compared by value.
  DenseElementsAttr startValues = KilnOpBuilder::constantValueOf(starts);
  DenseElementsAttr endValues = KilnOpBuilder::constantValueOf(ends);
  if (startValues && endValues && KilnOpBuilder::rankOf(ends) == 1 && rows.end.shift >= 0 &&
      rows.end.shift + bags <= endValues.getNumElements() &&
      llvm::isa<IntegerType>(startValues.getElementType()) &&
      llvm::isa<IntegerType>(endValues.getElementType())) {
    SmallVector<APInt> first(startValues.getValues<APInt>());
    SmallVector<APInt> last(endValues.getValues<APInt>());
    bool meet = true;
    for (int64_t b = 0; b < bags; ++b)
      meet &= last[b + rows.end.shift].getSExtValue() ==
              first[b + rows.start.shift + 1].getSExtValue();
    if (meet)
      return success();
  }
  auto at = [](const Bound &bound) {
    return "'" + printable(bound.offsets) + "'[i" +
           (bound.shift ? " + " + std::to_string(bound.shift) : std::string()) + "]";
  };
  return refuse("its bags do not end where the next one starts (bag i runs from " +
                at(rows.start) + " to " + at(rows.end) + ")");
}

/// Each id's weight: 0 outside the table and at padding_idx, else 1.
Result EmbeddingBagLoop::idWeights(const BagRows &rows, Value ids, int64_t tableRows) {
  KilnOpBuilder &b = loop.getBuilder();
  int64_t n = KilnOpBuilder::shapeOf(ids)[0];
  auto weightType = RankedTensorType::get({n}, b.getBuilder().getF32Type());
  Result one = b.constant(DenseElementsAttr::get(weightType, 1.0f));
  Result zero = b.constant(DenseElementsAttr::get(weightType, 0.0f));
  if (failed(one) || failed(zero))
    return failure();
  Value weights = *one;
  auto keepWhere = [&](ComparePredicate predicate, double bound) -> LogicalResult {
    Result limit = b.splatLike(ids, bound);
    Result test = succeeded(limit) ? b.compare(predicate, ids, *limit) : limit;
    Result kept = succeeded(test) ? b.select(*test, weights, *zero) : test;
    if (failed(kept))
      return failure();
    weights = *kept;
    return success();
  };
  if (failed(keepWhere(ComparePredicate::ge, 0)))
    return failure();
  if (tableRows > 0 && failed(keepWhere(ComparePredicate::lt, tableRows)))
    return failure();
  if (rows.paddingIdx && failed(keepWhere(ComparePredicate::ne, *rows.paddingIdx)))
    return failure();
  return weights;
}

/// The graph input `value` is, or is a concatenation, slice, reshape, cast
/// or broadcast of (the first operand of each), or a select from (where not
/// chosen); null if none.
BlockArgument inputBehind(Value value) {
  while (value) {
    if (auto argument = llvm::dyn_cast<BlockArgument>(value))
      return llvm::isa<func::FuncOp>(argument.getOwner()->getParentOp()) ? argument
                                                                          : BlockArgument();
    Operation *def = value.getDefiningOp();
    if (auto select = llvm::dyn_cast_or_null<SelectOp>(def)) {
      // ScatterElements at constant indices: the data where not written.
      value = select.getOnFalse();
      continue;
    }
    if (!llvm::isa_and_nonnull<ConcatOp, SliceOp, ReshapeOp, CastOp, BroadcastOp>(def))
      return {};
    value = def->getOperand(0);
  }
  return {};
}

/// Tells training how to fill the bag's inputs when they are graph inputs
/// and the ids divide evenly among the bags: each example's ids (and
/// per-sample weights) padded to ids/bags, the offsets every ids/bags
/// (FeedAttrs.h).
void markBagInputs(Value ids, Value offsets, Value sampleWeights, int64_t bags) {
  BlockArgument idsInput = ids ? inputBehind(ids) : BlockArgument();
  BlockArgument offsetsInput = inputBehind(offsets);
  if (!idsInput || !offsetsInput || KilnOpBuilder::rankOf(idsInput) != 1)
    return;
  int64_t n = KilnOpBuilder::shapeOf(idsInput)[0];
  if (n % bags != 0)
    return;
  auto function = llvm::cast<func::FuncOp>(idsInput.getOwner()->getParentOp());
  Builder b(function.getContext());
  IntegerAttr perExample = b.getI64IntegerAttr(n / bags);
  function.setArgAttr(idsInput.getArgNumber(), kIdsPerExampleAttr, perExample);
  function.setArgAttr(offsetsInput.getArgNumber(), kOffsetsStrideAttr, perExample);
  BlockArgument weights = sampleWeights ? inputBehind(sampleWeights) : BlockArgument();
  if (weights && KilnOpBuilder::shapeOf(weights) == ArrayRef<int64_t>{n})
    function.setArgAttr(weights.getArgNumber(), kIdsPerExampleAttr, perExample);
}

/// The ids a table was gathered at to make `rows` (times weights), if so.
GatherOp gatherOfRows(Value rows) {
  if (auto gather = rows.getDefiningOp<GatherOp>())
    return gather.getAxis() == 0 && KilnOpBuilder::rankOf(gather.getIndices()) == 1 ? gather
                                                                                     : nullptr;
  if (auto mul = rows.getDefiningOp<MulOp>())
    for (Value side : mul->getOperands())
      if (GatherOp gather = gatherOfRows(side))
        return gather;
  return nullptr;
}

Result EmbeddingBagLoop::build(const BagRows &found, int64_t bags, bool mean) {
  KilnOpBuilder &b = loop.getBuilder();
  Value rows, ids, sample;
  int64_t tableRows = 0;
  if (!found.rows.empty()) {
    rows = loop.lookupOuter(found.rows);
    if (GatherOp gather = gatherOfRows(rows)) {
      ids = gather.getIndices();
      tableRows = KilnOpBuilder::shapeOf(gather.getTable())[0];
      // The per-sample weights the dynamo exporter multiplies the rows by.
      if (auto mul = rows.getDefiningOp<MulOp>())
        sample = mul.getOperand(mul.getOperand(0) == gather.getResult() ? 1 : 0);
    } else if (!found.paddingIds.empty()) {
      ids = loop.lookupOuter(found.paddingIds);
    }
  } else {
    Value table = loop.lookupOuter(found.table);
    ids = loop.lookupOuter(found.ids);
    if (KilnOpBuilder::rankOf(table) != 2 || KilnOpBuilder::rankOf(ids) != 1)
      return refuse("it gathers a table of rank " + Twine(KilnOpBuilder::rankOf(table)) +
                    " at ids of rank " + Twine(KilnOpBuilder::rankOf(ids)) +
                    " (nn.EmbeddingBag's are 2 and 1)");
    tableRows = KilnOpBuilder::shapeOf(table)[0];
    Result gathered = b.gather(table, ids, 0);
    if (failed(gathered))
      return failure();
    rows = *gathered;
  }
  if (KilnOpBuilder::rankOf(rows) != 2 || !llvm::isa<FloatType>(getElementTypeOrSelf(rows)))
    return refuse("its rows are not a float matrix");
  int64_t n = KilnOpBuilder::shapeOf(rows)[0];
  if (ids && KilnOpBuilder::shapeOf(ids)[0] != n)
    return refuse("its ids and rows differ in number");
  if (n >= (int64_t{1} << 24))
    return loop.emitError() << "has " << n << " ids; kiln's EmbeddingBag takes fewer than 2^24";
  OpBuilder &ob = b.getBuilder();
  Type f32 = ob.getF32Type();

  // Each id's bag: the running count of the bounds at or before it, less 1.
  // Ids before offsets[0] get -1 and ids from the last end on get `bags`:
  // scatter_add_rows drops both.
  Result bounds = b.slice(loop.lookupOuter(found.start.offsets), {found.start.shift},
                          {found.start.shift + bags + 1}, {1});
  Result ones = b.constant(DenseElementsAttr::get(RankedTensorType::get({bags + 1, 1}, f32), 1.0f));
  if (failed(bounds) || failed(ones))
    return failure();
  Result starts = b.scatterAddRows(*ones, *bounds, n);
  Result running = succeeded(starts) ? b.cumulativeSum(*starts, 0, false) : starts;
  Result one = succeeded(running) ? b.splatLike(*running, 1.0) : running;
  Result bag = succeeded(one) ? b.binary<SubOp>(*running, *one) : one;
  bag = succeeded(bag) ? b.cast(*bag, ob.getI64Type()) : bag;
  bag = succeeded(bag) ? b.reshape(*bag, {n}) : bag;
  if (failed(bag))
    return failure();

  // Each id's weight: 0 outside the table or at padding_idx, times its
  // per-sample weight.
  Value counted;
  Value weighted = rows;
  if (ids) {
    Result weights = idWeights(found, ids, tableRows);
    if (failed(weights))
      return failure();
    counted = *weights;
  }
  Value weights = counted;
  if (!found.sampleWeights.empty()) {
    sample = loop.lookupOuter(found.sampleWeights);
    if (KilnOpBuilder::shapeOf(sample) != ArrayRef<int64_t>{n})
      return refuse("its per_sample_weights are not one per id");
    Result cast = getElementTypeOrSelf(sample) == f32 ? Result(sample) : b.cast(sample, f32);
    // A padding id's weight is never read (whatever the data holds there).
    Result zero = succeeded(cast) ? b.splatLike(*cast, 0.0) : cast;
    Result kept = succeeded(zero) && weights ? b.compare(ComparePredicate::ne, weights, *zero)
                                             : zero;
    Result chosen = succeeded(kept) && weights ? b.select(*kept, *cast, *zero) : cast;
    if (failed(chosen))
      return failure();
    weights = *chosen;
  }
  Type floatType = getElementTypeOrSelf(rows);
  if (weights) {
    Result column = b.reshape(weights, {n, 1});
    column = succeeded(column) && floatType != f32 ? b.cast(*column, floatType) : column;
    Result product = succeeded(column) ? b.binary<MulOp>(rows, *column) : column;
    if (failed(product))
      return failure();
    weighted = *product;
  }
  markBagInputs(ids, loop.lookupOuter(found.start.offsets), sample, bags);
  Result sums = b.scatterAddRows(weighted, *bag, bags);
  if (failed(sums) || !mean)
    return sums;
  // Mean: over the ids counted (all, or those with weight 1), 0 for none.
  Result perId = counted ? b.reshape(counted, {n, 1})
                         : b.constant(DenseElementsAttr::get(
                               RankedTensorType::get({n, 1}, f32), 1.0f));
  Result count = succeeded(perId) ? b.scatterAddRows(*perId, *bag, bags) : perId;
  Result atLeastOne = succeeded(count) ? b.splatLike(*count, 1.0) : count;
  count = succeeded(atLeastOne) ? b.binary<MaximumOp>(*count, *atLeastOne) : atLeastOne;
  count = succeeded(count) && floatType != f32 ? b.cast(*count, floatType) : count;
  if (failed(count))
    return failure();
  return b.binary<DivOp>(*sums, *count);
}

LogicalResult EmbeddingBagLoop::convert() {
  int numCarried = loop.getProto().input_size() - 2;
  int numScanned = static_cast<int>(loop.getNumOutputs()) - numCarried;
  if (body.input_size() != 2 + numCarried || numScanned < 0 ||
      body.output_size() != 1 + numCarried + numScanned)
    return loop.emitError() << "has " << numCarried << " loop-carried value(s) and "
                            << loop.getNumOutputs() << " output(s), but its body takes "
                            << body.input_size() << " input(s) and gives "
                            << body.output_size()
                            << " output(s) (the iteration number, the condition and each "
                               "carried value in; the condition, each carried value and each "
                               "scanned row out)";
  findCounters();
  SmallVector<const Node *> reductions;
  bool mean = false, max = false;
  for (const Node *node : nodes.all()) {
    if (!StringRef(node->op_type()).starts_with("Reduce"))
      continue;
    mean |= node->op_type() == "ReduceMean";
    max |= node->op_type() == "ReduceMax";
    if (!isOneOf(node->op_type(), {"ReduceSum", "ReduceMean", "ReduceMax"}))
      return refuse("it holds a " + printable(node->op_type()));
    reductions.push_back(node);
  }
  if (reductions.empty())
    return refuse("this one reduces no rows");
  if (max)
    return loop.emitError() << "is nn.EmbeddingBag's mode 'max', which kiln does not import "
                               "(modes 'sum' and 'mean' it does)";
  std::optional<BagRows> rows;
  std::optional<bool> keepDims;
  for (const Node *reduction : reductions) {
    SmallVector<int64_t> axes;
    for (const onnx::AttributeProto &attribute : reduction->attribute())
      if (attribute.name() == "axes")
        axes.assign(attribute.ints().begin(), attribute.ints().end());
    if (reduction->input_size() > 1)
      if (std::optional<SmallVector<int64_t>> given = constantInts(in(*reduction, 1)))
        axes = *given;
    if (axes != SmallVector<int64_t>{0})
      return refuse("a " + printable(reduction->op_type()) + " is not over axis 0");
    bool keep = intAttribute(*reduction, "keepdims", 1) != 0;
    std::optional<BagRows> read = matchRows(in(*reduction, 0));
    if (!read)
      return refuse(why);
    if ((rows && !(*rows == *read)) || (keepDims && *keepDims != keep))
      return refuse("its reductions read different rows");
    rows = read;
    keepDims = keep;
  }
  if (mean && !rows->sampleWeights.empty())
    return refuse("it weights a mean by per_sample_weights");
  std::optional<int64_t> bags = tripCount();
  if (!bags || *bags < 1)
    return refuse("its number of iterations is not known at import time");
  if (failed(checkContiguous(*rows, *bags)))
    return failure();
  Result result = build(*rows, *bags, mean);
  if (failed(result))
    return failure();

  // Each iteration's row: [D], or [1, D] where the reductions keep the axis.
  KilnOpBuilder &b = loop.getBuilder();
  int64_t width = KilnOpBuilder::shapeOf(*result)[1];
  SmallVector<int64_t> stackedShape = {*bags};
  if (*keepDims)
    stackedShape.push_back(1);
  stackedShape.push_back(width);
  Result stacked = b.reshape(*result, stackedShape);
  if (failed(stacked))
    return failure();
  for (int k = 0; k < numCarried; ++k) {
    StringRef initial = loop.getProto().input(k + 2);
    StringRef carried = body.input(k + 2).name();
    const Node *next = producerOf(body.output(k + 1).name());
    if (counters.contains(carried)) {
      auto type = llvm::dyn_cast<RankedTensorType>(loop.lookupOuter(initial).getType());
      if (!type || type.getNumElements() != 1)
        return refuse("its counter '" + printable(carried) + "' is not one number");
      loop.setConstantResult(k, DenseElementsAttr::get(
                                    type, APInt(type.getElementTypeBitWidth(), *bags)));
      continue;
    }
    // A sequence that starts empty and gains the bag's row at its end.
    if (loop.isOuterEmptySequence(initial) && next && next->op_type() == "SequenceInsert" &&
        in(*next, 2).empty() && strip(in(*next, 0)) == carried &&
        isBagRow(in(*next, 1), reductions, mean)) {
      loop.setStackedSequenceResult(k, *stacked);
      continue;
    }
    return refuse("it carries '" + printable(carried) + "', which is neither its counter nor "
                  "an empty sequence it appends the bag's row to");
  }
  for (int j = 0; j < numScanned; ++j) {
    if (!isBagRow(body.output(1 + numCarried + j).name(), reductions, mean))
      return refuse("its scan output #" + Twine(j) + " is not the bag's row");
    if (failed(loop.setResult(numCarried + j, *stacked)))
      return failure();
  }
  return success();
}

/// Loop: PyTorch's EmbeddingBag with offsets (see the file comment).
LogicalResult convertLoop(OnnxNode &node) {
  if (node.getNumInputs() < 2)
    return node.emitError() << "expects at least 2 inputs (M and cond, either may be \"\"), got "
                            << node.getNumInputs();
  const onnx::AttributeProto *body = node.getAttribute("body");
  if (!body || !body->has_g())
    return node.emitError() << "needs a graph attribute 'body'";
  return EmbeddingBagLoop(node, body->g()).convert();
}

constexpr OnnxOpConversion kLoopOps[] = {
    // M and cond may be "" (checked in convertLoop).
    {"Loop", 0, OnnxOpConversion::kVariadic, OnnxOpConversion::kVariadic, "body", convertLoop,
     1},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxLoopOps() { return kLoopOps; }

} // namespace kiln
