//===- OnnxRecurrentOps.cpp - ONNX LSTM, GRU and RNN, unrolled ------------===//
//
// A recurrent layer over a sequence of static length becomes its time steps,
// as a static graph must hold them: the input's product with W for every
// step at once (one [T*B, I] x [I, G*H] product, W's and R's biases added
// where they sum outside a gate's product), then for each step in the
// direction's order the hidden state's product with R, the gates'
// activations and the state's update. Autodiff then trains W, R, B, the
// peepholes and a given initial state through ordinary ops, as PyTorch's
// backward through time does. The equations and the gates' order (LSTM
// i, o, f, c; GRU z, r, h) are onnx.ai's.
//
// Refused, each with one error: variable sequence lengths, LSTM's
// input_forget, activations other than Sigmoid, Tanh and Relu, and
// sequences longer than kMaxUnrolledSteps.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxOps.h"

#include "compiler/Import/DiagnosticText.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln {
namespace {

using Result = KilnOpBuilder::Result;

/// The longest sequence unrolled: each step is about fifteen ops forward
/// and as many backward.
constexpr int64_t kMaxUnrolledSteps = 2048;

enum class CellKind { Rnn, Gru, Lstm };
enum class Activation { Sigmoid, Tanh, Relu };

struct CellInfo {
  /// Gates stacked in W and R.
  int64_t gates;
  /// Activations per direction, and their defaults.
  llvm::ArrayRef<Activation> defaults;
};

constexpr Activation kRnnDefaults[] = {Activation::Tanh};
constexpr Activation kGruDefaults[] = {Activation::Sigmoid, Activation::Tanh};
constexpr Activation kLstmDefaults[] = {Activation::Sigmoid, Activation::Tanh,
                                        Activation::Tanh};

CellInfo cellInfo(CellKind kind) {
  switch (kind) {
  case CellKind::Rnn:
    return {1, kRnnDefaults};
  case CellKind::Gru:
    return {3, kGruDefaults};
  case CellKind::Lstm:
    return {4, kLstmDefaults};
  }
  llvm_unreachable("cell kind");
}

/// What the attributes say, checked.
struct LayerAttrs {
  int64_t hidden = 0;
  bool forward = true, bidirectional = false, batchMajor = false;
  std::optional<float> clip;
  bool linearBeforeReset = false;
  /// Per direction, defaults.size() each.
  SmallVector<Activation> activations;
};

FailureOr<SmallVector<Activation>> readActivations(OnnxNode &node, const CellInfo &info,
                                                   int64_t directions) {
  const onnx::AttributeProto *attr = node.getAttribute("activations");
  SmallVector<Activation> result;
  if (!attr) {
    for (int64_t d = 0; d < directions; ++d)
      result.append(info.defaults.begin(), info.defaults.end());
    return result;
  }
  int64_t perDirection = static_cast<int64_t>(info.defaults.size());
  int64_t count = attr->strings_size();
  if (attr->type() != onnx::AttributeProto::STRINGS || count != perDirection * directions)
    return node.emitError() << "expects attribute 'activations' to list " << perDirection
                            << " names per direction (" << perDirection * directions
                            << "), got "
                            << (attr->type() == onnx::AttributeProto::STRINGS
                                    ? std::to_string(count) + " names"
                                    : std::string("another type"));
  for (int64_t i = 0; i < perDirection * directions; ++i) {
    llvm::StringRef name = attr->strings(static_cast<int>(i));
    if (name.equals_insensitive("Sigmoid"))
      result.push_back(Activation::Sigmoid);
    else if (name.equals_insensitive("Tanh"))
      result.push_back(Activation::Tanh);
    else if (name.equals_insensitive("Relu"))
      result.push_back(Activation::Relu);
    else
      return node.emitError() << "activation '" << printable(name)
                              << "' is not supported (kiln's are Sigmoid, Tanh and Relu)";
  }
  return result;
}

FailureOr<LayerAttrs> readAttrs(OnnxNode &node, CellKind kind) {
  CellInfo info = cellInfo(kind);
  LayerAttrs attrs;
  FailureOr<int64_t> hidden = node.getIntAttr("hidden_size", 0);
  FailureOr<std::string> direction = node.getStringAttr("direction", "forward");
  FailureOr<int64_t> layout = node.getIntAttr("layout", 0);
  FailureOr<int64_t> inputForget = node.getIntAttr("input_forget", 0);
  FailureOr<int64_t> linearBeforeReset = node.getIntAttr("linear_before_reset", 0);
  if (failed(hidden) || failed(direction) || failed(layout) || failed(inputForget) ||
      failed(linearBeforeReset))
    return failure();
  if (!node.hasAttribute("hidden_size"))
    return node.emitError() << "needs attribute 'hidden_size'";
  if (*hidden <= 0 || *hidden > (int64_t(1) << 24))
    return node.emitError() << "expects attribute 'hidden_size' in [1, 2^24], got " << *hidden;
  attrs.hidden = *hidden;
  if (*direction == "reverse")
    attrs.forward = false;
  else if (*direction == "bidirectional")
    attrs.bidirectional = true;
  else if (*direction != "forward")
    return node.emitError() << "expects attribute 'direction' to be 'forward', 'reverse' or "
                               "'bidirectional', got '"
                            << printable(*direction) << "'";
  if (*layout != 0 && *layout != 1)
    return node.emitError() << "expects attribute 'layout' 0 or 1, got " << *layout;
  attrs.batchMajor = *layout == 1;
  if (*inputForget != 0)
    return node.emitError() << "input_forget (coupled input and forget gates) is not supported";
  attrs.linearBeforeReset = *linearBeforeReset != 0;
  if (node.hasAttribute("clip")) {
    FailureOr<float> clip = node.getFloatAttr("clip", 0);
    if (failed(clip))
      return failure();
    if (!(*clip > 0) || std::isinf(*clip))
      return node.emitError() << "expects attribute 'clip' to be a positive number, got "
                              << *clip;
    attrs.clip = *clip;
  }
  FailureOr<SmallVector<Activation>> activations =
      readActivations(node, info, attrs.bidirectional ? 2 : 1);
  if (failed(activations))
    return failure();
  attrs.activations = std::move(*activations);
  return attrs;
}

/// Errors unless `value` has `expected` shape and `like`'s element type;
/// `what` names the input and its dimensions.
LogicalResult requireShape(OnnxNode &node, Value value, Value like,
                           ArrayRef<int64_t> expected, llvm::StringRef what) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(value);
  if (shape != expected)
    return node.emitError() << "expects " << what << " of shape " << formatIntList(expected)
                            << ", got " << formatIntList(shape);
  if (getElementTypeOrSelf(value.getType()) != getElementTypeOrSelf(like.getType()))
    return node.emitError() << "expects " << what << " of the input's element type";
  return success();
}

