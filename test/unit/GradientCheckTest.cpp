//===- GradientCheckTest.cpp - kiln-autodiff against finite differences ---===//
//
// Each case builds a small training module whose op under test reads its
// float operands from variables, runs kiln-autodiff alone, compiles the
// result with the whole back end in this process, and runs @train_step
// through the runtime's C API with the arena poisoned (0xFF, NaN). Every
// gradient it returns is compared with central differences of the loss,
// which the reference interpreter evaluates on @forward in float64 with no
// rounding to f32. Inputs are drawn afresh every run; the seed is in the
// failure message.
//
// The loss is reduce_sum(op(x) * w) with w a random feed of the result's
// shape, so that the upstream gradient reaching each rule is a general
// tensor and not all ones (the loss ops are scaled by a random scalar feed
// for the same reason). Ops with kinks (relu, maximum, minimum, reduce_max)
// get inputs kept at least 0.05 from the kink, far beyond the step.
//
// Tolerance, fitted to each op's math: |kiln - numeric| <= tol * max|numeric|
// per gradient tensor (relative to the tensor's largest element, not per
// element, for the reason NumericsTest gives: gradients that cancel carry the
// rounding of their terms). The numeric side is accurate to ~1e-8 of the
// scale (float64, step 1e-4 * max(1, |x|), truncation error of order
// step^2; exact for ops linear in the variable). The compiled side is f32:
//   1e-6  data movement (reshape, slice, concat, gather): one f32 rounding
//         of each value, ~6e-8;
//   2e-6  arithmetic, matmul, reductions, pooling: a few roundings, sums of
//         a few dozen terms (worst seen over 20 seeds: 1.5e-7);
//   4e-6  softmax, layer norm, losses, convolution: longer chains and sums
//         (worst seen: 3.2e-7);
//   1e-5  exp, log, tanh, sigmoid, erf, gelu: MLIR's polynomial
//         approximations, a few ulp each (worst seen: 1.0e-6);
//   2e-3  a round trip through f16 (11-bit significand, 4.9e-4).
// Each keeps >= 10x headroom over the worst error seen (set
// KILN_GRADCHECK_REPORT=1 to print each test's error), and each is far
// below what a wrong rule gives: a sign, a missing factor or a transposed
// operand is off by a sizable fraction of the scale; GELU's tanh derivative
// in place of its erf derivative is off by 7.7e-4 of it (77x the 1e-5).
//===----------------------------------------------------------------------===//

#include "CompiledModelTestSupport.h"
#include "ImportTestBase.h"
#include "reference/ReferenceInterpreter.h"

#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/CompileToArtifact.h"
#include "dialects/Kiln/KilnOps.h"
#include "dialects/Kiln/TrainSpec.h"
#include "passes/Graph/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <cmath>
#include <numeric>
#include <random>

using namespace mlir;

namespace kiln {
namespace {

/// Values of variables or feeds, by name, row-major.
using Values = llvm::StringMap<std::vector<double>>;

/// The text of a training module: variables, @forward's feeds and body, and
/// loss = the sum of the terms added with `weighted` and `scaled`.
class ModuleText {
public:
  /// Declares `@name` and reads it into `%name` at the top of @forward.
  void variable(const std::string &name, const std::string &type) {
    variables += "  kiln.variable @" + name + " : " + type + " init <zeros>\n";
    body += "    %" + name + " = kiln.read @" + name + " : " + type + "\n";
  }

  /// A feed `%name`, fed as `name`.
  void feed(const std::string &name, const std::string &type) {
    if (!arguments.empty())
      arguments += ", ";
    arguments += "%" + name + ": " + type + " {kiln.name = \"" + name + "\"}";
  }

  /// One line of @forward's body.
  void line(const std::string &text) { body += "    " + text + "\n"; }

  /// Adds reduce_sum(value * w) to the loss, w a feed of value's type.
  void weighted(const std::string &value, const std::string &type) {
    std::string k = std::to_string(terms.size());
    feed("w" + k, type);
    std::string axes;
    for (int64_t d = 0, rank = llvm::count(type, 'x'); d < rank; ++d)
      axes += (d ? ", " : "") + std::to_string(d);
    line("%p" + k + " = kiln.mul " + value + ", %w" + k + " : " + type);
    line("%t" + k + " = kiln.reduce_sum %p" + k + " axes [" + axes +
         "] : " + type + " -> tensor<f32>");
    terms.push_back("%t" + k);
  }

  /// Adds scalar * s to the loss, s a scalar feed.
  void scaled(const std::string &scalar) {
    std::string k = std::to_string(terms.size());
    feed("s" + k, "tensor<f32>");
    line("%t" + k + " = kiln.mul " + scalar + ", %s" + k + " : tensor<f32>");
    terms.push_back("%t" + k);
  }

  std::string str() const {
    std::string loss = terms.front(), sums;
    for (size_t k = 1; k < terms.size(); ++k) {
      std::string next = "%loss" + std::to_string(k);
      sums += "    " + next + " = kiln.add " + loss + ", " + terms[k] +
              " : tensor<f32>\n";
      loss = next;
    }
    return "module attributes {kiln.train_spec = {loss = \"loss\"}} {\n" +
           variables + "  func.func @forward(" + arguments +
           ") -> (tensor<f32> {kiln.name = \"loss\"}) {\n" + body + sums +
           "    return " + loss + " : tensor<f32>\n  }\n}\n";
  }

private:
  std::string variables, arguments, body;
  std::vector<std::string> terms;
};

/// One gradient @train_step returns, as the runtime fetched it.
struct FetchedGradient {
  std::vector<double> dense;     // kiln.gradient
  std::vector<double> ids, rows; // kiln.gradient_indices / _rows
  bool sparse = false;
};

class GradientCheckTest : public ImportTestBase {
protected:
  GradientCheckTest() : seed(drawTestSeed()), rng(seed) {}

  std::vector<double> uniform(int64_t n, double low, double high) {
    std::uniform_real_distribution<double> draw(low, high);
    std::vector<double> values(n);
    for (double &v : values)
      v = draw(rng);
    return values;
  }

