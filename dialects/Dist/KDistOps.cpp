//===- KDistOps.cpp - kdist op verifiers and result types -----------------===//

#include "dialects/Dist/KDistOps.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln::dist;

#define GET_OP_CLASSES
#include "dialects/Dist/KDistOps.cpp.inc"

namespace {

/// A reduction's operands: at least one, floats for `mean`.
LogicalResult verifyReduceOperands(Operation *op, ReduceKind kind, ValueRange inputs) {
  if (inputs.empty())
    return op->emitOpError("expects at least one operand");
  if (kind == ReduceKind::mean)
    for (auto [i, input] : llvm::enumerate(inputs))
      if (!llvm::isa<FloatType>(llvm::cast<ShapedType>(input.getType()).getElementType()))
        return op->emitOpError("expects float operands for mean, got operand #")
               << i << " of type " << input.getType();
  return success();
}

LogicalResult verifyTag(Operation *op, int64_t tag) {
  if (tag < 0)
    return op->emitOpError("expects a tag >= 0, got ") << tag;
  return success();
}

/// The result type of gathering (`gather`) or scattering `input` over
/// `groupSize` replicas along `axis`; emits an error at `op` and returns
/// null when the attributes do not fit the operand.
RankedTensorType groupedType(Operation *op, Value input, int64_t axis, int64_t groupSize,
                             bool gather) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  if (axis < 0 || axis >= type.getRank()) {
    op->emitOpError("expects axis in [0, ") << type.getRank() << "), got " << axis;
    return {};
  }
  if (groupSize < 1) {
    op->emitOpError("expects group_size >= 1, got ") << groupSize;
    return {};
  }
  SmallVector<int64_t> shape(type.getShape());
  int64_t size = shape[axis];
  if (gather) {
    shape[axis] = ShapedType::isDynamic(size) ? size : size * groupSize;
  } else {
    if (!ShapedType::isDynamic(size) && size % groupSize != 0) {
      op->emitOpError("expects dimension ")
          << axis << " (" << size << ") to divide into group_size (" << groupSize
          << ") blocks";
      return {};
    }
    shape[axis] = ShapedType::isDynamic(size) ? size : size / groupSize;
  }
  return RankedTensorType::get(shape, type.getElementType());
}

LogicalResult verifyGroupedResult(Operation *op, Value input, Value result, int64_t axis,
                                  int64_t groupSize, bool gather) {
  RankedTensorType expected = groupedType(op, input, axis, groupSize, gather);
  if (!expected)
    return failure();
  if (result.getType() != expected)
    return op->emitOpError("expects result type ")
           << expected << ", got " << result.getType();
  return success();
}

/// A start op's handle goes to exactly one kdist.wait.
LogicalResult verifySingleWait(Operation *start) {
  Value pending = start->getResult(0);
  if (!pending.hasOneUse() || !llvm::isa<WaitOp>(*pending.getUsers().begin()))
    return start->emitOpError("expects its handle to be used by exactly one kdist.wait");
  return success();
}

/// A sparse tensor's operands: ids [K] and rows [K, ...] of floats, and a
/// sum or a mean.
LogicalResult verifySparseOperands(Operation *op, ReduceKind kind, Value ids, Value rows) {
  auto idsType = llvm::cast<RankedTensorType>(ids.getType());
  auto rowsType = llvm::cast<RankedTensorType>(rows.getType());
  if (kind == ReduceKind::max)
    return op->emitOpError("expects sum or mean: a sparse tensor's maximum is not its rows'");
  if (rowsType.getRank() < 1 || rowsType.getDimSize(0) != idsType.getDimSize(0))
    return op->emitOpError("expects rows [")
           << idsType.getDimSize(0) << ", ...] for ids " << idsType << ", got " << rowsType;
  return success();
}

/// `type` with its leading dimension unknown: the gathered form.
RankedTensorType gathered(Type type) {
  auto ranked = llvm::cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = ShapedType::kDynamic;
  return RankedTensorType::get(shape, ranked.getElementType());
}

} // namespace

