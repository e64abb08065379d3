//===- OnnxBagBuild.cpp - An EmbeddingBag with offsets as kiln ops -------===//
//
// The bags of a PyTorch EmbeddingBag called with offsets, all at once:
//
//   bag(i)    = (the number of bounds at or before id i) - 1   a scan
//   result[b] = the sum of weight(i) * row(i) over the ids i of bag b
//
// as kiln.gather, kiln.scatter_add_rows and a cumulative sum, which train:
// the table's gradient is the gather's (rows scattered by id). Ids past the
// last bag's end fall in no bag; the id -1 and any other outside the table
// add nothing, as kiln.embedding_bag's padding does. OnnxLoopOps.cpp finds
// these parts in the Loop the exporters write.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxBagBuild.h"

#include "dialects/Kiln/FeedAttrs.h"
#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// Each id's weight: 0 outside the table and at padding_idx, else 1.
Result idWeights(KilnOpBuilder &b, Value ids, int64_t tableRows,
                 std::optional<int64_t> paddingIdx) {
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
  if (paddingIdx && failed(keepWhere(ComparePredicate::ne, *paddingIdx)))
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

/// Tells training how to fill the bag's inputs when the ids are a graph
/// input dividing evenly among the bags: each example's ids (and per-sample
/// weights) padded to ids/bags, and the offsets, when an input too, every
/// ids/bags (FeedAttrs.h); constant offsets must already be so.
/// Whether `offsets` (from `shift` on) are known at import time and are
/// where lists of `perExample` ids each start: 0, perExample, 2 perExample...
bool evenConstantOffsets(Value offsets, int64_t shift, int64_t bags, int64_t perExample) {
  DenseElementsAttr known = KilnOpBuilder::constantValueOf(offsets);
  if (!known || !llvm::isa<IntegerType>(known.getElementType()) ||
      known.getNumElements() < shift + bags)
    return false;
  SmallVector<APInt> values(known.getValues<APInt>());
  for (int64_t b = 0; b < bags; ++b)
    if (values[shift + b].getSExtValue() != b * perExample)
      return false;
  return true;
}

void markBagInputs(Value ids, Value offsets, int64_t shift, Value sampleWeights, int64_t bags) {
  BlockArgument idsInput = ids ? inputBehind(ids) : BlockArgument();
  if (!idsInput || KilnOpBuilder::rankOf(idsInput) != 1)
    return;
  int64_t n = KilnOpBuilder::shapeOf(idsInput)[0];
  if (n % bags != 0)
    return;
  auto function = llvm::cast<func::FuncOp>(idsInput.getOwner()->getParentOp());
  Builder b(function.getContext());
  IntegerAttr perExample = b.getI64IntegerAttr(n / bags);
  BlockArgument offsetsInput = inputBehind(offsets);
  if (!offsetsInput) {
    // Offsets the model holds itself, every n / bags ids (lists of one
    // length): the ids alone are laid out per example.
    if (evenConstantOffsets(offsets, shift, bags, n / bags))
      function.setArgAttr(idsInput.getArgNumber(), kIdsPerExampleAttr, perExample);
    return;
  }
  // Two bags of different list lengths over one offsets input: no layout
  // of the training data fits both, so training is left to refuse the data.
  auto earlier =
      function.getArgAttrOfType<IntegerAttr>(offsetsInput.getArgNumber(), kOffsetsStrideAttr);
  if (earlier && earlier != perExample) {
    function.removeArgAttr(offsetsInput.getArgNumber(), kOffsetsStrideAttr);
    emitWarning(offsetsInput.getLoc())
        << "EmbeddingBags with " << earlier.getInt() << " and " << n / bags
        << " ids per example share one offsets input: kiln cannot lay out their training "
           "data (it can run the model)";
    return;
  }
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

} // namespace

Result buildOffsetsBag(OnnxNode &node, const OffsetsBag &parts,
                       function_ref<LogicalResult(const Twine &)> refuse) {
  KilnOpBuilder &b = node.getBuilder();
  Value rows = parts.rows, ids, sample = parts.sampleWeights;
  int64_t bags = parts.bags;
  int64_t tableRows = 0;
  if (rows) {
    if (GatherOp gather = gatherOfRows(rows)) {
      ids = gather.getIndices();
      tableRows = KilnOpBuilder::shapeOf(gather.getTable())[0];
      // The per-sample weights the dynamo exporter multiplies the rows by.
      if (auto mul = rows.getDefiningOp<MulOp>(); mul && !sample)
        sample = mul.getOperand(mul.getOperand(0) == gather.getResult() ? 1 : 0);
    } else {
      ids = parts.paddingIds;
    }
  } else {
    ids = parts.ids;
    if (KilnOpBuilder::rankOf(parts.table) != 2 || KilnOpBuilder::rankOf(ids) != 1)
      return refuse("it gathers a table of rank " + Twine(KilnOpBuilder::rankOf(parts.table)) +
                    " at ids of rank " + Twine(KilnOpBuilder::rankOf(ids)) +
                    " (nn.EmbeddingBag's are 2 and 1)");
    tableRows = KilnOpBuilder::shapeOf(parts.table)[0];
    Result gathered = b.gather(parts.table, ids, 0);
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
    return node.emitError() << "has " << n << " ids; kiln's EmbeddingBag takes fewer than 2^24";
  OpBuilder &ob = b.getBuilder();
  Type f32 = ob.getF32Type();

  // Each id's bag: the running count of the bounds at or before it, less 1.
  // Ids before offsets[0] get -1 and ids from the last end on get `bags`:
  // scatter_add_rows drops both.
  Result bounds = b.slice(parts.offsets, {parts.shift}, {parts.shift + bags + 1}, {1});
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
    Result weights = idWeights(b, ids, tableRows, parts.paddingIdx);
    if (failed(weights))
      return failure();
    counted = *weights;
  }
  Value weights = counted;
  if (parts.sampleWeights) {
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
  markBagInputs(ids, parts.offsets, parts.shift, sample, bags);
  Result sums = b.scatterAddRows(weighted, *bag, bags);
  if (failed(sums) || !parts.mean)
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


} // namespace kiln
