//===- WindowPatterns.cpp - Convolution and pooling to linalg -------------===//
//
// Each op becomes one `linalg.generic` over its result whose body walks the
// window with `scf.for` loops and reads operands with `tensor.extract`:
//
//   forward ops (conv, pooling, max_pool_indices), per output position o
//   and window offset k, read input position  o * stride - pad_low + k * dilation
//   (skipped outside the input: padding);
//
//   gradient ops, per input position p and window offset k, read the output
//   position  (p + pad_low - k * dilation) / stride  where that divides
//   exactly and lies in the output: the windows that covered p. A max pool's
//   gradient whose windows tile the input (2x2, stride 2, an even plane)
//   loops over window positions and offsets instead, writing each window's
//   elements: no division, and LLVM vectorizes it.
//
// The CPU back end calls its library for f32 convolutions (the execution
// plan's Convolution step); these loops are the portable form, used for
// pooling and for convolutions the library does not take.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
namespace {

/// The per-dimension window of a conv or pooling op.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow;
  /// The spatial sizes of the forward op's result (its windows).
  SmallVector<int64_t> outSizes;
  int64_t spatial() const { return strides.size(); }
  /// Whether every coordinate a forward window reads along `d` lies in an
  /// input of `inSize` (no low padding, and the last window ends inside:
  /// not so for padding, nor for a ceil-mode pool's last window).
  bool staysInside(int64_t d, int64_t inSize) const {
    return padLow[d] == 0 &&
           (outSizes[d] - 1) * strides[d] + dilations[d] * (kernel[d] - 1) < inSize;
  }
  /// Whether each input position lies in at most one window along every
  /// dimension (a 2x2 pool of stride 2), so a gradient reads one output.
  bool disjoint() const {
    for (int64_t d = 0; d < spatial(); ++d)
      if (strides[d] < dilations[d] * (kernel[d] - 1) + 1 || padLow[d] < 0)
        return false;
    return true;
  }
};

