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
//   exactly and lies in the output: the windows that covered p.
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
  int64_t spatial() const { return strides.size(); }
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
Window windowOf(OpTy op, ArrayRef<int64_t> kernel) {
  return Window{SmallVector<int64_t>(kernel), SmallVector<int64_t>(op.getStrides()),
                SmallVector<int64_t>(op.getDilations()), SmallVector<int64_t>(op.getPadLow())};
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

struct ConvLowering : public OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto filterType = llvm::cast<RankedTensorType>(op.getFilter().getType());
    Window w = windowOf(op, filterType.getShape().drop_front(2));
    int64_t groups = op.getGroups(), perGroupIn = filterType.getDimSize(1);
    int64_t perGroupOut = filterType.getDimSize(0) / groups;
    Type accType = accumulatorType(type.getElementType());
    Value input = op.getInput(), filter = op.getFilter();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> out = resultIndices(b, loc, type.getRank());
          Value group = m.div(out[1], perGroupOut);
          SmallVector<int64_t> bounds = {perGroupIn};
          llvm::append_range(bounds, w.kernel);
          Value sum = loops(b, loc, bounds, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange acc) {
            IndexMath lm(nb, l);
            SmallVector<Value> at = {out[0], lm.add(lm.mul(group, perGroupIn), ivs[0])};
            SmallVector<Value> wAt = {out[1], ivs[0]};
            Value valid = nb.create<arith::ConstantIntOp>(l, 1, 1);
            for (int64_t d = 0; d < w.spatial(); ++d) {
              Value coord = forwardCoord(lm, w, d, out[2 + d], ivs[1 + d]);
              int64_t size = inputType.getDimSize(2 + d);
              valid = lm.both(valid, lm.inRange(coord, size));
              at.push_back(lm.clamp(coord, size));
              wAt.push_back(ivs[1 + d]);
            }
            Value x = nb.create<tensor::ExtractOp>(l, input, at);
            Value f = nb.create<tensor::ExtractOp>(l, filter, wAt);
            return SmallVector<Value>{accumulateProduct(nb, l, acc[0], valid, x, f)};
          }).front();
          return castFloat(b, loc, sum, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvBackwardDataLowering : public OpRewritePattern<ConvBackwardDataOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvBackwardDataOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto gradType = llvm::cast<RankedTensorType>(op.getGrad().getType());
    auto filterType = llvm::cast<RankedTensorType>(op.getFilter().getType());
    Window w = windowOf(op, filterType.getShape().drop_front(2));
    int64_t groups = op.getGroups(), perGroupIn = filterType.getDimSize(1);
    int64_t perGroupOut = filterType.getDimSize(0) / groups;
    Type accType = accumulatorType(type.getElementType());
    Value grad = op.getGrad(), filter = op.getFilter();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> in = resultIndices(b, loc, type.getRank());
          Value group = m.div(in[1], perGroupIn);
          Value channel = m.rem(in[1], perGroupIn);
          SmallVector<int64_t> bounds = {perGroupOut};
          llvm::append_range(bounds, w.kernel);
          Value sum = loops(b, loc, bounds, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange acc) {
            IndexMath lm(nb, l);
            Value feature = lm.add(lm.mul(group, perGroupOut), ivs[0]);
            SmallVector<Value> gAt = {in[0], feature}, wAt = {feature, channel};
            Value valid = nb.create<arith::ConstantIntOp>(l, 1, 1);
            for (int64_t d = 0; d < w.spatial(); ++d) {
              auto [o, ok] = coveringOutput(lm, w, d, in[2 + d], ivs[1 + d],
                                            gradType.getDimSize(2 + d));
              valid = lm.both(valid, ok);
              gAt.push_back(o);
              wAt.push_back(ivs[1 + d]);
            }
            Value dy = nb.create<tensor::ExtractOp>(l, grad, gAt);
            Value f = nb.create<tensor::ExtractOp>(l, filter, wAt);
            return SmallVector<Value>{accumulateProduct(nb, l, acc[0], valid, dy, f)};
          }).front();
          return castFloat(b, loc, sum, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvBackwardFilterLowering : public OpRewritePattern<ConvBackwardFilterOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvBackwardFilterOp op,
                                PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto gradType = llvm::cast<RankedTensorType>(op.getGrad().getType());
    Window w = windowOf(op, type.getShape().drop_front(2));
    int64_t groups = op.getGroups(), perGroupIn = type.getDimSize(1);
    int64_t perGroupOut = type.getDimSize(0) / groups;
    Type accType = accumulatorType(type.getElementType());
    Value input = op.getInput(), grad = op.getGrad();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> at = resultIndices(b, loc, type.getRank());
          Value channel = m.add(m.mul(m.div(at[0], perGroupOut), perGroupIn), at[1]);
          SmallVector<int64_t> bounds(gradType.getShape());
          bounds.erase(bounds.begin() + 1); // batch, then output positions
          Value sum = loops(b, loc, bounds, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange acc) {
            IndexMath lm(nb, l);
            SmallVector<Value> xAt = {ivs[0], channel}, gAt = {ivs[0], at[0]};
            Value valid = nb.create<arith::ConstantIntOp>(l, 1, 1);
            for (int64_t d = 0; d < w.spatial(); ++d) {
              Value coord = forwardCoord(lm, w, d, ivs[1 + d], at[2 + d]);
              int64_t size = inputType.getDimSize(2 + d);
              valid = lm.both(valid, lm.inRange(coord, size));
              xAt.push_back(lm.clamp(coord, size));
              gAt.push_back(ivs[1 + d]);
            }
            Value x = nb.create<tensor::ExtractOp>(l, input, xAt);
            Value dy = nb.create<tensor::ExtractOp>(l, grad, gAt);
            return SmallVector<Value>{accumulateProduct(nb, l, acc[0], valid, x, dy)};
          }).front();
          return castFloat(b, loc, sum, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Reads the input at one window position of a forward pooling loop: the
/// element (clamped coordinates) and whether it is inside the input.
std::pair<Value, Value> readWindow(IndexMath &m, OpBuilder &b, Location loc, Value input,
                                   RankedTensorType inputType, const Window &w,
                                   ArrayRef<Value> out, ValueRange k, Value *flat = nullptr) {
  SmallVector<Value> at = {out[0], out[1]};
  Value valid = b.create<arith::ConstantIntOp>(loc, 1, 1);
  Value offset = m.constant(0);
  for (int64_t d = 0; d < w.spatial(); ++d) {
    int64_t size = inputType.getDimSize(2 + d);
    Value coord = forwardCoord(m, w, d, out[2 + d], k[d]);
    valid = m.both(valid, m.inRange(coord, size));
    Value clamped = m.clamp(coord, size);
    at.push_back(clamped);
    offset = m.add(m.mul(offset, size), clamped);
  }
  if (flat)
    *flat = offset;
  return {b.create<tensor::ExtractOp>(loc, input, at), valid};
}

struct MaxPoolLowering : public OpRewritePattern<MaxPoolOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    Window w = windowOf(op, op.getKernel());
    Value input = op.getInput();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          SmallVector<Value> out = resultIndices(b, loc, type.getRank());
          Value lowest = lowestValue(b, loc, type.getElementType());
          return loops(b, loc, w.kernel, lowest,
                       [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
            IndexMath lm(nb, l);
            auto [x, valid] = readWindow(lm, nb, l, input, inputType, w, out, k);
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
    Window w = windowOf(op, op.getKernel());
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
                auto [x, valid] = readWindow(lm, nb, l, input, inputType, w, out, k, &flat);
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
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto inputType = llvm::cast<RankedTensorType>(op.getInput().getType());
    Window w = windowOf(op, op.getKernel());
    Type accType = accumulatorType(type.getElementType());
    Value input = op.getInput();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> out = resultIndices(b, loc, type.getRank());
          Value sum = loops(b, loc, w.kernel, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
            IndexMath lm(nb, l);
            auto [x, valid] = readWindow(lm, nb, l, input, inputType, w, out, k);
            Value one = scalarConstant(nb, l, x.getType(), 1.0);
            return SmallVector<Value>{accumulateProduct(nb, l, acc[0], valid, x, one)};
          }).front();
          Value divisor = avgDivisor(m, b, loc, w, inputType.getShape().drop_front(2),
                                     op.getPadHigh(), ArrayRef<Value>(out).drop_front(2),
                                     op.getExcludePad(), accType);
          return castFloat(b, loc, b.create<arith::DivFOp>(loc, sum, divisor),
                           type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MaxPoolGradLowering : public OpRewritePattern<MaxPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaxPoolGradOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto gradType = llvm::cast<RankedTensorType>(op.getGrad().getType());
    Window w = windowOf(op, op.getKernel());
    Type accType = accumulatorType(type.getElementType());
    Value grad = op.getGrad(), indices = op.getIndices();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          IndexMath m(b, loc);
          SmallVector<Value> in = resultIndices(b, loc, type.getRank());
          Value flat = m.constant(0);
          for (int64_t d = 0; d < w.spatial(); ++d)
            flat = m.add(m.mul(flat, type.getDimSize(2 + d)), in[2 + d]);
          Value self = b.create<arith::IndexCastOp>(loc, b.getI32Type(), flat);
          Value sum = loops(b, loc, w.kernel, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
            IndexMath lm(nb, l);
            SmallVector<Value> at = {in[0], in[1]};
            Value valid = nb.create<arith::ConstantIntOp>(l, 1, 1);
            for (int64_t d = 0; d < w.spatial(); ++d) {
              auto [o, ok] = coveringOutput(lm, w, d, in[2 + d], k[d], gradType.getDimSize(2 + d));
              valid = lm.both(valid, ok);
              at.push_back(o);
            }
            Value argmax = nb.create<tensor::ExtractOp>(l, indices, at);
            Value hit = nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, argmax, self);
            Value dy = nb.create<tensor::ExtractOp>(l, grad, at);
            Value one = scalarConstant(nb, l, dy.getType(), 1.0);
            return SmallVector<Value>{
                accumulateProduct(nb, l, acc[0], lm.both(valid, hit), dy, one)};
          }).front();
          return castFloat(b, loc, sum, type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AvgPoolGradLowering : public OpRewritePattern<AvgPoolGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AvgPoolGradOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto gradType = llvm::cast<RankedTensorType>(op.getGrad().getType());
    Window w = windowOf(op, op.getKernel());
    Type accType = accumulatorType(type.getElementType());
    Value grad = op.getGrad();
    Value result = mapElements(
        rewriter, op.getLoc(), type, {}, {},
        [&](OpBuilder &b, Location loc, ValueRange) -> Value {
          SmallVector<Value> in = resultIndices(b, loc, type.getRank());
          Value sum = loops(b, loc, w.kernel, zeroOf(b, loc, accType),
                            [&](OpBuilder &nb, Location l, ValueRange k, ValueRange acc) {
            IndexMath lm(nb, l);
            SmallVector<Value> at = {in[0], in[1]};
            Value valid = nb.create<arith::ConstantIntOp>(l, 1, 1);
            for (int64_t d = 0; d < w.spatial(); ++d) {
              auto [o, ok] = coveringOutput(lm, w, d, in[2 + d], k[d], gradType.getDimSize(2 + d));
              valid = lm.both(valid, ok);
              at.push_back(o);
            }
            Value dy = castFloat(nb, l, nb.create<tensor::ExtractOp>(l, grad, at), accType);
            Value divisor = avgDivisor(lm, nb, l, w, type.getShape().drop_front(2),
                                       op.getPadHigh(), ArrayRef<Value>(at).drop_front(2),
                                       op.getExcludePad(), accType);
            Value share = nb.create<arith::DivFOp>(l, dy, divisor);
            Value one = scalarConstant(nb, l, accType, 1.0);
            return SmallVector<Value>{accumulateProduct(nb, l, acc[0], valid, share, one)};
          }).front();
          return castFloat(b, loc, sum, type.getElementType());
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
