//===- LowPrecisionGemm.cpp - bf16 and f16 matrix products ----------------===//

#include "runtime/cpu/LowPrecisionGemm.h"

#include "runtime/cpu/CpuFeatures.h"
#include "runtime/cpu/RoundedCopies.h"
#include "runtime/cpu/RowRanges.h"
#include "runtime/cpu/Threads.h"
#include "runtime/support/InstructionRates.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cpu {

using dnnl::memory;

struct LowPrecisionGemm::Impl {
  GemmShape shape;
  const float *a = nullptr, *b = nullptr;
  float *c = nullptr;
  int64_t elementsA = 0, elementsB = 0;
  /// threadsForMacs's choice: a native product's, an emulated one's
  /// conversions'.
  int threads = 1;
  bool native = false;
  // Native: f32 -> bf16 conversions, then oneDNN's bf16 matmul. oneDNN plans
  // a primitive for the threads there are when it is made and opens that
  // many when it runs: a small product must not wake the sleeping workers.
  dnnl::reorder convertA, convertB;
  dnnl::matmul matmul;
  dnnl::stream stream;
  memory a32, a16, a16Flat, b32, b16, b16Flat, c32;
  /// A native product kiln can split (canSplitGemm at the session's
  /// threads) is always computed as that many parts (whole products of the
  /// batch, or blocks of rows), each a matmul made for one thread: run one
  /// after another on one thread or side by side on several, the same bits,
  /// so the thread choice measured by timing cannot change results. (One
  /// matmul over the whole product sums in another order than its halves
  /// once k is large enough for oneDNN to block it differently: probed at
  /// k = 512.)
  struct Part {
    dnnl::matmul matmul;
    dnnl::stream stream;
    memory a16, b16, c32;
    /// Its rows of the product when the parts are blocks of rows (both 0
    /// when they are whole products of the batch).
    int64_t rowBegin = 0, rowEnd = 0;
  };
  std::vector<Part> parts;
  /// The epilogue, if any, and whether each part's rows are whole rows of
  /// its kernel (then it runs per part; else after the whole product).
  RowEpilogue epilogue;
  bool epilogueByParts = false;
  // The converted inputs: bf16 copies (native) or the rounded values in f32
  // (emulated), B after A at a 64-byte boundary.
  void *scratch = nullptr;
  std::vector<uint64_t> ownScratch; // When no scratch was given.
  float *roundedA = nullptr, *roundedB = nullptr;
  /// Where A's and B's converted copies go (the scratch or copy slots), and
  /// whether this product converts them (not when another product of the
  /// program filled the slot from the same tensor).
  void *copyA = nullptr, *copyB = nullptr;
  bool fillsCopyA = true, fillsCopyB = true;
  /// A or B given as 16-bit values (copyA / copyB), which an emulated
  /// product widens into the scratch.
  bool givenA = false, givenB = false;
};

