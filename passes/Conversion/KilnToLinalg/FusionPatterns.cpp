//===- FusionPatterns.cpp - kiln.fusion to one linalg.generic --------------===//
//
// Every op of a fusion body computes the same iteration shape, so the body
// becomes the scalar body of one parallel linalg.generic over that shape:
// each input is read once per element through its broadcast map (identity
// for the inputs of that shape; the leading dimensions for the indices of a
// one_hot, whose element compares its index with the last dimension's
// position), splat constants become scalars, and each yielded value is an
// output. A transpose of an input is that input read through the
// permutation (the input read plainly too where other ops read it). Values
// between the ops stay in registers. A
// body that ends in a reduction (its only result) becomes that reduction's
// generic, its elements computed by the rest of the body.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"
#include "passes/Conversion/KilnToLinalg/ScalarElements.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
namespace {

/// The scalar of a splat constant tensor, or null.
TypedAttr splatValue(Value tensor) {
  DenseElementsAttr attr;
  if (!matchPattern(tensor, m_Constant(&attr)) || !attr.isSplat())
    return nullptr;
  return llvm::dyn_cast<TypedAttr>(attr.getSplatValue<Attribute>());
}

/// Whether the lowering computes `op` of a body: what elementOf knows, and
/// splat constants.
bool isScalarizable(Operation &op) {
  if (llvm::isa<ConstantOp>(op))
    return static_cast<bool>(splatValue(op.getResult(0)));
  if (auto transpose = llvm::dyn_cast<TransposeOp>(op))
    return llvm::isa<BlockArgument>(transpose.getOperand());
  return op.hasTrait<OpTrait::Elementwise>() ||
         llvm::isa<BroadcastOp, StopGradientOp, OneHotOp>(op);
}

/// Whether every reader of `arg` is a one_hot: the argument is then read
/// along the leading dimensions of the iteration shape.
bool feedsOneHotsOnly(BlockArgument arg) {
  return !arg.use_empty() &&
         llvm::all_of(arg.getUsers(), [](Operation *user) { return llvm::isa<OneHotOp>(user); });
}

/// The one permutation by which the body's transposes read `arg`; empty
/// when none does, failure when two differ.
FailureOr<SmallVector<int64_t>> transposedRead(BlockArgument arg) {
  SmallVector<int64_t> permutation;
  for (Operation *user : arg.getUsers())
    if (auto transpose = llvm::dyn_cast<TransposeOp>(user)) {
      if (!permutation.empty() && ArrayRef<int64_t>(permutation) != transpose.getPermutation())
        return failure();
      permutation.assign(transpose.getPermutation().begin(), transpose.getPermutation().end());
    }
  return permutation;
}

/// Where a body reads element `indices` of the result of a transpose by
/// `permutation`: operand dimension permutation[i] is result dimension i.
AffineMap transposedMap(MLIRContext *context, ArrayRef<int64_t> permutation) {
  SmallVector<AffineExpr> operandIndices(permutation.size());
  for (auto [i, from] : llvm::enumerate(permutation))
    operandIndices[from] = getAffineDimExpr(i, context);
  return AffineMap::get(permutation.size(), 0, operandIndices, context);
}

/// How the body reads its block arguments inside the generic: argument i
/// is the generic's input `inputOf[i]`, or with -1 the scalar `splatOf[i]`;
/// its transposes read input `transposedOf[i]` (-1: none).
struct ArgumentReads {
  SmallVector<int> inputOf;
  SmallVector<TypedAttr> splatOf;
  SmallVector<int> transposedOf;
};

/// The scalar of every value of the body computed before `stop` (null: to
/// the end), from the generic's block arguments `elements`.
DenseMap<Value, Value> computeBody(Block &body, const ArgumentReads &reads, OpBuilder &b,
                                   Location loc, ValueRange elements, Operation *stop) {
  DenseMap<Value, Value> scalars;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    if (reads.inputOf[i] >= 0)
      scalars[arg] = elements[reads.inputOf[i]];
    else if (reads.splatOf[i])
      scalars[arg] = b.create<arith::ConstantOp>(loc, reads.splatOf[i]);
    // Else only transposes read it.
  }
  for (Operation &inner : body.without_terminator()) {
    if (&inner == stop)
      break;
    Value value;
    if (llvm::isa<ConstantOp>(inner)) {
      value = b.create<arith::ConstantOp>(loc, splatValue(inner.getResult(0)));
    } else if (auto transpose = llvm::dyn_cast<TransposeOp>(inner)) {
      auto arg = llvm::cast<BlockArgument>(transpose.getOperand());
      value = elements[reads.transposedOf[arg.getArgNumber()]];
    } else if (auto oneHot = llvm::dyn_cast<OneHotOp>(inner)) {
      auto type = llvm::cast<RankedTensorType>(oneHot.getType());
      value = oneHotElement(b, inner.getLoc(), type.getRank(),
                            scalars.lookup(oneHot.getIndices()), type.getElementType());
    } else {
      SmallVector<Value> operands;
      for (Value operand : inner.getOperands())
        operands.push_back(scalars.lookup(operand));
      value = elementOf(&inner, b, inner.getLoc(), operands);
    }
    scalars[inner.getResult(0)] = value;
  }
  return scalars;
}