/// One recurrent layer being unrolled: its inputs checked, and the steps'
/// ops built. A state known to be zero (no initial state, or a constant
/// zero one) is a null Value, so the first step skips its products.
class Unroller {
public:
  Unroller(OnnxNode &node, CellKind kind, const LayerAttrs &attrs)
      : node(node), b(node.getBuilder()), kind(kind), attrs(attrs),
        gates(cellInfo(kind).gates), hidden(attrs.hidden) {}

  LogicalResult run();

private:
  /// Input `i` of [directions, rows, cols] (or layout 1's [rows,
  /// directions, cols] for a state), checked; null when not given.
  FailureOr<Value> readPerDirection(unsigned i, int64_t rows, int64_t cols,
                                    llvm::StringRef what, bool isState);
  /// Direction `d`'s part of `value` [directions, ...], without its first
  /// dimension.
  Result direction(Value value, int64_t d);
  /// Columns [gate * hidden, (gate + count) * hidden) of [rows, G*H].
  Result gateColumns(Value value, int64_t gate, int64_t count = 1);
  Result activate(Value value, Activation activation);
  /// clip (if any) then the activation.
  Result gate(Value preActivation, Activation activation);
  /// `a + b`, or `a` when `b` is null.
  Result addIfGiven(Value a, Value b);
  /// The initial state `given` (null: none) for direction `d`, null when it
  /// is a constant zero.
  FailureOr<Value> initialState(Value given, int64_t d);
  LogicalResult unrollDirection(int64_t d);
  FailureOr<Value> step(int64_t d, Value xPart, Value &h, Value &c);
  LogicalResult setOutputs();

  OnnxNode &node;
  KilnOpBuilder &b;
  CellKind kind;
  const LayerAttrs &attrs;
  int64_t gates, hidden;
  int64_t steps = 0, batch = 0, inputSize = 0, directions = 1;
  Value x, w, r, bias, initialH, initialC, peepholes;
  /// Per direction: its R (GRU without linear_before_reset: R_zr and R_h),
  /// the bias added inside the reset gate (GRU with linear_before_reset),
  /// and the peepholes.
  Value rd, rdHidden, resetBias, pd;
  /// Per direction: each step's output, by time index; the final states.
  SmallVector<SmallVector<Value>> outputs;
  SmallVector<Value> finalH, finalC;
};