  /// |x| in [low, high), either sign: away from a kink at 0.
  std::vector<double> awayFromZero(int64_t n, double low, double high) {
    std::vector<double> values = uniform(n, low, high);
    std::bernoulli_distribution negative(0.5);
    for (double &v : values)
      v = negative(rng) ? -v : v;
    return values;
  }

  /// Values in random order, every two at least 0.1 apart: no ties for a max.
  std::vector<double> distinct(int64_t n) {
    std::vector<double> values(n);
    std::iota(values.begin(), values.end(), 0.0);
    std::shuffle(values.begin(), values.end(), rng);
    std::vector<double> jitter = uniform(n, 0, 0.1);
    for (int64_t i = 0; i < n; ++i)
      values[i] = (values[i] - n / 2.0) * 0.2 + jitter[i];
    return values;
  }

  /// Integers in [0, bound).
  std::vector<double> integers(int64_t n, int64_t bound) {
    std::uniform_int_distribution<int64_t> draw(0, bound - 1);
    std::vector<double> values(n);
    for (double &v : values)
      v = static_cast<double>(draw(rng));
    return values;
  }

  /// The reference loss with every input and variable replaced by its
  /// absolute value.
  static double lossOnMagnitudes(ModuleOp module,
                                 llvm::StringMap<reference::Tensor> inputs,
                                 llvm::StringMap<reference::Tensor> variables) {
    for (auto *values : {&inputs, &variables})
      for (auto &entry : *values)
        for (double &v : entry.getValue().data)
          v = std::fabs(v);
    return std::fabs(reference::evaluateForward(module, inputs, variables)
                         .lookup("loss")
                         .data[0]);
  }

  /// Runs kiln-autodiff on `text`, compiles it and runs @train_step on
  /// `given` values (variables and feeds; other floats drawn uniform in
  /// [-2, 2)). Checks that every float variable gets a gradient, sparse
  /// exactly for those in `sparse`, and that each matches central
  /// differences of the reference. Returns the sparse gradients' ids.
  Values checkGradients(const std::string &text, Values given = {},
                        const llvm::StringSet<> &sparse = {}) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: KILN_TEST_SEED=" +
                 std::to_string(seed) + ")");
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << (errors.empty() ? "no error" : errors.front())
                        << "\n"
                        << text;
    if (!module)
      return {};
    OwningOpRef<ModuleOp> trained = module->clone();
    PassManager pm(&context);
    pm.addPass(createKilnAutodiff());
    if (failed(pm.run(*trained))) {
      ADD_FAILURE() << "kiln-autodiff: "
                    << (errors.empty() ? "no error" : errors.front());
      return {};
    }
    llvm::StringMap<int> denseResult, idsResult, rowsResult;
    auto train = trained->lookupSymbol<func::FuncOp>("train_step");
    for (unsigned i = 0; i < train.getNumResults(); ++i) {
      for (auto [attr, map] : {std::make_pair(kGradientAttr, &denseResult),
                               std::make_pair(kGradientIndicesAttr, &idsResult),
                               std::make_pair(kGradientRowsAttr, &rowsResult)})
        if (auto ref = train.getResultAttrOfType<FlatSymbolRefAttr>(i, attr))
          (*map)[ref.getValue()] = i;
    }
    std::string artifactPath = dir.str().str() + "/model.kiln";
    std::unique_ptr<CompiledModel> compiled = compileKernels(*trained, "host", planOptions);
    bool written = compiled && succeeded(finishArtifact(*compiled, *trained)) &&
                   succeeded(writeArtifactFile(compiled->artifact, artifactPath,
                                               trained->getLoc()));
    if (!written) {
      ADD_FAILURE() << "compile: "
                    << (errors.empty() ? "no error" : errors.front());
      return {};
    }

    llvm::StringMap<reference::Tensor> variables, inputs;
    llvm::StringMap<FetchedGradient> gradients;
    double fetchedLoss = NAN;
    auto readFetches = [&](kiln_session *session,
                           const llvm::StringMap<kiln_tensor_info> &fetches) {
      auto read = [&](llvm::StringRef name) {
        auto it = fetches.find(name);
        if (it == fetches.end()) {
          ADD_FAILURE() << "train_step has no fetch " << name.str();
          return std::vector<double>(1, NAN);
        }
        const kiln_tensor_info &info = it->second;
        std::vector<uint8_t> bytes(info.byte_size);
        check(kiln_session_read_fetch(session, "train_step", info.name,
                                      info.dtype, bytes.data(), bytes.size()),
              info.name);
        return decode(info.dtype, bytes);
      };
      auto result = [](int i) { return "result" + std::to_string(i); };
      fetchedLoss = read("loss").front();
      for (auto &entry : denseResult)
        gradients[entry.getKey()].dense = read(result(entry.getValue()));
      for (auto &entry : idsResult) {
        FetchedGradient &g = gradients[entry.getKey()];
        g.sparse = true;
        g.ids = read(result(entry.getValue()));
        g.rows = read(result(rowsResult.lookup(entry.getKey())));
      }
    };
    if (!run(artifactPath, given, variables, inputs, readFetches))
      return {};

    double loss = reference::evaluateForward(*module, inputs, variables)
                      .lookup("loss")
                      .data[0];
    // The loss is a sum of products that cancel (random weights of either
    // sign), so its f32 rounding scales with the sum of the products'
    // magnitudes, not with the loss: the same graph on every value's
    // magnitude bounds that sum for the products, convolutions and sums
    // where cancellation happens.
    double magnitude = lossOnMagnitudes(*module, inputs, variables);
    EXPECT_NEAR(fetchedLoss, loss,
                1e-5 * std::max(1.0, std::fabs(loss)) +
                    (std::isfinite(magnitude) ? 1e-6 * magnitude : 0.0))
        << "loss (the loss on magnitudes: " << magnitude << ")";

