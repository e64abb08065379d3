//===- GlooCollective.cpp - Collectives over Gloo's TCP transport ---------===//
//
// Gloo (Debian's libgloo-dev) gives the algorithms and the transport; this
// file gives it a rendezvous store (our KeyValueStore), turns its exceptions
// into errors, and tears the context down after the first one, so that the
// peers blocked on this member see their connections close instead of
// waiting out the timeout.
//
// Once connected, every member sends every peer one message of 256 KiB
// (warmSendBuffers). Gloo sizes a pair's socket send buffer (SO_SNDBUF) to
// the largest message it has sent so far, so a group whose first messages
// are small keeps a send buffer of a few KiB; setting it also turns off
// Linux's autotuning. A later message that does not fit beside the data
// not yet acknowledged then waits for an acknowledgement, which the peer
// delays by up to 40 ms when the message is shorter than a segment: a
// 41 KB all-gather of sparse gradients took 2 to 47 ms instead of 0.1.
// 256 KiB is above what Linux lets a process ask for (net.core.wmem_max,
// 208 KiB by default), so every pair gets the largest buffer at once.
//
//===----------------------------------------------------------------------===//

#include "runtime/collective/Collective.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <csignal>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace kiln::collective {
namespace {

/// Gloo's view of a KeyValueStore. Gloo's Store reports failures by
/// throwing; connectGloo catches them.
class GlooStore : public gloo::rendezvous::Store {
public:
  GlooStore(KeyValueStore &store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    std::string error;
    if (!store_.set(prefix_ + key, std::string(data.begin(), data.end()), error))
      throw std::runtime_error(error);
  }
  std::vector<char> get(const std::string &key) override {
    wait({key}, timeout_);
    std::string value, error;
    if (!store_.get(prefix_ + key, value, error))
      throw std::runtime_error(error);
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string> &keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string> &keys,
            const std::chrono::milliseconds &timeout) override {
    std::vector<std::string> full;
    for (const std::string &key : keys)
      full.push_back(prefix_ + key);
    std::string error;
    if (!store_.wait(full, timeout, error))
      throw std::runtime_error(error);
  }

private:
  KeyValueStore &store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

class GlooCollective : public Collective {
public:
  GlooCollective(std::shared_ptr<gloo::rendezvous::Context> context, const GlooOptions &options)
      : context_(std::move(context)), options_(options) {}

  int rank() const override { return options_.rank; }
  int size() const override { return options_.size; }