/// Index arithmetic and checks inside a generic's body.
class IndexMath {
public:
  IndexMath(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value constant(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, int64_t y) { return b.create<arith::MulIOp>(loc, x, constant(y)); }
  Value div(Value x, int64_t y) { return b.create<arith::DivSIOp>(loc, x, constant(y)); }
  Value rem(Value x, int64_t y) { return b.create<arith::RemSIOp>(loc, x, constant(y)); }
  Value min(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
  Value max(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, p, x, y);
  }
  Value both(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
  /// 0 <= x < size.
  Value inRange(Value x, int64_t size) {
    return both(cmp(arith::CmpIPredicate::sge, x, constant(0)),
                cmp(arith::CmpIPredicate::slt, x, constant(size)));
  }
  /// x clamped into [0, size): a safe coordinate to read where the read is
  /// then discarded.
  Value clamp(Value x, int64_t size) { return min(max(x, constant(0)), constant(size - 1)); }

private:
  OpBuilder &b;
  Location loc;
};

/// The input coordinate a forward window reads: o * stride - low + k * dil.
Value forwardCoord(IndexMath &m, const Window &w, int64_t d, Value o, Value k) {
  return m.add(m.sub(m.mul(o, w.strides[d]), m.constant(w.padLow[d])),
               m.mul(k, w.dilations[d]));
}

/// The output position whose window reads input position `p` at offset `k`,
/// and whether there is one: (p + low - k * dil) / stride, exactly.
std::pair<Value, Value> coveringOutput(IndexMath &m, const Window &w, int64_t d,
                                       Value p, Value k, int64_t outSize) {
  Value n = m.sub(m.add(p, m.constant(w.padLow[d])), m.mul(k, w.dilations[d]));
  Value divides = m.cmp(arith::CmpIPredicate::eq, m.rem(n, w.strides[d]), m.constant(0));
  Value o = m.div(n, w.strides[d]);
  Value valid = m.both(m.both(m.cmp(arith::CmpIPredicate::sge, n, m.constant(0)), divides),
                       m.inRange(o, outSize));
  return {m.clamp(o, outSize), valid};
}

using LoopBody = function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange ivs,
                                                 ValueRange acc)>;

/// Loops over [0, bounds[i]) for every i, threading `init` through.
SmallVector<Value> loops(OpBuilder &b, Location loc, ArrayRef<int64_t> bounds,
                         ValueRange init, LoopBody body) {
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t bound : bounds) {
    lbs.push_back(b.create<arith::ConstantIndexOp>(loc, 0));
    ubs.push_back(b.create<arith::ConstantIndexOp>(loc, bound));
    steps.push_back(b.create<arith::ConstantIndexOp>(loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, init,
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange acc) -> scf::ValueVector {
        return body(nb, l, ivs, acc);
      });
  return SmallVector<Value>(nest.results);
}

/// The generic's loop indices for the result's dimensions.
SmallVector<Value> resultIndices(OpBuilder &b, Location loc, int64_t rank) {
  SmallVector<Value> ivs;
  for (int64_t d = 0; d < rank; ++d)
    ivs.push_back(b.create<linalg::IndexOp>(loc, d));
  return ivs;
}

template <typename OpTy>
Window windowOf(OpTy op, ArrayRef<int64_t> kernel, ArrayRef<int64_t> outSizes) {
  return Window{SmallVector<int64_t>(kernel), SmallVector<int64_t>(op.getStrides()),
                SmallVector<int64_t>(op.getDilations()), SmallVector<int64_t>(op.getPadLow()),
                SmallVector<int64_t>(outSizes)};
}

Value zeroOf(OpBuilder &b, Location loc, Type type) { return scalarConstant(b, loc, type, 0.0); }

/// acc + (valid ? x * y : 0), in the accumulator's type.
Value accumulateProduct(OpBuilder &b, Location loc, Value acc, Value valid, Value x, Value y) {
  Type accType = acc.getType();
  Value product = b.create<arith::MulFOp>(loc, castFloat(b, loc, x, accType),
                                          castFloat(b, loc, y, accType));
  Value term = b.create<arith::SelectOp>(loc, valid, product, zeroOf(b, loc, accType));
  return b.create<arith::AddFOp>(loc, acc, term);
}

/// One term of a windowed sum: x * y where `valid`, else nothing.
struct Term {
  Value valid, x, y;
};

/// Builds a term from the result position and the loop indices.
using TermFn =
    function_ref<Term(OpBuilder &, Location, ArrayRef<Value> at, ArrayRef<Value> ivs)>;

/// A generic over `type` whose every element is the sum, in the
/// accumulator type, of the terms `term` gives over the loops `bounds`.
Value sumOverLoops(OpBuilder &builder, Location location, RankedTensorType type,
                   ArrayRef<int64_t> bounds, TermFn term) {
  Type accType = accumulatorType(type.getElementType());
  return mapElements(
      builder, location, type, {}, {}, [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        SmallVector<Value> at = resultIndices(b, loc, type.getRank());
        Value sum = loops(b, loc, bounds, zeroOf(b, loc, accType),
                          [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange acc) {
                            SmallVector<Value> indices(ivs);
                            Term t = term(nb, l, at, indices);
                            return SmallVector<Value>{
                                accumulateProduct(nb, l, acc[0], t.valid, t.x, t.y)};
                          }).front();
        return castFloat(b, loc, sum, type.getElementType());
      });
}

Value alwaysValid(OpBuilder &b, Location loc) { return b.create<arith::ConstantIntOp>(loc, 1, 1); }

/// [n, c] followed by the input positions a forward window reads at output
/// `out` and offsets `k` (clamped), and whether all are inside the input.
std::pair<SmallVector<Value>, Value> forwardPosition(IndexMath &m, OpBuilder &b, Location loc,
                                                      const Window &w, Value n, Value c,
                                                      ArrayRef<Value> out, ArrayRef<Value> k,
                                                      ArrayRef<int64_t> sizes) {
  SmallVector<Value> at = {n, c};
  Value valid = alwaysValid(b, loc);
  for (int64_t d = 0; d < w.spatial(); ++d) {
    Value coord = forwardCoord(m, w, d, out[d], k[d]);
    if (w.staysInside(d, sizes[d])) {
      at.push_back(coord);
      continue;
    }
    valid = m.both(valid, m.inRange(coord, sizes[d]));
    at.push_back(m.clamp(coord, sizes[d]));
  }
  return {at, valid};
}

/// [n, c] followed by the output positions whose windows read input
/// position `in` at offsets `k` (clamped), and whether every one exists.
std::pair<SmallVector<Value>, Value> coveringPosition(IndexMath &m, OpBuilder &b, Location loc,
                                                       const Window &w, Value n, Value c,
                                                       ArrayRef<Value> in, ArrayRef<Value> k,
                                                       ArrayRef<int64_t> outSizes) {
  SmallVector<Value> at = {n, c};
  Value valid = alwaysValid(b, loc);
  for (int64_t d = 0; d < w.spatial(); ++d) {
    auto [o, ok] = coveringOutput(m, w, d, in[d], k[d], outSizes[d]);
    valid = m.both(valid, ok);
    at.push_back(o);
  }
  return {at, valid};
}

ArrayRef<int64_t> spatialOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape().drop_front(2);
}

