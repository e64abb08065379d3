//===- GraphOps.cpp - The ops of the graph format -------------------------===//

#include "compiler/Import/Graph/GraphOps.h"

#include "compiler/Import/Graph/TensorValues.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace kiln {

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

namespace {

StringRef kindName(graph::AttrValue::ValueCase kind) {
  switch (kind) {
  case graph::AttrValue::kI:
    return "an int (i)";
  case graph::AttrValue::kF:
    return "a float (f)";
  case graph::AttrValue::kS:
    return "a string (s)";
  case graph::AttrValue::kB:
    return "a bool (b)";
  case graph::AttrValue::kInts:
    return "an int list (ints)";
  case graph::AttrValue::kFloats:
    return "a float list (floats)";
  case graph::AttrValue::kTensor:
    return "a tensor (tensor)";
  case graph::AttrValue::kType:
    return "a dtype (type)";
  case graph::AttrValue::VALUE_NOT_SET:
    return "empty";
  }
  return "unknown";
}

} // namespace

const graph::AttrValue *NodeContext::find(StringRef name, bool required) {
  auto it = node.attrs().find(name.str());
  if (it != node.attrs().end())
    return &it->second;
  if (required)
    (void)(builder.emitError() << "missing required attribute '" << name << "'");
  return nullptr;
}

LogicalResult NodeContext::wrongKind(StringRef name, StringRef expected) {
  graph::AttrValue::ValueCase got = node.attrs().at(name.str()).value_case();
  return builder.emitError() << "attribute '" << name << "' must be "
                             << expected << ", got " << kindName(got);
}

FailureOr<int64_t> NodeContext::getInt(StringRef name,
                                       std::optional<int64_t> fallback) {
  const graph::AttrValue *attr = find(name, !fallback);
  if (!attr)
    return fallback ? FailureOr<int64_t>(*fallback) : FailureOr<int64_t>(failure());
  if (attr->value_case() != graph::AttrValue::kI)
    return wrongKind(name, kindName(graph::AttrValue::kI));
  return attr->i();
}

FailureOr<double> NodeContext::getFloat(StringRef name,
                                        std::optional<double> fallback) {
  const graph::AttrValue *attr = find(name, !fallback);
  if (!attr)
    return fallback ? FailureOr<double>(*fallback) : FailureOr<double>(failure());
  if (attr->value_case() == graph::AttrValue::kI)
    return static_cast<double>(attr->i());
  if (attr->value_case() != graph::AttrValue::kF)
    return wrongKind(name, kindName(graph::AttrValue::kF));
  return attr->f();
}

FailureOr<bool> NodeContext::getBool(StringRef name,
                                     std::optional<bool> fallback) {
  const graph::AttrValue *attr = find(name, !fallback);
  if (!attr)
    return fallback ? FailureOr<bool>(*fallback) : FailureOr<bool>(failure());
  if (attr->value_case() != graph::AttrValue::kB)
    return wrongKind(name, kindName(graph::AttrValue::kB));
  return attr->b();
}

FailureOr<std::string> NodeContext::getString(StringRef name,
                                              std::optional<std::string> fallback) {
  const graph::AttrValue *attr = find(name, !fallback);
  if (!attr)
    return fallback ? FailureOr<std::string>(*fallback) : FailureOr<std::string>(failure());
  if (attr->value_case() != graph::AttrValue::kS)
    return wrongKind(name, kindName(graph::AttrValue::kS));
  return attr->s();
}

FailureOr<SmallVector<int64_t>>
NodeContext::getInts(StringRef name,
                     std::optional<SmallVector<int64_t>> fallback) {
  const graph::AttrValue *attr = find(name, !fallback);
  if (!attr)
    return fallback ? FailureOr<SmallVector<int64_t>>(*fallback) : FailureOr<SmallVector<int64_t>>(failure());
  if (attr->value_case() != graph::AttrValue::kInts)
    return wrongKind(name, kindName(graph::AttrValue::kInts));
  return SmallVector<int64_t>(attr->ints().values().begin(),
                              attr->ints().values().end());
}

