//===- Convolution.cpp - f32 convolutions through oneDNN ------------------===//

#include "runtime/cpu/Convolution.h"

#include "runtime/cpu/Gemm.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstdlib>
#include <unordered_map>

namespace kiln::cpu {

using dnnl::memory;

struct Convolution::Impl {
  dnnl::stream stream;
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  int threads = 1;
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
memory::desc activation(const std::vector<int64_t> &shape) {
  static const memory::format_tag tags[] = {memory::format_tag::ncw, memory::format_tag::nchw,
                                            memory::format_tag::ncdhw};
  return memory::desc(dims(shape), memory::data_type::f32, tags[shape.size() - 3]);
}

memory::desc filterDesc(const std::vector<int64_t> &shape, int64_t groups) {
  size_t spatial = shape.size() - 2;
  if (groups == 1) {
    static const memory::format_tag tags[] = {memory::format_tag::oiw, memory::format_tag::oihw,
                                              memory::format_tag::oidhw};
    return memory::desc(dims(shape), memory::data_type::f32, tags[spatial - 1]);
  }
  static const memory::format_tag tags[] = {memory::format_tag::goiw,
                                            memory::format_tag::goihw,
                                            memory::format_tag::goidhw};
  memory::dims grouped = {groups, shape[0] / groups};
  grouped.insert(grouped.end(), shape.begin() + 1, shape.end());
  return memory::desc(grouped, memory::data_type::f32, tags[spatial - 1]);
}

} // namespace

Convolution::Convolution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Convolution::~Convolution() = default;

std::unique_ptr<Convolution> Convolution::create(const ConvolutionShape &shape, float *input,
                                                 float *filter, float *output,
                                                 std::string &error) {
  try {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    auto impl = std::make_unique<Impl>();
    impl->stream = dnnl::stream(engine);
    impl->threads = threadsFor(shape);
    memory::desc x = activation(shape.input), y = activation(shape.output);
    memory::desc w = filterDesc(shape.filter, shape.groups);
    memory::dims strides = dims(shape.strides), low = dims(shape.padLow),
                 high = dims(shape.padHigh), dilates;
    // oneDNN counts dilation from 0: a dense window has dilation 0.
    for (int64_t d : shape.dilations)
      dilates.push_back(d - 1);
    auto algorithm = dnnl::algorithm::convolution_direct;
    dnnl::convolution_forward::desc forwardDesc(dnnl::prop_kind::forward_training, algorithm,
                                                x, w, y, strides, dilates, low, high);
    dnnl::convolution_forward::primitive_desc forward(forwardDesc, engine);
    memory xMem(x, engine, input), wMem(w, engine, filter),
        yMem(y, engine, output);
    switch (shape.kind) {
    case ConvolutionKind::Forward:
      impl->primitive = dnnl::convolution_forward(forward);
      impl->args = {{DNNL_ARG_SRC, xMem}, {DNNL_ARG_WEIGHTS, wMem}, {DNNL_ARG_DST, yMem}};
      break;
    case ConvolutionKind::BackwardData: {
      dnnl::convolution_backward_data::desc desc(algorithm, x, w, y, strides, dilates, low,
                                                 high);
      dnnl::convolution_backward_data::primitive_desc pd(desc, engine, forward);
      impl->primitive = dnnl::convolution_backward_data(pd);
      impl->args = {{DNNL_ARG_DIFF_SRC, xMem}, {DNNL_ARG_WEIGHTS, wMem},
                    {DNNL_ARG_DIFF_DST, yMem}};
      break;
    }
    case ConvolutionKind::BackwardFilter: {
      dnnl::convolution_backward_weights::desc desc(algorithm, x, w, y, strides, dilates, low,
                                                    high);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, engine, forward);
      impl->primitive = dnnl::convolution_backward_weights(pd);
      impl->args = {{DNNL_ARG_SRC, xMem}, {DNNL_ARG_DIFF_WEIGHTS, wMem},
                    {DNNL_ARG_DIFF_DST, yMem}};
      break;
    }
    }
    return std::unique_ptr<Convolution>(new Convolution(std::move(impl)));
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN refused the convolution: ") + e.what();
    return nullptr;
  }
}

bool Convolution::run(std::string &error) const {
  try {
    omp_set_num_threads(impl_->threads);
    impl_->primitive.execute(impl_->stream, impl_->args);
    impl_->stream.wait();
    return true;
  } catch (const dnnl::error &e) {
    error = std::string("oneDNN convolution failed: ") + e.what();
    return false;
  }
}

} // namespace kiln::cpu