namespace {

/// An emulated product's input: widened when given in 16 bits, rounded
/// when this product fills its copy.
void emulatedInput(GemmPrecision precision, bool given, bool fills, const void *copy,
                   const float *in, float *rounded, int64_t count, int threads) {
  if (given)
    widenValues(precision, static_cast<const uint16_t *>(copy), rounded, count, threads);
  else if (fills)
    roundToValues(precision, in, rounded, count, threads);
}

/// Where B's converted copy starts in the scratch: after A's f32 values
/// (the larger of the two layouts), at a 64-byte boundary.
size_t scratchOffsetOfB(int64_t elementsA) {
  return (static_cast<size_t>(elementsA) * sizeof(float) + 63) / 64 * 64;
}

/// A row-major [batch, rows, cols] f32 or bf16 matrix stored transposed
/// ([batch, cols, rows]) when `transposed`.
memory::desc matrix(memory::data_type type, int64_t batch, int64_t rows, int64_t cols,
                    bool transposed) {
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc({batch, rows, cols}, type, strides);
}

/// The matmul of one part of a product of `batch` products of `m` rows:
/// `batches` whole products, or (one batch) `rows` of them, for one thread.
struct PartKernel {
  dnnl::matmul::primitive_desc kernel;
  memory::desc src, weights, dst;
};

PartKernel partKernel(const GemmShape &s, const dnnl::engine &engine, int64_t m,
                      int64_t batches, int64_t rows) {
  using type = memory::data_type;
  memory::dims aStrides = s.transposeA ? memory::dims{m * s.k, 1, m}
                                       : memory::dims{m * s.k, s.k, 1};
  memory::dims bStrides = s.transposeB ? memory::dims{s.k * s.n, 1, s.k}
                                       : memory::dims{s.k * s.n, s.n, 1};
  memory::dims cStrides = {m * s.n, s.n, 1};
  memory::desc src({batches, rows, s.k}, type::bf16, aStrides);
  memory::desc weights({s.sharedB ? 1 : batches, s.k, s.n}, type::bf16, bStrides);
  memory::desc dst({batches, rows, s.n}, type::f32, cStrides);
  // A block of rows of one product described with the whole matrix's
  // batch stride is not dense to oneDNN 2.6, which then multiplies it
  // with gemm:jit (AVX512_BF16) even on a CPU with AMX. With the block's
  // own stride (the same elements: there is one batch) it takes its
  // brgemm kernel where it has one: on AMX twice the rate on the
  // transformer's shapes; on AVX512_BF16 alone no faster than gemm:jit,
  // but the kernel the whole product takes (see wholeKernel).
  if (batches == 1) {
    memory::dims aBlock = aStrides, cBlock = cStrides;
    aBlock[0] = rows * s.k;
    cBlock[0] = rows * s.n;
    memory::desc srcDense({1, rows, s.k}, type::bf16, aBlock);
    memory::desc dstDense({1, rows, s.n}, type::f32, cBlock);
    try {
      dnnl::matmul::primitive_desc dense(dnnl::matmul::desc(srcDense, weights, dstDense),
                                         engine);
      if (std::strstr(dense.impl_info_str(), "brg"))
        return {dense, srcDense, weights, dstDense};
    } catch (const dnnl::error &) { // No kernel for the dense form: keep the other.
    }
  }
  return {dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), engine), src,
          weights, dst};
}

/// The parts of a product of `batch` products of `m` rows (batches of a
/// shared B with A untransposed already folded into rows, as canSplitGemm
/// folds them): `count` blocks of whole products when the batch has that
/// many, else `count` blocks of rows; each a matmul made for one thread over
/// views of the bf16 copies and of C.
void prepareParts(LowPrecisionGemm::Impl &impl, const dnnl::engine &engine, int64_t batch,
                  int64_t m, int count) {
  const GemmShape &s = impl.shape;
  auto *a16 = static_cast<uint16_t *>(impl.a16Flat.get_data_handle());
  auto *b16 = static_cast<uint16_t *>(impl.b16Flat.get_data_handle());
  bool byBatch = batch >= count;
  omp_set_num_threads(1);
  for (int t = 0; t < count; ++t) {
    int64_t total = byBatch ? batch : m;
    int64_t begin = total * t / count, end = total * (t + 1) / count;
    int64_t batches = byBatch ? end - begin : batch, rows = byBatch ? m : end - begin;
    PartKernel kernel = partKernel(s, engine, m, batches, rows);
    uint16_t *aAt = byBatch ? a16 + begin * m * s.k : a16 + (s.transposeA ? begin : begin * s.k);
    uint16_t *bAt = byBatch && !s.sharedB ? b16 + begin * s.k * s.n : b16;
    float *cAt = impl.c + (byBatch ? begin * m * s.n : begin * s.n);
    LowPrecisionGemm::Impl::Part part;
    part.rowBegin = byBatch ? 0 : begin;
    part.rowEnd = byBatch ? 0 : end;
    part.matmul = dnnl::matmul(kernel.kernel);
    part.stream = dnnl::stream(engine);
    part.a16 = memory(kernel.src, engine, aAt);
    part.b16 = memory(kernel.weights, engine, bAt);
    part.c32 = memory(kernel.dst, engine, cAt);
    impl.parts.push_back(std::move(part));
  }
}

/// The matmul of a product not split (one thread, or too few rows). On
/// AVX512_BF16 without AMX, where it would be split over two threads into
/// blocks of rows, the kernel its blocks take, if oneDNN has it for the
/// whole: a block of a transposed A takes gemm:jit (its leading dimension
/// is the whole matrix's rows) where the whole takes brgemm, whose
/// VDPBF16PS sums k in pairs; so one thread gives the bits two give. (On
/// a CPU with AMX, test/Tools/kilnc-gemm-epilogues.test found the same
/// bits with the whole on its AMX kernel, which it keeps.)
dnnl::matmul::primitive_desc wholeKernel(const GemmShape &s, const dnnl::engine &engine,
                                         int64_t batch, int64_t m,
                                         const dnnl::matmul::desc &descriptor) {
  if (batch == 1 && canSplitGemm(s, 2) && !hostHasCpuFeature("amx-bf16").value_or(false)) {
    std::string blocks = partKernel(s, engine, m, 1, m / 2).kernel.impl_info_str();
    dnnl::matmul::primitive_desc candidate(descriptor, engine);
    do {
      if (blocks == candidate.impl_info_str())
        return candidate;
    } while (candidate.next_impl());
  }
  return dnnl::matmul::primitive_desc(descriptor, engine);
}

