//===- Convolution.cpp - f32 and bf16 convolutions through oneDNN ---------===//

#include "runtime/cpu/Convolution.h"

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/LowPrecisionGemm.h"
#include "runtime/cpu/Threads.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace kiln::cpu {

using dnnl::memory;

namespace {

/// A copy between a plain buffer and the blocked layout a primitive wants.
struct Restage {
  dnnl::reorder reorder;
  /// A copy gives the same bytes on any number of threads: a large one
  /// takes every thread whatever the convolution's own count.
  int threads = 1;
  mutable memory from, to; // reorder::execute takes them by reference
};

/// A primitive bound to its buffers.
struct BoundPrimitive {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  /// Into the primitive's layouts before it runs (its inputs), and out of
  /// them after (its output); empty on plain layouts.
  std::vector<Restage> before, after;
};

} // namespace

struct Convolution::Impl {
  dnnl::stream stream;
  BoundPrimitive bound;
  int threads = 1;
  bool bf16 = false;
};

namespace {

/// The threads of a convolution of its multiply-adds (threadsForMacs).
int threadsFor(const ConvolutionShape &shape) {
  int64_t macs = 1;
  for (int64_t d : shape.output)
    macs *= d;
  for (size_t d = 1; d < shape.filter.size(); ++d)
    macs *= shape.filter[d];
  return threadsForMacs(macs);
}

memory::dims dims(const std::vector<int64_t> &v) { return memory::dims(v.begin(), v.end()); }

/// Plain channels-first layouts: activations ncw/nchw/ncdhw, filters
/// oiw/oihw/oidhw, or with groups goiw/goihw/goidhw over [G, F/G, C/G, K...]
/// (the same bytes as [F, C/G, K...]).
memory::desc activation(const std::vector<int64_t> &shape,
                        memory::data_type type = memory::data_type::f32) {
  static const memory::format_tag tags[] = {memory::format_tag::ncw, memory::format_tag::nchw,
                                            memory::format_tag::ncdhw};
  return memory::desc(dims(shape), type, tags[shape.size() - 3]);
}

memory::desc filterDesc(const std::vector<int64_t> &shape, int64_t groups,
                        memory::data_type type = memory::data_type::f32) {
  size_t spatial = shape.size() - 2;
  if (groups == 1) {
    static const memory::format_tag tags[] = {memory::format_tag::oiw, memory::format_tag::oihw,
                                              memory::format_tag::oidhw};
    return memory::desc(dims(shape), type, tags[spatial - 1]);
  }
  static const memory::format_tag tags[] = {memory::format_tag::goiw,
                                            memory::format_tag::goihw,
                                            memory::format_tag::goidhw};
  memory::dims grouped = {groups, shape[0] / groups};
  grouped.insert(grouped.end(), shape.begin() + 1, shape.end());
  return memory::desc(grouped, type, tags[spatial - 1]);
}

/// The same dimensions and type in whatever layout the primitive prefers.
memory::desc anyLayout(const memory::desc &plain) {
  return memory::desc(plain.dims(), plain.data_type(), memory::format_tag::any);
}

const dnnl::engine &cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// Reorders of at least this many bytes run on every thread.
constexpr size_t kParallelRestageBytes = 256 * 1024;

/// Sets OpenMP's threads for its lifetime, then gives the caller's back.
class ThreadsWhileMaking {
public:
  explicit ThreadsWhileMaking(int threads) : caller_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
  }
  ~ThreadsWhileMaking() { omp_set_num_threads(caller_); }

private:
  int caller_;
};

/// The three buffers at their fixed addresses, in their plain layouts.
struct PlainBuffers {
  memory input, filter, output;
};

