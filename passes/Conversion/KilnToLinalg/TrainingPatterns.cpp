//===- TrainingPatterns.cpp - Training-step ops to linalg -----------------===//
//
// The helpers autodiff builds (gelu_grad, one_hot, pad) and the dense
// optimizer updates. Each update is one `linalg.generic` with an output per
// result (the new parameter and slots), reading the scalar learning rate
// (and step) through a rank-0 map; f16 and bf16 parameters are updated in
// f32 and rounded. kiln.sparse_apply and kiln.assign are not lowered here:
// the execution plan makes them runtime steps and in-place writes.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/KilnToLinalg/LinalgBuilders.h"
#include "passes/Conversion/KilnToLinalg/Patterns.h"
#include "passes/Conversion/KilnToLinalg/ScalarElements.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

/// Computes the outputs' elements from the inputs' (already in f32).
using ManyFn = llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// One generic over `type` with `results` outputs of that type, computed in
/// f32. Scalar (rank-0) inputs are read once before the loop and captured,
/// so the body's math on them (Adam's bias corrections) is loop-invariant;
/// other inputs are numpy-broadcast.
SmallVector<Value> mapToMany(OpBuilder &b, Location loc, RankedTensorType type,
                             ValueRange inputs, unsigned results, ManyFn body) {
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps;
  SmallVector<Value> tensors;
  SmallVector<Value> scalars(inputs.size());
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    if (inputType.getRank() == 0 && rank > 0) {
      Value scalar = b.create<tensor::ExtractOp>(loc, input, ValueRange{});
      scalars[i] = castFloat(b, loc, scalar, b.getF32Type());
      continue;
    }
    tensors.push_back(input);
    maps.push_back(broadcastMap(b.getContext(), inputType.getShape(), type.getShape()));
  }
  SmallVector<Value> inits;
  for (unsigned i = 0; i < results; ++i) {
    inits.push_back(emptyTensor(b, loc, type));
    maps.push_back(b.getMultiDimIdentityMap(rank));
  }
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  SmallVector<Type> resultTypes(results, type);
  Type element = type.getElementType();
  auto generic = b.create<linalg::GenericOp>(
      loc, resultTypes, tensors, inits, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> wide;
        unsigned next = 0;
        for (Value scalar : scalars)
          wide.push_back(scalar ? scalar : castFloat(nb, l, args[next++], nb.getF32Type()));
        SmallVector<Value> out = body(nb, l, wide);
        for (Value &value : out)
          value = castFloat(nb, l, value, element);
        nb.create<linalg::YieldOp>(l, out);
      });
  return generic.getResults();
}