/// Whether oneDNN 2.6's AMX kernels could fault on `shape` on this CPU: with
/// 63 as the inner dimension they die of SIGILL (an AMX instruction with
/// the tiles unconfigured, in gdb; found by LowPrecisionMultipliesTheRoundedInputs'
/// random shapes). Of every K from 1 to 521 over several M x N, batches of
/// 1 to 3, on one and two threads, only 63 faulted, and only on some M and
/// N (65 x 33, 129 x 17, ...). Decided from the CPU, not from the kernel
/// one descriptor gets: the parts' descriptors may get another; all such
/// products are emulated on a CPU with AMX.
bool amxFaultsOn(const GemmShape &shape) {
  return shape.k == 63 && hostHasCpuFeature("amx-bf16").value_or(false);
}

/// Sets up the bf16 conversions and matmul of `impl`; false when oneDNN has
/// only its reference kernel for it (slower than emulating), or would fault.
bool prepareNative(LowPrecisionGemm::Impl &impl) {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const GemmShape &s = impl.shape;
  int64_t batch = s.batch, m = s.m;
  if (s.sharedB && !s.transposeA) { // The batches are rows of one product.
    m *= batch;
    batch = 1;
  }
  using type = memory::data_type;
  memory::desc src = matrix(type::bf16, batch, m, s.k, s.transposeA);
  memory::desc weights = matrix(type::bf16, s.sharedB ? 1 : batch, s.k, s.n, s.transposeB);
  memory::desc dst = matrix(type::f32, batch, m, s.n, false);
  auto descriptor = dnnl::matmul::desc(src, weights, dst);
  if (amxFaultsOn(s) ||
      std::strncmp(dnnl::matmul::primitive_desc(descriptor, engine).impl_info_str(), "ref", 3) ==
          0)
    return false;
  impl.stream = dnnl::stream(engine);
  auto flat = [](type t, int64_t count) { return memory::desc({count}, t, memory::dims{1}); };
  impl.a32 = memory(flat(type::f32, impl.elementsA), engine, const_cast<float *>(impl.a));
  impl.b32 = memory(flat(type::f32, impl.elementsB), engine, const_cast<float *>(impl.b));
  impl.c32 = memory(dst, engine, impl.c);
  // The conversions keep the layout: plain element-by-element copies.
  impl.a16Flat = memory(flat(type::bf16, impl.elementsA), engine, impl.copyA);
  impl.b16Flat = memory(flat(type::bf16, impl.elementsB), engine, impl.copyB);
  impl.a16 = memory(src, engine, impl.a16Flat.get_data_handle());
  impl.b16 = memory(weights, engine, impl.b16Flat.get_data_handle());
  omp_set_num_threads(impl.threads);
  // Only the conversions this product does (not of an input a kernel
  // rounded, nor of a copy slot an earlier product fills).
  if (impl.fillsCopyA)
    impl.convertA = dnnl::reorder(impl.a32, impl.a16Flat);
  if (impl.fillsCopyB)
    impl.convertB = dnnl::reorder(impl.b32, impl.b16Flat);
  int split = availableThreads();
  if (split > 1 && canSplitGemm(s, split))
    prepareParts(impl, engine, batch, m, split);
  else
    impl.matmul = dnnl::matmul(wholeKernel(s, engine, batch, m, descriptor));
  return true;
}

/// A native product's f32 -> bf16 conversions, those it does.
void convertInputs(LowPrecisionGemm::Impl &impl) {
  if (impl.fillsCopyA)
    impl.convertA.execute(impl.stream, impl.a32, impl.a16Flat);
  if (impl.fillsCopyB)
    impl.convertB.execute(impl.stream, impl.b32, impl.b16Flat);
  impl.stream.wait();
}