FailureOr<Type> NodeContext::getType(StringRef name) {
  const graph::AttrValue *attr = find(name, /*required=*/true);
  if (!attr)
    return failure();
  if (attr->value_case() != graph::AttrValue::kType)
    return wrongKind(name, kindName(graph::AttrValue::kType));
  Type type = elementTypeOf(attr->type(), *builder.getLoc().getContext());
  if (!type)
    return builder.emitError() << "attribute '" << name
                               << "' is not a valid dtype";
  return type;
}

FailureOr<DenseElementsAttr> NodeContext::getTensor(StringRef name) {
  const graph::AttrValue *attr = find(name, /*required=*/true);
  if (!attr)
    return failure();
  if (attr->value_case() != graph::AttrValue::kTensor)
    return wrongKind(name, kindName(graph::AttrValue::kTensor));
  return convertTensorValue(attr->tensor(), builder.getLoc(),
                            ("attribute '" + name + "'").str());
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              StringRef attr) {
  if (axis < -rank || axis >= rank)
    return builder.emitError() << "attribute '" << attr << "' (" << axis
                               << ") is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

namespace {

using Result = KilnOpBuilder::Result;

template <typename OpTy>
Result buildUnary(NodeContext &c) {
  return c.b().unary<OpTy>(c.input(0));
}

template <typename OpTy>
Result buildBinary(NodeContext &c) {
  return c.b().binary<OpTy>(c.input(0), c.input(1));
}

Result buildConstant(NodeContext &c) {
  FailureOr<DenseElementsAttr> value = c.getTensor("value");
  if (failed(value))
    return failure();
  return c.b().constant(*value);
}

Result buildMatmul(NodeContext &c) {
  FailureOr<bool> ta = c.getBool("transpose_a", false);
  FailureOr<bool> tb = c.getBool("transpose_b", false);
  if (failed(ta) || failed(tb))
    return failure();
  return c.b().matmul(c.input(0), c.input(1), *ta, *tb);
}

Result buildGelu(NodeContext &c) {
  FailureOr<std::string> approximate = c.getString("approximate", "none");
  if (failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "exact" &&
      *approximate != "tanh")
    return c.b().emitError() << "attribute 'approximate' is '" << *approximate
                             << "', expected 'none' (or 'exact') or 'tanh'";
  return c.b().gelu(c.input(0), *approximate == "tanh"
                                    ? GeluApproximation::tanh
                                    : GeluApproximation::exact);
}

Result buildCompare(NodeContext &c) {
  FailureOr<std::string> name = c.getString("predicate");
  if (failed(name))
    return failure();
  std::optional<ComparePredicate> predicate = symbolizeComparePredicate(*name);
  if (!predicate)
    return c.b().emitError() << "attribute 'predicate' is '" << *name
                             << "', expected one of eq, ne, lt, le, gt, ge";
  return c.b().compare(*predicate, c.input(0), c.input(1));
}

Result buildSelect(NodeContext &c) {
  return c.b().select(c.input(0), c.input(1), c.input(2));
}

Result buildCast(NodeContext &c) {
  FailureOr<Type> type = c.getType("dtype");
  if (failed(type))
    return failure();
  return c.b().cast(c.input(0), *type);
}

Result buildReshape(NodeContext &c) {
  FailureOr<SmallVector<int64_t>> shape = c.getInts("shape");
  if (failed(shape))
    return failure();
  FailureOr<int64_t> count =
      staticElementCount(KilnOpBuilder::shapeOf(c.input(0)));
  int64_t known = 1;
  int inferred = -1;
  for (auto [index, d] : llvm::enumerate(*shape)) {
    if (d == -1 && inferred < 0) {
      inferred = index;
      continue;
    }
    if (d < 1)
      return c.b().emitError() << "attribute 'shape' has dimension " << d
                               << " at index " << index
                               << " (one -1 is allowed, others must be >= 1)";
    known *= d;
  }
  if (inferred >= 0) {
    if (failed(count) || *count % known != 0)
      return c.b().emitError() << "attribute 'shape' cannot infer the -1 "
                                  "dimension: "
                               << (failed(count) ? 0 : *count)
                               << " elements do not divide by " << known;
    (*shape)[inferred] = *count / known;
  }
  return c.b().reshape(c.input(0), *shape);
}

Result buildBroadcast(NodeContext &c) {
  FailureOr<SmallVector<int64_t>> shape = c.getInts("shape");
  if (failed(shape))
    return failure();
  return c.b().broadcastTo(c.input(0), *shape);
}

Result buildTranspose(NodeContext &c) {
  int64_t rank = KilnOpBuilder::rankOf(c.input(0));
  SmallVector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d)
    reversed.push_back(d);
  FailureOr<SmallVector<int64_t>> perm = c.getInts("perm", reversed);
  if (failed(perm))
    return failure();
  return c.b().transpose(c.input(0), *perm);
}

Result buildConcat(NodeContext &c) {
  FailureOr<int64_t> axis = c.getInt("axis");
  if (failed(axis))
    return failure();
  axis = c.normalizeAxis(*axis, KilnOpBuilder::rankOf(c.input(0)), "axis");
  if (failed(axis))
    return failure();
  return c.b().concat(c.allInputs(), *axis);
}

Result buildSlice(NodeContext &c) {
  ArrayRef<int64_t> dims = KilnOpBuilder::shapeOf(c.input(0));
  int64_t rank = dims.size();
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  FailureOr<SmallVector<int64_t>> axes = c.getInts("axes", all);
  if (failed(axes))
    return failure();
  FailureOr<SmallVector<int64_t>> starts = c.getInts("start");
  FailureOr<SmallVector<int64_t>> limits = c.getInts("limit");
  FailureOr<SmallVector<int64_t>> steps =
      c.getInts("step", SmallVector<int64_t>(axes->size(), 1));
  if (failed(starts) || failed(limits) || failed(steps))
    return failure();
  if (starts->size() != axes->size() || limits->size() != axes->size() ||
      steps->size() != axes->size())
    return c.b().emitError() << "attributes 'start', 'limit' and 'step' must "
                                "have one entry per sliced axis ("
                             << axes->size() << ")";
  SmallVector<int64_t> start(rank, 0), limit(dims), step(rank, 1);
  for (auto [i, axisValue] : llvm::enumerate(*axes)) {
    FailureOr<int64_t> axis = c.normalizeAxis(axisValue, rank, "axes");
    if (failed(axis))
      return failure();
    // Negative positions count from the end, as in numpy.
    auto fromEnd = [&](int64_t pos) { return pos < 0 ? pos + dims[*axis] : pos; };
    start[*axis] = fromEnd((*starts)[i]);
    limit[*axis] = fromEnd((*limits)[i]);
    step[*axis] = (*steps)[i];
  }
  return c.b().slice(c.input(0), start, limit, step);
}

template <typename OpTy>
Result buildReduce(NodeContext &c) {
  int64_t rank = KilnOpBuilder::rankOf(c.input(0));
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  FailureOr<SmallVector<int64_t>> axes = c.getInts("axes", all);
  FailureOr<bool> keepDims = c.getBool("keep_dims", false);
  if (failed(axes) || failed(keepDims))
    return failure();
  for (int64_t &axis : *axes) {
    FailureOr<int64_t> normalized = c.normalizeAxis(axis, rank, "axes");
    if (failed(normalized))
      return failure();
    axis = *normalized;
  }
  llvm::sort(*axes);
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end())
    return c.b().emitError() << "attribute 'axes' names an axis twice";
  return c.b().reduce<OpTy>(c.input(0), *axes, *keepDims);
}

