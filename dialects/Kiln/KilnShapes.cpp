//===- KilnShapes.cpp - Shape and type rules of kiln ops ------------------===//

#include "dialects/Kiln/KilnShapes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;

namespace kiln {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (d == ShapedType::kDynamic)
          os << "?";
        else
          os << d;
      },
      ", ");
  os << "]";
  return text;
}

std::string formatDim(int64_t d) {
  return d == ShapedType::kDynamic ? std::string("?") : std::to_string(d);
}

FailureOr<RankedTensorType> ranked(const ShapeDiag &diag, Type type,
                                   StringRef what) {
  if (auto tensor = llvm::dyn_cast_or_null<RankedTensorType>(type))
    return tensor;
  return diag.fail("expects ", what, " to be a ranked tensor, got ", type);
}

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

bool compatibleDims(int64_t a, int64_t b) {
  return a == kDynamic || b == kDynamic || a == b;
}

/// The more static of two compatible dimensions.
int64_t joinDims(int64_t a, int64_t b) { return a == kDynamic ? b : a; }

} // namespace

LogicalResult appendInferred(InferredType inferred,
                             SmallVectorImpl<Type> &types) {
  if (failed(inferred))
    return failure();
  types.push_back(*inferred);
  return success();
}

bool areCompatibleTensorTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual)) {
    auto ta = llvm::dyn_cast<RankedTensorType>(a);
    auto tb = llvm::dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        ta.getRank() != tb.getRank())
      return false;
    for (auto [da, db] : llvm::zip(ta.getShape(), tb.getShape()))
      if (!compatibleDims(da, db))
        return false;
  }
  return true;
}

FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1)
      result[i] = db;
    else if (db == 1)
      result[i] = da;
    else if (compatibleDims(da, db))
      result[i] = joinDims(da, db);
    else
      return failure();
  }
  return result;
}

FailureOr<int64_t> staticElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return failure();
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return failure();
    count *= d;
  }
  return count;
}

InferredType inferElementwiseType(const ShapeDiag &diag, TypeRange operands) {
  if (operands.empty())
    return diag.fail("expects at least one operand");
  FailureOr<RankedTensorType> first = ranked(diag, operands.front(), "operand #0");
  if (failed(first))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [index, type] : llvm::enumerate(operands.drop_front())) {
    std::string what = "operand #" + std::to_string(index + 1);
    FailureOr<RankedTensorType> next = ranked(diag, type, what);
    if (failed(next))
      return failure();
    if (next->getElementType() != first->getElementType())
      return diag.fail("expects operands of one element type, got ",
                       first->getElementType(), " and ", next->getElementType());
    if (next->getRank() != static_cast<int64_t>(shape.size()))
      return diag.fail("expects operands of one shape, got ",
                       formatShape(shape), " and ",
                       formatShape(next->getShape()));
    for (auto [d, other] : llvm::zip(shape, next->getShape())) {
      if (!compatibleDims(d, other))
        return diag.fail("expects operands of one shape, got ",
                         formatShape(first->getShape()), " and ",
                         formatShape(next->getShape()));
      d = joinDims(d, other);
    }
  }
  return RankedTensorType::get(shape, first->getElementType());
}

InferredType inferCompareType(const ShapeDiag &diag, Type lhs, Type rhs) {
  InferredType joined = inferElementwiseType(diag, {lhs, rhs});
  if (failed(joined))
    return failure();
  return RankedTensorType::get(joined->getShape(),
                               IntegerType::get(joined->getContext(), 1));
}

InferredType inferSelectType(const ShapeDiag &diag, Type condition, Type onTrue,
                             Type onFalse) {
  FailureOr<RankedTensorType> cond = ranked(diag, condition, "condition");
  if (failed(cond))
    return failure();
  if (!cond->getElementType().isInteger(1))
    return diag.fail("expects an i1 condition, got ", cond->getElementType());
  InferredType values = inferElementwiseType(diag, {onTrue, onFalse});
  if (failed(values))
    return failure();
  ArrayRef<int64_t> condShape = cond->getShape();
  SmallVector<int64_t> shape(values->getShape());
  if (condShape.size() != shape.size() ||
      !llvm::all_of(llvm::zip(condShape, shape), [](auto dims) {
        return compatibleDims(std::get<0>(dims), std::get<1>(dims));
      }))
    return diag.fail("expects a condition of shape ", formatShape(shape),
                     " (the values'), got ", formatShape(condShape));
  for (auto [d, c] : llvm::zip(shape, condShape))
    d = joinDims(d, c);
  return RankedTensorType::get(shape, values->getElementType());
}

