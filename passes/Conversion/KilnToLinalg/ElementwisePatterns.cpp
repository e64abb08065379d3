//===- ElementwisePatterns.cpp - Elementwise kiln ops to linalg -----------===//
//
// Each elementwise op becomes one `linalg.generic` whose body computes one
// element with arith and math ops.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"
#include "passes/Conversion/KilnToLinalg/ScalarElements.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

bool isFloat(Value v) { return llvm::isa<FloatType>(v.getType()); }

Value scalar(OpBuilder &b, Location loc, Value like, double value) {
  return scalarConstant(b, loc, like.getType(), value);
}

// One element of each op, from its operands' elements.

Value element(AddOp, OpBuilder &b, Location loc, ValueRange x) {
  return addValues(b, loc, x[0], x[1]);
}
Value element(SubOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return b.create<arith::SubFOp>(loc, x[0], x[1]);
  return b.create<arith::SubIOp>(loc, x[0], x[1]);
}
Value element(MulOp, OpBuilder &b, Location loc, ValueRange x) {
  return mulValues(b, loc, x[0], x[1]);
}
Value element(DivOp, OpBuilder &b, Location loc, ValueRange x) {
  return divValues(b, loc, x[0], x[1]);
}
Value element(MaximumOp, OpBuilder &b, Location loc, ValueRange x) {
  return maxValues(b, loc, x[0], x[1]);
}
Value element(MinimumOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return b.create<arith::MinimumFOp>(loc, x[0], x[1]);
  return b.create<arith::MinSIOp>(loc, x[0], x[1]);
}
Value element(NegOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return b.create<arith::NegFOp>(loc, x[0]);
  return b.create<arith::SubIOp>(loc, scalar(b, loc, x[0], 0), x[0]);
}
Value element(ExpOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::ExpOp>(loc, x[0]);
}
Value element(LogOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::LogOp>(loc, x[0]);
}
Value element(SqrtOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::SqrtOp>(loc, x[0]);
}
Value element(RsqrtOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::RsqrtOp>(loc, x[0]);
}
/// sin(x), or cos(x) = sin(x + pi/2) when `cosine`. x is reduced in f64 to
/// r in [-pi/4, pi/4] with x = r + k pi/2, by pi/2 in three parts of 33
/// bits (Cody and Waite's reduction, as fdlibm's __rem_pio2 does it: each
/// product k * part is exact while |k| < 2^20, |x| < 1.6e6; beyond, r is
/// off by ~1e-16 |x|, 1e-7 at 1e9); then +-sin(r) or +-cos(r) in f32, by
/// k mod 4. MLIR's polynomial sine reduces in f32 and is off by ~6e-8 |x|:
/// 6e-5 at x = 1000, a rotary embedding's angle at position 1000.
Value sine(OpBuilder &b, Location loc, Value x, bool cosine) {
  Type f64 = b.getF64Type(), f32 = b.getF32Type();
  auto constant = [&](double v) -> Value {
    return b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(v));
  };
  // Through f32: bf16 and f16 widen to f32 only (kiln-expand-arith).
  Value wide = castFloat(b, loc, castFloat(b, loc, x, f32), f64);
  Value k = b.create<math::RoundEvenOp>(
      loc, b.create<arith::MulFOp>(loc, wide, constant(2.0 / M_PI)));
  Value r = wide;
  for (double part : {1.57079632673412561417e+00, 6.07710050630396597660e-11,
                      2.02226624871116645580e-21})
    r = b.create<arith::SubFOp>(loc, r, b.create<arith::MulFOp>(loc, k, constant(part)));
  // x itself where k is 0: x - 0 * part would turn sin(-0) into +0.
  Value unreduced = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, k, constant(0.0));
  r = b.create<arith::SelectOp>(loc, unreduced, wide, r);
  // Quarter turns mod 4, as a float in {0, 1, 2, 3} (NaN for an infinite x,
  // whose r is NaN anyway).
  Value turns = cosine ? b.create<arith::AddFOp>(loc, k, constant(1.0)) : k;
  Value fours = b.create<math::FloorOp>(
      loc, b.create<arith::MulFOp>(loc, turns, constant(0.25)));
  Value quadrant = b.create<arith::SubFOp>(
      loc, turns, b.create<arith::MulFOp>(loc, fours, constant(4.0)));
  Value narrow = castFloat(b, loc, r, f32);
  Value sinR = b.create<math::SinOp>(loc, narrow), cosR = b.create<math::CosOp>(loc, narrow);
  auto is = [&](arith::CmpFPredicate predicate, double v) -> Value {
    return b.create<arith::CmpFOp>(loc, predicate, quadrant, constant(v));
  };
  Value odd = b.create<arith::OrIOp>(loc, is(arith::CmpFPredicate::OEQ, 1.0),
                                     is(arith::CmpFPredicate::OEQ, 3.0));
  Value picked = b.create<arith::SelectOp>(loc, odd, cosR, sinR);
  Value negated = b.create<arith::NegFOp>(loc, picked);
  Value result = b.create<arith::SelectOp>(loc, is(arith::CmpFPredicate::OGE, 2.0), negated,
                                           picked);
  return castFloat(b, loc, result, x.getType());
}