FailureOr<Value> Unroller::readPerDirection(unsigned i, int64_t rows, int64_t cols,
                                            llvm::StringRef what, bool isState) {
  if (!node.hasInput(i))
    return Value();
  Value value = node.getInput(i);
  bool batchMajor = isState && attrs.batchMajor;
  SmallVector<int64_t> expected =
      batchMajor ? SmallVector<int64_t>{rows, directions, cols}
                 : SmallVector<int64_t>{directions, rows, cols};
  if (cols < 0)
    expected.pop_back();
  if (failed(requireShape(node, value, x, expected, what)))
    return failure();
  if (!batchMajor)
    return value;
  return b.transpose(value, {1, 0, 2});
}

Result Unroller::direction(Value value, int64_t d) {
  ArrayRef<int64_t> shape = KilnOpBuilder::shapeOf(value);
  SmallVector<int64_t> start(shape.size(), 0), limit(shape), stride(shape.size(), 1);
  start[0] = d;
  limit[0] = d + 1;
  Result part = b.slice(value, start, limit, stride);
  if (failed(part))
    return failure();
  return b.reshape(*part, shape.drop_front());
}

Result Unroller::gateColumns(Value value, int64_t gate, int64_t count) {
  int64_t rows = KilnOpBuilder::shapeOf(value)[0];
  return b.slice(value, {0, gate * hidden}, {rows, (gate + count) * hidden}, {1, 1});
}

Result Unroller::activate(Value value, Activation activation) {
  switch (activation) {
  case Activation::Sigmoid:
    return b.unary<SigmoidOp>(value);
  case Activation::Tanh:
    return b.unary<TanhOp>(value);
  case Activation::Relu:
    return b.unary<ReluOp>(value);
  }
  llvm_unreachable("activation");
}

Result Unroller::gate(Value preActivation, Activation activation) {
  Value v = preActivation;
  if (attrs.clip) {
    Result low = b.splatLike(v, -*attrs.clip), high = b.splatLike(v, *attrs.clip);
    if (failed(low) || failed(high))
      return failure();
    Result clipped = b.binary<MaximumOp>(v, *low);
    if (succeeded(clipped))
      clipped = b.binary<MinimumOp>(*clipped, *high);
    if (failed(clipped))
      return failure();
    v = *clipped;
  }
  return activate(v, activation);
}

Result Unroller::addIfGiven(Value a, Value other) {
  if (!other)
    return a;
  return b.binary<AddOp>(a, other);
}

FailureOr<Value> Unroller::initialState(Value given, int64_t d) {
  if (!given)
    return Value();
  if (DenseElementsAttr value = KilnOpBuilder::constantValueOf(given))
    if (value.isSplat() && value.getSplatValue<APFloat>().isZero())
      return Value();
  return direction(given, d);
}

