//===- KernelBench.cpp - Kiln's CPU path against standalone references ----===//
//
//   build/bin/kiln-bench [--quick]
//
// Measures, in one run so that machine noise hits both sides alike:
//   gemm         Kiln running a compiled f32 matmul (N x N x N) vs oneDNN's
//                dnnl_sgemm called directly on the same buffers' sizes.
//   dispatch     the runtime's cost per instruction of a program of 1000
//                kernels on 1-element tensors (kernel work included).
//   elementwise  a compiled `add` over tensors far larger than the L2 cache,
//                as bytes moved per second, vs memcpy's bytes per second.
//   bf16         the rates of AVX512_BF16 dot products and f32 FMAs the
//                runtime measures (InstructionRates.h), then its bf16
//                products (kilnc --precision=bf16) on oneDNN's bf16 kernels
//                where the CPU has them and emulated (inputs rounded, the
//                f32 GEMM), each vs its f32 ones, on the transformer
//                example's shapes, all on the threads the fixed threshold
//                gives them (OMP_NUM_THREADS=1: one core).
//   transposed   few rows times a large B^T (a PyTorch Linear layer at a
//                small batch): oneDNN's sgemm as written, one call per
//                thread's rows as Kiln ran it before, vs cpu::gemm computing
//                it as its transpose, on one thread and on the session's.
//   conv bf16    cpu::Convolution in f32 and in bf16 (kilnc --precision=bf16;
//                where the CPU's bf16 instructions are the faster), each kind, over the
//                input channels per group that decide which are marked.
//   sparse       an embedding table's lazy Adagrad update (kiln.sparse_apply)
//                split over the threads (cpu::sparseApply: each its part of
//                the ids) vs on one, on the examples' sizes and a larger
//                recommender's; fresh random ids each run.
//   sparse pages the same update on one thread after 32 MB of other traffic
//                (as in a training step), its table and accumulator on 4 KB
//                pages vs on huge pages (cpu::HugePageAllocator, as a
//                session's regions and a server's rows are).
//   f32 products wide&deep's forward products (and the MLP's first) as one
//                thread's part computes them, A x B untransposed: oneDNN's
//                sgemm (what cpu::gemm calls) vs its matmul primitive (the
//                implementation oneDNN picks is printed), as GFLOP/s.
// Each timing is the median of repeated runs after a warm-up; Kiln's is the
// program alone (bind + run, less bind). Results are ratios;
// docs/performance.md records them with this command.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ModelImporter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/RegisterAll.h"
#include "compiler/Target/ArtifactWriter.h"
#include "compiler/Target/CompileToArtifact.h"
#include "runtime/api/kiln.h"
#include "runtime/cpu/Convolution.h"
#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/HugePages.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/cpu/SparseApply.h"
#include "runtime/cpu/Threads.h"
#include "runtime/support/InstructionRates.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

using Clock = std::chrono::steady_clock;

/// Median seconds of `repeats` calls after one warm-up call.
double medianSeconds(int repeats, const std::function<void()> &body) {
  body();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = Clock::now();
    body();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

[[noreturn]] void die(const std::string &message) {
  llvm::errs() << "kiln-bench: " << message << "\n";
  std::exit(1);
}

void check(kiln_status *status) {
  if (status)
    die(kiln_status_message(status));
}

/// A compiled graph, loaded into a session with its feeds bound.
class CompiledGraph {
public:
  CompiledGraph(MLIRContext &context, const std::string &text) {
    llvm::SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("kiln-bench", dir))
      die("cannot create a temporary folder");
    std::string graph = (dir + "/graph.pbtxt").str();
    std::string artifactPath = (dir + "/graph.kiln").str();
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(graph, ec);
      os << text;
    }
    OwningOpRef<ModuleOp> module = kiln::importModelFile(graph, context, {});
    PassManager pm(&context);
    kiln::buildImportCleanupPipeline(pm);
    if (!module || failed(pm.run(*module)))
      die("cannot import the benchmark graph");
    std::unique_ptr<kiln::CompiledModel> compiled = kiln::compileKernels(*module);
    if (!compiled || failed(kiln::finishArtifact(*compiled, *module)) ||
        failed(kiln::writeArtifactFile(compiled->artifact, artifactPath,
                                       module->getLoc())))
      die("cannot compile the benchmark graph");
    instructions = compiled->plan.programs.front().steps.size();
    check(kiln_artifact_load(artifactPath.c_str(), &artifact));
    check(kiln_session_create(artifact, &session));
    check(kiln_session_run(session, "init"));
    llvm::sys::fs::remove_directories(dir);
  }
  ~CompiledGraph() {
    kiln_session_free(session);
    kiln_artifact_free(artifact);
  }

  /// Binds every f32 feed to ones and runs forward.
  void bindAndRun() {
    bind();
    check(kiln_session_run(session, "forward"));
  }

  /// Binds every feed (a run consumes the bindings, see kiln.h).
  void bind() {
    size_t count = 0;
    check(kiln_artifact_binding_count(artifact, "forward", KILN_FEED, &count));
    for (size_t i = 0; i < count; ++i) {
      kiln_tensor_info info;
      check(kiln_artifact_binding_info(artifact, "forward", KILN_FEED, i, &info));
      feedData.assign(info.byte_size / 4, 1.0f);
      check(kiln_session_bind_feed(session, "forward", info.name, info.dtype,
                                   feedData.data(), info.byte_size));
    }
  }

  /// Median seconds of the program alone: binding and running, less binding
  /// alone (the copies of the caller's data are not the program's work).
  double programSeconds(int repeats) {
    return medianSeconds(repeats, [&] { bindAndRun(); }) -
           medianSeconds(repeats, [&] { bind(); });
  }

  size_t instructions = 0;