Value element(CosOp, OpBuilder &b, Location loc, ValueRange x) {
  return sine(b, loc, x[0], true);
}
Value element(SinOp, OpBuilder &b, Location loc, ValueRange x) {
  return sine(b, loc, x[0], false);
}
Value element(AtanOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::AtanOp>(loc, x[0]);
}
Value element(FloorOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::FloorOp>(loc, x[0]);
}
Value element(CeilOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::CeilOp>(loc, x[0]);
}
Value element(RoundOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::RoundEvenOp>(loc, x[0]);
}
Value element(TanhOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::TanhOp>(loc, x[0]);
}
Value element(SigmoidOp, OpBuilder &b, Location loc, ValueRange x) {
  // 1 / (1 + e^-x): e^-x overflows to +inf for very negative x, giving 0.
  Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x[0]));
  Value one = scalar(b, loc, x[0], 1.0);
  return b.create<arith::DivFOp>(loc, one, b.create<arith::AddFOp>(loc, one, e));
}
Value element(ReluOp, OpBuilder &b, Location loc, ValueRange x) {
  return maxValues(b, loc, x[0], scalar(b, loc, x[0], 0.0));
}
Value element(ErfOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::ErfOp>(loc, x[0]);
}
Value element(AbsOp, OpBuilder &b, Location loc, ValueRange x) {
  if (isFloat(x[0]))
    return b.create<math::AbsFOp>(loc, x[0]);
  return b.create<math::AbsIOp>(loc, x[0]);
}
Value element(PowOp, OpBuilder &b, Location loc, ValueRange x) {
  return b.create<math::PowFOp>(loc, x[0], x[1]);
}

/// The remainder with the sign of the dividend (C's fmod, arith's rem), then
/// for a floored remainder the divisor added where the signs differ.
Value modulo(ModOp op, OpBuilder &b, Location loc, ValueRange x) {
  Value lhs = x[0], rhs = x[1];
  Value zero = scalar(b, loc, lhs, 0.0);
  bool floating = isFloat(lhs);
  Value rem;
  if (floating) {
    rem = b.create<arith::RemFOp>(loc, lhs, rhs);
  } else {
    // A remainder by 0 or -1 traps on the CPU (by -1 for the minimum): the
    // remainder by 1, 0, stands in (0 is also the answer for -1).
    Value rhsZero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rhs, zero);
    Value rhsMinusOne =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rhs, scalar(b, loc, rhs, -1.0));
    Value unsafe = b.create<arith::OrIOp>(loc, rhsZero, rhsMinusOne);
    Value safe = b.create<arith::SelectOp>(loc, unsafe, scalar(b, loc, rhs, 1.0), rhs);
    rem = b.create<arith::RemSIOp>(loc, lhs, safe);
  }
  if (op.getFmod())
    return rem;
  Value remNegative, rhsNegative, nonzero;
  if (floating) {
    remNegative = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, rem, zero);
    rhsNegative = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, rhs, zero);
    // Unordered: a NaN remainder (by 0) stays NaN below.
    nonzero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, rem, zero);
  } else {
    remNegative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, rem, zero);
    rhsNegative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, rhs, zero);
    nonzero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, rem, zero);
  }
  Value signsDiffer = b.create<arith::XOrIOp>(loc, remNegative, rhsNegative);
  Value adjust = b.create<arith::AndIOp>(loc, signsDiffer, nonzero);
  Value floored = b.create<arith::SelectOp>(loc, adjust, addValues(b, loc, rem, rhs), rem);
  if (!floating)
    return floored;
  // A zero remainder takes the divisor's sign, as Python's -6.0 % 3.0 = 0.0.
  Value signedZero = b.create<math::CopySignOp>(loc, zero, rhs);
  return b.create<arith::SelectOp>(loc, nonzero, floored, signedZero);
}

