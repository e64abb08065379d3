//===- ReferenceInterpreter.cpp - kiln ops evaluated in float64 -----------===//

#include "reference/ReferenceInterpreter.h"

#include "reference/ReferenceWindows.h"

#include "dialects/Kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::reference {

int64_t Tensor::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using Shape = std::vector<int64_t>;

Shape shapeOf(Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

Tensor zeros(const Shape &shape) {
  Tensor t{shape, {}};
  t.data.assign(t.size(), 0.0);
  return t;
}

/// Row-major coordinates of flat index `i`.
Shape unravel(int64_t i, const Shape &shape) {
  Shape coords(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    coords[d] = i % shape[d];
    i /= shape[d];
  }
  return coords;
}

int64_t ravel(const Shape &coords, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + coords[d];
  return i;
}

/// Rounds to what the element type can hold.
double roundTo(Type type, double x) {
  if (type.isF32())
    return static_cast<float>(x);
  if (type.isF16() || type.isBF16()) {
    llvm::APFloat value(x);
    bool lost = false;
    value.convert(llvm::cast<FloatType>(type).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    return value.convertToDouble();
  }
  return x;
}

double castTo(Type from, Type to, double x) {
  if (to.isInteger(1))
    return x != 0.0 || std::isnan(x) ? 1.0 : 0.0;
  if (llvm::isa<FloatType>(to))
    return roundTo(to, x);
  if (llvm::isa<FloatType>(from))
    return std::trunc(x);
  return x; // int to int: values in range stay the same
}

double gelu(double x, bool tanhApprox) {
  if (tanhApprox)
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}

class Interpreter {
public:
  Interpreter(ModuleOp module, const llvm::StringMap<Tensor> &variables,
              Rounding rounding)
      : module(module), variables(variables), rounding(rounding) {}

  Tensor evaluate(Operation *op);
  Tensor &valueOf(Value v) { return values[v.getAsOpaquePointer()]; }
  void bind(Value v, Tensor t) { values[v.getAsOpaquePointer()] = std::move(t); }

private:
  Tensor map(Operation *op, const std::function<double(ArrayRef<double>)> &f);
  Tensor reduce(Value input, ArrayRef<int64_t> axes, bool keepDims, double init,
                const std::function<double(double, double)> &combine);
  Tensor softmax(Value input, int64_t axis, bool log);
  Tensor matmul(MatmulOp op);
  Tensor layerNorm(LayerNormOp op);
  Tensor gather(GatherOp op);
  Tensor gatherElements(GatherElementsOp op);
  Tensor embeddingBag(EmbeddingBagOp op);

  ModuleOp module;
  const llvm::StringMap<Tensor> &variables;
  Rounding rounding;
  llvm::DenseMap<void *, Tensor> values;
};

Tensor Interpreter::map(Operation *op, const std::function<double(ArrayRef<double>)> &f) {
  Tensor out = zeros(shapeOf(op->getResult(0)));
  Type type = getElementTypeOrSelf(op->getResult(0).getType());
  if (rounding == Rounding::None && llvm::isa<FloatType>(type))
    type = Float64Type::get(op->getContext());
  std::vector<double> args(op->getNumOperands());
  for (int64_t i = 0; i < out.size(); ++i) {
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      args[k] = valueOf(op->getOperand(k)).data[i];
    out.data[i] = roundTo(type, f(args));
  }
  return out;
}

Tensor Interpreter::reduce(Value input, ArrayRef<int64_t> axes, bool keepDims,
                           double init, const std::function<double(double, double)> &combine) {
  const Tensor &in = valueOf(input);
  Shape kept;
  for (size_t d = 0; d < in.shape.size(); ++d)
    kept.push_back(llvm::is_contained(axes, (int64_t)d) ? 1 : in.shape[d]);
  Tensor out = zeros(kept);
  std::fill(out.data.begin(), out.data.end(), init);
  for (int64_t i = 0; i < in.size(); ++i) {
    Shape c = unravel(i, in.shape);
    for (int64_t axis : axes)
      c[axis] = 0;
    double &acc = out.data[ravel(c, kept)];
    acc = combine(acc, in.data[i]);
  }
  if (!keepDims) {
    Shape dropped;
    for (size_t d = 0; d < in.shape.size(); ++d)
      if (!llvm::is_contained(axes, (int64_t)d))
        dropped.push_back(in.shape[d]);
    out.shape = dropped;
  }
  return out;
}

Tensor Interpreter::softmax(Value input, int64_t axis, bool log) {
  const Tensor &in = valueOf(input);
  Tensor max = reduce(input, {axis}, true, -INFINITY,
                      [](double a, double x) { return std::max(a, x); });
  Tensor out = zeros(in.shape);
  Tensor sum = zeros(max.shape);
  auto rowOf = [&](int64_t i) {
    Shape c = unravel(i, in.shape);
    c[axis] = 0;
    return ravel(c, max.shape);
  };
  for (int64_t i = 0; i < in.size(); ++i)
    sum.data[rowOf(i)] += std::exp(in.data[i] - max.data[rowOf(i)]);
  for (int64_t i = 0; i < in.size(); ++i) {
    double shifted = in.data[i] - max.data[rowOf(i)];
    out.data[i] = log ? shifted - std::log(sum.data[rowOf(i)])
                      : std::exp(shifted) / sum.data[rowOf(i)];
  }
  return out;
}

Tensor Interpreter::matmul(MatmulOp op) {
  const Tensor &a = valueOf(op.getLhs()), &b = valueOf(op.getRhs());
  Shape shape = shapeOf(op.getResult());
  Tensor out = zeros(shape);
  int64_t rank = shape.size(), m = shape[rank - 2], n = shape[rank - 1];
  int64_t k = op.getTransposeA() ? a.shape[a.shape.size() - 2] : a.shape.back();
  int64_t batch = out.size() / (m * n);
  bool sharedB = b.shape.size() == 2;
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = op.getTransposeA() ? a.data[t * m * k + p * m + i]
                                        : a.data[t * m * k + i * k + p];
          int64_t base = sharedB ? 0 : t * k * n;
          double y = op.getTransposeB() ? b.data[base + j * k + p]
                                        : b.data[base + p * n + j];
          acc += x * y;
        }
        out.data[t * m * n + i * n + j] = acc;
      }
  return out;
}