/// The conversions on `threads` (an element-by-element copy: the same bits
/// on any number), then the parts: one after another, or one thread each.
bool runParts(LowPrecisionGemm::Impl &impl, int threads, std::string &error) {
  omp_set_num_threads(threads);
  convertInputs(impl);
  omp_set_num_threads(1);
  const RowEpilogue &epilogue = impl.epilogue;
  auto runPart = [&](LowPrecisionGemm::Impl::Part &part) {
    part.matmul.execute(part.stream, {{DNNL_ARG_SRC, part.a16},
                                      {DNNL_ARG_WEIGHTS, part.b16},
                                      {DNNL_ARG_DST, part.c32}});
    part.stream.wait();
    if (impl.epilogueByParts) {
      RowArguments args(epilogue.args, epilogue.argCount);
      args.call(epilogue.rowKernel, part.rowBegin / epilogue.rowsPerKernelRow,
                part.rowEnd / epilogue.rowsPerKernelRow);
    }
  };
  if (threads <= 1) {
    for (LowPrecisionGemm::Impl::Part &part : impl.parts)
      runPart(part);
    return true;
  }
  std::string failure;
  int count = static_cast<int>(impl.parts.size());
#pragma omp parallel num_threads(threads)
  {
    for (int t = omp_get_thread_num(); t < count; t += omp_get_num_threads()) {
      try {
        runPart(impl.parts[t]);
      } catch (const dnnl::error &e) {
#pragma omp critical
        failure = e.what();
      }
    }
  }
  if (!failure.empty()) {
    error = "oneDNN bf16 matmul failed: " + failure;
    return false;
  }
  return true;
}

} // namespace

bool hasNativeGemm(GemmPrecision precision) {
  if (precision != GemmPrecision::BF16)
    return false; // oneDNN 2.x multiplies f16 on the CPU only through references.
  return hostHasCpuFeature("avx512bf16").value_or(false) ||
         hostHasCpuFeature("amx-bf16").value_or(false);
}

namespace {

bool hasAmx() { return hostHasCpuFeature("amx-bf16").value_or(false); }

std::string ratioToF32Text() {
  char text[16];
  std::snprintf(text, sizeof text, "%.2fx", bf16DotProductRates()->ratio());
  return text;
}

} // namespace

bool nativeLowPrecisionAllowed() {
  static const bool allowed = [] {
    if (std::optional<bool> emulate = lowPrecisionEmulationSetByEnvironment())
      return !*emulate;
    return !bf16DotProductsTooSlow(hasAmx());
  }();
  return allowed;
}

std::string lowPrecisionGemmPath(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::F32:
    return "f32";
  case GemmPrecision::BF16:
    if (lowPrecisionEmulationSetByEnvironment() == true)
      return "emulated in f32 (KILN_EMULATE_LOW_PRECISION=1)";
    if (!hasNativeGemm(precision))
      return "emulated in f32 (this CPU has neither AVX512_BF16 nor AMX-BF16)";
    if (hasAmx())
      return "AMX-BF16 through oneDNN";
    if (!nativeLowPrecisionAllowed())
      return "emulated in f32 (this CPU's AVX512_BF16 dot products do " + ratioToF32Text() +
             " the multiply-adds of its f32 FMAs, measured; KILN_EMULATE_LOW_PRECISION=0 "
             "takes them)";
    return bf16DotProductsTooSlow(false)
               ? "AVX512_BF16 through oneDNN (KILN_EMULATE_LOW_PRECISION=0)"
               : "AVX512_BF16 through oneDNN";
  case GemmPrecision::F16:
    return "emulated in f32 (inputs rounded to f16; no native f16 products on the CPU)";
  }
  return "f32";
}

LowPrecisionGemm::LowPrecisionGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LowPrecisionGemm::~LowPrecisionGemm() = default;

size_t LowPrecisionGemm::scratchBytes(const GemmShape &shape) {
  return scratchOffsetOfB(shape.elementsA()) +
         static_cast<size_t>(shape.elementsB()) * sizeof(float);
}