    Values sparseIds;
    for (VariableOp variable : module->getOps<VariableOp>()) {
      llvm::StringRef name = variable.getSymName();
      SCOPED_TRACE("gradient of @" + name.str());
      auto it = gradients.find(name);
      if (it == gradients.end()) {
        ADD_FAILURE() << "@train_step returns no gradient";
        continue;
      }
      EXPECT_EQ(it->second.sparse, sparse.contains(name)) << "sparse";
      reference::Tensor &value = variables[name];
      std::vector<double> got = it->second.dense;
      if (it->second.sparse) {
        got = scatterRows(it->second.ids, it->second.rows, value.shape);
        sparseIds[name] = it->second.ids;
      }
      compare(got, numericGradient(*module, inputs, variables, name));
    }
    return sparseIds;
  }

  /// Loads the artifact, writes the variables, binds the feeds and runs
  /// @train_step on a poisoned arena; `read` reads its fetches. False when
  /// the artifact did not load (reported).
  bool run(const std::string &artifactPath, const Values &given,
           llvm::StringMap<reference::Tensor> &variables,
           llvm::StringMap<reference::Tensor> &inputs,
           llvm::function_ref<void(kiln_session *,
                                   const llvm::StringMap<kiln_tensor_info> &)>
               read) {
    kiln_artifact *artifact = nullptr;
    check(kiln_artifact_load(artifactPath.c_str(), &artifact), "load");
    if (!artifact)
      return false;
    kiln_session *session = nullptr;
    check(kiln_session_create(artifact, &session), "session");
    if (!session) {
      kiln_artifact_free(artifact);
      return false;
    }
    check(kiln_session_run(session, "init"), "init");

    auto valuesFor = [&](const kiln_tensor_info &info) {
      size_t n = info.byte_size / elementBytes(info.dtype);
      auto it = given.find(info.name);
      if (it != given.end()) {
        EXPECT_EQ(it->second.size(), n) << info.name;
        return it->second;
      }
      EXPECT_TRUE(semanticsOf(info.dtype))
          << info.name << ": integer feeds must be given";
      return uniform(n, -2, 2);
    };
    auto tensorOf = [](const kiln_tensor_info &info,
                       std::vector<double> values) {
      return reference::Tensor{
          std::vector<int64_t>(info.shape, info.shape + info.rank),
          std::move(values)};
    };
    size_t count = 0;
    check(kiln_artifact_variable_count(artifact, &count), "variables");
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      check(kiln_artifact_variable_info(artifact, i, &info), "variable info");
      std::vector<double> values = valuesFor(info);
      std::vector<uint8_t> bytes = encode(info.dtype, values);
      check(kiln_session_write_variable(session, info.name, info.dtype,
                                        bytes.data(), bytes.size()),
            info.name);
      variables[info.name] = tensorOf(info, values);
    }

    check(kiln_session_fill_arena(session, 0xFF), "poison");
    check(
        kiln_artifact_binding_count(artifact, "train_step", KILN_FEED, &count),
        "feeds");
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      check(kiln_artifact_binding_info(artifact, "train_step", KILN_FEED, i,
                                       &info),
            "feed");
      std::vector<double> values = valuesFor(info);
      std::vector<uint8_t> bytes = encode(info.dtype, values);
      check(kiln_session_bind_feed(session, "train_step", info.name, info.dtype,
                                   bytes.data(), bytes.size()),
            info.name);
      inputs[info.name] = tensorOf(info, values);
    }
    check(kiln_session_run(session, "train_step"), "train_step");

    llvm::StringMap<kiln_tensor_info> fetches;
    check(
        kiln_artifact_binding_count(artifact, "train_step", KILN_FETCH, &count),
        "fetches");
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      check(kiln_artifact_binding_info(artifact, "train_step", KILN_FETCH, i,
                                       &info),
            "fetch");
      fetches[info.name] = info;
    }
    read(session, fetches);
    kiln_session_free(session);
    kiln_artifact_free(artifact);
    return true;
  }

  /// The dense gradient of sparse rows: rows of one id summed. An embedding
  /// bag's padding (-1) must carry a zero row.
  static std::vector<double> scatterRows(const std::vector<double> &ids,
                                         const std::vector<double> &rows,
                                         const std::vector<int64_t> &shape) {
    int64_t size = 1;
    for (int64_t d : shape)
      size *= d;
    std::vector<double> dense(size, 0.0);
    int64_t width = size / shape[0];
    EXPECT_EQ(rows.size(), ids.size() * width) << "rows per id";
    for (size_t i = 0; i < ids.size() && (i + 1) * width <= rows.size(); ++i) {
      int64_t id = static_cast<int64_t>(ids[i]);
      if (id == -1) {
        for (int64_t j = 0; j < width; ++j)
          EXPECT_EQ(rows[i * width + j], 0.0) << "padding's row at " << i;
        continue;
      }
      if (id < 0 || id >= shape[0]) {
        ADD_FAILURE() << "id " << id << " out of range";
        continue;
      }
      for (int64_t j = 0; j < width; ++j)
        dense[id * width + j] += rows[i * width + j];
    }
    return dense;
  }

  /// d loss / d variable by central differences in float64.
  static std::vector<double> numericGradient(
      ModuleOp module, const llvm::StringMap<reference::Tensor> &inputs,
      llvm::StringMap<reference::Tensor> variables, llvm::StringRef name) {
    auto loss = [&] {
      return reference::evaluateForward(module, inputs, variables,
                                        reference::Rounding::None)
          .lookup("loss")
          .data[0];
    };
    std::vector<double> &x = variables[name].data;
    std::vector<double> gradient(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double saved = x[i], h = 1e-4 * std::max(1.0, std::fabs(saved));
      x[i] = saved + h;
      double up = loss();
      x[i] = saved - h;
      double down = loss();
      x[i] = saved;
      gradient[i] = (up - down) / (2 * h);
    }
    return gradient;
  }

  void compare(const std::vector<double> &got, const std::vector<double> &want) {
    ASSERT_EQ(got.size(), want.size());
    double scale = 0, worst = 0;
    for (double v : want)
      scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::fabs(got[i] - want[i]));
    if (std::getenv("KILN_GRADCHECK_REPORT"))
      std::cerr << "GRADCHECK " << ::testing::UnitTest::GetInstance()->current_test_info()->name()
                << " " << worst / std::max(scale, 1e-30) << "\n";
    double allowed = tolerance * scale + 1e-9;
    int failures = 0;
    for (size_t i = 0; i < got.size() && failures < 5; ++i) {
      double error = std::fabs(got[i] - want[i]);
      if (!(error <= allowed)) {
        ++failures;
        ADD_FAILURE() << "[" << i << "] = " << got[i] << ", numeric " << want[i]
                      << " (error " << error << ", allowed " << allowed << ")";
      }
    }
  }

  unsigned seed;
  std::mt19937_64 rng;
  /// Allowed error relative to the gradient's largest element; each test
  /// sets its own (see the file comment).
  double tolerance = 0;
  /// How the module compiles (convolutions as library calls or kernels).
  PlanOptions planOptions;
};