/// Channel arithmetic of a grouped convolution with filter [F, C/G, K...].
struct Groups {
  int64_t perGroupIn, perGroupOut;
  explicit Groups(Value filter, int64_t groups) {
    auto type = llvm::cast<RankedTensorType>(filter.getType());
    perGroupIn = type.getDimSize(1);
    perGroupOut = type.getDimSize(0) / groups;
  }
};

struct ConvLowering : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &rewriter) const override {
    Value input = op.getInput(), filter = op.getFilter();
    Window w = windowOf(op, spatialOf(filter), spatialOf(op.getResult()));
    Groups g(filter, op.getGroups());
    SmallVector<int64_t> bounds = {g.perGroupIn};
    llvm::append_range(bounds, w.kernel);
    // out[n, f, o] = sum over c, k of x[n, group(f) C/G + c, o s - p + k d] w[f, c, k].
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), bounds,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> out, ArrayRef<Value> ivs) {
          IndexMath m(b, loc);
          Value channel = m.add(m.mul(m.div(out[1], g.perGroupOut), g.perGroupIn), ivs[0]);
          auto [at, valid] = forwardPosition(m, b, loc, w, out[0], channel, out.drop_front(2),
                                             ivs.drop_front(), spatialOf(input));
          SmallVector<Value> wAt = {out[1], ivs[0]};
          llvm::append_range(wAt, ivs.drop_front());
          return Term{valid, b.create<tensor::ExtractOp>(loc, input, at),
                      b.create<tensor::ExtractOp>(loc, filter, wAt)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvBackwardDataLowering : public OpRewritePattern<ConvBackwardDataOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    Value grad = op.getGrad(), filter = op.getFilter();
    Window w = windowOf(op, spatialOf(filter), spatialOf(op.getGrad()));
    Groups g(filter, op.getGroups());
    SmallVector<int64_t> bounds = {g.perGroupOut};
    llvm::append_range(bounds, w.kernel);
    // dx[n, c, p] = sum over the group's features f and offsets k of the
    // windows covering p: dy[n, f, o] w[f, c mod C/G, k].
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), bounds,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> in, ArrayRef<Value> ivs) {
          IndexMath m(b, loc);
          Value feature = m.add(m.mul(m.div(in[1], g.perGroupIn), g.perGroupOut), ivs[0]);
          auto [at, valid] = coveringPosition(m, b, loc, w, in[0], feature, in.drop_front(2),
                                              ivs.drop_front(), spatialOf(grad));
          SmallVector<Value> wAt = {feature, m.rem(in[1], g.perGroupIn)};
          llvm::append_range(wAt, ivs.drop_front());
          return Term{valid, b.create<tensor::ExtractOp>(loc, grad, at),
                      b.create<tensor::ExtractOp>(loc, filter, wAt)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvBackwardFilterLowering : public OpRewritePattern<ConvBackwardFilterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvBackwardFilterOp op,
                                PatternRewriter &rewriter) const override {
    Value input = op.getInput(), grad = op.getGrad();
    Window w = windowOf(op, op.getType().getShape().drop_front(2), spatialOf(op.getGrad()));
    Groups g(op.getResult(), op.getGroups());
    // Loops over the batch, then the output positions.
    SmallVector<int64_t> bounds = {llvm::cast<RankedTensorType>(grad.getType()).getDimSize(0)};
    llvm::append_range(bounds, spatialOf(grad));
    // dw[f, c, k] = sum over n and o of x[n, group(f) C/G + c, o s - p + k d] dy[n, f, o].
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), bounds,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> at, ArrayRef<Value> ivs) {
          IndexMath m(b, loc);
          Value channel = m.add(m.mul(m.div(at[0], g.perGroupOut), g.perGroupIn), at[1]);
          SmallVector<Value> positions(ivs.drop_front());
          auto [xAt, valid] = forwardPosition(m, b, loc, w, ivs[0], channel, positions,
                                              at.drop_front(2), spatialOf(input));
          SmallVector<Value> gAt = {ivs[0], at[0]};
          llvm::append_range(gAt, ivs.drop_front());
          return Term{valid, b.create<tensor::ExtractOp>(loc, input, xAt),
                      b.create<tensor::ExtractOp>(loc, grad, gAt)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Reads the input at one window position of a forward pooling loop: the
/// element (clamped coordinates) and whether it is inside the input; `flat`,
/// when given, receives the position's offset in the input's spatial plane.
std::pair<Value, Value> readWindow(IndexMath &m, OpBuilder &b, Location loc, Value input,
                                   const Window &w, ArrayRef<Value> out, ArrayRef<Value> k,
                                   Value *flat = nullptr) {
  ArrayRef<int64_t> sizes = spatialOf(input);
  auto [at, valid] =
      forwardPosition(m, b, loc, w, out[0], out[1], out.drop_front(2), k, sizes);
  if (flat) {
    *flat = m.constant(0);
    for (int64_t d = 0; d < w.spatial(); ++d)
      *flat = m.add(m.mul(*flat, sizes[d]), at[2 + d]);
  }
  return {b.create<tensor::ExtractOp>(loc, input, at), valid};
}

struct MaxPoolLowering : public OpRewritePattern<MaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Window w = windowOf(op, op.getKernel(), spatialOf(op.getResult()));
    Value input = op.getInput();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          SmallVector<Value> out = resultIndices(b, loc, type.getRank());
          Value lowest = lowestValue(b, loc, type.getElementType());
          return loops(b, loc, w.kernel, lowest,
                       [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
            IndexMath lm(nb, l);
            SmallVector<Value> offsets(k);
            auto [x, valid] = readWindow(lm, nb, l, input, w, out, offsets);
            Value best = maxValues(nb, l, acc[0], x);
            return SmallVector<Value>{nb.create<arith::SelectOp>(l, valid, best, acc[0])};
          }).front();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The first maximum of each window; NaN wins, as in PyTorch.
struct MaxPoolIndicesLowering : public OpRewritePattern<MaxPoolIndicesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolIndicesOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    Window w = windowOf(op, op.getKernel(), spatialOf(op.getResult()));
    Value input = op.getInput();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> out = resultIndices(b, loc, type.getRank());
          Value lowest = lowestValue(b, loc, inputType.getElementType());
          SmallVector<Value> found = loops(
              b, loc, w.kernel, ValueRange{lowest, m.constant(-1)},
              [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
                IndexMath lm(nb, l);
                Value flat;
                SmallVector<Value> offsets(k);
                auto [x, valid] = readWindow(lm, nb, l, input, w, out, offsets, &flat);
                Value greater = nb.create<arith::OrIOp>(
                    l, nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, x, acc[0]),
                    nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, x, x));
                Value isFirst = lm.cmp(arith::CmpIPredicate::slt, acc[1], lm.constant(0));
                Value take = lm.both(valid, nb.create<arith::OrIOp>(l, greater, isFirst));
                return SmallVector<Value>{nb.create<arith::SelectOp>(l, take, x, acc[0]),
                                          nb.create<arith::SelectOp>(l, take, flat, acc[1])};
              });
          return b.create<arith::IndexCastOp>(loc, type.getElementType(), found[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// PyTorch's divisor of an average pool window at output `o` in one
/// dimension: its extent clipped to the padded input, or, excluding the
/// padding, to the input. Returns (padded extent, input extent).
std::pair<Value, Value> windowExtent(IndexMath &m, const Window &w, int64_t d, Value o,
                                     int64_t size, int64_t padHigh) {
  Value start = m.sub(m.mul(o, w.strides[d]), m.constant(w.padLow[d]));
  Value end = m.min(m.add(start, m.constant(w.kernel[d])), m.constant(size + padHigh));
  Value padded = m.sub(end, start);
  Value inside = m.sub(m.min(end, m.constant(size)), m.max(start, m.constant(0)));
  return {padded, inside};
}

/// The divisor of the average pool window at output position `out`.
Value avgDivisor(IndexMath &m, OpBuilder &b, Location loc, const Window &w,
                 ArrayRef<int64_t> sizes, ArrayRef<int64_t> padHigh, ArrayRef<Value> out,
                 bool excludePad, Type floatType) {
  Value count = m.constant(1);
  for (int64_t d = 0; d < w.spatial(); ++d) {
    auto [padded, inside] = windowExtent(m, w, d, out[d], sizes[d], padHigh[d]);
    count = b.create<arith::MulIOp>(loc, count, excludePad ? inside : padded);
  }
  Value asInt = b.create<arith::IndexCastOp>(loc, b.getI64Type(), count);
  return b.create<arith::SIToFPOp>(loc, floatType, asInt);
}

struct AvgPoolLowering : public OpRewritePattern<AvgPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolOp op, PatternRewriter &rewriter) const override {
    Value input = op.getInput();
    Window w = windowOf(op, op.getKernel(), spatialOf(op.getResult()));
    Type accType = accumulatorType(op.getType().getElementType());
    // Each window's sum divided by its divisor, read at the same position.
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), w.kernel,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> out, ArrayRef<Value> k) {
          IndexMath m(b, loc);
          auto [x, valid] = readWindow(m, b, loc, input, w, out, k);
          Value divisor = avgDivisor(m, b, loc, w, spatialOf(input), op.getPadHigh(),
                                     out.drop_front(2), op.getExcludePad(), accType);
          Value share = b.create<arith::DivFOp>(loc, castFloat(b, loc, x, accType), divisor);
          return Term{valid, share, scalarConstant(b, loc, accType, 1.0)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The offset of spatial position `in` in its plane, as max_pool_indices
/// gives it (i32).
Value flatPosition(IndexMath &m, OpBuilder &b, Location loc, ArrayRef<Value> in,
                   ArrayRef<int64_t> sizes) {
  Value flat = m.constant(0);
  for (size_t d = 0; d < sizes.size(); ++d)
    flat = m.add(m.mul(flat, sizes[d]), in[d]);
  return b.create<arith::IndexCastOp>(loc, b.getI32Type(), flat);
}

/// max_pool_grad of windows that do not overlap: the one window that can
/// cover position p along a dimension is (p + low) / stride, at offset
/// (p + low) % stride, covering p when that offset is a multiple of the
/// dilation below the window's span; dx[p] is its dy where its maximum is
/// p, else 0. No loop over the window, no division checks per offset.
Value disjointMaxPoolGrad(OpBuilder &builder, MaxPoolGradOp op, const Window &w) {
  Value grad = op.getGrad(), indices = op.getIndices();
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> sizes = type.getShape().drop_front(2);
  ArrayRef<int64_t> outSizes = spatialOf(grad);
  return mapElements(
      builder, op.getLoc(), type, {}, {}, [&](OpBuilder &b, Location loc, ValueRange) -> Value {
        IndexMath m(b, loc);
        SmallVector<Value> in = resultIndices(b, loc, type.getRank());
        SmallVector<Value> at = {in[0], in[1]};
        Value valid = alwaysValid(b, loc);
        for (int64_t d = 0; d < w.spatial(); ++d) {
          Value shifted = m.add(in[2 + d], m.constant(w.padLow[d]));
          Value o = m.div(shifted, w.strides[d]);
          int64_t span = w.dilations[d] * (w.kernel[d] - 1) + 1;
          if (w.strides[d] > span || w.dilations[d] != 1) {
            // Not every offset within the stride is a window position.
            Value offset = m.rem(shifted, w.strides[d]);
            if (w.dilations[d] != 1)
              valid = m.both(valid, m.cmp(arith::CmpIPredicate::eq,
                                          m.rem(offset, w.dilations[d]), m.constant(0)));
            valid = m.both(valid,
                           m.cmp(arith::CmpIPredicate::slt, offset, m.constant(span)));
          }
          if (sizes[d] + w.padLow[d] > outSizes[d] * w.strides[d])
            valid = m.both(valid, m.cmp(arith::CmpIPredicate::slt, o, m.constant(outSizes[d])));
          at.push_back(m.clamp(o, outSizes[d]));
        }
        SmallVector<Value> position(in.begin() + 2, in.end());
        Value self = flatPosition(m, b, loc, position, sizes);
        Value argmax = b.create<tensor::ExtractOp>(loc, indices, at);
        Value dy = b.create<tensor::ExtractOp>(loc, grad, at);
        Value hit = m.both(valid, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                                          argmax, self));
        return b.create<arith::SelectOp>(loc, hit, dy, zeroOf(b, loc, dy.getType()));
      });
}

/// Whether the windows tile the input exactly: each input position in one
/// window (strides equal to the kernel, no dilation nor padding) and every
/// position in one (a 2x2 pool of stride 2 over an even plane).
bool tilesExactly(const Window &w, ArrayRef<int64_t> inSizes) {
  for (int64_t d = 0; d < w.spatial(); ++d)
    if (w.strides[d] != w.kernel[d] || w.dilations[d] != 1 || w.padLow[d] != 0 ||
        inSizes[d] != w.outSizes[d] * w.kernel[d])
      return false;
  return true;
}

/// max_pool_grad of windows that tile the input exactly: one generic over
/// [N, C, O_1, O_2, ..., K_1, K_2, ...] (window position o, offset k in it)
/// that reads dy and the argmax at [n, c, o...] and writes dx at
/// [n, c, o K + k ...]. No division per element, each dy read once for its
/// window; the offset loops unroll, and along the last window dimension the
/// reads are consecutive and the writes K apart, which LLVM vectorizes (an
/// interleaved group), where the per-position form (disjointMaxPoolGrad)
/// stays scalar: the MNIST convnet's first 32x32x28x28 gradient 0.29 ->
/// 0.12 ms (docs/performance.md). A splat constant of the window's shape
/// gives the offset loops their bounds; nothing reads it.
Value tiledMaxPoolGrad(OpBuilder &builder, MaxPoolGradOp op, const Window &w) {
  Location loc = op.getLoc();
  MLIRContext *context = builder.getContext();
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> sizes = type.getShape().drop_front(2);
  int64_t spatial = w.spatial(), rank = 2 + 2 * spatial;
  SmallVector<AffineExpr> outAt = {getAffineDimExpr(0, context), getAffineDimExpr(1, context)};
  SmallVector<AffineExpr> windowAt = outAt, offsetAt;
  for (int64_t d = 0; d < spatial; ++d) {
    AffineExpr o = getAffineDimExpr(2 + d, context), k = getAffineDimExpr(2 + spatial + d, context);
    outAt.push_back(o * w.kernel[d] + k);
    windowAt.push_back(o);
    offsetAt.push_back(k);
  }
  auto offsetsType = RankedTensorType::get(w.kernel, builder.getI8Type());
  Value offsets = builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(offsetsType, builder.getI8IntegerAttr(0).getValue()));
  AffineMap windowMap = AffineMap::get(rank, 0, windowAt, context);
  SmallVector<AffineMap> maps = {windowMap, windowMap, AffineMap::get(rank, 0, offsetAt, context),
                                 AffineMap::get(rank, 0, outAt, context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = builder.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{op.getGrad(), op.getIndices(), offsets},
      ValueRange{emptyTensor(builder, loc, type)}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        IndexMath m(b, l);
        SmallVector<Value> position;
        for (int64_t d = 0; d < spatial; ++d)
          position.push_back(m.add(m.mul(b.create<linalg::IndexOp>(l, 2 + d), w.kernel[d]),
                                   b.create<linalg::IndexOp>(l, 2 + spatial + d)));
        Value self = flatPosition(m, b, l, position, sizes);
        Value hit = b.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, args[1], self);
        b.create<linalg::YieldOp>(
            l, ValueRange{b.create<arith::SelectOp>(l, hit, args[0],
                                                    zeroOf(b, l, args[0].getType()))});
      });
  return generic.getResult(0);
}