private:
  kiln_artifact *artifact = nullptr;
  kiln_session *session = nullptr;
  std::vector<float> feedData;
};

std::string matmulGraph(int n) {
  std::string dims = "[" + std::to_string(n) + ", " + std::to_string(n) + "]";
  return "inputs { name: \"a\" dtype: DT_FLOAT32 shape: " + dims + " }\n"
         "inputs { name: \"b\" dtype: DT_FLOAT32 shape: " + dims + " }\n"
         "nodes { name: \"c\" op: \"matmul\" inputs: [\"a\", \"b\"] }\n"
         "outputs: [\"c\"]\n";
}

void benchGemm(MLIRContext &context, bool quick) {
  llvm::outs() << "gemm (f32, square), GFLOP/s: kiln / oneDNN standalone = ratio\n";
  for (int n : {512, 1024, 2048}) {
    if (quick && n > 512)
      break;
    CompiledGraph graph(context, matmulGraph(n));
    int repeats = n >= 2048 ? 5 : 15;
    double kiln = graph.programSeconds(repeats);
    std::vector<float> a(size_t(n) * n, 1.0f), b(a), c(a);
    double onednn = medianSeconds(repeats, [&] {
      if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                     c.data(), n) != dnnl_success)
        die("dnnl_sgemm failed");
    });
    double flops = 2.0 * n * n * n;
    llvm::outs() << llvm::format("  %4d: %7.1f / %7.1f = %.3f\n", n, flops / kiln / 1e9,
                                 flops / onednn / 1e9, onednn / kiln);
  }
}

void benchDispatch(MLIRContext &context) {
  // A chain of 1000 negations of one float: the kernels do nearly nothing.
  std::string text = "inputs { name: \"x\" dtype: DT_FLOAT32 shape: [1] }\n";
  std::string previous = "x";
  for (int i = 0; i < 1000; ++i) {
    std::string name = "n" + std::to_string(i);
    text += "nodes { name: \"" + name + "\" op: \"" + (i % 2 ? "relu" : "neg") +
            "\" inputs: [\"" + previous + "\"] }\n";
    previous = name;
  }
  text += "outputs: [\"" + previous + "\"]\n";
  CompiledGraph graph(context, text);
  double seconds = graph.programSeconds(200);
  llvm::outs() << llvm::format(
      "dispatch: %zu instructions, %.1f ns per instruction (kernel work included)\n",
      graph.instructions, seconds / graph.instructions * 1e9);
}

void benchElementwise(MLIRContext &context, bool quick) {
  int64_t n = quick ? (int64_t(1) << 22) : (int64_t(1) << 24); // 16 or 64 MiB per tensor
  std::string dims = "[" + std::to_string(n) + "]";
  CompiledGraph graph(context,
                      "inputs { name: \"a\" dtype: DT_FLOAT32 shape: " + dims + " }\n"
                      "inputs { name: \"b\" dtype: DT_FLOAT32 shape: " + dims + " }\n"
                      "nodes { name: \"c\" op: \"add\" inputs: [\"a\", \"b\"] }\n"
                      "outputs: [\"c\"]\n");
  double add = graph.programSeconds(9);
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  double copy = medianSeconds(9, [&] { std::memcpy(dst.data(), src.data(), n * 4); });
  double addBytes = 3.0 * n * 4, copyBytes = 2.0 * n * 4; // reads + writes
  llvm::outs() << llvm::format(
      "elementwise add of %lld floats: %.1f GB/s; memcpy %.1f GB/s; ratio %.3f\n",
      (long long)n, addBytes / add / 1e9, copyBytes / copy / 1e9,
      (addBytes / add) / (copyBytes / copy));
}