TEST_F(GradientCheckTest, BinaryElementwise) {
  tolerance = 2e-6;
  const char *type = "tensor<3x5xf32>";
  ModuleText m;
  for (const char *op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
    std::string a = std::string(op) + "_a", b = std::string(op) + "_b";
    m.variable(a, type);
    m.variable(b, type);
    m.line("%" + std::string(op) + " = kiln." + op + " %" + a + ", %" + b +
           " : " + type);
    m.weighted("%" + std::string(op), type);
  }
  Values given;
  given["div_b"] = awayFromZero(15, 0.5, 2);
  // maximum/minimum: operands at least 0.05 apart, either one larger.
  for (const char *op : {"maximum", "minimum"}) {
    std::vector<double> a = uniform(15, -2, 2), gap = awayFromZero(15, 0.05, 1);
    std::vector<double> b(15);
    for (int i = 0; i < 15; ++i)
      b[i] = a[i] + gap[i];
    given[std::string(op) + "_a"] = a;
    given[std::string(op) + "_b"] = b;
  }
  checkGradients(m.str(), given);
}

TEST_F(GradientCheckTest, UnaryElementwise) {
  tolerance = 1e-5;
  const char *type = "tensor<4x6xf32>";
  ModuleText m;
  Values given;
  auto unary = [&](const std::string &name, const std::string &op) {
    m.variable(name + "_x", type);
    m.line("%" + name + " = kiln." + op + " : " + type);
    m.weighted("%" + name, type);
  };
  for (const char *op :
       {"neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "sin", "cos", "atan"})
    unary(op, std::string(op) + " %" + op + "_x");
  unary("gelu", "gelu %gelu_x approximation(exact)");
  unary("gelu_tanh", "gelu %gelu_tanh_x approximation(tanh)");
  unary("erf", "erf %erf_x");
  unary("abs", "abs %abs_x");
  for (const char *op : {"log", "sqrt", "rsqrt"})
    given[std::string(op) + "_x"] = uniform(24, 0.2, 3);
  given["relu_x"] = awayFromZero(24, 0.05, 2);
  given["abs_x"] = awayFromZero(24, 0.05, 2);
  given["erf_x"] = uniform(24, -3, 3);
  given["gelu_x"] = uniform(24, -4, 4);
  given["gelu_tanh_x"] = uniform(24, -4, 4);
  for (const char *op : {"sin", "cos", "atan"})
    given[std::string(op) + "_x"] = uniform(24, -4, 4);
  checkGradients(m.str(), given);
}

/// pow's two gradients: b a^(b-1) and a^b log(a), with a positive base.
TEST_F(GradientCheckTest, Pow) {
  tolerance = 2e-6;
  const char *type = "tensor<3x5xf32>";
  ModuleText m;
  m.variable("a", type);
  m.variable("b", type);
  m.line("%p = kiln.pow %a, %b : " + std::string(type));
  m.weighted("%p", type);
  Values given;
  given["a"] = uniform(15, 0.3, 2.5);
  given["b"] = uniform(15, -1.5, 2.5);
  checkGradients(m.str(), given);
}

/// mod's gradients (1 and -(a - r) / b) for the floored and the truncated
/// remainder, with a / b kept 0.2 from an integer (the remainder jumps
/// there).
TEST_F(GradientCheckTest, Mod) {
  tolerance = 2e-6;
  const char *type = "tensor<4x5xf32>";
  ModuleText m;
  Values given;
  for (const char *name : {"floor", "trunc"}) {
    std::string a = std::string(name) + "_a", b = std::string(name) + "_b";
    m.variable(a, type);
    m.variable(b, type);
    m.line("%" + std::string(name) + " = kiln.mod %" + a + ", %" + b +
           (std::string(name) == "trunc" ? " {fmod}" : "") + " : " + type);
    m.weighted("%" + std::string(name), type);
    std::vector<double> divisor = awayFromZero(20, 0.7, 1.5);
    std::vector<double> whole = uniform(20, -3, 3), frac = uniform(20, 0.2, 0.8);
    std::vector<double> dividend(20);
    for (int i = 0; i < 20; ++i)
      dividend[i] = divisor[i] * (std::floor(whole[i]) + frac[i]);
    given[a] = dividend;
    given[b] = divisor;
  }
  checkGradients(m.str(), given);
}

TEST_F(GradientCheckTest, SelectAndCast) {
  tolerance = 2e-3;
  ModuleText m;
  m.variable("on_true", "tensor<3x7xf32>");
  m.variable("on_false", "tensor<3x7xf32>");
  m.variable("x", "tensor<3x7xf32>");
  m.feed("mask", "tensor<3x7xi1>");
  m.line("%sel = kiln.select %mask, %on_true, %on_false : tensor<3x7xi1>, "
         "tensor<3x7xf32>");
  m.weighted("%sel", "tensor<3x7xf32>");
  // Through f16 and back: the gradient is cast the other way twice (f16
  // keeps 11 bits, 4.9e-4 relative, inside the tolerance).
  m.line("%half = kiln.cast %x : tensor<3x7xf32> to tensor<3x7xf16>");
  m.line("%back = kiln.cast %half : tensor<3x7xf16> to tensor<3x7xf32>");
  m.weighted("%back", "tensor<3x7xf32>");
  Values given;
  given["mask"] = integers(21, 2);
  checkGradients(m.str(), given);
}

TEST_F(GradientCheckTest, Matmul) {
  tolerance = 2e-6;
  ModuleText m;
  auto matmul = [&](const std::string &name, const std::string &lhs,
                    const std::string &rhs, const std::string &flags,
                    const std::string &result) {
    m.variable(name + "_a", lhs);
    m.variable(name + "_b", rhs);
    m.line("%" + name + " = kiln.matmul %" + name + "_a, %" + name + "_b " +
           flags + " : (" + lhs + ", " + rhs + ") -> " + result);
    m.weighted("%" + name, result);
  };
  matmul("plain", "tensor<3x4xf32>", "tensor<4x5xf32>", "", "tensor<3x5xf32>");
  matmul("ta", "tensor<4x3xf32>", "tensor<4x5xf32>", "{transpose_a}",
         "tensor<3x5xf32>");
  matmul("tb", "tensor<3x4xf32>", "tensor<5x4xf32>", "{transpose_b}",
         "tensor<3x5xf32>");
  matmul("tatb", "tensor<4x3xf32>", "tensor<5x4xf32>",
         "{transpose_a, transpose_b}", "tensor<3x5xf32>");
  matmul("batched", "tensor<2x3x4xf32>", "tensor<2x4x5xf32>", "",
         "tensor<2x3x5xf32>");
  matmul("batched_tatb", "tensor<2x4x3xf32>", "tensor<2x5x4xf32>",
         "{transpose_a, transpose_b}", "tensor<2x3x5xf32>");
  matmul("shared", "tensor<2x3x4xf32>", "tensor<4x5xf32>", "",
         "tensor<2x3x5xf32>");
  matmul("shared_tb", "tensor<2x3x4xf32>", "tensor<5x4xf32>", "{transpose_b}",
         "tensor<2x3x5xf32>");
  checkGradients(m.str());
}

TEST_F(GradientCheckTest, ShapeOps) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("v", "tensor<4xf32>");
  m.variable("col", "tensor<3x1x4xf32>");
  m.variable("row", "tensor<1x4xf32>");
  m.variable("r", "tensor<2x3x4xf32>");
  m.variable("t", "tensor<2x3x4xf32>");
  m.variable("s", "tensor<4x6x9xf32>");
  m.line("%flat = kiln.reshape %r : tensor<2x3x4xf32> -> tensor<6x4xf32>");
  m.weighted("%flat", "tensor<6x4xf32>");
  // Leading dimensions added, a size-1 dimension stretched, and both.
  m.line("%lead = kiln.broadcast %v : tensor<4xf32> -> tensor<3x2x4xf32>");
  m.weighted("%lead", "tensor<3x2x4xf32>");
  m.line("%stretch = kiln.broadcast %col : tensor<3x1x4xf32> -> "
         "tensor<3x5x4xf32>");
  m.weighted("%stretch", "tensor<3x5x4xf32>");
  m.line("%both = kiln.broadcast %row : tensor<1x4xf32> -> tensor<2x3x4xf32>");
  m.weighted("%both", "tensor<2x3x4xf32>");
  m.line("%perm = kiln.transpose %t [2, 0, 1] : tensor<2x3x4xf32> -> "
         "tensor<4x2x3xf32>");
  m.weighted("%perm", "tensor<4x2x3xf32>");
  // Whole trailing rows: the gradient's padding is one contiguous block.
  m.line(
      "%rows = kiln.slice %s start [1, 0, 0] limit [4, 6, 9] step [1, 1, 1] : "
      "tensor<4x6x9xf32> -> tensor<3x6x9xf32>");
  m.weighted("%rows", "tensor<3x6x9xf32>");
  checkGradients(m.str());
}

/// Steps above 1 and a start in the last dimension: the gradient is a pad
/// with interior padding, scattered into zeros with strides (a lowering that
/// copies between strided views leaves a call to MLIR's `memrefCopy`, which
/// the kernels' shared object cannot resolve).
TEST_F(GradientCheckTest, StridedSlice) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("s", "tensor<4x6x9xf32>");
  m.line("%sl = kiln.slice %s start [1, 0, 1] limit [4, 6, 9] step [1, 2, 3] : "
         "tensor<4x6x9xf32> -> tensor<3x3x3xf32>");
  m.weighted("%sl", "tensor<3x3x3xf32>");
  checkGradients(m.str());
}

