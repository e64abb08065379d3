//===- SavedActivations.cpp - Forward values kept in 16 bits for backward -===//
//
// Part of kiln-mixed-precision (Passes.td, `store-activations`): the f32
// values a train step's forward pass computes and its backward sweep reads
// are kept between the two as a 16-bit copy, which the kernel computing the
// value writes beside it; the backward kernels read the copy and widen it
// as they load it. The f32 value then dies with its last forward reader
// instead of living until the backward sweep reaches it, so what backward
// keeps takes half the memory (as with PyTorch's autocast, whose products
// return bf16 activations, and its backward reads them).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimize/SavedActivations.h"

#include "passes/Optimize/Fusible.h"

#include "dialects/Dist/KDistOps.h"
#include "dialects/Kiln/KilnDialect.h"
#include "dialects/Kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace kiln;

namespace {

/// A value smaller than this stays f32: its copy saves less than the
/// bookkeeping of one more result (a layer norm's row statistics, a bias).
constexpr int64_t kMinSavedElements = 4096;

/// The replica's own `value` before the data-parallel replicas average it
/// (the loss is all-reduced with the gradients).
Value beforeAllReduce(Value value) {
  while (auto result = llvm::dyn_cast<OpResult>(value)) {
    Operation *def = result.getOwner();
    if (auto wait = llvm::dyn_cast<dist::WaitOp>(def)) {
      auto start = wait.getPending().getDefiningOp<dist::AllReduceStartOp>();
      if (!start)
        break;
      value = start.getInputs()[result.getResultNumber()];
    } else if (auto reduce = llvm::dyn_cast<dist::AllReduceOp>(def)) {
      value = reduce.getInputs()[result.getResultNumber()];
    } else {
      break;
    }
  }
  return value;
}

/// The ops the results of `func` are computed from, each traced to the
/// replica's own value: the forward pass (the loss's, and the outputs',
/// such as a model's predictions, which must not read rounded values);
/// empty when none of them is named `lossName`.
llvm::DenseSet<Operation *> forwardPass(func::FuncOp func, StringRef lossName) {
  llvm::DenseSet<Operation *> slice;
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().back().getTerminator());
  bool hasLoss = false;
  SmallVector<Operation *> worklist;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, KilnDialect::kNameAttrName);
    hasLoss |= name && name.getValue() == lossName;
    if (Operation *def = beforeAllReduce(ret.getOperand(i)).getDefiningOp())
      worklist.push_back(def);
  }
  if (!hasLoss)
    return slice;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!slice.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  return slice;
}

/// An existing cast of `value` to `type` (a product's rounded input).
CastOp copyIn(Value value, Type type) {
  for (Operation *user : value.getUsers())
    if (auto cast = llvm::dyn_cast<CastOp>(user))
      if (llvm::cast<RankedTensorType>(cast.getType()).getElementType() == type)
        return cast;
  return {};
}

/// Whether a widening cast of `value` placed before `reader` joins the
/// reader's kernel: an elementwise op of the value's shape, or a reduction
/// that can close one.
bool readsInItsKernel(Operation *reader, Value value) {
  if (!isFusible(reader) && !llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(reader))
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(reader->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  return llvm::isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(reader) ||
         (!llvm::isa<TransposeOp, BroadcastOp>(reader) && type.getShape() ==
          llvm::cast<RankedTensorType>(value.getType()).getShape());
}

/// Whether `value` is a constant splat of zero.
bool isZeroSplat(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto dense = constant ? llvm::dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!dense || !dense.isSplat())
    return false;
  if (llvm::isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

/// Whether a backward `reader` of `value` decides a mask by comparing it
/// with anything but zero (a maximum's or minimum's gradient against a
/// clip bound): rounded to 16 bits, a value just under the bound could
/// meet it and lose its gradient. Against zero (a ReLU's mask) the
/// rounded value compares as the value does.
bool comparesWithBound(Operation *reader, Value value) {
  auto compare = llvm::dyn_cast<CompareOp>(reader);
  if (!compare)
    return false;
  Value other = compare->getOperand(0) == value ? compare->getOperand(1) : compare->getOperand(0);
  return !isZeroSplat(other);
}

/// The readers of `value` outside `forward` (the backward sweep's), if
/// every one of them can read a 16-bit copy in its own kernel and none
/// compares it with a bound; empty otherwise. A product's 16-bit input is
/// already a copy and does not count.
SmallVector<Operation *> backwardReaders(Value value, Type type,
                                         const llvm::DenseSet<Operation *> &forward) {
  llvm::SetVector<Operation *> readers;
  for (Operation *user : value.getUsers()) {
    if (forward.contains(user))
      continue;
    if (auto cast = llvm::dyn_cast<CastOp>(user);
        cast && llvm::cast<RankedTensorType>(cast.getType()).getElementType() == type)
      continue;
    if (user->hasTrait<OpTrait::IsTerminator>() || !readsInItsKernel(user, value) ||
        comparesWithBound(user, value))
      return {};
    readers.insert(user);
  }
  return readers.takeVector();
}

} // namespace

int kiln::storeSavedActivations(func::FuncOp func, StringRef lossName, Type type) {
  llvm::DenseSet<Operation *> forward = forwardPass(func, lossName);
  if (forward.empty())
    return 0;
  // Activations are computed from the step's inputs. A value computed from
  // weights (variables, parameter-server pulls) and constants alone, a
  // weight's reshape or broadcast say, stays f32 for everything but products.
  llvm::DenseSet<Operation *> fromInputs;
  SmallVector<Value> saved;
  for (Operation &op : func.getBody().front()) {
    if (llvm::any_of(op.getOperands(), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          return !def || fromInputs.contains(def);
        }))
      fromInputs.insert(&op);
    if (!forward.contains(&op) || op.getNumResults() != 1 || !fromInputs.contains(&op))
      continue;
    Value value = op.getResult(0);
    auto shaped = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!shaped || !shaped.hasStaticShape() || !shaped.getElementType().isF32() ||
        shaped.getNumElements() < kMinSavedElements)
      continue;
    // The copy is written by the kernel computing the value, or is a
    // product's input already. Rows pulled from parameter servers are the
    // tables' own; a broadcast is cheaper computed again than kept.
    if (llvm::isa<BroadcastOp>(op) || llvm::isa<dist::KDistDialect>(op.getDialect()))
      continue;
    if (isFusible(&op) || copyIn(value, type))
      saved.push_back(value);
  }
  int stored = 0;
  for (Value value : saved) {
    SmallVector<Operation *> readers = backwardReaders(value, type, forward);
    if (readers.empty())
      continue;
    auto shaped = llvm::cast<RankedTensorType>(value.getType());
    OpBuilder builder(value.getContext());
    builder.setInsertionPointAfterValue(value);
    Value copy;
    if (CastOp existing = copyIn(value, type)) {
      // A product's input cast before its first product, which may come
      // after a backward reader: the copy is made where the value is.
      existing->moveAfter(value.getDefiningOp());
      copy = existing;
    } else {
      copy = builder.create<CastOp>(value.getLoc(), shaped.clone(type), value);
    }
    for (Operation *reader : readers) {
      builder.setInsertionPoint(reader);
      Value widened = builder.create<CastOp>(value.getLoc(), shaped, copy);
      reader->replaceUsesOfWith(value, widened);
    }
    ++stored;
  }
  return stored;
}