void benchLowPrecision() {
  if (const auto &rates = kiln::bf16DotProductRates())
    llvm::outs() << llvm::format("bf16 dot products (VDPBF16PS) / f32 FMAs, G multiply-adds/s "
                                 "on one core: %.1f / %.1f = %.2f\n",
                                 rates->bf16Macs / 1e9, rates->f32Macs / 1e9, rates->ratio());
  bool native = kiln::cpu::hasNativeGemm(kiln::cpu::GemmPrecision::BF16);
  llvm::outs() << "bf16 products, us: f32 / " << (native ? "bf16 kernels, " : "")
               << "emulated = speed-up (kiln run takes: "
               << kiln::cpu::lowPrecisionGemmPath(kiln::cpu::GemmPrecision::BF16) << ")\n";
  struct Case {
    const char *what;
    kiln::cpu::GemmShape shape;
  };
  const Case cases[] = {
      {"q, k, v, out 512x128x128", {1, 512, 128, 128, false, false, false}},
      {"ff1 512x512x128", {1, 512, 512, 128, false, false, false}},
      {"ff2 512x128x512", {1, 512, 128, 512, false, false, false}},
      {"logits 512x1000x128 B^T", {1, 512, 1000, 128, false, true, false}},
      {"scores 32 x 64x64x32 B^T", {32, 64, 64, 32, false, true, false}},
      {"dW ff 128x512x512 A^T", {1, 128, 512, 512, true, false, false}},
      {"dW logits 128x1000x512 A^T", {1, 128, 1000, 512, true, false, false}},
  };
  for (const Case &c : cases) {
    kiln::cpu::GemmShape shape = c.shape;
    std::vector<float> a(shape.batch * shape.m * shape.k, 0.5f),
        b(shape.batch * shape.k * shape.n, 0.25f), out(shape.batch * shape.m * shape.n);
    std::string error;
    double f32 = medianSeconds(51, [&] {
      if (!kiln::cpu::gemm(shape, a.data(), b.data(), out.data(), error))
        die(error.c_str());
    });
    shape.precision = kiln::cpu::GemmPrecision::BF16;
    auto secondsOf = [&](bool allowNative) {
      auto product = kiln::cpu::LowPrecisionGemm::create(shape, a.data(), b.data(), out.data(),
                                                         allowNative, nullptr, error);
      if (!product)
        die(error.c_str());
      return medianSeconds(51, [&] {
        if (!product->run(error))
          die(error.c_str());
      });
    };
    double emulated = secondsOf(false);
    llvm::outs() << llvm::format("  %-28s %8.1f", c.what, f32 * 1e6);
    if (native) {
      double bf16 = secondsOf(true);
      llvm::outs() << llvm::format(" / %8.1f = %.2f", bf16 * 1e6, f32 / bf16);
    }
    llvm::outs() << llvm::format("; %8.1f = %.2f\n", emulated * 1e6, f32 / emulated);
  }
}

void benchTransposedProducts() {
  int threads = kiln::cpu::availableThreads();
  llvm::outs() << "few rows x large B^T, us: sgemm as written / as its transpose = speed-up, "
                  "on 1 thread; on "
               << threads << " where the rows split\n";
  struct Case {
    const char *what;
    int64_t m, n, k;
  };
  const Case cases[] = {
      {"PyTorch CNN fc1 32x128x3136", 32, 128, 3136},
      {"Keras CNN fc1 dX 32x3136x128", 32, 3136, 128},
      {"Linear 16x512x512", 16, 512, 512},
      {"Linear 64x256x1024", 64, 256, 1024},
  };
  for (const Case &c : cases) {
    kiln::cpu::GemmShape shape{1, c.m, c.n, c.k, false, true, false};
    if (!kiln::cpu::computesTransposedProduct(shape))
      die(std::string(c.what) + " is not computed as its transpose");
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<float> a(c.m * c.k), b(c.n * c.k), out(c.m * c.n);
    for (float &x : a)
      x = value(rng);
    for (float &x : b)
      x = value(rng);
    auto asWritten = [&](int split) {
      return medianSeconds(51, [&] {
#pragma omp parallel num_threads(split)
        {
          int t = omp_get_thread_num();
          int64_t begin = c.m * t / split, end = c.m * (t + 1) / split;
          dnnl_sgemm('N', 'T', end - begin, c.n, c.k, 1.0f, a.data() + begin * c.k, c.k, b.data(),
                     c.k, 0.0f, out.data() + begin * c.n, c.n);
        }
      });
    };
    auto transposed = [&](int split) {
      return medianSeconds(51, [&] {
        std::string error;
        if (!kiln::cpu::gemm(shape, a.data(), b.data(), out.data(), error, split))
          die(error);
      });
    };
    // Split as Kiln splits a product: at least 16 rows a thread (fewer
    // reach oneDNN's matrix-vector path, other bits).
    int split = kiln::cpu::canSplitGemm(shape, threads) ? threads : 1;
    omp_set_num_threads(1);
    double one = asWritten(1), oneT = transposed(1), all = asWritten(split),
           allT = transposed(split);
    llvm::outs() << llvm::format("  %-30s %7.1f / %7.1f = %.2f; %7.1f / %7.1f = %.2f\n", c.what,
                                 one * 1e6, oneT * 1e6, one / oneT, all * 1e6, allT * 1e6,
                                 all / allT);
  }
}