/// Binds `plain` as argument `arg` of a primitive that wants it laid out as
/// `wanted`: directly when they agree, else through a buffer of its own
/// and a reorder before the primitive (an input) or after it (its output).
void bind(BoundPrimitive &impl, int arg, const memory &plain, const memory::desc &wanted,
          bool isOutput) {
  if (plain.get_desc() == wanted) {
    impl.args[arg] = plain;
    return;
  }
  memory staged(wanted, cpuEngine());
  impl.args[arg] = staged;
  int threads = wanted.get_size() >= kParallelRestageBytes ? availableThreads() : 1;
  if (isOutput)
    impl.after.push_back({dnnl::reorder(staged, plain), threads, staged, plain});
  else
    impl.before.push_back({dnnl::reorder(plain, staged), threads, plain, staged});
}

/// The descriptions of a convolution's three tensors.
struct Tensors {
  memory::desc x, w, y;
};

/// The primitive over `t` (plain layouts, or `any` for the primitive's
/// own), bound to the buffers; a gradient's forward hint is `hint` (in bf16
/// all three bf16, as oneDNN's backward kernels expect of it).
BoundPrimitive makePrimitive(const ConvolutionShape &shape, const PlainBuffers &buffers,
                             const Tensors &t, const Tensors &hint) {
  const memory::desc &x = t.x, &w = t.w, &y = t.y;
  const dnnl::engine &engine = cpuEngine();
  memory::dims strides = dims(shape.strides), low = dims(shape.padLow),
               high = dims(shape.padHigh), dilates;
  // oneDNN counts dilation from 0: a dense window has dilation 0.
  for (int64_t d : shape.dilations)
    dilates.push_back(d - 1);
  auto algorithm = dnnl::algorithm::convolution_direct;
  const Tensors &f = shape.kind == ConvolutionKind::Forward ? t : hint;
  dnnl::convolution_forward::desc forwardDesc(dnnl::prop_kind::forward_training, algorithm, f.x,
                                              f.w, f.y, strides, dilates, low, high);
  dnnl::convolution_forward::primitive_desc forward(forwardDesc, engine);
  BoundPrimitive impl;
  switch (shape.kind) {
  case ConvolutionKind::Forward:
    impl.primitive = dnnl::convolution_forward(forward);
    bind(impl, DNNL_ARG_SRC, buffers.input, forward.src_desc(), false);
    bind(impl, DNNL_ARG_WEIGHTS, buffers.filter, forward.weights_desc(), false);
    bind(impl, DNNL_ARG_DST, buffers.output, forward.dst_desc(), true);
    return impl;
  case ConvolutionKind::BackwardData: {
    dnnl::convolution_backward_data::desc desc(algorithm, x, w, y, strides, dilates, low, high);
    dnnl::convolution_backward_data::primitive_desc pd(desc, engine, forward);
    impl.primitive = dnnl::convolution_backward_data(pd);
    bind(impl, DNNL_ARG_WEIGHTS, buffers.filter, pd.weights_desc(), false);
    bind(impl, DNNL_ARG_DIFF_DST, buffers.output, pd.diff_dst_desc(), false);
    bind(impl, DNNL_ARG_DIFF_SRC, buffers.input, pd.diff_src_desc(), true);
    return impl;
  }
  case ConvolutionKind::BackwardFilter: {
    dnnl::convolution_backward_weights::desc desc(algorithm, x, w, y, strides, dilates, low,
                                                  high);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, engine, forward);
    impl.primitive = dnnl::convolution_backward_weights(pd);
    bind(impl, DNNL_ARG_SRC, buffers.input, pd.src_desc(), false);
    bind(impl, DNNL_ARG_DIFF_DST, buffers.output, pd.diff_dst_desc(), false);
    bind(impl, DNNL_ARG_DIFF_WEIGHTS, buffers.filter, pd.diff_weights_desc(), true);
    return impl;
  }
  }
  return impl;
}

/// The three tensors in the layouts the primitive prefers: in bf16, the two
/// the convolution reads (all three for a gradient's forward `hint`) bf16.
Tensors blockedTensors(const ConvolutionShape &shape, bool bf16, bool hint) {
  auto type = [&](bool read) {
    return bf16 && (read || hint) ? memory::data_type::bf16 : memory::data_type::f32;
  };
  return {anyLayout(activation(shape.input, type(shape.kind != ConvolutionKind::BackwardData))),
          anyLayout(filterDesc(shape.filter, shape.groups,
                               type(shape.kind != ConvolutionKind::BackwardFilter))),
          anyLayout(activation(shape.output, type(shape.kind != ConvolutionKind::Forward)))};
}

} // namespace