template <typename OpTy>
Result buildSoftmax(NodeContext &c) {
  FailureOr<int64_t> axis = c.getInt("axis", -1);
  if (failed(axis))
    return failure();
  axis = c.normalizeAxis(*axis, KilnOpBuilder::rankOf(c.input(0)), "axis");
  if (failed(axis))
    return failure();
  return c.b().softmax<OpTy>(c.input(0), *axis);
}

Result buildLayerNorm(NodeContext &c) {
  FailureOr<int64_t> axis = c.getInt("axis", -1);
  FailureOr<double> epsilon = c.getFloat("epsilon", 1e-5);
  if (failed(axis) || failed(epsilon))
    return failure();
  axis = c.normalizeAxis(*axis, KilnOpBuilder::rankOf(c.input(0)), "axis");
  if (failed(axis))
    return failure();
  Value bias = c.numInputs() > 2 ? c.input(2) : Value();
  return c.b().layerNorm(c.input(0), c.input(1), bias, *axis, *epsilon);
}

Result buildGather(NodeContext &c) {
  FailureOr<int64_t> axis = c.getInt("axis", 0);
  if (failed(axis))
    return failure();
  axis = c.normalizeAxis(*axis, KilnOpBuilder::rankOf(c.input(0)), "axis");
  if (failed(axis))
    return failure();
  return c.b().gather(c.input(0), c.input(1), *axis);
}