Value gelu(GeluOp op, OpBuilder &b, Location loc, Value x) {
  Value half = scalar(b, loc, x, 0.5);
  Value one = scalar(b, loc, x, 1.0);
  Value inner;
  if (op.getApproximation() == GeluApproximation::tanh) {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Value x3 = b.create<arith::MulFOp>(loc, x, b.create<arith::MulFOp>(loc, x, x));
    Value poly = b.create<arith::AddFOp>(
        loc, x, b.create<arith::MulFOp>(loc, scalar(b, loc, x, 0.044715), x3));
    inner = b.create<math::TanhOp>(
        loc, b.create<arith::MulFOp>(
                 loc, scalar(b, loc, x, std::sqrt(2.0 / M_PI)), poly));
  } else {
    inner = b.create<math::ErfOp>(
        loc, b.create<arith::MulFOp>(loc, x, scalar(b, loc, x, M_SQRT1_2)));
  }
  Value factor = b.create<arith::MulFOp>(loc, half, b.create<arith::AddFOp>(loc, one, inner));
  return b.create<arith::MulFOp>(loc, x, factor);
}

Value compare(ComparePredicate predicate, OpBuilder &b, Location loc, Value x,
              Value y) {
  if (isFloat(x)) {
    // Ordered except `ne`, which holds for NaN as in numpy.
    arith::CmpFPredicate p;
    switch (predicate) {
    case ComparePredicate::eq: p = arith::CmpFPredicate::OEQ; break;
    case ComparePredicate::ne: p = arith::CmpFPredicate::UNE; break;
    case ComparePredicate::lt: p = arith::CmpFPredicate::OLT; break;
    case ComparePredicate::le: p = arith::CmpFPredicate::OLE; break;
    case ComparePredicate::gt: p = arith::CmpFPredicate::OGT; break;
    case ComparePredicate::ge: p = arith::CmpFPredicate::OGE; break;
    }
    return b.create<arith::CmpFOp>(loc, p, x, y);
  }
  // Booleans order false < true, so they compare unsigned.
  bool isBool = x.getType().isInteger(1);
  arith::CmpIPredicate p;
  switch (predicate) {
  case ComparePredicate::eq: p = arith::CmpIPredicate::eq; break;
  case ComparePredicate::ne: p = arith::CmpIPredicate::ne; break;
  case ComparePredicate::lt: p = isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt; break;
  case ComparePredicate::le: p = isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle; break;
  case ComparePredicate::gt: p = isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt; break;
  case ComparePredicate::ge: p = isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge; break;
  }
  return b.create<arith::CmpIOp>(loc, p, x, y);
}

/// numpy's astype: floats to integers truncate toward zero, anything to
/// bool is `!= 0`, bools become 0 or 1.
Value castElement(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    if (isFloat(x))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x,
                                     scalar(b, loc, x, 0.0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x,
                                   scalar(b, loc, x, 0.0));
  }
  bool fromFloat = llvm::isa<FloatType>(from), toFloat = llvm::isa<FloatType>(to);
  if (fromFloat && toFloat)
    return castFloat(b, loc, x, to);
  if (fromFloat)
    return b.create<arith::FPToSIOp>(loc, to, x);
  if (toFloat)
    return from.isInteger(1) ? b.create<arith::UIToFPOp>(loc, to, x).getResult()
                             : b.create<arith::SIToFPOp>(loc, to, x).getResult();
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth < toWidth)
    return from.isInteger(1) ? b.create<arith::ExtUIOp>(loc, to, x).getResult()
                             : b.create<arith::ExtSIOp>(loc, to, x).getResult();
  return b.create<arith::TruncIOp>(loc, to, x);
}