/// The reduction that ends the body and gives its only result, or null.
Operation *closingReduction(FusionOp op) {
  ValueRange yielded = op.getYield().getValues();
  Operation *def = yielded.size() == 1 ? yielded[0].getDefiningOp() : nullptr;
  return def && def->getBlock() == &op.getBody().front() && isReduction(def) ? def : nullptr;
}

struct FusionLowering : public OpRewritePattern<FusionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusionOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    if (op.getNumResults() == 0)
      return rewriter.notifyMatchFailure(op, "yields nothing");
    Operation *reduction = closingReduction(op);
    for (Operation &inner : body.without_terminator())
      if (&inner != reduction && !isScalarizable(inner))
        return inner.emitOpError("cannot be computed inside a kiln.fusion");
    for (Operation &inner : body.without_terminator())
      if (auto oneHot = llvm::dyn_cast<OneHotOp>(inner)) {
        auto arg = llvm::dyn_cast<BlockArgument>(oneHot.getIndices());
        if (!arg || !feedsOneHotsOnly(arg))
          return inner.emitOpError("inside a kiln.fusion needs indices read by one_hot ops only");
      }
    // The iteration shape: the results', or the reduced operand's.
    Value shaped = reduction ? reduction->getOperand(0) : op.getResult(0);
    ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(shaped.getType()).getShape();
    Location loc = op.getLoc();

    // Inputs read from memory; splat constants need none.
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    ArgumentReads reads;
    for (auto [outer, arg] : llvm::zip(op.getInputs(), body.getArguments())) {
      reads.splatOf.push_back(splatValue(outer));
      reads.transposedOf.push_back(-1);
      if (reads.splatOf.back()) {
        reads.inputOf.push_back(-1);
        continue;
      }
      FailureOr<SmallVector<int64_t>> permutation = transposedRead(arg);
      if (failed(permutation))
        return op.emitOpError("transposes input ") << arg.getArgNumber()
                                                   << " by two permutations";
      if (!permutation->empty()) {
        reads.transposedOf.back() = inputs.size();
        inputs.push_back(outer);
        maps.push_back(transposedMap(rewriter.getContext(), *permutation));
        if (llvm::all_of(arg.getUsers(), [](Operation *user) { return llvm::isa<TransposeOp>(user); })) {
          reads.inputOf.push_back(-1);
          continue;
        }
      }
      reads.inputOf.push_back(inputs.size());
      inputs.push_back(outer);
      if (feedsOneHotsOnly(arg)) {
        maps.push_back(oneHotIndicesMap(rewriter.getContext(), shape.size()));
        continue;
      }
      maps.push_back(broadcastMap(rewriter.getContext(),
                                  llvm::cast<RankedTensorType>(outer.getType()).getShape(),
                                  shape));
    }

    if (reduction) {
      Value result = lowerReduction(
          reduction, rewriter, shape, inputs, maps,
          [&](OpBuilder &b, Location l, ValueRange elements) {
            return computeBody(body, reads, b, l, elements, reduction)
                .lookup(reduction->getOperand(0));
          });
      rewriter.replaceOp(op, result);
      return success();
    }

    SmallVector<Value> inits;
    for (Type type : op.getResultTypes()) {
      inits.push_back(emptyTensor(rewriter, loc, llvm::cast<RankedTensorType>(type)));
      maps.push_back(rewriter.getMultiDimIdentityMap(shape.size()));
    }
    SmallVector<utils::IteratorType> iterators(shape.size(), utils::IteratorType::parallel);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, op.getResultTypes(), inputs, inits, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange elements) {
          DenseMap<Value, Value> scalars = computeBody(body, reads, b, l, elements, nullptr);
          SmallVector<Value> yielded;
          for (Value value : op.getYield().getValues())
            yielded.push_back(scalars.lookup(value));
          b.create<linalg::YieldOp>(l, yielded);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateFusionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<FusionLowering>(patterns.getContext());
}

} // namespace kiln