Result buildEmbeddingBag(NodeContext &c) {
  FailureOr<std::string> name = c.getString("combiner", "mean");
  if (failed(name))
    return failure();
  std::optional<EmbeddingCombiner> combiner = symbolizeEmbeddingCombiner(*name);
  if (!combiner)
    return c.b().emitError() << "attribute 'combiner' is '" << *name
                             << "', expected one of sum, mean, sqrtn";
  return c.b().embeddingBag(c.input(0), c.input(1), *combiner);
}

Result buildGatherElements(NodeContext &c) {
  FailureOr<int64_t> axis = c.getInt("axis", 0);
  if (failed(axis))
    return failure();
  axis = c.normalizeAxis(*axis, KilnOpBuilder::rankOf(c.input(0)), "axis");
  if (failed(axis))
    return failure();
  return c.b().gatherElements(c.input(0), c.input(1), *axis);
}

Result buildMod(NodeContext &c) {
  FailureOr<bool> fmod = c.getBool("fmod", false);
  if (failed(fmod))
    return failure();
  return c.b().mod(c.input(0), c.input(1), *fmod);
}

/// The window attributes of conv and the pools: `kernel` (pools only),
/// `strides`, `dilations`, `pad_low`, `pad_high` (one entry per spatial
/// dimension; strides and dilations default to 1, padding to 0) and
/// `ceil_mode` (pools).
struct GraphWindow {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
  bool ceilMode = false;
  WindowAttrs attrs() const {
    return WindowAttrs{kernel, strides, dilations, padLow, padHigh, ceilMode};
  }
};

FailureOr<GraphWindow> readWindow(NodeContext &c, bool pool) {
  int64_t spatial = std::max<int64_t>(KilnOpBuilder::rankOf(c.input(0)) - 2, 0);
  GraphWindow w;
  if (pool) {
    FailureOr<SmallVector<int64_t>> kernel = c.getInts("kernel");
    FailureOr<bool> ceil = c.getBool("ceil_mode", false);
    if (failed(kernel) || failed(ceil))
      return failure();
    w.kernel = *kernel;
    w.ceilMode = *ceil;
  }
  struct Field {
    const char *name;
    SmallVector<int64_t> *into;
    int64_t fill;
  } fields[] = {{"strides", &w.strides, 1},
                {"dilations", &w.dilations, 1},
                {"pad_low", &w.padLow, 0},
                {"pad_high", &w.padHigh, 0}};
  for (const Field &field : fields) {
    FailureOr<SmallVector<int64_t>> values =
        c.getInts(field.name, SmallVector<int64_t>(spatial, field.fill));
    if (failed(values))
      return failure();
    *field.into = *values;
  }
  return w;
}