Tensor Interpreter::layerNorm(LayerNormOp op) {
  const Tensor &x = valueOf(op.getInput());
  const Tensor &scale = valueOf(op.getScale());
  int64_t inner = scale.size(), outer = x.size() / inner;
  double eps = op.getEpsilon().convertToDouble();
  Tensor out = zeros(x.shape);
  for (int64_t r = 0; r < outer; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x.data[r * inner + i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i)
      var += std::pow(x.data[r * inner + i] - mean, 2);
    var /= inner;
    for (int64_t i = 0; i < inner; ++i) {
      double y = (x.data[r * inner + i] - mean) / std::sqrt(var + eps) * scale.data[i];
      if (op.getBias())
        y += valueOf(op.getBias()).data[i];
      out.data[r * inner + i] = y;
    }
  }
  return out;
}

Tensor Interpreter::gather(GatherOp op) {
  const Tensor &table = valueOf(op.getTable()), &ids = valueOf(op.getIndices());
  int64_t axis = op.getAxis(), idRank = ids.shape.size();
  Shape shape = shapeOf(op.getResult());
  Tensor out = zeros(shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    Shape c = unravel(i, shape);
    Shape idCoords(c.begin() + axis, c.begin() + axis + idRank);
    int64_t id = static_cast<int64_t>(ids.data[ravel(idCoords, ids.shape)]);
    id = std::clamp<int64_t>(id, 0, table.shape[axis] - 1);
    Shape t(c.begin(), c.begin() + axis);
    t.push_back(id);
    t.insert(t.end(), c.begin() + axis + idRank, c.end());
    out.data[i] = table.data[ravel(t, table.shape)];
  }
  return out;
}