SmallVector<Type> kiln::dist::pendingResultTypes(Operation *start) {
  SmallVector<Type> types;
  if (auto op = llvm::dyn_cast<AllReduceStartOp>(start))
    llvm::append_range(types, op.getInputs().getTypes());
  else if (auto op = llvm::dyn_cast<BroadcastStartOp>(start))
    llvm::append_range(types, op.getInputs().getTypes());
  else if (auto op = llvm::dyn_cast<AllGatherStartOp>(start)) {
    auto input = llvm::cast<RankedTensorType>(op.getInput().getType());
    if (static_cast<int64_t>(op.getAxis()) >= 0 && static_cast<int64_t>(op.getAxis()) < input.getRank() && static_cast<int64_t>(op.getGroupSize()) >= 1)
      types.push_back(groupedType(op, op.getInput(), static_cast<int64_t>(op.getAxis()), static_cast<int64_t>(op.getGroupSize()), true));
  } else if (auto op = llvm::dyn_cast<SparseAllReduceStartOp>(start)) {
    types.push_back(gathered(op.getIds().getType()));
    types.push_back(gathered(op.getRows().getType()));
  } else if (auto op = llvm::dyn_cast<ReduceScatterStartOp>(start)) {
    auto input = llvm::cast<RankedTensorType>(op.getInput().getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis >= 0 && axis < input.getRank() && static_cast<int64_t>(op.getGroupSize()) >= 1 &&
        (input.isDynamicDim(axis) || input.getDimSize(axis) % static_cast<int64_t>(op.getGroupSize()) == 0))
      types.push_back(groupedType(op, op.getInput(), axis, static_cast<int64_t>(op.getGroupSize()), false));
  }
  return types;
}

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  // The reduction kind is an attribute: every operand is an input.
  llvm::append_range(inferred, operands.getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  return failure(failed(verifyReduceOperands(*this, getKind(), getInputs())) ||
                 failed(verifyTag(*this, static_cast<int64_t>(getTag()))));
}

LogicalResult BroadcastOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  llvm::append_range(inferred, operands.getTypes());
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one operand");
  if (static_cast<int64_t>(getRoot()) < 0)
    return emitOpError("expects root >= 0, got ") << static_cast<int64_t>(getRoot());
  return verifyTag(*this, static_cast<int64_t>(getTag()));
}

LogicalResult AllGatherOp::verify() {
  return failure(failed(verifyGroupedResult(*this, getInput(), getResult(), static_cast<int64_t>(getAxis()),
                                            static_cast<int64_t>(getGroupSize()), true)) ||
                 failed(verifyTag(*this, static_cast<int64_t>(getTag()))));
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyReduceOperands(*this, getKind(), getInput())))
    return failure();
  return failure(failed(verifyGroupedResult(*this, getInput(), getResult(), static_cast<int64_t>(getAxis()),
                                            static_cast<int64_t>(getGroupSize()), false)) ||
                 failed(verifyTag(*this, static_cast<int64_t>(getTag()))));
}

LogicalResult SparseAllReduceOp::verify() {
  if (failed(verifySparseOperands(*this, getKind(), getIds(), getRows())) ||
      failed(verifyTag(*this, static_cast<int64_t>(getTag()))))
    return failure();
  if (getAllIds().getType() != gathered(getIds().getType()) ||
      getAllRows().getType() != gathered(getRows().getType()))
    return emitOpError("expects results ")
           << gathered(getIds().getType()) << " and " << gathered(getRows().getType())
           << ", got " << getAllIds().getType() << " and " << getAllRows().getType();
  return success();
}

LogicalResult SparseAllReduceStartOp::verify() {
  return failure(failed(verifySparseOperands(*this, getKind(), getIds(), getRows())) ||
                 failed(verifyTag(*this, static_cast<int64_t>(getTag()))) ||
                 failed(verifySingleWait(*this)));
}

LogicalResult AllReduceStartOp::verify() {
  return failure(failed(verifyReduceOperands(*this, getKind(), getInputs())) ||
                 failed(verifyTag(*this, static_cast<int64_t>(getTag()))) || failed(verifySingleWait(*this)));
}

LogicalResult BroadcastStartOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one operand");
  if (static_cast<int64_t>(getRoot()) < 0)
    return emitOpError("expects root >= 0, got ") << static_cast<int64_t>(getRoot());
  return failure(failed(verifyTag(*this, static_cast<int64_t>(getTag()))) || failed(verifySingleWait(*this)));
}