/// Arithmetic on f32 scalars inside a generic body.
struct F32 {
  OpBuilder &b;
  Location loc;
  Value c(double v) { return scalarConstant(b, loc, b.getF32Type(), v); }
  Value add(Value x, Value y) { return b.create<arith::AddFOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value sqrt(Value x) { return b.create<math::SqrtOp>(loc, x); }
  Value pow(Value x, Value y) { return b.create<math::PowFOp>(loc, x, y); }
};

struct ApplySgdLowering : public OpRewritePattern<ApplySgdOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplySgdOp op, PatternRewriter &rewriter) const override {
    auto results = mapToMany(
        rewriter, op.getLoc(), op.getType(), {op.getParam(), op.getGrad(), op.getLr()}, 1,
        [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
          F32 f{b, loc};
          return {f.sub(x[0], f.mul(x[2], x[1]))};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ApplyMomentumLowering : public OpRewritePattern<ApplyMomentumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyMomentumOp op, PatternRewriter &rewriter) const override {
    double mu = op.getMomentum().convertToDouble();
    bool nesterov = op.getNesterov();
    auto results = mapToMany(
        rewriter, op.getLoc(), llvm::cast<RankedTensorType>(op.getParam().getType()),
        {op.getParam(), op.getVelocity(), op.getGrad(), op.getLr()}, 2,
        [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
          F32 f{b, loc};
          Value v = f.add(f.mul(f.c(mu), x[1]), x[2]);
          Value step = nesterov ? f.add(x[2], f.mul(f.c(mu), v)) : v;
          return {f.sub(x[0], f.mul(x[3], step)), v};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// 1 - beta^t as f32, computed in f64 from the exact beta as PyTorch does
/// (in f32, pow(f32(0.999), t) is off by about 1e-5 relative).
Value biasCorrection(OpBuilder &b, Location loc, double beta, Value stepF32) {
  Type f64 = b.getF64Type();
  Value t = b.create<arith::ExtFOp>(loc, f64, stepF32);
  Value power = b.create<math::PowFOp>(
      loc, b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(beta)), t);
  Value one = b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(1.0));
  return b.create<arith::TruncFOp>(loc, b.getF32Type(),
                                   b.create<arith::SubFOp>(loc, one, power));
}

struct ApplyAdamLowering : public OpRewritePattern<ApplyAdamOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyAdamOp op, PatternRewriter &rewriter) const override {
    double b1 = op.getBeta1().convertToDouble(), b2 = op.getBeta2().convertToDouble();
    double eps = op.getEpsilon().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    auto results = mapToMany(
        rewriter, op.getLoc(), llvm::cast<RankedTensorType>(op.getParam().getType()),
        {op.getParam(), op.getM(), op.getV(), op.getGrad(), op.getLr(), op.getStep()}, 3,
        [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
          F32 f{b, loc};
          Value param = x[0], g = x[3], lr = x[4], t = x[5];
          if (decay != 0.0)
            param = f.mul(param, f.sub(f.c(1.0), f.mul(lr, f.c(decay))));
          Value m = f.add(f.mul(f.c(b1), x[1]), f.mul(f.c(1.0 - b1), g));
          Value v = f.add(f.mul(f.c(b2), x[2]), f.mul(f.c(1.0 - b2), f.mul(g, g)));
          Value c1 = biasCorrection(b, loc, b1, t);
          Value c2 = biasCorrection(b, loc, b2, t);
          Value denom = f.add(f.sqrt(f.div(v, c2)), f.c(eps));
          Value update = f.div(f.mul(lr, f.div(m, c1)), denom);
          return {f.sub(param, update), m, v};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ApplyAdagradLowering : public OpRewritePattern<ApplyAdagradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyAdagradOp op, PatternRewriter &rewriter) const override {
    double eps = op.getEpsilon().convertToDouble();
    auto results = mapToMany(
        rewriter, op.getLoc(), llvm::cast<RankedTensorType>(op.getParam().getType()),
        {op.getParam(), op.getAccumulator(), op.getGrad(), op.getLr()}, 2,
        [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
          F32 f{b, loc};
          Value acc = f.add(x[1], f.mul(x[2], x[2]));
          Value update = f.div(f.mul(x[3], x[2]), f.add(f.sqrt(acc), f.c(eps)));
          return {f.sub(x[0], update), acc};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

Value geluDerivative(GeluGradOp op, OpBuilder &b, Location loc, Value x, Value g) {
  F32 f{b, loc};
  if (op.getApproximation() == GeluApproximation::tanh) {
    // y = 0.5 x (1 + tanh(u)), u = c (x + 0.044715 x^3).
    double c = std::sqrt(2.0 / M_PI);
    Value x2 = f.mul(x, x);
    Value u = f.mul(f.c(c), f.add(x, f.mul(f.c(0.044715), f.mul(x2, x))));
    Value t = b.create<math::TanhOp>(loc, u);
    Value du = f.mul(f.c(c), f.add(f.c(1.0), f.mul(f.c(3 * 0.044715), x2)));
    Value left = f.mul(f.c(0.5), f.add(f.c(1.0), t));
    Value right = f.mul(f.mul(f.c(0.5), x), f.mul(f.sub(f.c(1.0), f.mul(t, t)), du));
    return f.mul(g, f.add(left, right));
  }
  // Phi(x) + x phi(x).
  Value cdf = f.mul(f.c(0.5), f.add(f.c(1.0), b.create<math::ErfOp>(
                                                    loc, f.mul(x, f.c(M_SQRT1_2)))));
  Value pdf = f.mul(f.c(1.0 / std::sqrt(2.0 * M_PI)),
                    b.create<math::ExpOp>(loc, f.mul(f.c(-0.5), f.mul(x, x))));
  return f.mul(g, f.add(cdf, f.mul(x, pdf)));
}

namespace {

struct GeluGradLowering : public OpRewritePattern<GeluGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluGradOp op, PatternRewriter &rewriter) const override {
    auto results = mapToMany(
        rewriter, op.getLoc(), op.getType(), {op.getOperand(), op.getGrad()}, 1,
        [&](OpBuilder &b, Location loc, ValueRange x) -> SmallVector<Value> {
          return {geluDerivative(op, b, loc, x[0], x[1])};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct OneHotLowering : public OpRewritePattern<OneHotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OneHotOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    int64_t rank = type.getRank();
    Value result = mapElements(
        rewriter, op.getLoc(), type, op.getIndices(),
        oneHotIndicesMap(rewriter.getContext(), rank),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return oneHotElement(b, loc, rank, args[0], type.getElementType());
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Each result element reads the operand where its index, less `low`, is a
/// multiple of `interior + 1` inside the operand, and is zero elsewhere (a
/// generic with tensor.extract: a strided insert_slice would need a runtime
/// memref copy).
struct PadLowering : public OpRewritePattern<PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PadOp op, PatternRewriter &rewriter) const override {
    auto type = llvm::cast<RankedTensorType>(op.getType());
    auto operand = llvm::cast<RankedTensorType>(op.getOperand().getType());
    Value source = op.getOperand();
    Value result = mapElements(
        rewriter, op.getLoc(), type, ValueRange{}, {},
        [&](OpBuilder &b, Location loc, ValueRange) {
          Value inside;
          SmallVector<Value> indices;
          for (int64_t d = 0; d < type.getRank(); ++d) {
            Value i = b.create<linalg::IndexOp>(loc, d);
            Value low = b.create<arith::ConstantIndexOp>(loc, op.getLow()[d]);
            Value stride = b.create<arith::ConstantIndexOp>(loc, op.getInterior()[d] + 1);
            Value shifted = b.create<arith::SubIOp>(loc, i, low);
            Value index = b.create<arith::DivSIOp>(loc, shifted, stride);
            Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
            Value size = b.create<arith::ConstantIndexOp>(loc, operand.getDimSize(d));
            Value hit = b.create<arith::AndIOp>(
                loc,
                b.create<arith::AndIOp>(
                    loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, shifted, zero),
                    b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, index, size)),
                b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                                        b.create<arith::RemSIOp>(loc, shifted, stride), zero));
            inside = inside ? b.create<arith::AndIOp>(loc, inside, hit).getResult() : hit;
            // Clamped so the read stays inside the operand when not `hit`.
            Value last = b.create<arith::ConstantIndexOp>(loc, operand.getDimSize(d) - 1);
            indices.push_back(b.create<arith::MinSIOp>(
                loc, b.create<arith::MaxSIOp>(loc, index, zero), last));
          }
          Value element = b.create<tensor::ExtractOp>(loc, source, indices);
          Value zero = scalarConstant(b, loc, type.getElementType(), 0.0);
          if (!inside)
            return element;
          return b.create<arith::SelectOp>(loc, inside, element, zero).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateTrainingToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ApplySgdLowering, ApplyMomentumLowering, ApplyAdamLowering,
               ApplyAdagradLowering, GeluGradLowering, OneHotLowering, PadLowering>(
      patterns.getContext());
}

} // namespace kiln