Convolution::Convolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Convolution::~Convolution() = default;

bool prefersBlockedLayouts(const ConvolutionShape &shape) {
  if (const char *layout = std::getenv("KILN_CONV_LAYOUT"))
    return std::string(layout) != "plain";
  // oneDNN's blocked kernels pad channels to blocks of 8 or 16: the
  // gradient of a few-channel input (an image's first layer) would be
  // mostly padding, where the plain (im2col and GEMM) kernel is 3-6x faster.
  if (shape.kind == ConvolutionKind::BackwardData)
    return shape.input[1] / shape.groups >= kMinBlockedInputChannels;
  return true;
}

std::unique_ptr<Convolution> Convolution::create(const ConvolutionShape &shape, float *input,
                                                 float *filter, float *output,
                                                 std::string &error) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->stream = dnnl::stream(cpuEngine());
    impl->threads = threadsFor(shape);
    memory::desc x = activation(shape.input), y = activation(shape.output);
    memory::desc w = filterDesc(shape.filter, shape.groups);
    PlainBuffers buffers{memory(x, cpuEngine(), input), memory(w, cpuEngine(), filter),
                         memory(y, cpuEngine(), output)};
    // oneDNN divides the work among the threads it sees when the primitive
    // is made, and a blocked kernel sums a filter's gradient in that many
    // parts: made for the threads it runs with, its bits depend on the
    // shape alone, not on OMP_NUM_THREADS.
    ThreadsWhileMaking threadsWhileMaking(impl->threads);
    // In bf16 when asked and the runtime takes the CPU's bf16 instructions
    // (convolutionsInBF16; elsewhere oneDNN would emulate them or take its
    // reference kernel, or they are slower than f32), on the blocked
    // layouts only (the two buffers read converted as `bind` lays them
    // out); else f32: blocked layouts where the shape prefers them, the
    // plain ones where it does not or oneDNN has no blocked kernel.
    auto makeBlocked = [&](bool bf16) {
      try {
        impl->bound = makePrimitive(shape, buffers, blockedTensors(shape, bf16, false),
                                    blockedTensors(shape, bf16, true));
        return true;
      } catch (const dnnl::error &) {
        return false;
      }
    };
    bool blocked = prefersBlockedLayouts(shape);
    impl->bf16 = shape.bf16 && convolutionsInBF16() && blocked && makeBlocked(true);
    if (!impl->bf16 && !(blocked && makeBlocked(false)))
      impl->bound = makePrimitive(shape, buffers, {x, w, y}, {x, w, y}); // Plain; throws why not.
    return std::unique_ptr<Convolution>(new Convolution(std::move(impl)));
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN refused the convolution: ") + e.what();
    return nullptr;
  }
}

bool Convolution::bf16() const { return impl_->bf16; }

bool convolutionsInBF16() {
  return hasNativeGemm(GemmPrecision::BF16) && nativeLowPrecisionAllowed();
}

bool Convolution::run(std::string &error) const {
  try {
    omp_set_num_threads(impl_->threads);
    const BoundPrimitive &bound = impl_->bound;
    auto restage = [&](const Restage &copy) {
      omp_set_num_threads(copy.threads);
      copy.reorder.execute(impl_->stream, copy.from, copy.to);
    };
    for (const Restage &in : bound.before)
      restage(in);
    omp_set_num_threads(impl_->threads);
    bound.primitive.execute(impl_->stream, bound.args);
    for (const Restage &out : bound.after)
      restage(out);
    impl_->stream.wait();
    return true;
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN convolution failed: ") + e.what();
    return false;
  }
}

} // namespace kiln::cpu
