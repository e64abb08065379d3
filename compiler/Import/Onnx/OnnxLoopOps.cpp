//===- OnnxLoopOps.cpp - ONNX Loop: PyTorch's EmbeddingBag with offsets ---===//
//
// torch.onnx.export writes nn.EmbeddingBag (and F.embedding_bag) called with
// 1-D ids and offsets as a Loop over the bags, each iteration reducing the
// rows of ids[offsets[b] : offsets[b + 1]]: slices whose sizes only the data
// knows, which a static graph cannot hold. Kiln recognizes that loop by what
// it computes — the rows its reductions read, that its output is each bag's
// row, its trip count and conditions — and imports all bags at once
// (OnnxBagBuild.cpp).
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
#include "compiler/Import/Onnx/OnnxBagBuild.h"
#include "compiler/Import/Onnx/OnnxLoopBody.h"
#include "compiler/Import/Onnx/OnnxOps.h"
#include "compiler/Import/Onnx/OnnxTensor.h"

#include "dialects/Kiln/KilnOps.h"


#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;
using Node = onnx::NodeProto;

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
      name = nodeInput(*node, 0);
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

  OnnxNode &loop;
  const onnx::GraphProto &body;
  LoopBodyNodes nodes;
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
    std::optional<int64_t> k = counterPlus(nodeInput(*node, side));
    std::optional<SmallVector<int64_t>> c = constantInts(nodeInput(*node, 1 - side));
    if (k && c && c->size() == 1)
      return *k + c->front();
  }
  return std::nullopt;
}

bool EmbeddingBagLoop::sliceAlongRows(const Node &slice) {
  if (slice.input_size() < 3)
    return false;
  if (slice.input_size() > 3 && !nodeInput(slice, 3).empty()) {
    std::optional<SmallVector<int64_t>> axes = constantInts(nodeInput(slice, 3));
    if (!axes || *axes != SmallVector<int64_t>{0})
      return false;
  }
  if (slice.input_size() > 4 && !nodeInput(slice, 4).empty()) {
    std::optional<SmallVector<int64_t>> steps = constantInts(nodeInput(slice, 4));
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
      isOuter(nodeInput(*node, 0)))
    if (std::optional<int64_t> k = counterPlus(nodeInput(*node, 1)))
      return Bound{nodeInput(*node, 0), *k};
  if (node->op_type() == "Slice" && sliceAlongRows(*node) && isOuter(nodeInput(*node, 0))) {
    std::optional<int64_t> from = counterPlus(nodeInput(*node, 1));
    std::optional<int64_t> to = counterPlus(nodeInput(*node, 2));
    if (from && to && *to == *from + 1)
      return Bound{nodeInput(*node, 0), *from};
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
                         ? producerOf(nodeInput(*condition, 0)) : nullptr;
  if (next && next->op_type() == "Add") {
    end = readBound(nodeInput(*condition, 1));
    for (int k = 2; k < inner.input_size() && k < innerBody->input_size(); ++k)
      if (llvm::is_contained({strip(nodeInput(*next, 0)), strip(nodeInput(*next, 1))},
                             StringRef(innerBody->input(k).name())))
        start = readBound(nodeInput(inner, k));
  }
  // Inside the inner loop: Equal(id, padding_idx) and Gather(ids, j).
  LoopBodyNodes innerNodes(*innerBody);
  for (const Node *node : innerNodes.all()) {
    if (node->op_type() == "Equal")
      for (int side : {0, 1})
        if (std::optional<SmallVector<int64_t>> c = constantInts(nodeInput(*node, side));
            c && c->size() == 1)
          found.paddingIdx = c->front();
    if (node->op_type() == "Gather" && isOuter(nodeInput(*node, 0)) &&
        getElementTypeOrSelf(loop.lookupOuter(nodeInput(*node, 0)).getType()).isInteger(64))
      found.paddingIds = nodeInput(*node, 0);
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
      const Node *weights = producerOf(nodeInput(*node, side));
      if (!weights || weights->op_type() != "Slice" || !sliceAlongRows(*weights) ||
          !isOuter(nodeInput(*weights, 0)))
        continue;
      std::optional<BagRows> rows = matchRows(nodeInput(*node, 1 - side));
      std::optional<Bound> start = readBound(nodeInput(*weights, 1));
      std::optional<Bound> end = readBound(nodeInput(*weights, 2));
      if (!rows || !start || !end || !(*start == rows->start) || !(*end == rows->end))
        break;
      rows->sampleWeights = nodeInput(*weights, 0);
      return rows;
    }
    why = "a reduction reads a product that is not rows times per_sample_weights";
    return std::nullopt;
  }
  if (node->op_type() == "Gather" && intAttribute(*node, "axis", 0) == 0 &&
      isOuter(nodeInput(*node, 0))) {
    const Node *positions = producerOf(nodeInput(*node, 1));
    if (positions && positions->op_type() == "Loop")
      return matchPaddingLoop(*positions, nodeInput(*node, 0));
    if (positions)
      if (std::optional<BagRows> rows = matchBagSlice(*positions)) {
        rows->table = nodeInput(*node, 0);
        rows->ids = nodeInput(*positions, 0);
        return rows;
      }
    why = "a reduction reads a gather that is not of the bag's ids";
    return std::nullopt;
  }
  if (std::optional<BagRows> rows = matchBagSlice(*node)) {
    rows->rows = nodeInput(*node, 0);
    return rows;
  }
  why = "a reduction reads no slice of rows from offsets[i] to offsets[i + 1]";
  return std::nullopt;
}