InferredType inferMatmulType(const ShapeDiag &diag, Type lhsType, Type rhsType,
                             bool transposeA, bool transposeB) {
  FailureOr<RankedTensorType> lhs = ranked(diag, lhsType, "lhs");
  FailureOr<RankedTensorType> rhs = ranked(diag, rhsType, "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getElementType() != rhs->getElementType())
    return diag.fail("expects lhs and rhs of one element type, got ",
                     lhs->getElementType(), " and ", rhs->getElementType());
  int64_t lrank = lhs->getRank(), rrank = rhs->getRank();
  if (lrank < 2 || rrank < 2)
    return diag.fail("expects lhs and rhs of rank >= 2, got ", lrank, " and ",
                     rrank);
  ArrayRef<int64_t> ls = lhs->getShape(), rs = rhs->getShape();
  int64_t m = transposeA ? ls[lrank - 1] : ls[lrank - 2];
  int64_t kl = transposeA ? ls[lrank - 2] : ls[lrank - 1];
  int64_t kr = transposeB ? rs[rrank - 1] : rs[rrank - 2];
  int64_t n = transposeB ? rs[rrank - 2] : rs[rrank - 1];
  if (!compatibleDims(kl, kr))
    return diag.fail("expects lhs columns (", formatDim(kl),
                     ") to equal rhs rows (", formatDim(kr), ")");
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> lbatch = ls.drop_back(2), rbatch = rs.drop_back(2);
  if (rrank == 2) {
    shape.assign(lbatch.begin(), lbatch.end());
  } else {
    if (lbatch.size() != rbatch.size())
      return diag.fail("expects equal batch dimensions or a matrix rhs, got ",
                       formatShape(lbatch), " and ", formatShape(rbatch));
    for (auto [a, b] : llvm::zip(lbatch, rbatch)) {
      if (!compatibleDims(a, b))
        return diag.fail("expects equal batch dimensions or a matrix rhs, got ",
                         formatShape(lbatch), " and ", formatShape(rbatch));
      shape.push_back(joinDims(a, b));
    }
  }
  shape.push_back(m);
  shape.push_back(n);
  return RankedTensorType::get(shape, lhs->getElementType());
}

InferredType inferTransposeType(const ShapeDiag &diag, Type operandType,
                                ArrayRef<int64_t> permutation) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  if (failed(operand))
    return failure();
  int64_t rank = operand->getRank();
  SmallVector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(permutation.size()) == rank;
  for (int64_t p : permutation) {
    if (!valid || p < 0 || p >= rank || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return diag.fail("expects a permutation of [0, ", rank, "), got ",
                     formatShape(permutation));
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(operand->getDimSize(p));
  return RankedTensorType::get(shape, operand->getElementType());
}

InferredType inferConcatType(const ShapeDiag &diag, TypeRange inputs,
                             int64_t axis) {
  if (inputs.empty())
    return diag.fail("expects at least one input");
  FailureOr<RankedTensorType> first = ranked(diag, inputs.front(), "input #0");
  if (failed(first))
    return failure();
  int64_t rank = first->getRank();
  if (axis < 0 || axis >= rank)
    return diag.fail("expects axis (", axis, ") to be in [0, ", rank, ")");
  SmallVector<int64_t> shape(first->getShape());
  for (auto [index, type] : llvm::enumerate(inputs.drop_front())) {
    std::string what = "input #" + std::to_string(index + 1);
    FailureOr<RankedTensorType> next = ranked(diag, type, what);
    if (failed(next))
      return failure();
    if (next->getElementType() != first->getElementType())
      return diag.fail("expects inputs of one element type, got ",
                       first->getElementType(), " and ", next->getElementType());
    if (next->getRank() != rank)
      return diag.fail("expects inputs of one rank, got ", rank, " and ",
                       next->getRank());
    for (int64_t d = 0; d < rank; ++d) {
      int64_t other = next->getDimSize(d);
      if (d == axis) {
        shape[d] = (shape[d] == kDynamic || other == kDynamic)
                       ? kDynamic
                       : shape[d] + other;
        continue;
      }
      if (!compatibleDims(shape[d], other))
        return diag.fail("expects inputs to agree outside axis ", axis,
                         ", got ", formatShape(first->getShape()), " and ",
                         formatShape(next->getShape()));
      shape[d] = joinDims(shape[d], other);
    }
  }
  return RankedTensorType::get(shape, first->getElementType());
}

InferredType inferSliceType(const ShapeDiag &diag, Type operandType,
                            ArrayRef<int64_t> start, ArrayRef<int64_t> limit,
                            ArrayRef<int64_t> step) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  if (failed(operand))
    return failure();
  int64_t rank = operand->getRank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(step.size()) != rank)
    return diag.fail("expects start, limit and step of length ", rank,
                     " (the rank), got ", start.size(), ", ", limit.size(),
                     " and ", step.size());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = operand->getDimSize(d);
    if (step[d] < 1)
      return diag.fail("expects step >= 1, got ", step[d], " in dimension ", d);
    if (start[d] < 0 || start[d] > limit[d] ||
        (size != kDynamic && limit[d] > size))
      return diag.fail("expects 0 <= start <= limit <= size in dimension ", d,
                       ", got start ", start[d], ", limit ", limit[d],
                       ", size ", formatDim(size));
    shape.push_back(llvm::divideCeil(limit[d] - start[d], step[d]));
  }
  return RankedTensorType::get(shape, operand->getElementType());
}