/// Written from the op's definition, not from its lowering: each list's
/// ids other than -1, their rows summed, then divided by n or sqrt(n).
Tensor Interpreter::embeddingBag(EmbeddingBagOp op) {
  const Tensor &table = valueOf(op.getTable()), &ids = valueOf(op.getIds());
  int64_t length = ids.shape.back(), lists = ids.size() / length;
  int64_t width = table.size() / table.shape[0];
  Tensor out = zeros(shapeOf(op.getResult()));
  for (int64_t l = 0; l < lists; ++l) {
    int64_t n = 0;
    for (int64_t k = 0; k < length; ++k) {
      int64_t id = static_cast<int64_t>(ids.data[l * length + k]);
      if (id == -1)
        continue;
      ++n;
      id = std::clamp<int64_t>(id, 0, table.shape[0] - 1);
      for (int64_t j = 0; j < width; ++j)
        out.data[l * width + j] += table.data[id * width + j];
    }
    double divisor = n == 0 || op.getCombiner() == EmbeddingCombiner::sum ? 1.0
                     : op.getCombiner() == EmbeddingCombiner::mean
                         ? static_cast<double>(n)
                         : std::sqrt(static_cast<double>(n));
    for (int64_t j = 0; j < width; ++j)
      out.data[l * width + j] /= divisor;
  }
  return out;
}

Tensor Interpreter::gatherElements(GatherElementsOp op) {
  const Tensor &in = valueOf(op.getInput()), &ids = valueOf(op.getIndices());
  int64_t axis = op.getAxis(), size = in.shape[axis];
  Tensor out = zeros(ids.shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    Shape c = unravel(i, ids.shape);
    int64_t id = static_cast<int64_t>(ids.data[i]);
    c[axis] = std::clamp<int64_t>(id < 0 ? id + size : id, 0, size - 1);
    out.data[i] = in.data[ravel(c, in.shape)];
  }
  return out;
}

template <typename OpTy> Window windowOf(OpTy op, ArrayRef<int64_t> kernel) {
  auto vec = [](ArrayRef<int64_t> a) { return std::vector<int64_t>(a.begin(), a.end()); };
  return Window{vec(kernel), vec(op.getStrides()), vec(op.getDilations()),
                vec(op.getPadLow()), vec(op.getPadHigh())};
}

/// Python's floored remainder, or C's fmod.
double remainder(double a, double b, bool truncated, bool isInt) {
  if (isInt && b == 0)
    return 0;
  double r = std::fmod(a, b);
  if (!truncated && r != 0 && (r < 0) != (b < 0))
    r += b;
  if (!truncated && r == 0)
    r = std::copysign(0.0, b);
  return r;
}

