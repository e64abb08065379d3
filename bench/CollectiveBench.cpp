//===- CollectiveBench.cpp - Kiln's all-reduce against Gloo's own ---------===//
//
//   kiln-collective-bench [--ranks N] [--repeats R] [--algorithm ring|...]
//
// Ranks are threads of this process talking over loopback TCP, as
// `kiln run --replicas N` does. For each message size, interleaved and
// repeated, it times five ways of summing the same f32 buffer over the
// ranks:
//   gloo       gloo::allreduce (ring) called directly, in place;
//   collective Kiln's Collective::allReduceSum (GlooCollective);
//   buckets    Kiln's AllReduceBuckets start + wait when the bucket's
//              buffers are scattered: copied out, reduced on the
//              communication thread, copied back divided by the ranks;
//   in place   the same for a bucket kilnc laid out in one range (what a
//              program's AllReduceStart/AllReduceWait do when nothing else
//              reads the gradients): reduced where it is, divided in place;
//   shm        Kiln's shared-memory collective (what ranks on one host use
//              by default, SharedMemoryCollective.cpp), called directly.
// It prints the median time and the bus bandwidth as nccl-tests define it
// (bytes x 2(n-1)/n / time), and each Kiln way's bandwidth as a fraction of
// Gloo's. A benchmark, not a test: docs/performance.md records its output.
//
//===----------------------------------------------------------------------===//

#include "runtime/collective/AllReduceBuckets.h"
#include "runtime/collective/Collective.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace kiln::collective;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int ranks = 2;
  int repeats = 20;
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Ring;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  const char *usage = "usage: kiln-collective-bench [--ranks N] [--repeats R] "
                      "[--algorithm ring|halving-doubling|bcube|auto]\n";
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", usage);
      return 0;
    }
    bool known = flag == "--ranks" || flag == "--repeats" || flag == "--algorithm";
    if (!known || i + 1 == argc) {
      std::fprintf(stderr, "kiln-collective-bench: %s '%s'\n%s",
                   known ? "no value for" : "unknown option", flag.c_str(), usage);
      return 1;
    }
    // A whole number at least `least`, or -1.
    auto count = [](const char *text, int least) {
      char *end = nullptr;
      long value = std::strtol(text, &end, 10);
      return *text && *end == '\0' && value >= least && value <= 1 << 20 ? int(value) : -1;
    };
    if (flag == "--ranks" || flag == "--repeats") {
      int least = flag == "--ranks" ? 2 : 3;
      int value = count(argv[i + 1], least);
      if (value < 0) {
        std::fprintf(stderr, "kiln-collective-bench: %s '%s': expected a whole number >= %d\n",
                     flag.c_str(), argv[i + 1], least);
        return 1;
      }
      (flag == "--ranks" ? options.ranks : options.repeats) = value;
    } else if (flag == "--algorithm" && !parseAllReduceAlgorithm(argv[i + 1], options.algorithm)) {
      std::fprintf(stderr, "kiln-collective-bench: unknown algorithm %s\n", argv[i + 1]);
      return 1;
    }
  }
  const std::vector<size_t> sizes = {4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
  int n = options.ranks;
  // [size][way] -> seconds of rank 0, one per repeat.
  std::vector<std::vector<std::vector<double>>> times(sizes.size(),
                                                      std::vector<std::vector<double>>(5));
  MemoryStore kilnStore, sharedStore;
  gloo::rendezvous::HashStore glooStore;
  std::barrier sync(n);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank)
    threads.emplace_back([&, rank] {
      GlooOptions kilnOptions;
      kilnOptions.rank = rank;
      kilnOptions.size = n;
      kilnOptions.algorithm = options.algorithm;
      kilnOptions.timeout = std::chrono::seconds(120);
      std::string error;
      std::shared_ptr<Collective> collective = connectGloo(kilnStore, kilnOptions, error);
      if (!collective) {
        std::fprintf(stderr, "rank %d: %s\n", rank, error.c_str());
        std::exit(1);
      }
      bool sameHost = false;
      std::unique_ptr<Collective> shared =
          connectSharedMemory(sharedStore, kilnOptions, sameHost, error);
      if (!shared) {
        std::fprintf(stderr, "rank %d: shared memory: %s\n", rank, error.c_str());
        std::exit(1);
      }
      gloo::transport::tcp::attr attr;
      attr.hostname = "127.0.0.1";
      auto context = std::make_shared<gloo::rendezvous::Context>(rank, n);
      context->setTimeout(std::chrono::seconds(120));
      std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
      context->connectFullMesh(glooStore, device);
      AllReduceBuckets buckets;
      buckets.setCollective(collective);

      for (size_t s = 0; s < sizes.size(); ++s) {
        size_t count = sizes[s] / sizeof(float);
        std::vector<float> data(count, 1.0f), out(count);
        for (int repeat = 0; repeat < options.repeats; ++repeat)
          for (int way = 0; way < 5; ++way) {
            sync.arrive_and_wait();
            Clock::time_point begin = Clock::now();
            if (way == 0) {
              gloo::AllreduceOptions opts(context);
              opts.setOutput(data.data(), count);
              opts.setReduceFunction(static_cast<void (*)(void *, const void *, const void *,
                                                          size_t)>(&gloo::sum<float>));
              opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
              opts.setTag(static_cast<uint32_t>(s * 1000 + repeat));
              gloo::allreduce(opts);
            } else if (way == 1) {
              if (!collective->allReduceSum(data.data(), count, s * 1000 + repeat, error))
                std::exit(1);
            } else if (way == 2) {
              if (!buckets.start(7, {{data.data(), sizes[s]}}, error) ||
                  !buckets.wait(7, true, {{out.data(), sizes[s]}}, error))
                std::exit(1);
            } else if (way == 4) {
              if (!shared->allReduceSum(data.data(), count, 0, error))
                std::exit(1);
            } else {
              if (!buckets.startInPlace(8, data.data(), count, error) ||
                  !buckets.waitInPlace(8, true, data.data(), count, error))
                std::exit(1);
            }
            double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
            std::fill(data.begin(), data.end(), 1.0f); // Keep the values small.
            if (rank == 0 && repeat > 0) // The first repeat warms up.
              times[s][way].push_back(seconds);
          }
      }
    });
  for (std::thread &thread : threads)
    thread.join();

  std::printf("all-reduce of f32 over %d ranks (threads, loopback TCP), algorithm %s, median "
              "of %d after one warm-up\n",
              n, options.algorithm == AllReduceAlgorithm::Ring ? "ring" : "chosen", options.repeats - 1);
  std::printf("%10s %9s %9s %9s %9s %9s %9s %11s %12s %13s %10s\n", "bytes", "gloo ms",
              "gloo GB/s", "coll ms", "bucket ms", "inplace ms", "shm ms", "coll/gloo",
              "bucket/gloo", "inplace/gloo", "shm/gloo");
  double factor = 2.0 * (n - 1) / n;
  for (size_t s = 0; s < sizes.size(); ++s) {
    double t[5], bw[5];
    for (int way = 0; way < 5; ++way) {
      t[way] = median(times[s][way]);
      bw[way] = sizes[s] * factor / t[way] / 1e9;
    }
    std::printf("%10zu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %11.2f %12.2f %13.2f %10.2f\n",
                sizes[s], t[0] * 1e3, bw[0], t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[4] * 1e3,
                bw[1] / bw[0], bw[2] / bw[0], bw[3] / bw[0], bw[4] / bw[0]);
  }
  return 0;
}