Result buildConv(NodeContext &c) {
  FailureOr<int64_t> groups = c.getInt("groups", 1);
  if (failed(groups))
    return failure();
  FailureOr<GraphWindow> window = readWindow(c, /*pool=*/false);
  if (failed(window))
    return failure();
  return c.b().conv(c.input(0), c.input(1), window->attrs(), *groups);
}

Result buildMaxPool(NodeContext &c) {
  FailureOr<GraphWindow> window = readWindow(c, /*pool=*/true);
  if (failed(window))
    return failure();
  return c.b().maxPool(c.input(0), window->attrs());
}

Result buildAvgPool(NodeContext &c) {
  FailureOr<bool> excludePad = c.getBool("exclude_pad", false);
  if (failed(excludePad))
    return failure();
  FailureOr<GraphWindow> window = readWindow(c, /*pool=*/true);
  if (failed(window))
    return failure();
  return c.b().avgPool(c.input(0), window->attrs(), *excludePad);
}

Result buildSoftmaxCrossEntropy(NodeContext &c) {
  std::optional<int64_t> ignoreIndex;
  if (c.has("ignore_index")) {
    FailureOr<int64_t> value = c.getInt("ignore_index");
    if (failed(value))
      return failure();
    ignoreIndex = *value;
  }
  FailureOr<double> labelSmoothing = c.getFloat("label_smoothing", 0.0);
  if (failed(labelSmoothing))
    return failure();
  return c.b().softmaxCrossEntropy(c.input(0), c.input(1), ignoreIndex, *labelSmoothing);
}

Result buildSigmoidCrossEntropy(NodeContext &c) {
  return c.b().sigmoidCrossEntropy(c.input(0), c.input(1));
}

Result buildMeanSquaredError(NodeContext &c) {
  return c.b().meanSquaredError(c.input(0), c.input(1));
}

constexpr llvm::StringLiteral kConstantAttrs[] = {"value"};
constexpr llvm::StringLiteral kMatmulAttrs[] = {"transpose_a", "transpose_b"};
constexpr llvm::StringLiteral kGeluAttrs[] = {"approximate"};
constexpr llvm::StringLiteral kCompareAttrs[] = {"predicate"};
constexpr llvm::StringLiteral kCastAttrs[] = {"dtype"};
constexpr llvm::StringLiteral kShapeAttrs[] = {"shape"};
constexpr llvm::StringLiteral kTransposeAttrs[] = {"perm"};
constexpr llvm::StringLiteral kAxisAttrs[] = {"axis"};
constexpr llvm::StringLiteral kSliceAttrs[] = {"start", "limit", "step", "axes"};
constexpr llvm::StringLiteral kReduceAttrs[] = {"axes", "keep_dims"};
constexpr llvm::StringLiteral kLayerNormAttrs[] = {"axis", "epsilon"};
constexpr llvm::StringLiteral kEmbeddingBagAttrs[] = {"combiner"};
constexpr llvm::StringLiteral kModAttrs[] = {"fmod"};
constexpr llvm::StringLiteral kConvAttrs[] = {"strides", "dilations", "pad_low", "pad_high",
                                              "groups"};
constexpr llvm::StringLiteral kMaxPoolAttrs[] = {"kernel",  "strides",  "dilations",
                                                 "pad_low", "pad_high", "ceil_mode"};
constexpr llvm::StringLiteral kCrossEntropyAttrs[] = {"ignore_index", "label_smoothing"};
constexpr llvm::StringLiteral kAvgPoolAttrs[] = {"kernel",   "strides",   "dilations",
                                                 "pad_low",  "pad_high",  "ceil_mode",
                                                 "exclude_pad"};

constexpr unsigned kAny = ~0u;