Tensor Interpreter::evaluate(Operation *op) {
  auto unary = [&](double (*f)(double)) {
    return map(op, [f](ArrayRef<double> x) { return f(x[0]); });
  };
  auto binary = [&](double (*f)(double, double)) {
    return map(op, [f](ArrayRef<double> x) { return f(x[0], x[1]); });
  };
  return llvm::TypeSwitch<Operation *, Tensor>(op)
      .Case([&](ConstantOp c) {
        auto value = llvm::cast<DenseElementsAttr>(c.getValue());
        Tensor t = zeros(shapeOf(c.getResult()));
        int64_t i = 0;
        if (llvm::isa<FloatType>(value.getElementType()))
          for (APFloat f : value.getValues<APFloat>())
            t.data[i++] = f.convertToDouble();
        else if (value.getElementType().isInteger(1))
          for (bool b : value.getValues<bool>())
            t.data[i++] = b;
        else
          for (APInt v : value.getValues<APInt>())
            t.data[i++] = static_cast<double>(v.getSExtValue());
        return t;
      })
      .Case([&](ReadOp r) { return variables.lookup(r.getVariable()); })
      .Case([&](AddOp) { return binary([](double a, double b) { return a + b; }); })
      .Case([&](SubOp) { return binary([](double a, double b) { return a - b; }); })
      .Case([&](MulOp) { return binary([](double a, double b) { return a * b; }); })
      .Case([&](DivOp d) {
        bool isInt = llvm::isa<IntegerType>(getElementTypeOrSelf(d.getType()));
        return isInt ? binary([](double a, double b) { return b == 0 ? 0 : std::trunc(a / b); })
                     : binary([](double a, double b) { return a / b; });
      })
      .Case([&](MaximumOp) { return binary([](double a, double b) { return std::max(a, b); }); })
      .Case([&](MinimumOp) { return binary([](double a, double b) { return std::min(a, b); }); })
      .Case([&](NegOp) { return unary([](double x) { return -x; }); })
      .Case([&](ExpOp) { return unary([](double x) { return std::exp(x); }); })
      .Case([&](LogOp) { return unary([](double x) { return std::log(x); }); })
      .Case([&](SqrtOp) { return unary([](double x) { return std::sqrt(x); }); })
      .Case([&](RsqrtOp) { return unary([](double x) { return 1 / std::sqrt(x); }); })
      .Case([&](TanhOp) { return unary([](double x) { return std::tanh(x); }); })
      .Case([&](SigmoidOp) { return unary([](double x) { return 1 / (1 + std::exp(-x)); }); })
      .Case([&](ReluOp) { return unary([](double x) { return std::max(x, 0.0); }); })
      .Case([&](ErfOp) { return unary([](double x) { return std::erf(x); }); })
      .Case([&](CosOp) { return unary([](double x) { return std::cos(x); }); })
      .Case([&](SinOp) { return unary([](double x) { return std::sin(x); }); })
      .Case([&](AtanOp) { return unary([](double x) { return std::atan(x); }); })
      .Case([&](FloorOp) { return unary([](double x) { return std::floor(x); }); })
      .Case([&](CeilOp) { return unary([](double x) { return std::ceil(x); }); })
      .Case([&](RoundOp) { return unary([](double x) { return std::nearbyint(x); }); })
      .Case([&](AbsOp) { return unary([](double x) { return std::fabs(x); }); })
      .Case([&](PowOp) { return binary([](double a, double b) { return std::pow(a, b); }); })
      .Case([&](ModOp m) {
        bool truncated = m.getFmod();
        bool isInt = llvm::isa<IntegerType>(getElementTypeOrSelf(m.getType()));
        return map(op, [=](ArrayRef<double> x) {
          return remainder(x[0], x[1], truncated, isInt);
        });
      })
      .Case([&](GatherElementsOp g) { return gatherElements(g); })
      .Case([&](ConvOp c) {
        auto filter = llvm::cast<RankedTensorType>(c.getFilter().getType());
        return convolve(valueOf(c.getInput()), valueOf(c.getFilter()),
                        windowOf(c, filter.getShape().drop_front(2)), c.getGroups(),
                        shapeOf(c.getResult()));
      })
      .Case([&](ConvBackwardDataOp c) {
        auto filter = llvm::cast<RankedTensorType>(c.getFilter().getType());
        return convolveTransposed(valueOf(c.getGrad()), valueOf(c.getFilter()),
                                  windowOf(c, filter.getShape().drop_front(2)), c.getGroups(),
                                  shapeOf(c.getResult()));
      })
      .Case([&](MaxPoolOp p) {
        return maxPool(valueOf(p.getInput()), windowOf(p, p.getKernel()),
                       shapeOf(p.getResult()));
      })
      .Case([&](AvgPoolOp p) {
        return avgPool(valueOf(p.getInput()), windowOf(p, p.getKernel()), p.getExcludePad(),
                       shapeOf(p.getResult()));
      })
      .Case([&](GeluOp g) {
        bool approx = g.getApproximation() == GeluApproximation::tanh;
        return map(op, [approx](ArrayRef<double> x) { return gelu(x[0], approx); });
      })
      .Case([&](CompareOp c) {
        ComparePredicate p = c.getPredicate();
        return map(op, [p](ArrayRef<double> x) -> double {
          switch (p) {
          case ComparePredicate::eq: return x[0] == x[1];
          case ComparePredicate::ne: return x[0] != x[1];
          case ComparePredicate::lt: return x[0] < x[1];
          case ComparePredicate::le: return x[0] <= x[1];
          case ComparePredicate::gt: return x[0] > x[1];
          case ComparePredicate::ge: return x[0] >= x[1];
          }
          return 0;
        });
      })
      .Case([&](SelectOp) {
        return map(op, [](ArrayRef<double> x) { return x[0] != 0 ? x[1] : x[2]; });
      })
      .Case([&](CastOp c) {
        Type from = getElementTypeOrSelf(c.getOperand().getType());
        Type to = getElementTypeOrSelf(c.getType());
        if (rounding == Rounding::None && llvm::isa<FloatType>(to))
          to = Float64Type::get(op->getContext());
        return map(op, [from, to](ArrayRef<double> x) { return castTo(from, to, x[0]); });
      })
      .Case([&](MatmulOp m) { return matmul(m); })
      .Case([&](StopGradientOp s) { return valueOf(s.getOperand()); })
      .Case([&](ReshapeOp r) {
        Tensor t = valueOf(r.getOperand());
        t.shape = shapeOf(r.getResult());
        return t;
      })
      .Case([&](BroadcastOp b) {
        const Tensor &in = valueOf(b.getOperand());
        Shape shape = shapeOf(b.getResult());
        Tensor out = zeros(shape);
        size_t offset = shape.size() - in.shape.size();
        for (int64_t i = 0; i < out.size(); ++i) {
          Shape c = unravel(i, shape), src;
          for (size_t d = 0; d < in.shape.size(); ++d)
            src.push_back(in.shape[d] == 1 ? 0 : c[d + offset]);
          out.data[i] = in.data[ravel(src, in.shape)];
        }
        return out;
      })
      .Case([&](TransposeOp t) {
        const Tensor &in = valueOf(t.getOperand());
        Shape shape = shapeOf(t.getResult());
        Tensor out = zeros(shape);
        ArrayRef<int64_t> perm = t.getPermutation();
        for (int64_t i = 0; i < out.size(); ++i) {
          Shape c = unravel(i, shape), src(shape.size());
          for (size_t d = 0; d < shape.size(); ++d)
            src[perm[d]] = c[d];
          out.data[i] = in.data[ravel(src, in.shape)];
        }
        return out;
      })
      .Case([&](ConcatOp c) {
        Shape shape = shapeOf(c.getResult());
        Tensor out = zeros(shape);
        int64_t axis = c.getAxis(), at = 0;
        for (Value input : c.getInputs()) {
          const Tensor &in = valueOf(input);
          for (int64_t i = 0; i < in.size(); ++i) {
            Shape d = unravel(i, in.shape);
            d[axis] += at;
            out.data[ravel(d, shape)] = in.data[i];
          }
          at += in.shape[axis];
        }
        return out;
      })
      .Case([&](SliceOp s) {
        const Tensor &in = valueOf(s.getOperand());
        Shape shape = shapeOf(s.getResult());
        Tensor out = zeros(shape);
        for (int64_t i = 0; i < out.size(); ++i) {
          Shape c = unravel(i, shape);
          for (size_t d = 0; d < c.size(); ++d)
            c[d] = s.getStart()[d] + c[d] * s.getStep()[d];
          out.data[i] = in.data[ravel(c, in.shape)];
        }
        return out;
      })
      .Case([&](ReduceSumOp r) {
        return reduce(r.getOperand(), r.getAxes(), r.getKeepDims(), 0,
                      [](double a, double x) { return a + x; });
      })
      .Case([&](ReduceMaxOp r) {
        return reduce(r.getOperand(), r.getAxes(), r.getKeepDims(), -INFINITY,
                      [](double a, double x) { return std::max(a, x); });
      })
      .Case([&](ReduceMeanOp r) {
        Tensor sum = reduce(r.getOperand(), r.getAxes(), r.getKeepDims(), 0,
                            [](double a, double x) { return a + x; });
        double count = double(valueOf(r.getOperand()).size()) / sum.size();
        for (double &v : sum.data)
          v /= count;
        return sum;
      })
      .Case([&](SoftmaxOp s) { return softmax(s.getOperand(), s.getAxis(), false); })
      .Case([&](LogSoftmaxOp s) { return softmax(s.getOperand(), s.getAxis(), true); })
      .Case([&](LayerNormOp l) { return layerNorm(l); })
      .Case([&](GatherOp g) { return gather(g); })
      .Case([&](OneHotOp h) {
        // 1 at each index's position along the new last dimension; an
        // index outside [0, depth) leaves its row zero.
        const Tensor &indices = valueOf(h.getIndices());
        Tensor out = zeros(shapeOf(h.getResult()));
        int64_t depth = out.shape.back();
        for (size_t i = 0; i < indices.data.size(); ++i) {
          auto index = static_cast<int64_t>(indices.data[i]);
          if (index >= 0 && index < depth)
            out.data[i * depth + index] = 1;
        }
        return out;
      })
      .Case([&](EmbeddingBagOp g) { return embeddingBag(g); })
      .Case([&](SoftmaxCrossEntropyOp l) {
        // The mean over every position of the leading dimensions.
        int64_t classAxis = shapeOf(l.getLogits()).size() - 1;
        Tensor logp = softmax(l.getLogits(), classAxis, true);
        const Tensor &labels = valueOf(l.getLabels());
        int64_t classes = logp.shape.back(), batch = logp.size() / classes;
        std::optional<int64_t> ignored = l.getIgnoreIndex();
        double e = SoftmaxCrossEntropyOp::smoothingOf(l.getLabelSmoothingAttr());
        double total = 0, kept = 0;
        for (int64_t b = 0; b < batch; ++b) {
          if (ignored && (int64_t)labels.data[b] == *ignored)
            continue;
          int64_t y = std::clamp<int64_t>((int64_t)labels.data[b], 0, classes - 1);
          // The target (1 - e) one_hot + e / C against log softmax.
          total -= (1 - e) * logp.data[b * classes + y];
          for (int64_t c = 0; e != 0 && c < classes; ++c)
            total -= e / classes * logp.data[b * classes + c];
          kept += 1;
        }
        return Tensor{{}, {total / kept}};
      })
      .Case([&](SigmoidCrossEntropyOp l) {
        const Tensor &x = valueOf(l.getLogits()), &t = valueOf(l.getTargets());
        double total = 0;
        for (int64_t i = 0; i < x.size(); ++i) {
          double p = 1 / (1 + std::exp(-x.data[i]));
          total -= t.data[i] * std::log(p) + (1 - t.data[i]) * std::log(1 - p);
        }
        return Tensor{{}, {total / x.size()}};
      })
      .Case([&](MeanSquaredErrorOp l) {
        const Tensor &p = valueOf(l.getPrediction()), &t = valueOf(l.getTarget());
        double total = 0;
        for (int64_t i = 0; i < p.size(); ++i)
          total += std::pow(p.data[i] - t.data[i], 2);
        return Tensor{{}, {total / p.size()}};
      })
      .Default([](Operation *op) -> Tensor {
        llvm::report_fatal_error(llvm::Twine("reference interpreter: no rule for ") +
                                 op->getName().getStringRef());
      });
}

} // namespace

llvm::StringMap<Tensor> evaluateForward(ModuleOp module,
                                        const llvm::StringMap<Tensor> &inputs,
                                        const llvm::StringMap<Tensor> &variables,
                                        Rounding rounding) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  Interpreter interpreter(module, variables, rounding);
  for (BlockArgument arg : forward.getArguments()) {
    auto name = forward.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
    interpreter.bind(arg, inputs.lookup(name.getValue()));
  }
  llvm::StringMap<Tensor> results;
  for (Operation &op : forward.getBody().front()) {
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        auto name = forward.getResultAttrOfType<StringAttr>(i, "kiln.name");
        results[name.getValue()] = interpreter.valueOf(value);
      }
      break;
    }
    interpreter.bind(op.getResult(0), interpreter.evaluate(&op));
  }
  return results;
}

} // namespace kiln::reference