void benchConvolutionsBF16() {
  llvm::outs() << "convolutions [32, C, 28, 28] 3x3 to 32 channels, us: f32 / bf16 = speed-up"
               << (kiln::cpu::convolutionsInBF16()
                       ? ""
                       : " (no bf16 instructions, or slower than f32: both f32)")
               << "\n";
  const char *kinds[] = {"forward", "data gradient", "filter gradient"};
  for (int64_t channels : {1, 4, 8, 16, 32})
    for (int kind = 0; kind < 3; ++kind) {
      double seconds[2];
      for (int bf16 = 0; bf16 < 2; ++bf16) {
        kiln::cpu::ConvolutionShape shape;
        shape.kind = static_cast<kiln::cpu::ConvolutionKind>(kind);
        shape.input = {32, channels, 28, 28};
        shape.filter = {32, channels, 3, 3};
        shape.output = {32, 32, 28, 28};
        shape.strides = shape.dilations = {1, 1};
        shape.padLow = shape.padHigh = {1, 1};
        shape.bf16 = bf16;
        std::vector<float> x(32 * channels * 28 * 28, 0.5f), w(32 * channels * 9, 0.25f),
            y(32 * 32 * 28 * 28, 0.125f);
        std::string error;
        auto conv = kiln::cpu::Convolution::create(shape, x.data(), w.data(), y.data(), error);
        if (!conv)
          die(error);
        seconds[bf16] = medianSeconds(31, [&] {
          if (!conv->run(error))
            die(error);
        });
      }
      llvm::outs() << llvm::format("  C %2d %-16s %8.1f / %8.1f = %.2f\n",
                                   static_cast<int>(channels), kinds[kind], seconds[0] * 1e6,
                                   seconds[1] * 1e6, seconds[0] / seconds[1]);
    }
}

/// An embedding table's update to time: `ids` random rows of a rows x width table.
struct SparseCase {
  const char *what;
  int64_t rows, width, ids;
};

void benchSparse() {
  int threads = kiln::cpu::availableThreads();
  llvm::outs() << "sparse Adagrad updates, us: 1 thread / " << threads
               << " threads = speed-up (the same bits)\n";
  const SparseCase cases[] = {
      {"multi_hot items 50000x16, 1152 ids", 50000, 16, 1152},
      {"wide&deep sites 100000x16, 256 ids", 100000, 16, 256},
      {"recommender 1000000x64, 16384 ids", 1000000, 64, 16384},
  };
  std::mt19937_64 rng(1);
  for (const SparseCase &c : cases) {
    std::vector<float> param(c.rows * c.width, 0.1f), acc(c.rows * c.width, 0.1f),
        grads(c.ids * c.width, 0.01f);
    std::vector<int64_t> ids(c.ids);
    float lr = 0.05f, step = 1;
    kiln::cpu::SparseHyperParameters hyper;
    hyper.optimizer = kiln::cpu::SparseOptimizer::Adagrad;
    kiln::cpu::SparseUpdate update{param.data(), {acc.data()}, ids.data(), true, grads.data(),
                                   c.ids, c.rows, c.width, &lr, &step};
    std::vector<kiln::cpu::SparseScratch> scratches;
    auto time = [&](int split) {
      return medianSeconds(51, [&] {
        for (int64_t &id : ids)
          id = static_cast<int64_t>(rng() % static_cast<uint64_t>(c.rows));
        kiln::cpu::sparseApply(hyper, update, scratches, split);
      });
    };
    double one = time(1), all = time(threads);
    llvm::outs() << llvm::format("  %-36s %8.1f / %8.1f = %.2f\n", c.what, one * 1e6, all * 1e6,
                                 one / all);
  }
}