  bool allReduceSum(float *data, size_t count, uint32_t tag, std::string &error) override {
    return guard("all-reduce", error, [&] {
      if (useHalvingDoubling()) {
        if (count * sizeof(float) <= kCopiedBytes) {
          HalvingDoubling &reduce = copiedHalvingDoubling(count);
          std::memcpy(reduce.buffer.data(), data, count * sizeof(float));
          reduce.algorithm->run();
          std::memcpy(data, reduce.buffer.data(), count * sizeof(float));
        } else {
          boundHalvingDoubling(data, count).run();
        }
        return;
      }
      gloo::AllreduceOptions opts(context_);
      opts.setOutput(data, count);
      opts.setReduceFunction(
          static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
      opts.setAlgorithm(options_.algorithm == AllReduceAlgorithm::Bcube
                            ? gloo::AllreduceOptions::Algorithm::BCUBE
                            : gloo::AllreduceOptions::Algorithm::RING);
      opts.setTag(tag);
      opts.setTimeout(options_.timeout);
      gloo::allreduce(opts);
    });
  }

  bool allGather(const void *input, size_t bytes, void *output, uint32_t tag,
                 std::string &error) override {
    return guard("all-gather", error, [&] {
      gloo::AllgatherOptions opts(context_);
      opts.setInput(const_cast<uint8_t *>(static_cast<const uint8_t *>(input)), bytes);
      opts.setOutput(static_cast<uint8_t *>(output), bytes * options_.size);
      opts.setTag(tag);
      opts.setTimeout(options_.timeout);
      gloo::allgather(opts);
    });
  }

  bool broadcast(void *data, size_t bytes, int root, uint32_t tag,
                 std::string &error) override {
    return guard("broadcast", error, [&] {
      gloo::BroadcastOptions opts(context_);
      opts.setOutput(static_cast<uint8_t *>(data), bytes);
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(options_.timeout);
      gloo::broadcast(opts);
    });
  }

  bool barrier(uint32_t tag, std::string &error) override {
    return guard("barrier", error, [&] {
      gloo::BarrierOptions opts(context_);
      opts.setTag(tag);
      opts.setTimeout(options_.timeout);
      gloo::barrier(opts);
    });
  }

private:
  /// Runs `call`, turning a Gloo exception into `error` and a broken group.
  template <typename Call> bool guard(const char *what, std::string &error, Call call) {
    if (!broken_.empty()) {
      error = broken_;
      return false;
    }
    try {
      call();
      return true;
    } catch (const std::exception &e) {
      broken_ = std::string(what) + " failed on rank " + std::to_string(options_.rank) +
                " of " + std::to_string(options_.size) + ": " + e.what();
    }
    // Closing our connections wakes the peers blocked on us.
    copiedHalvingDoublings_.clear();
    boundHalvingDoublings_.clear();
    context_.reset();
    error = broken_;
    return false;
  }

  /// Halving-doubling for `auto` on a power-of-two group, at every size:
  /// on 2 ranks it beat ring at 940 KB (13.6k against 9.4k examples/s for
  /// the MLP with accumulation), and mixing the two on one context made
  /// each ring all-reduce of a bucket wait ~80 ms whenever a small
  /// halving-doubling one (the loss) ran beside it.
  bool useHalvingDoubling() const {
    bool powerOfTwo = (options_.size & (options_.size - 1)) == 0;
    switch (options_.algorithm) {
    case AllReduceAlgorithm::HalvingDoubling:
      return true;
    case AllReduceAlgorithm::Auto:
      return powerOfTwo;
    default:
      return false;
    }
  }

  /// Gloo's halving-doubling is an algorithm object bound to one buffer,
  /// costly to make (it registers buffers with every peer), made once and
  /// rerun every step; every member makes them in the same order, as Gloo
  /// requires. Up to kCopiedBytes, one per size on a buffer of its own that
  /// each call copies through (a caller's small buffer, such as a loss on
  /// the stack, may move between calls); above, one per caller's buffer
  /// (the gradient buckets stay put), without copies.
  static constexpr size_t kCopiedBytes = 256u << 10;
  struct HalvingDoubling {
    std::vector<float> buffer;
    std::unique_ptr<gloo::AllreduceHalvingDoubling<float>> algorithm;
  };
  HalvingDoubling &copiedHalvingDoubling(size_t count) {
    auto it = copiedHalvingDoublings_.find(count);
    if (it == copiedHalvingDoublings_.end()) {
      HalvingDoubling made;
      made.buffer.resize(count);
      made.algorithm = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(
          context_, std::vector<float *>{made.buffer.data()}, static_cast<int>(count));
      it = copiedHalvingDoublings_.emplace(count, std::move(made)).first;
    }
    return it->second;
  }
  gloo::AllreduceHalvingDoubling<float> &boundHalvingDoubling(float *data, size_t count) {
    auto key = std::make_tuple(data, count);
    auto it = boundHalvingDoublings_.find(key);
    if (it == boundHalvingDoublings_.end())
      it = boundHalvingDoublings_
               .emplace(key, std::make_unique<gloo::AllreduceHalvingDoubling<float>>(
                                 context_, std::vector<float *>{data}, static_cast<int>(count)))
               .first;
    return *it->second;
  }

  std::shared_ptr<gloo::rendezvous::Context> context_;
  GlooOptions options_;
  std::string broken_;
  std::map<size_t, HalvingDoubling> copiedHalvingDoublings_; ///< By element count.
  std::map<std::tuple<float *, size_t>, std::unique_ptr<gloo::AllreduceHalvingDoubling<float>>>
      boundHalvingDoublings_;
};

class SingleCollective : public Collective {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool allReduceSum(float *, size_t, uint32_t, std::string &) override { return true; }
  bool allGather(const void *input, size_t bytes, void *output, uint32_t,
                 std::string &) override {
    std::memcpy(output, input, bytes);
    return true;
  }
  bool broadcast(void *, size_t, int, uint32_t, std::string &) override { return true; }
  bool barrier(uint32_t, std::string &) override { return true; }
};

} // namespace

bool isCollectiveFailure(const std::string &error) {
  // The phrases GlooCollective's errors start with.
  return error.find(" failed on rank ") != std::string::npos ||
         error.find("cannot connect rank ") != std::string::npos;
}

std::unique_ptr<Collective> createSingleCollective() {
  return std::make_unique<SingleCollective>();
}

bool parseAllReduceAlgorithm(const std::string &text, AllReduceAlgorithm &algorithm) {
  static const std::map<std::string, AllReduceAlgorithm> names = {
      {"ring", AllReduceAlgorithm::Ring},
      {"halving-doubling", AllReduceAlgorithm::HalvingDoubling},
      {"bcube", AllReduceAlgorithm::Bcube},
      {"auto", AllReduceAlgorithm::Auto}};
  auto it = names.find(text);
  if (it == names.end())
    return false;
  algorithm = it->second;
  return true;
}

/// Sends every peer one message of 256 KiB (see the file comment): a
/// broadcast from each member in turn. Gloo's algorithm classes send through
/// the path that sizes the send buffer (its unbound buffers, which the
/// collectives of gloo/allgather.h use, do not). Throws as Gloo does.
void warmSendBuffers(const std::shared_ptr<gloo::Context> &context) {
  constexpr size_t kWarmFloats = (256 << 10) / sizeof(float);
  std::vector<float> data(kWarmFloats);
  for (int root = 0; root < context->size; ++root)
    gloo::BroadcastOneToAll<float>(context, {data.data()}, data.size(), root).run();
}

namespace {

/// A peer that goes away closes its sockets; Gloo's next write to one
/// would raise SIGPIPE, whose default action ends the process before the
/// error can reach the caller. Ignored unless the program handles it.
void ignoreBrokenPipes() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    signal(SIGPIPE, SIG_IGN);
}

} // namespace

std::unique_ptr<Collective> connectGloo(KeyValueStore &store, const GlooOptions &options,
                                        std::string &error) {
  ignoreBrokenPipes();
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    error = "rank " + std::to_string(options.rank) + " is outside a group of " +
            std::to_string(options.size);
    return nullptr;
  }
  if (options.size == 1)
    return createSingleCollective();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = options.hostname;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(options.rank, options.size);
    std::chrono::milliseconds rendezvous =
        std::max(options.timeout, options.rendezvousTimeout);
    context->setTimeout(rendezvous);
    GlooStore glooStore(store, options.prefix + "/", rendezvous);
    context->connectFullMesh(glooStore, device);
    warmSendBuffers(context);
    context->setTimeout(options.timeout);
    return std::make_unique<GlooCollective>(std::move(context), options);
  } catch (const std::exception &e) {
    error = "cannot connect rank " + std::to_string(options.rank) + " of " +
            std::to_string(options.size) + " (listening on " + options.hostname +
            "): " + e.what();
    return nullptr;
  }
}

std::unique_ptr<Collective> connectCollective(KeyValueStore &store, const GlooOptions &options,
                                              std::string &error) {
  if (options.size > 1 && options.transport == CollectiveTransport::Auto &&
      options.algorithm == AllReduceAlgorithm::Auto) {
    bool sameHost = false;
    std::unique_ptr<Collective> shared = connectSharedMemory(store, options, sameHost, error);
    if (shared || sameHost || !error.empty())
      return shared;
  }
  return connectGloo(store, options, error);
}

} // namespace kiln::collective