/// A Slice of an outer tensor's rows from offsets[i] to offsets[i + 1]: the
/// bounds of a BagRows.
std::optional<BagRows> EmbeddingBagLoop::matchBagSlice(const Node &slice) {
  if (slice.op_type() != "Slice" || !sliceAlongRows(slice) || !isOuter(nodeInput(slice, 0)))
    return std::nullopt;
  std::optional<Bound> start = readBound(nodeInput(slice, 1));
  std::optional<Bound> end = readBound(nodeInput(slice, 2));
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
      std::optional<SmallVector<int64_t>> one = constantInts(nodeInput(*next, 1 - side));
      if (strip(nodeInput(*next, side)) == body.input(k).name() && one &&
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
  if (!condition || condition->op_type() != "Less" || counterPlus(nodeInput(*condition, 0)) != 1)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> bound = constantInts(nodeInput(*condition, 1));
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
    return isBagRow(nodeInput(*node, 0), reductions, mean);
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
      if (std::optional<SmallVector<int64_t>> given = constantInts(nodeInput(*reduction, 1)))
        axes = *given;
    if (axes != SmallVector<int64_t>{0})
      return refuse("a " + printable(reduction->op_type()) + " is not over axis 0");
    bool keep = intAttribute(*reduction, "keepdims", 1) != 0;
    std::optional<BagRows> read = matchRows(nodeInput(*reduction, 0));
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
  OffsetsBag parts;
  if (!rows->rows.empty())
    parts.rows = loop.lookupOuter(rows->rows);
  else {
    parts.table = loop.lookupOuter(rows->table);
    parts.ids = loop.lookupOuter(rows->ids);
  }
  if (!rows->paddingIds.empty())
    parts.paddingIds = loop.lookupOuter(rows->paddingIds);
  parts.paddingIdx = rows->paddingIdx;
  if (!rows->sampleWeights.empty())
    parts.sampleWeights = loop.lookupOuter(rows->sampleWeights);
  parts.offsets = loop.lookupOuter(rows->start.offsets);
  parts.shift = rows->start.shift;
  parts.bags = *bags;
  parts.mean = mean;
  Result result = buildOffsetsBag(loop, parts, [&](const Twine &why) { return refuse(why); });
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
        nodeInput(*next, 2).empty() && strip(nodeInput(*next, 0)) == carried &&
        isBagRow(nodeInput(*next, 1), reductions, mean)) {
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