template <typename OpTy>
struct ElementwiseLowering : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Value result = mapSameShape(
        rewriter, op.getLoc(), type, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return element(op, b, loc, args);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GeluLowering : public OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp op, PatternRewriter &rewriter) const override {
    Value result = mapSameShape(rewriter, op.getLoc(), op.getType(), op.getOperand(),
                                [&](OpBuilder &b, Location loc, ValueRange args) {
                                  return gelu(op, b, loc, args[0]);
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ModLowering : public OpRewritePattern<ModOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ModOp op, PatternRewriter &rewriter) const override {
    Value result = mapSameShape(rewriter, op.getLoc(), op.getType(), op->getOperands(),
                                [&](OpBuilder &b, Location loc, ValueRange args) {
                                  return modulo(op, b, loc, args);
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CompareLowering : public OpRewritePattern<CompareOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CompareOp op, PatternRewriter &rewriter) const override {
    Value result = mapSameShape(
        rewriter, op.getLoc(), op.getType(), op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return compare(op.getPredicate(), b, loc, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SelectLowering : public OpRewritePattern<SelectOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SelectOp op, PatternRewriter &rewriter) const override {
    Value result = mapSameShape(
        rewriter, op.getLoc(), llvm::cast<RankedTensorType>(op.getType()),
        op->getOperands(), [&](OpBuilder &b, Location loc, ValueRange args) {
          return b.create<arith::SelectOp>(loc, args[0], args[1], args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct CastLowering : public OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    Value result = mapSameShape(rewriter, op.getLoc(), type, op.getOperand(),
                                [&](OpBuilder &b, Location loc, ValueRange args) {
                                  return castElement(b, loc, args[0],
                                                     type.getElementType());
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// No gradient flows through it, and none is taken after lowering.
struct StopGradientLowering : public OpRewritePattern<StopGradientOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StopGradientOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getOperand());
    return success();
  }
};

struct ConstantLowering : public OpRewritePattern<ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConstantOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, llvm::cast<TypedAttr>(op.getValue()));
    return success();
  }
};

} // namespace

Value elementOf(Operation *op, OpBuilder &b, Location loc, ValueRange x) {
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, MaximumOp, MinimumOp, NegOp, ExpOp, LogOp, SqrtOp,
            RsqrtOp, CosOp, SinOp, AtanOp, FloorOp, CeilOp, RoundOp, TanhOp, SigmoidOp, ReluOp,
            ErfOp, AbsOp, PowOp>(
          [&](auto typed) { return element(typed, b, loc, x); })
      .Case([&](ModOp mod) { return modulo(mod, b, loc, x); })
      .Case([&](GeluOp op) { return gelu(op, b, loc, x[0]); })
      .Case([&](CompareOp cmp) { return compare(cmp.getPredicate(), b, loc, x[0], x[1]); })
      .Case([&](SelectOp) { return b.create<arith::SelectOp>(loc, x[0], x[1], x[2]); })
      .Case([&](CastOp cast) {
        return castElement(b, loc, x[0], cast.getType().getElementType());
      })
      .Case([&](GeluGradOp grad) {
        Type element = x[0].getType();
        Value wide = geluDerivative(grad, b, loc, castFloat(b, loc, x[0], b.getF32Type()),
                                    castFloat(b, loc, x[1], b.getF32Type()));
        return castFloat(b, loc, wide, element);
      })
      .Case<BroadcastOp, StopGradientOp>([&](Operation *) { return x[0]; })
      .Default([](Operation *) { return Value(); });
}

void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
               ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>,
               ElementwiseLowering<MaximumOp>, ElementwiseLowering<MinimumOp>,
               ElementwiseLowering<NegOp>, ElementwiseLowering<ExpOp>,
               ElementwiseLowering<LogOp>, ElementwiseLowering<SqrtOp>,
               ElementwiseLowering<RsqrtOp>, ElementwiseLowering<TanhOp>, ElementwiseLowering<CosOp>,
               ElementwiseLowering<SinOp>, ElementwiseLowering<AtanOp>,
               ElementwiseLowering<FloorOp>, ElementwiseLowering<CeilOp>,
               ElementwiseLowering<RoundOp>,
               ElementwiseLowering<SigmoidOp>, ElementwiseLowering<ReluOp>,
               ElementwiseLowering<ErfOp>, ElementwiseLowering<AbsOp>,
               ElementwiseLowering<PowOp>, ModLowering, StopGradientLowering, GeluLowering, CompareLowering, SelectLowering, CastLowering,
               ConstantLowering>(patterns.getContext());
}

} // namespace kiln