LogicalResult AllGatherStartOp::verify() {
  if (!groupedType(*this, getInput(), static_cast<int64_t>(getAxis()), static_cast<int64_t>(getGroupSize()), true))
    return failure();
  return failure(failed(verifyTag(*this, static_cast<int64_t>(getTag()))) || failed(verifySingleWait(*this)));
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyReduceOperands(*this, getKind(), getInput())) ||
      !groupedType(*this, getInput(), static_cast<int64_t>(getAxis()), static_cast<int64_t>(getGroupSize()), false))
    return failure();
  return failure(failed(verifyTag(*this, static_cast<int64_t>(getTag()))) || failed(verifySingleWait(*this)));
}

LogicalResult WaitOp::verify() {
  Operation *start = getPending().getDefiningOp();
  if (!start || !llvm::isa<AllReduceStartOp, BroadcastStartOp, AllGatherStartOp,
                           ReduceScatterStartOp, SparseAllReduceStartOp>(start))
    return emitOpError("expects a handle from a kdist start op");
  if (start->getBlock() != (*this)->getBlock())
    return emitOpError("expects its start op in the same block");
  SmallVector<Type> expected = pendingResultTypes(start);
  if (expected.empty())
    return failure(); // The start op reports its own attributes.
  if (TypeRange(getResults().getTypes()) != TypeRange(expected)) {
    InFlightDiagnostic diag = emitOpError("expects result types (");
    llvm::interleaveComma(expected, diag);
    diag << ") from its start op, got (";
    llvm::interleaveComma(getResults().getTypes(), diag);
    return diag << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Parameter servers
//===----------------------------------------------------------------------===//

namespace {

/// The kiln.variable `op` names, or null after an error.
kiln::VariableOp lookupVariable(Operation *op, FlatSymbolRefAttr name,
                                SymbolTableCollection &symbols) {
  auto variable = symbols.lookupNearestSymbolFrom<kiln::VariableOp>(op, name);
  if (!variable)
    op->emitOpError("expects ") << name << " to name a kiln.variable";
  return variable;
}

/// ids' shape followed by the table's row shape.
LogicalResult verifyRows(Operation *op, kiln::VariableOp table, ShapedType ids, Type rowsType,
                         StringRef what) {
  RankedTensorType tableType = table.getTensorType();
  if (tableType.getRank() < 1)
    return op->emitOpError("expects a table of rank >= 1, @")
           << table.getSymName() << " is " << tableType;
  SmallVector<int64_t> shape(ids.getShape());
  llvm::append_range(shape, tableType.getShape().drop_front());
  auto expected = RankedTensorType::get(shape, tableType.getElementType());
  if (rowsType != expected)
    return op->emitOpError("expects ") << what << " of type " << expected << " (the ids' shape, "
                                       << "then @" << table.getSymName() << "'s rows), got "
                                       << rowsType;
  return success();
}

} // namespace

LogicalResult PsPullOp::verifySymbolUses(SymbolTableCollection &symbols) {
  kiln::VariableOp variable = lookupVariable(*this, getVariableAttr(), symbols);
  if (!variable)
    return failure();
  if (getType() != variable.getTensorType())
    return emitOpError("expects the type of @")
           << variable.getSymName() << ", " << variable.getTensorType() << ", got " << getType();
  return success();
}

LogicalResult PsPullRowsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  kiln::VariableOp table = lookupVariable(*this, getVariableAttr(), symbols);
  if (!table)
    return failure();
  return verifyRows(*this, table, getIds().getType(), getType(), "a result");
}

LogicalResult PsPushOp::verifySymbolUses(SymbolTableCollection &symbols) {
  kiln::VariableOp variable = lookupVariable(*this, getVariableAttr(), symbols);
  if (!variable)
    return failure();
  if (getGradient().getType() != variable.getTensorType())
    return emitOpError("expects a gradient of @")
           << variable.getSymName() << "'s type " << variable.getTensorType() << ", got "
           << getGradient().getType();
  return success();
}

LogicalResult PsPushRowsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  kiln::VariableOp table = lookupVariable(*this, getVariableAttr(), symbols);
  if (!table)
    return failure();
  return verifyRows(*this, table, getIds().getType(), getRows().getType(), "rows");
}