/// concat's gradient is one slice of the upstream gradient per input; the
/// first starts at 0 with step 1 on the concat axis and is shorter than the
/// gradient (a slice lowered through an indexing map folded to the identity
/// there, and linalg took the loop bound from the input: 13 instead of 4).
TEST_F(GradientCheckTest, Concat) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("x", "tensor<2x3x4xf32>");
  m.variable("y", "tensor<2x3x5xf32>");
  m.variable("z", "tensor<2x3x4xf32>");
  m.line("%cat = kiln.concat %x, %y, %z axis = 2 : (tensor<2x3x4xf32>, "
         "tensor<2x3x5xf32>, "
         "tensor<2x3x4xf32>) -> tensor<2x3x13xf32>");
  m.weighted("%cat", "tensor<2x3x13xf32>");
  checkGradients(m.str());
}

TEST_F(GradientCheckTest, ConcatOfOneValueTwice) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("x", "tensor<2x3x4xf32>");
  m.variable("y", "tensor<2x3x5xf32>");
  // x twice: its two slices of the gradient add up.
  m.line("%cat = kiln.concat %x, %y, %x axis = 2 : (tensor<2x3x4xf32>, "
         "tensor<2x3x5xf32>, "
         "tensor<2x3x4xf32>) -> tensor<2x3x13xf32>");
  m.weighted("%cat", "tensor<2x3x13xf32>");
  checkGradients(m.str());
}