/// dx[n, c, p] = the sum of dy over the windows covering p whose maximum
/// (max_pool_indices) is p.
struct MaxPoolGradLowering : public OpRewritePattern<MaxPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolGradOp op, PatternRewriter &rewriter) const override {
    Value grad = op.getGrad(), indices = op.getIndices();
    Window w = windowOf(op, op.getKernel(), spatialOf(op.getGrad()));
    ArrayRef<int64_t> sizes = op.getType().getShape().drop_front(2);
    if (tilesExactly(w, sizes)) {
      rewriter.replaceOp(op, tiledMaxPoolGrad(rewriter, op, w));
      return success();
    }
    if (w.disjoint()) {
      rewriter.replaceOp(op, disjointMaxPoolGrad(rewriter, op, w));
      return success();
    }
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), w.kernel,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> in, ArrayRef<Value> k) {
          IndexMath m(b, loc);
          Value self = flatPosition(m, b, loc, in.drop_front(2), sizes);
          auto [at, valid] = coveringPosition(m, b, loc, w, in[0], in[1], in.drop_front(2), k,
                                              spatialOf(grad));
          Value argmax = b.create<tensor::ExtractOp>(loc, indices, at);
          Value hit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, argmax, self);
          Value dy = b.create<tensor::ExtractOp>(loc, grad, at);
          return Term{m.both(valid, hit), dy, scalarConstant(b, loc, dy.getType(), 1.0)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// dx[n, c, p] = the sum over the windows covering p of dy / divisor.
struct AvgPoolGradLowering : public OpRewritePattern<AvgPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolGradOp op, PatternRewriter &rewriter) const override {
    Value grad = op.getGrad();
    Window w = windowOf(op, op.getKernel(), spatialOf(op.getGrad()));
    Type accType = accumulatorType(op.getType().getElementType());
    Value result = sumOverLoops(
        rewriter, op.getLoc(), op.getType(), w.kernel,
        [&](OpBuilder &b, Location loc, ArrayRef<Value> in, ArrayRef<Value> k) {
          IndexMath m(b, loc);
          auto [at, valid] = coveringPosition(m, b, loc, w, in[0], in[1], in.drop_front(2), k,
                                              spatialOf(grad));
          Value dy = castFloat(b, loc, b.create<tensor::ExtractOp>(loc, grad, at), accType);
          Value divisor =
              avgDivisor(m, b, loc, w, op.getType().getShape().drop_front(2), op.getPadHigh(),
                         ArrayRef<Value>(at).drop_front(2), op.getExcludePad(), accType);
          return Term{valid, b.create<arith::DivFOp>(loc, dy, divisor),
                      scalarConstant(b, loc, accType, 1.0)};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateWindowToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ConvLowering, ConvBackwardDataLowering, ConvBackwardFilterLowering,
               MaxPoolLowering, MaxPoolIndicesLowering, AvgPoolLowering,
               MaxPoolGradLowering, AvgPoolGradLowering>(patterns.getContext());
}

} // namespace kiln