/// One step of direction `d` from its part of the input's product
/// ([batch, G*H], biases included); updates `h` and `c` and returns the
/// step's output (the new `h`).
FailureOr<Value> Unroller::step(int64_t d, Value xPart, Value &h, Value &c) {
  ArrayRef<Activation> acts =
      ArrayRef<Activation>(attrs.activations).slice(d * cellInfo(kind).defaults.size());
  Result hPart = h ? b.matmul(h, rd, false, true) : Result(Value());
  if (failed(hPart))
    return failure();
  if (kind == CellKind::Rnn) {
    Result pre = addIfGiven(xPart, *hPart);
    Result next = succeeded(pre) ? gate(*pre, acts[0]) : pre;
    if (failed(next))
      return failure();
    h = *next;
    return h;
  }
  if (kind == CellKind::Gru) {
    // z and r: x + h R^T; h~: x + r * (h R_h^T + Rb_h) with
    // linear_before_reset, else x + (r * h) R_h^T.
    Result xzr = gateColumns(xPart, 0, 2), xh = gateColumns(xPart, 2);
    if (failed(xzr) || failed(xh))
      return failure();
    Result zrPre = *xzr;
    if (*hPart) {
      Result hzr = gateColumns(*hPart, 0, 2);
      zrPre = succeeded(hzr) ? b.binary<AddOp>(*xzr, *hzr) : hzr;
    }
    if (failed(zrPre))
      return failure();
    Result zPre = gateColumns(*zrPre, 0), rPre = gateColumns(*zrPre, 1);
    Result z = succeeded(zPre) ? gate(*zPre, acts[0]) : zPre;
    Result rGate = succeeded(rPre) ? gate(*rPre, acts[0]) : rPre;
    if (failed(z) || failed(rGate))
      return failure();
    Result candidatePre = *xh;
    if (attrs.linearBeforeReset) {
      // h R_h^T + Rb_h; just Rb_h (or nothing) while h is zero.
      Result inner = Value();
      if (*hPart)
        inner = gateColumns(*hPart, 2);
      if (succeeded(inner) && resetBias)
        inner = *inner ? b.binary<AddOp>(*inner, resetBias) : resetBias;
      if (succeeded(inner) && *inner) {
        Result reset = b.binary<MulOp>(*rGate, *inner);
        candidatePre = succeeded(reset) ? b.binary<AddOp>(*xh, *reset) : reset;
      } else if (failed(inner)) {
        return failure();
      }
    } else if (h) {
      Result reset = b.binary<MulOp>(*rGate, h);
      Result product = succeeded(reset) ? b.matmul(*reset, rdHidden, false, true) : reset;
      candidatePre = succeeded(product) ? b.binary<AddOp>(*xh, *product) : product;
    }
    Result candidate = succeeded(candidatePre) ? gate(*candidatePre, acts[1]) : candidatePre;
    if (failed(candidate))
      return failure();
    // (1 - z) * h~ + z * h = h~ + z * (h - h~); h~ - z * h~ while h is zero.
    Result next = h ? b.binary<SubOp>(h, *candidate) : Result(*candidate);
    if (succeeded(next))
      next = b.binary<MulOp>(*z, *next);
    if (succeeded(next))
      next = h ? b.binary<AddOp>(*candidate, *next) : b.binary<SubOp>(*candidate, *next);
    if (failed(next))
      return failure();
    h = *next;
    return h;
  }
  // LSTM: i, o, f, c.
  Result pre = addIfGiven(xPart, *hPart);
  if (failed(pre))
    return failure();
  Result iPre = gateColumns(*pre, 0), oPre = gateColumns(*pre, 1), fPre = gateColumns(*pre, 2),
         cPre = gateColumns(*pre, 3);
  if (failed(iPre) || failed(oPre) || failed(fPre) || failed(cPre))
    return failure();
  Value pI, pO, pF;
  if (pd) {
    Result i = b.slice(pd, {0}, {hidden}, {1}), o = b.slice(pd, {hidden}, {2 * hidden}, {1}),
           f = b.slice(pd, {2 * hidden}, {3 * hidden}, {1});
    if (failed(i) || failed(o) || failed(f))
      return failure();
    pI = *i, pO = *o, pF = *f;
  }
  if (pd && c) {
    Result peepI = b.binary<MulOp>(pI, c), peepF = b.binary<MulOp>(pF, c);
    if (succeeded(peepI))
      iPre = b.binary<AddOp>(*iPre, *peepI);
    if (succeeded(peepF))
      fPre = b.binary<AddOp>(*fPre, *peepF);
    if (failed(peepI) || failed(peepF) || failed(iPre) || failed(fPre))
      return failure();
  }
  Result i = gate(*iPre, acts[0]), f = gate(*fPre, acts[0]), cell = gate(*cPre, acts[1]);
  if (failed(i) || failed(f) || failed(cell))
    return failure();
  Result newC = b.binary<MulOp>(*i, *cell);
  if (succeeded(newC) && c) {
    Result kept = b.binary<MulOp>(*f, c);
    newC = succeeded(kept) ? b.binary<AddOp>(*kept, *newC) : kept;
  }
  if (failed(newC))
    return failure();
  c = *newC;
  if (pd) {
    Result peepO = b.binary<MulOp>(pO, c);
    oPre = succeeded(peepO) ? b.binary<AddOp>(*oPre, *peepO) : peepO;
    if (failed(oPre))
      return failure();
  }
  Result o = gate(*oPre, acts[0]);
  Result squashed = activate(c, acts[2]);
  Result next = succeeded(o) && succeeded(squashed) ? b.binary<MulOp>(*o, *squashed)
                                                   : Result(failure());
  if (failed(next))
    return failure();
  h = *next;
  return h;
}