const GraphOpSpec kGraphOps[] = {
    {"constant", 0, 0, kConstantAttrs, buildConstant},
    {"matmul", 2, 2, kMatmulAttrs, buildMatmul},
    {"add", 2, 2, {}, buildBinary<AddOp>},
    {"sub", 2, 2, {}, buildBinary<SubOp>},
    {"mul", 2, 2, {}, buildBinary<MulOp>},
    {"div", 2, 2, {}, buildBinary<DivOp>},
    {"maximum", 2, 2, {}, buildBinary<MaximumOp>},
    {"minimum", 2, 2, {}, buildBinary<MinimumOp>},
    {"neg", 1, 1, {}, buildUnary<NegOp>},
    {"exp", 1, 1, {}, buildUnary<ExpOp>},
    {"log", 1, 1, {}, buildUnary<LogOp>},
    {"sqrt", 1, 1, {}, buildUnary<SqrtOp>},
    {"rsqrt", 1, 1, {}, buildUnary<RsqrtOp>},
    {"tanh", 1, 1, {}, buildUnary<TanhOp>},
    {"sigmoid", 1, 1, {}, buildUnary<SigmoidOp>},
    {"relu", 1, 1, {}, buildUnary<ReluOp>},
    {"erf", 1, 1, {}, buildUnary<ErfOp>},
    {"sin", 1, 1, {}, buildUnary<SinOp>},
    {"cos", 1, 1, {}, buildUnary<CosOp>},
    {"atan", 1, 1, {}, buildUnary<AtanOp>},
    {"floor", 1, 1, {}, buildUnary<FloorOp>},
    {"ceil", 1, 1, {}, buildUnary<CeilOp>},
    {"round", 1, 1, {}, buildUnary<RoundOp>},
    {"abs", 1, 1, {}, buildUnary<AbsOp>},
    {"pow", 2, 2, {}, buildBinary<PowOp>},
    {"mod", 2, 2, kModAttrs, buildMod},
    {"gelu", 1, 1, kGeluAttrs, buildGelu},
    {"compare", 2, 2, kCompareAttrs, buildCompare},
    {"select", 3, 3, {}, buildSelect},
    {"cast", 1, 1, kCastAttrs, buildCast},
    {"reshape", 1, 1, kShapeAttrs, buildReshape},
    {"broadcast", 1, 1, kShapeAttrs, buildBroadcast},
    {"transpose", 1, 1, kTransposeAttrs, buildTranspose},
    {"concat", 1, kAny, kAxisAttrs, buildConcat},
    {"slice", 1, 1, kSliceAttrs, buildSlice},
    {"reduce_sum", 1, 1, kReduceAttrs, buildReduce<ReduceSumOp>},
    {"reduce_mean", 1, 1, kReduceAttrs, buildReduce<ReduceMeanOp>},
    {"reduce_max", 1, 1, kReduceAttrs, buildReduce<ReduceMaxOp>},
    {"softmax", 1, 1, kAxisAttrs, buildSoftmax<SoftmaxOp>},
    {"log_softmax", 1, 1, kAxisAttrs, buildSoftmax<LogSoftmaxOp>},
    {"layer_norm", 2, 3, kLayerNormAttrs, buildLayerNorm},
    {"gather", 2, 2, kAxisAttrs, buildGather},
    {"gather_elements", 2, 2, kAxisAttrs, buildGatherElements},
    {"embedding_bag", 2, 2, kEmbeddingBagAttrs, buildEmbeddingBag},
    {"conv", 2, 2, kConvAttrs, buildConv},
    {"max_pool", 1, 1, kMaxPoolAttrs, buildMaxPool},
    {"avg_pool", 1, 1, kAvgPoolAttrs, buildAvgPool},
    {"softmax_cross_entropy", 2, 2, kCrossEntropyAttrs, buildSoftmaxCrossEntropy},
    {"sigmoid_cross_entropy", 2, 2, {}, buildSigmoidCrossEntropy},
    {"mean_squared_error", 2, 2, {}, buildMeanSquaredError},
};

} // namespace

const GraphOpSpec *lookupGraphOp(StringRef name) {
  const GraphOpSpec *op = llvm::find_if(
      kGraphOps, [&](const GraphOpSpec &spec) { return spec.name == name; });
  return op == std::end(kGraphOps) ? nullptr : op;
}

} // namespace kiln