InferredType inferReduceType(const ShapeDiag &diag, Type operandType,
                             ArrayRef<int64_t> axes, bool keepDims) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  if (failed(operand))
    return failure();
  int64_t rank = operand->getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return diag.fail("expects axes in [0, ", rank, "), got ",
                       formatShape(axes));
    if (i > 0 && axes[i - 1] >= axis)
      return diag.fail("expects strictly increasing axes, got ",
                       formatShape(axes));
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(operand->getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  return RankedTensorType::get(shape, operand->getElementType());
}

InferredType inferSoftmaxType(const ShapeDiag &diag, Type operandType,
                              int64_t axis) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  if (failed(operand))
    return failure();
  if (axis < 0 || axis >= operand->getRank())
    return diag.fail("expects axis (", axis, ") to be in [0, ",
                     operand->getRank(), ")");
  return *operand;
}

InferredType inferLayerNormType(const ShapeDiag &diag, Type inputType,
                                Type scaleType, Type biasType, int64_t axis,
                                double epsilon) {
  FailureOr<RankedTensorType> input = ranked(diag, inputType, "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  if (axis < 0 || axis >= rank)
    return diag.fail("expects axis (", axis, ") to be in [0, ", rank, ")");
  if (!(epsilon >= 0.0) || std::isinf(epsilon))
    return diag.fail("expects a finite epsilon >= 0, got ", epsilon);
  ArrayRef<int64_t> normalized = input->getShape().drop_front(axis);
  auto checkParam = [&](Type type, StringRef what) -> LogicalResult {
    FailureOr<RankedTensorType> param = ranked(diag, type, what);
    if (failed(param))
      return failure();
    if (param->getElementType() != input->getElementType())
      return diag.fail("expects ", what, " of element type ",
                       input->getElementType(), ", got ",
                       param->getElementType());
    bool same = param->getRank() == static_cast<int64_t>(normalized.size()) &&
                llvm::all_of(llvm::zip(param->getShape(), normalized),
                             [](auto dims) {
                               return compatibleDims(std::get<0>(dims),
                                                     std::get<1>(dims));
                             });
    if (!same)
      return diag.fail("expects ", what, " of shape ", formatShape(normalized),
                       " (input dimensions from axis ", axis, "), got ",
                       formatShape(param->getShape()));
    return success();
  };
  if (failed(checkParam(scaleType, "scale")))
    return failure();
  if (biasType && failed(checkParam(biasType, "bias")))
    return failure();
  return *input;
}

InferredType inferGatherType(const ShapeDiag &diag, Type tableType,
                             Type indicesType, int64_t axis) {
  FailureOr<RankedTensorType> table = ranked(diag, tableType, "table");
  FailureOr<RankedTensorType> indices = ranked(diag, indicesType, "indices");
  if (failed(table) || failed(indices))
    return failure();
  if (!indices->getElementType().isInteger(32) &&
      !indices->getElementType().isInteger(64))
    return diag.fail("expects i32 or i64 indices, got ",
                     indices->getElementType());
  if (axis < 0 || axis >= table->getRank())
    return diag.fail("expects axis (", axis, ") to be in [0, ",
                     table->getRank(), ")");
  SmallVector<int64_t> shape(table->getShape().take_front(axis));
  llvm::append_range(shape, indices->getShape());
  llvm::append_range(shape, table->getShape().drop_front(axis + 1));
  return RankedTensorType::get(shape, table->getElementType());
}

InferredType inferEmbeddingBagType(const ShapeDiag &diag, Type tableType, Type idsType) {
  FailureOr<RankedTensorType> table = ranked(diag, tableType, "table");
  FailureOr<RankedTensorType> ids = ranked(diag, idsType, "ids");
  if (failed(table) || failed(ids))
    return failure();
  if (!ids->getElementType().isInteger(32) && !ids->getElementType().isInteger(64))
    return diag.fail("expects i32 or i64 ids, got ", ids->getElementType());
  if (!llvm::isa<FloatType>(table->getElementType()))
    return diag.fail("expects a float table, got ", table->getElementType());
  if (table->getRank() < 1)
    return diag.fail("expects a table of rank >= 1 [rows, ...], got rank 0");
  if (ids->getRank() < 1)
    return diag.fail("expects ids of rank >= 1 [batch..., ids per list], got rank 0");
  SmallVector<int64_t> shape(ids->getShape().drop_back());
  llvm::append_range(shape, table->getShape().drop_front());
  return RankedTensorType::get(shape, table->getElementType());
}

InferredType inferSoftmaxCrossEntropyType(const ShapeDiag &diag, Type logitsType,
                                          Type labelsType) {
  FailureOr<RankedTensorType> logits = ranked(diag, logitsType, "logits");
  FailureOr<RankedTensorType> labels = ranked(diag, labelsType, "labels");
  if (failed(logits) || failed(labels))
    return failure();
  if (logits->getRank() < 2)
    return diag.fail("expects logits of rank >= 2 [batch..., classes], got ",
                     formatShape(logits->getShape()));
  if (labels->getRank() != logits->getRank() - 1)
    return diag.fail("expects labels of rank ", logits->getRank() - 1,
                     " (the logits' without classes), got ",
                     formatShape(labels->getShape()));
  for (int64_t d = 0; d < labels->getRank(); ++d)
    if (!compatibleDims(logits->getDimSize(d), labels->getDimSize(d)))
      return diag.fail("expects labels shaped like the logits without classes (",
                       formatShape(logits->getShape().drop_back()), "), got ",
                       formatShape(labels->getShape()));
  return RankedTensorType::get({}, logits->getElementType());
}

InferredType inferPointwiseLossType(const ShapeDiag &diag, TypeRange operands) {
  InferredType joined = inferElementwiseType(diag, operands);
  if (failed(joined))
    return failure();
  return RankedTensorType::get({}, joined->getElementType());
}

LogicalResult verifyReshape(const ShapeDiag &diag, Type operandType,
                            Type resultType) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  FailureOr<RankedTensorType> result = ranked(diag, resultType, "result");
  if (failed(operand) || failed(result))
    return failure();
  if (operand->getElementType() != result->getElementType())
    return diag.fail("expects result element type ", operand->getElementType(),
                     ", got ", result->getElementType());
  FailureOr<int64_t> in = staticElementCount(operand->getShape());
  FailureOr<int64_t> out = staticElementCount(result->getShape());
  if (succeeded(in) && succeeded(out) && *in != *out)
    return diag.fail("expects the same element count, got ", *in, " (",
                     formatShape(operand->getShape()), ") and ", *out, " (",
                     formatShape(result->getShape()), ")");
  return success();
}

LogicalResult verifyBroadcast(const ShapeDiag &diag, Type operandType,
                              Type resultType) {
  FailureOr<RankedTensorType> operand = ranked(diag, operandType, "operand");
  FailureOr<RankedTensorType> result = ranked(diag, resultType, "result");
  if (failed(operand) || failed(result))
    return failure();
  if (operand->getElementType() != result->getElementType())
    return diag.fail("expects result element type ", operand->getElementType(),
                     ", got ", result->getElementType());
  int64_t offset = result->getRank() - operand->getRank();
  bool ok = offset >= 0;
  for (int64_t d = 0; ok && d < operand->getRank(); ++d) {
    int64_t from = operand->getDimSize(d), to = result->getDimSize(d + offset);
    ok = from == 1 || compatibleDims(from, to);
  }
  if (!ok)
    return diag.fail("cannot broadcast ", formatShape(operand->getShape()),
                     " to ", formatShape(result->getShape()));
  return success();
}

} // namespace kiln