LogicalResult Unroller::unrollDirection(int64_t d) {
  int64_t width = gates * hidden;
  // The input's product for every step, with the biases that sum outside
  // the gates' products: W's, and R's but GRU's h~ part under
  // linear_before_reset (inside the reset gate's product).
  Result wd = direction(w, d);
  Result rAll = direction(r, d);
  Result flat = b.reshape(x, {steps * batch, inputSize});
  Result xw = succeeded(wd) && succeeded(flat) ? b.matmul(*flat, *wd, false, true)
                                               : Result(failure());
  if (failed(rAll) || failed(xw))
    return failure();
  rd = *rAll;
  resetBias = Value();
  if (kind == CellKind::Gru && !attrs.linearBeforeReset) {
    Result zr = b.slice(rd, {0, 0}, {2 * hidden, hidden}, {1, 1});
    Result hh = b.slice(rd, {2 * hidden, 0}, {3 * hidden, hidden}, {1, 1});
    if (failed(zr) || failed(hh))
      return failure();
    rd = *zr;
    rdHidden = *hh;
  }
  Value xwb = *xw;
  if (bias) {
    Result bd = direction(bias, d);
    Result wb = succeeded(bd) ? b.slice(*bd, {0}, {width}, {1}) : bd;
    Result rb = succeeded(bd) ? b.slice(*bd, {width}, {2 * width}, {1}) : bd;
    if (failed(wb) || failed(rb))
      return failure();
    Result summed = *rb;
    if (kind == CellKind::Gru && attrs.linearBeforeReset) {
      Result zr = b.slice(*rb, {0}, {2 * hidden}, {1});
      Result hh = b.slice(*rb, {2 * hidden}, {3 * hidden}, {1});
      Result zeros = succeeded(hh) ? b.splatLike(*hh, 0) : hh;
      if (failed(zr) || failed(zeros))
        return failure();
      resetBias = *hh;
      summed = b.concat({*zr, *zeros}, 0);
    }
    Result both = succeeded(summed) ? b.binary<AddOp>(*wb, *summed) : summed;
    Result added = succeeded(both) ? b.binary<AddOp>(*xw, *both) : both;
    if (failed(added))
      return failure();
    xwb = *added;
  }
  pd = Value();
  if (peepholes) {
    Result p = direction(peepholes, d);
    if (failed(p))
      return failure();
    pd = *p;
  }
  FailureOr<Value> h = initialState(initialH, d), c = initialState(initialC, d);
  if (failed(h) || failed(c))
    return failure();
  Value hState = *h, cState = *c;
  bool forward = attrs.bidirectional ? d == 0 : attrs.forward;
  SmallVector<Value> &out = outputs.emplace_back(steps);
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = forward ? k : steps - 1 - k;
    Result xPart = b.slice(xwb, {t * batch, 0}, {(t + 1) * batch, width}, {1, 1});
    if (failed(xPart))
      return failure();
    FailureOr<Value> y = step(d, *xPart, hState, cState);
    if (failed(y))
      return failure();
    out[t] = *y;
  }
  finalH.push_back(hState);
  finalC.push_back(cState);
  return success();
}