TEST_F(GradientCheckTest, Reductions) {
  tolerance = 2e-6;
  const char *type = "tensor<4x5x6xf32>";
  ModuleText m;
  auto reduce = [&](const std::string &name, const std::string &op,
                    const std::string &axes, const std::string &result) {
    m.variable(name + "_x", type);
    m.line("%" + name + " = kiln." + op + " %" + name + "_x axes " + axes +
           " : " + type + " -> " + result);
    m.weighted("%" + name, result);
  };
  reduce("sum", "reduce_sum", "[1]", "tensor<4x6xf32>");
  reduce("sum_keep", "reduce_sum", "[0, 2] {keep_dims}", "tensor<1x5x1xf32>");
  reduce("mean", "reduce_mean", "[2]", "tensor<4x5xf32>");
  reduce("mean_keep", "reduce_mean", "[0, 2] {keep_dims}", "tensor<1x5x1xf32>");
  reduce("max", "reduce_max", "[2]", "tensor<4x5xf32>");
  reduce("max_keep", "reduce_max", "[0, 1] {keep_dims}", "tensor<1x1x6xf32>");
  Values given;
  given["max_x"] = distinct(120);
  given["max_keep_x"] = distinct(120);
  checkGradients(m.str(), given);
}

TEST_F(GradientCheckTest, SoftmaxAndLogSoftmax) {
  tolerance = 4e-6;
  const char *type = "tensor<3x4x5xf32>";
  ModuleText m;
  for (auto [name, op, axis] : {std::make_tuple("sm", "softmax", 2),
                                std::make_tuple("sm0", "softmax", 0),
                                std::make_tuple("lsm", "log_softmax", 1),
                                std::make_tuple("lsm2", "log_softmax", 2)}) {
    m.variable(std::string(name) + "_x", type);
    m.line("%" + std::string(name) + " = kiln." + op + " %" + name +
           "_x axis = " + std::to_string(axis) + " : " + type);
    m.weighted("%" + std::string(name), type);
  }
  checkGradients(m.str());
}

TEST_F(GradientCheckTest, LayerNorm) {
  tolerance = 4e-6;
  ModuleText m;
  m.variable("x", "tensor<3x4x6xf32>");
  m.variable("g", "tensor<6xf32>");
  m.variable("b", "tensor<6xf32>");
  m.line("%ln = kiln.layer_norm %x, %g, %b axis = 2 epsilon = 1.0e-05 : "
         "(tensor<3x4x6xf32>, "
         "tensor<6xf32>, tensor<6xf32>) -> tensor<3x4x6xf32>");
  m.weighted("%ln", "tensor<3x4x6xf32>");
  // No bias, normalized over the last two dimensions.
  m.variable("x2", "tensor<3x4x6xf32>");
  m.variable("g2", "tensor<4x6xf32>");
  m.line("%ln2 = kiln.layer_norm %x2, %g2 axis = 1 epsilon = 1.0e-05 : "
         "(tensor<3x4x6xf32>, "
         "tensor<4x6xf32>) -> tensor<3x4x6xf32>");
  m.weighted("%ln2", "tensor<3x4x6xf32>");
  checkGradients(m.str());
}

/// Logits [B, T, C] against labels [B, T]: the mean over every token.
TEST_F(GradientCheckTest, SequenceCrossEntropy) {
  tolerance = 4e-6;
  ModuleText m;
  m.variable("logits", "tensor<2x3x5xf32>");
  m.feed("labels", "tensor<2x3xi64>");
  m.line("%sce = kiln.softmax_cross_entropy %logits, %labels : (tensor<2x3x5xf32>, "
         "tensor<2x3xi64>) -> tensor<f32>");
  m.scaled("%sce");
  Values given;
  given["labels"] = integers(6, 5);
  given["s0"] = uniform(1, 0.5, 2);
  checkGradients(m.str(), given);
}

/// A loss with an ignore_index over [2, 3, 5] logits: positions labelled
/// -100 (and, in the second, the class 2 it ignores) add nothing to the
/// loss or the gradient, and the mean is over the others. The labels are
/// fed as the runtime checks them (the ignored label besides the classes).
TEST_F(GradientCheckTest, CrossEntropyIgnoringLabels) {
  tolerance = 4e-6;
  ModuleText m;
  m.variable("logits", "tensor<2x3x5xf32>");
  m.feed("labels", "tensor<2x3xi64>");
  m.line("%sce = kiln.softmax_cross_entropy %logits, %labels {ignore_index = -100 : i64} : "
         "(tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<f32>");
  m.scaled("%sce");
  m.variable("inside", "tensor<4x5xf32>");
  m.feed("classes", "tensor<4xi32>");
  m.line("%in = kiln.softmax_cross_entropy %inside, %classes {ignore_index = 2 : i64} : "
         "(tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>");
  m.scaled("%in");
  Values given;
  given["labels"] = {3, -100, 0, -100, 4, 1};
  given["classes"] = {2, 0, 2, 4};
  given["s0"] = uniform(1, 0.5, 2);
  given["s1"] = uniform(1, 0.5, 2);
  checkGradients(m.str(), given);
}

/// Label smoothing (the target (1 - e) one_hot + e / C): alone over
/// [4, 5] logits, and with an ignore_index over [2, 3, 5].
TEST_F(GradientCheckTest, CrossEntropySmoothingLabels) {
  tolerance = 4e-6;
  ModuleText m;
  m.variable("logits", "tensor<4x5xf32>");
  m.feed("labels", "tensor<4xi32>");
  m.line("%sce = kiln.softmax_cross_entropy %logits, %labels {label_smoothing = 0.2 : f64} : "
         "(tensor<4x5xf32>, tensor<4xi32>) -> tensor<f32>");
  m.scaled("%sce");
  m.variable("tokens", "tensor<2x3x5xf32>");
  m.feed("ids", "tensor<2x3xi64>");
  m.line("%both = kiln.softmax_cross_entropy %tokens, %ids {ignore_index = -100 : i64, "
         "label_smoothing = 0.1 : f64} : (tensor<2x3x5xf32>, tensor<2x3xi64>) -> tensor<f32>");
  m.scaled("%both");
  Values given;
  given["labels"] = integers(4, 5);
  given["ids"] = {1, -100, 4, 0, -100, 2};
  given["s0"] = uniform(1, 0.5, 2);
  given["s1"] = uniform(1, 0.5, 2);
  checkGradients(m.str(), given);
}