/// One lazy Adagrad update of `ids` random rows on one thread after a sweep
/// over 32 MB of other memory, its table and accumulator in `Vector`s.
template <typename Vector> double sparseAfterTraffic(int64_t rows, int64_t width, int64_t count) {
  Vector param(rows * width, 0.1f), acc(rows * width, 0.1f);
  std::vector<float> grads(count * width, 0.01f), traffic(size_t(8) << 20, 1.0f);
  std::vector<int64_t> ids(count);
  std::mt19937_64 rng(2);
  float lr = 0.05f, step = 1, sink = 0;
  kiln::cpu::SparseHyperParameters hyper;
  hyper.optimizer = kiln::cpu::SparseOptimizer::Adagrad;
  kiln::cpu::SparseUpdate update{param.data(), {acc.data()}, ids.data(), true, grads.data(),
                                 count, rows, width, &lr, &step};
  std::vector<kiln::cpu::SparseScratch> scratches;
  std::vector<double> times;
  for (int run = 0; run < 201; ++run) {
    for (int64_t &id : ids)
      id = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows));
    for (size_t i = 0; i < traffic.size(); i += 16)
      sink += traffic[i] += 1.0f;
    auto begin = std::chrono::steady_clock::now();
    kiln::cpu::sparseApply(hyper, update, scratches, 1);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  if (sink == 0)
    llvm::outs() << "";
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

void benchSparsePages() {
  llvm::outs() << "sparse Adagrad after 32 MB of other traffic, 1 thread, us: 4 KB pages / "
                  "huge pages = speed-up\n";
  const SparseCase cases[] = {
      {"wide&deep sites 100000x16, 256 ids", 100000, 16, 256},
      {"1000000x16, 256 ids", 1000000, 16, 256},
      {"4000000x16, 256 ids", 4000000, 16, 256},
  };
  for (const SparseCase &c : cases) {
    double small = sparseAfterTraffic<std::vector<float>>(c.rows, c.width, c.ids);
    double huge = sparseAfterTraffic<std::vector<float, kiln::cpu::HugePageAllocator<float>>>(
        c.rows, c.width, c.ids);
    llvm::outs() << llvm::format("  %-36s %8.1f / %8.1f = %.2f\n", c.what, small * 1e6,
                                 huge * 1e6, small / huge);
  }
}

void benchProductsF32() {
  llvm::outs() << "f32 products A x B on 1 thread, GFLOP/s: sgemm / matmul primitive\n";
  const int64_t shapes[][3] = {{128, 256, 77}, {128, 128, 256}, {128, 77, 256},
                               {256, 256, 77}, {64, 256, 784}};
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  for (const auto &shape : shapes) {
    int64_t m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);
    double flops = 2.0 * m * n * k;
    double sgemm = medianSeconds(201, [&] {
      dnnl_sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
    });
    using tag = dnnl::memory::format_tag;
    auto f32 = dnnl::memory::data_type::f32;
    dnnl::memory::desc ad({m, k}, f32, tag::ab), bd({k, n}, f32, tag::ab), cd({m, n}, f32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc desc(dnnl::matmul::desc(ad, bd, cd), attr, engine);
    dnnl::matmul product(desc);
    dnnl::memory am(ad, engine, a.data()), bm(bd, engine, b.data()), cm(cd, engine, c.data());
    dnnl::memory scratch(desc.scratchpad_desc(), engine);
    double matmul = medianSeconds(201, [&] {
      product.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm},
                               {DNNL_ARG_SCRATCHPAD, scratch}});
      stream.wait();
    });
    llvm::outs() << llvm::format("  %4lld x %4lld x %4lld  %6.1f / %6.1f (%s)\n", (long long)m,
                                 (long long)n, (long long)k, flops / sgemm / 1e9,
                                 flops / matmul / 1e9, desc.impl_info_str());
  }
}

} // namespace

int main(int argc, char **argv) {
  bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  DialectRegistry registry;
  kiln::registerAllDialects(registry);
  kiln::registerAllPasses();
  MLIRContext context(registry);
  benchGemm(context, quick);
  benchDispatch(context);
  benchElementwise(context, quick);
  benchLowPrecision();
  benchTransposedProducts();
  benchConvolutionsBF16();
  benchSparse();
  benchSparsePages();
  {
    // One thread, as each of cpu::gemm's parts runs.
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    benchProductsF32();
    omp_set_num_threads(saved);
  }
  return 0;
}