/// [directions, batch, hidden] of each direction's `states` (layout 1:
/// [batch, directions, hidden]).
Result stackStates(KilnOpBuilder &b, ArrayRef<Value> states, int64_t batch, int64_t hidden,
                   bool batchMajor) {
  SmallVector<Value> parts;
  for (Value state : states) {
    Result part = b.reshape(state, {1, batch, hidden});
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  Result stacked = b.concat(parts, 0);
  if (failed(stacked) || !batchMajor)
    return stacked;
  return b.transpose(*stacked, {1, 0, 2});
}

LogicalResult Unroller::setOutputs() {
  if (node.isOutputUsed(0)) {
    // Y: [steps, directions, batch, hidden] (layout 1: [batch, steps,
    // directions, hidden]).
    SmallVector<Value> perStep;
    for (int64_t t = 0; t < steps; ++t) {
      SmallVector<Value> parts;
      for (int64_t d = 0; d < directions; ++d) {
        Result part = b.reshape(outputs[d][t], {1, 1, batch, hidden});
        if (failed(part))
          return failure();
        parts.push_back(*part);
      }
      Result joined = b.concat(parts, 1);
      if (failed(joined))
        return failure();
      perStep.push_back(*joined);
    }
    Result y = b.concat(perStep, 0);
    if (succeeded(y) && attrs.batchMajor)
      y = b.transpose(*y, {2, 0, 1, 3});
    if (failed(node.setResult(0, y)))
      return failure();
  }
  if (node.getNumOutputs() > 1 && node.isOutputUsed(1) &&
      failed(node.setResult(1, stackStates(b, finalH, batch, hidden, attrs.batchMajor))))
    return failure();
  if (kind == CellKind::Lstm && node.getNumOutputs() > 2 && node.isOutputUsed(2)) {
    // c is still zero only after zero steps, which the input's shape rules out.
    if (failed(node.setResult(2, stackStates(b, finalC, batch, hidden, attrs.batchMajor))))
      return failure();
  }
  return success();
}

LogicalResult Unroller::run() {
  Value input = node.getInput(0);
  if (failed(node.requireFloat(input, "an input")) ||
      failed(node.requireRank(input, 3, "an input")))
    return failure();
  FailureOr<ArrayRef<int64_t>> shape = node.getStaticShape(input, "an input");
  if (failed(shape))
    return failure();
  steps = (*shape)[attrs.batchMajor ? 1 : 0];
  batch = (*shape)[attrs.batchMajor ? 0 : 1];
  inputSize = (*shape)[2];
  directions = attrs.bidirectional ? 2 : 1;
  if (steps < 1 || steps > kMaxUnrolledSteps || batch < 1 || inputSize < 1)
    return node.emitError() << "has an input of shape " << formatIntList(*shape)
                            << ": kiln unrolls sequences of 1 to " << kMaxUnrolledSteps
                            << " steps and needs a batch and input size of at least 1";
  x = input;
  if (attrs.batchMajor) {
    Result timeMajor = b.transpose(input, {1, 0, 2});
    if (failed(timeMajor))
      return failure();
    x = *timeMajor;
  }
  int64_t width = gates * hidden;
  w = node.getInput(1);
  r = node.getInput(2);
  if (failed(requireShape(node, w, x, {directions, width, inputSize},
                          "W (num_directions, " + std::to_string(gates) +
                              " x hidden_size, input_size)")) ||
      failed(requireShape(node, r, x, {directions, width, hidden},
                          "R (num_directions, " + std::to_string(gates) +
                              " x hidden_size, hidden_size)")))
    return failure();
  FailureOr<Value> givenBias =
      readPerDirection(3, 2 * width, -1, "B (num_directions, 2 x " + std::to_string(gates) +
                                             " x hidden_size)", false);
  if (failed(givenBias))
    return failure();
  bias = *givenBias;
  if (node.hasInput(4)) {
    // sequence_lens: kiln runs every sequence to the input's length.
    FailureOr<SmallVector<int64_t>> lengths = node.getConstantInts(4, "sequence_lens");
    if (failed(lengths))
      return failure();
    for (int64_t length : *lengths)
      if (length != steps)
        return node.emitError() << "gives sequence_lens " << formatIntList(*lengths)
                                << ": kiln runs every sequence to the input's " << steps
                                << " steps (pad instead, or export without lengths)";
  }
  FailureOr<Value> h0 = readPerDirection(5, batch, hidden, "initial_h", true);
  if (failed(h0))
    return failure();
  initialH = *h0;
  if (kind == CellKind::Lstm) {
    FailureOr<Value> c0 = readPerDirection(6, batch, hidden, "initial_c", true);
    FailureOr<Value> p =
        succeeded(c0) ? readPerDirection(7, 3 * hidden, -1, "P (num_directions, 3 x "
                                                            "hidden_size)", false)
                      : c0;
    if (failed(p))
      return failure();
    initialC = *c0;
    peepholes = *p;
  }
  for (int64_t d = 0; d < directions; ++d)
    if (failed(unrollDirection(d)))
      return failure();
  return setOutputs();
}

template <CellKind kind> LogicalResult convertRecurrent(OnnxNode &node) {
  FailureOr<LayerAttrs> attrs = readAttrs(node, kind);
  if (failed(attrs))
    return failure();
  return Unroller(node, kind, *attrs).run();
}

constexpr OnnxOpConversion kRecurrentOps[] = {
    {"RNN", 3, 6, 2, "activations clip direction hidden_size layout",
     convertRecurrent<CellKind::Rnn>, 7},
    {"GRU", 3, 6, 2, "activations clip direction hidden_size layout linear_before_reset",
     convertRecurrent<CellKind::Gru>, 7},
    {"LSTM", 3, 8, 3, "activations clip direction hidden_size input_forget layout",
     convertRecurrent<CellKind::Lstm>, 7},
};

} // namespace

ArrayRef<OnnxOpConversion> getOnnxRecurrentOps() { return kRecurrentOps; }

} // namespace kiln