TEST_F(GradientCheckTest, Losses) {
  tolerance = 4e-6;
  ModuleText m;
  m.variable("logits", "tensor<4x5xf32>");
  m.feed("labels", "tensor<4xi32>");
  m.line(
      "%sce = kiln.softmax_cross_entropy %logits, %labels : (tensor<4x5xf32>, "
      "tensor<4xi32>) -> tensor<f32>");
  m.scaled("%sce");
  m.variable("bce_x", "tensor<3x4xf32>");
  m.variable("bce_t", "tensor<3x4xf32>");
  m.line("%bce = kiln.sigmoid_cross_entropy %bce_x, %bce_t : tensor<3x4xf32> "
         "-> tensor<f32>");
  m.scaled("%bce");
  m.variable("mse_p", "tensor<3x4xf32>");
  m.variable("mse_t", "tensor<3x4xf32>");
  m.line("%mse = kiln.mean_squared_error %mse_p, %mse_t : tensor<3x4xf32> -> "
         "tensor<f32>");
  m.scaled("%mse");
  Values given;
  given["labels"] = integers(4, 5);
  given["bce_t"] = uniform(12, 0, 1);
  for (const char *s : {"s0", "s1", "s2"})
    given[s] = uniform(1, 0.5, 2);
  checkGradients(m.str(), given);
}

/// A table read only by axis-0 gathers: sparse ids and rows, one per
/// looked-up id (repeats kept), from two lookups.
TEST_F(GradientCheckTest, GatherSparseRows) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("table", "tensor<6x3xf32>");
  m.feed("ids", "tensor<2x4xi64>");
  m.feed("more", "tensor<5xi64>");
  m.line("%rows = kiln.gather %table[%ids] : (tensor<6x3xf32>, "
         "tensor<2x4xi64>) -> "
         "tensor<2x4x3xf32>");
  m.weighted("%rows", "tensor<2x4x3xf32>");
  m.line("%more_rows = kiln.gather %table[%more] : (tensor<6x3xf32>, "
         "tensor<5xi64>) -> "
         "tensor<5x3xf32>");
  m.line("%sq = kiln.mul %more_rows, %more_rows : tensor<5x3xf32>");
  m.weighted("%sq", "tensor<5x3xf32>");
  Values given;
  given["ids"] = integers(8, 6);
  given["ids"][5] = given["ids"][1]; // at least one repeat
  given["more"] = integers(5, 6);
  given["more"][4] = given["ids"][0];
  Values ids = checkGradients(m.str(), given, {"table"});
  // Duplicates are not summed: one id per lookup, all 13 of them.
  std::vector<double> all = ids.lookup("table");
  std::sort(all.begin(), all.end());
  std::vector<double> want = given["ids"];
  llvm::append_range(want, given["more"]);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);
}

/// A table also read by a matmul (tied embeddings): one dense gradient,
/// the gathered rows scattered and the matmul's added.
TEST_F(GradientCheckTest, GatherDenseWhenTableIsAlsoMultiplied) {
  tolerance = 2e-6;
  ModuleText m;
  m.variable("emb", "tensor<5x3xf32>");
  m.feed("ids", "tensor<6xi64>");
  m.line("%h = kiln.gather %emb[%ids] : (tensor<5x3xf32>, tensor<6xi64>) -> "
         "tensor<6x3xf32>");
  m.line("%logits = kiln.matmul %h, %emb {transpose_b} : (tensor<6x3xf32>, "
         "tensor<5x3xf32>) "
         "-> tensor<6x5xf32>");
  m.weighted("%logits", "tensor<6x5xf32>");
  Values given;
  given["ids"] = integers(6, 5);
  given["ids"][3] = given["ids"][0];
  checkGradients(m.str(), given);
}

/// Embedding bags, each combiner, read only by bags: sparse ids (padding
/// kept as -1, with zero rows) and one row per id. Lists include repeats,
/// padding and one list that is all padding.
TEST_F(GradientCheckTest, EmbeddingBagSparseRows) {
  tolerance = 2e-6;
  for (const char *combiner : {"sum", "mean", "sqrtn"}) {
    SCOPED_TRACE(combiner);
    ModuleText m;
    m.variable("table", "tensor<7x3xf32>");
    m.feed("ids", "tensor<4x5xi64>");
    m.line(std::string("%bag = kiln.embedding_bag %table[%ids] combiner = ") + combiner +
           " : (tensor<7x3xf32>, tensor<4x5xi64>) -> tensor<4x3xf32>");
    m.weighted("%bag", "tensor<4x3xf32>");
    Values given;
    given["ids"] = integers(20, 7);
    given["ids"][1] = given["ids"][0]; // a repeat within a list
    for (int k : {3, 4, 9, 15, 16, 17, 18, 19})
      given["ids"][k] = -1; // padding; list 3 is empty
    Values ids = checkGradients(m.str(), given, {"table"});
    std::vector<double> all = ids.lookup("table");
    std::sort(all.begin(), all.end());
    std::vector<double> want = given["ids"];
    std::sort(want.begin(), want.end());
    EXPECT_EQ(all, want);
  }
}