std::unique_ptr<LowPrecisionGemm> LowPrecisionGemm::create(const GemmShape &shape,
                                                           const float *a, const float *b,
                                                           float *c, bool allowNative,
                                                           void *scratch, std::string &error,
                                                           ConvertedCopySlot slotA, ConvertedCopySlot slotB) {
  auto impl = std::make_unique<Impl>();
  impl->shape = shape;
  impl->a = a;
  impl->b = b;
  impl->c = c;
  impl->elementsA = shape.elementsA();
  impl->elementsB = shape.elementsB();
  impl->threads = threadsForMacs(shape.batch * shape.m * shape.n * shape.k);
  if (!scratch) {
    impl->ownScratch.resize((scratchBytes(shape) + 63) / 8 + 1);
    uintptr_t address = reinterpret_cast<uintptr_t>(impl->ownScratch.data());
    scratch = reinterpret_cast<void *>((address + 63) / 64 * 64);
  }
  impl->scratch = scratch;
  impl->copyA = slotA.copy ? slotA.copy : scratch;
  impl->copyB = slotB.copy ? slotB.copy
                           : static_cast<uint8_t *>(scratch) + scratchOffsetOfB(impl->elementsA);
  impl->fillsCopyA = slotA.copy ? slotA.convert && !slotA.isInput : true;
  impl->fillsCopyB = slotB.copy ? slotB.convert && !slotB.isInput : true;
  impl->givenA = slotA.copy && slotA.isInput;
  impl->givenB = slotB.copy && slotB.isInput;
  try {
    if (allowNative && hasNativeGemm(shape.precision))
      impl->native = prepareNative(*impl);
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN refused the bf16 matmul: ") + e.what();
    return nullptr;
  }
  if (!impl->native) { // A given input is widened into the scratch.
    impl->roundedA = static_cast<float *>(impl->givenA ? scratch : impl->copyA);
    impl->roundedB = static_cast<float *>(
        impl->givenB ? static_cast<uint8_t *>(scratch) + scratchOffsetOfB(impl->elementsA)
                     : impl->copyB);
  }
  return std::unique_ptr<LowPrecisionGemm>(new LowPrecisionGemm(std::move(impl)));
}

bool LowPrecisionGemm::native() const { return impl_->native; }

namespace {

/// The epilogue over the whole product on `threads` threads, its rows
/// split among them (the same bits: its rows are independent).
void runWholeEpilogue(const LowPrecisionGemm::Impl &impl, int threads) {
  const RowEpilogue &epilogue = impl.epilogue;
  if (!epilogue.rowKernel)
    return;
  int64_t rows = impl.shape.batch * impl.shape.m / epilogue.rowsPerKernelRow;
  if (threads <= 1) {
    RowArguments args(epilogue.args, epilogue.argCount);
    args.call(epilogue.rowKernel, 0, rows);
    return;
  }
  runRowRanges(epilogue.rowKernel, epilogue.args, epilogue.argCount, rows);
}

} // namespace

bool LowPrecisionGemm::run(std::string &error, int threads) {
  Impl &impl = *impl_;
  if (!impl.native) {
    int converters = threads > 0 ? threads : impl.threads;
    emulatedInput(impl.shape.precision, impl.givenA, impl.fillsCopyA, impl.copyA, impl.a,
                  impl.roundedA, impl.elementsA, converters);
    emulatedInput(impl.shape.precision, impl.givenB, impl.fillsCopyB, impl.copyB, impl.b,
                  impl.roundedB, impl.elementsB, converters);
    if (!gemm(impl.shape, impl.roundedA, impl.roundedB, impl.c, error, threads))
      return false;
    runWholeEpilogue(impl, threads > 0 ? threads : availableThreads());
    return true;
  }
  int used = threads > 0 ? threads : impl.threads;
  try {
    if (!impl.parts.empty()) {
      if (!runParts(impl, used, error))
        return false;
      if (!impl.epilogueByParts)
        runWholeEpilogue(impl, used);
      return true;
    }
    omp_set_num_threads(impl.threads);
    convertInputs(impl);
    impl.matmul.execute(impl.stream, {{DNNL_ARG_SRC, impl.a16},
                                      {DNNL_ARG_WEIGHTS, impl.b16},
                                      {DNNL_ARG_DST, impl.c32}});
    impl.stream.wait();
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN bf16 matmul failed: ") + e.what();
    return false;
  }
  runWholeEpilogue(impl, impl.threads);
  return true;
}

void LowPrecisionGemm::setEpilogue(const RowEpilogue &epilogue) {
  Impl &impl = *impl_;
  impl.epilogue = epilogue;
  // By parts when every part is rows (not whole batches) of one product,
  // whole kernel rows each.
  impl.epilogueByParts = !impl.parts.empty() && impl.shape.batch == 1;
  for (const Impl::Part &part : impl.parts)
    if (part.rowEnd <= part.rowBegin || part.rowBegin % epilogue.rowsPerKernelRow != 0 ||
        part.rowEnd % epilogue.rowsPerKernelRow != 0)
      impl.epilogueByParts = false;
}

bool LowPrecisionGemm::splits() const { return !impl_->parts.empty(); }

} // namespace kiln::cpu