/// A table read by a bag and by a matmul: one dense gradient, the bag's
/// rows scattered (padding nowhere) and the matmul's added.
TEST_F(GradientCheckTest, EmbeddingBagDenseWhenTableIsAlsoMultiplied) {
  tolerance = 2e-6;
  ModuleText m;
  m.variable("emb", "tensor<5x3xf32>");
  m.feed("ids", "tensor<3x4xi64>");
  m.line("%h = kiln.embedding_bag %emb[%ids] combiner = mean : (tensor<5x3xf32>, "
         "tensor<3x4xi64>) -> tensor<3x3xf32>");
  m.line("%logits = kiln.matmul %h, %emb {transpose_b} : (tensor<3x3xf32>, "
         "tensor<5x3xf32>) -> tensor<3x5xf32>");
  m.weighted("%logits", "tensor<3x5xf32>");
  Values given;
  given["ids"] = integers(12, 5);
  given["ids"][2] = given["ids"][3] = given["ids"][7] = -1;
  checkGradients(m.str(), given);
}

/// Gathers along axis 1 (a dense gradient through transposes) and
/// gather_elements with negative and repeated indices.
TEST_F(GradientCheckTest, GatherAlongAxisAndGatherElements) {
  tolerance = 1e-6;
  ModuleText m;
  m.variable("x", "tensor<3x5x2xf32>");
  m.feed("cols", "tensor<2x2xi64>");
  m.line("%g = kiln.gather %x[%cols] {axis = 1 : i64} : (tensor<3x5x2xf32>, "
         "tensor<2x2xi64>) -> tensor<3x2x2x2xf32>");
  m.weighted("%g", "tensor<3x2x2x2xf32>");
  m.variable("y", "tensor<3x5xf32>");
  m.feed("idx", "tensor<2x4xi32>");
  m.line("%e = kiln.gather_elements %y[%idx] axis = 1 : (tensor<3x5xf32>, "
         "tensor<2x4xi32>) -> tensor<2x4xf32>");
  m.weighted("%e", "tensor<2x4xf32>");
  Values given;
  given["cols"] = integers(4, 5);
  given["cols"][3] = given["cols"][0];
  given["idx"] = integers(8, 10);
  for (double &i : given["idx"])
    i -= 5; // [-5, 5): negative counts from the end
  checkGradients(m.str(), given);
}

/// conv's data and filter gradients: padding, strides, dilation, groups,
/// one and two spatial dimensions; through the convolution library and
/// through the generated kernels.
TEST_F(GradientCheckTest, Convolution) {
  tolerance = 4e-6;
  ModuleText m;
  auto conv = [&](const std::string &name, const std::string &x, const std::string &w,
                  const std::string &window, const std::string &result) {
    m.variable(name + "_x", x);
    m.variable(name + "_w", w);
    m.line("%" + name + " = kiln.conv %" + name + "_x, %" + name + "_w " + window +
           " : (" + x + ", " + w + ") -> " + result);
    m.weighted("%" + name, result);
  };
  conv("same", "tensor<2x3x5x6xf32>", "tensor<4x3x3x3xf32>",
       "strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]",
       "tensor<2x4x5x6xf32>");
  conv("strided", "tensor<2x3x7x6xf32>", "tensor<2x3x3x2xf32>",
       "strides [2, 3] dilations [1, 1] pad_low [0, 1] pad_high [2, 0]",
       "tensor<2x2x4x2xf32>");
  conv("dilated", "tensor<1x2x7x7xf32>", "tensor<3x2x2x3xf32>",
       "strides [1, 2] dilations [2, 2] pad_low [1, 0] pad_high [0, 1]",
       "tensor<1x3x6x2xf32>");
  conv("grouped", "tensor<2x4x5x5xf32>", "tensor<6x2x3x3xf32>",
       "strides [1, 1] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] {groups = 2 : i64}",
       "tensor<2x6x5x5xf32>");
  conv("conv1d", "tensor<2x3x9xf32>", "tensor<4x3x3xf32>",
       "strides [2] dilations [2] pad_low [2] pad_high [1]", "tensor<2x4x4xf32>");
  checkGradients(m.str());
  // The same gradients from the generated kernels (what other element types
  // and kilnc --conv=generated use) rather than the library.
  planOptions.convolutionLibrary = false;
  checkGradients(m.str());
}

/// Pooling gradients: max to each window's maximum (inputs distinct, so no
/// ties) with overlapping windows, padding and ceil mode; average with and
/// without the padding in the divisor.
TEST_F(GradientCheckTest, Pooling) {
  tolerance = 2e-6;
  ModuleText m;
  auto pool = [&](const std::string &name, const std::string &op, const std::string &x,
                  const std::string &window, const std::string &result) {
    m.variable(name + "_x", x);
    m.line("%" + name + " = kiln." + op + " %" + name + "_x " + window + " : " + x +
           " -> " + result);
    m.weighted("%" + name, result);
  };
  pool("max", "max_pool", "tensor<2x3x6x7xf32>",
       "kernel [2, 2] strides [2, 2] dilations [1, 1] pad_low [0, 0] pad_high [0, 0]",
       "tensor<2x3x3x3xf32>");
  pool("max_overlap", "max_pool", "tensor<2x2x7x7xf32>",
       "kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1] "
       "{ceil_mode}",
       "tensor<2x2x4x4xf32>");
  pool("max1d", "max_pool", "tensor<2x3x9xf32>",
       "kernel [3] strides [2] dilations [2] pad_low [1] pad_high [1]",
       "tensor<2x3x4xf32>");
  pool("avg", "avg_pool", "tensor<2x3x7x7xf32>",
       "kernel [3, 3] strides [2, 2] dilations [1, 1] pad_low [1, 1] pad_high [1, 1]",
       "tensor<2x3x4x4xf32>");
  pool("avg_exclude", "avg_pool", "tensor<2x3x7x6xf32>",
       "kernel [3, 2] strides [2, 1] dilations [1, 1] pad_low [1, 0] pad_high [1, 1] "
       "{ceil_mode, exclude_pad}",
       "tensor<2x3x4x6xf32>");
  Values given;
  given["max_x"] = distinct(252);
  given["max_overlap_x"] = distinct(196);
  given["max1d_x"] = distinct(54);
  checkGradients(m.str(), given);
}

} // namespace
} // namespace kiln
