//===- SharedMemoryCollective.cpp - Collectives in one host's memory ------===//
//
// When every member of a group runs on this host (threads of one process,
// or processes of `kiln launch`), they meet in one shared memory segment
// instead of TCP connections, as NCCL's shared-memory transport and MPI's
// do within a node:
//
//   segment   a header (barrier counter and generation, a broken flag, each
//             member's pid), one slot of kChunkBytes per member and two
//             result chunks;
//   all-reduce, chunk by chunk: each member copies its chunk into its slot;
//             barrier; member r sums its 1/n of the chunk over the slots in
//             rank order into a result chunk (so every member gets the same
//             bits); barrier; each copies the result out. The result chunks
//             alternate, so two barriers a chunk suffice;
//   all-gather and broadcast the same way, with copies instead of sums;
//   barrier   a counter and a generation word, waited on with futex(2)
//             after a short spin.
//
// Rendezvous: members publish their host (boot id, host name, namespaces)
// in the store; unless all match, connectCollective uses Gloo. Member 0
// creates the segment (shm_open, a random name; where it cannot, it
// publishes an empty name and every member uses Gloo) and unlinks it once
// every member has mapped it, so nothing is left in /dev/shm whatever
// happens next.
//
// Failure: a wait checks the generation first, then the broken flag, the
// deadline, and (every 20 ms) that every member's process still exists;
// before failing on any of them, the generation again (a member destroyed
// or gone after the barrier finished left after the generation moved). A
// member that fails, or is destroyed, sets the flag and wakes the others,
// which fail at once: "<collective> failed on rank R of N: <why>".
//
//===----------------------------------------------------------------------===//

#include "runtime/collective/Collective.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/futex.h>
#include <mutex>
#include <random>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kiln::collective {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunkBytes = 1 << 20;
constexpr int kMaxMembers = 64;
constexpr uint64_t kMagic = 0x6b696c6e2d73686dULL; // "kiln-shm"

struct Header {
  uint64_t magic;
  uint32_t size;
  std::atomic<uint32_t> arrived;
  std::atomic<uint32_t> generation; ///< The futex word of the barrier.
  std::atomic<uint32_t> broken;
  std::atomic<int32_t> pids[kMaxMembers];
};

constexpr size_t kHeaderBytes = (sizeof(Header) + 63) / 64 * 64;

size_t segmentBytes(int size) { return kHeaderBytes + (static_cast<size_t>(size) + 2) * kChunkBytes; }

void futexWait(std::atomic<uint32_t> *word, uint32_t expected, std::chrono::milliseconds slice) {
  timespec timeout{0, static_cast<long>(slice.count()) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT, expected, &timeout, nullptr,
          0);
}

/// A hint to the core that this thread spins.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void futexWakeAll(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

/// This host as a process sees it: the kernel's boot id, the host name and
/// the network, mount, UTS and PID namespaces. Processes that agree on all
/// of them see the same /dev/shm and each other's pids; members in network
/// namespaces of their own (as separate hosts, or the two-host test) talk
/// over TCP.
std::string hostIdentity() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string identity;
  std::getline(file, identity);
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  identity += std::string("|") + name;
  for (const char *ns :
       {"/proc/self/ns/net", "/proc/self/ns/mnt", "/proc/self/ns/uts", "/proc/self/ns/pid"}) {
    char link[128] = {};
    ssize_t n = readlink(ns, link, sizeof(link) - 1);
    identity += "|" + std::string(link, n > 0 ? static_cast<size_t>(n) : 0);
  }
  return identity;
}

class SharedMemoryCollective : public Collective {
public:
  SharedMemoryCollective(uint8_t *base, size_t bytes, const GlooOptions &options)
      : base_(base), bytes_(bytes), options_(options) {}
  ~SharedMemoryCollective() override {
    // A member leaving ends the group for the others (after a finished
    // barrier they see the generation move first and are not affected).
    header()->broken.store(1, std::memory_order_release);
    futexWakeAll(&header()->generation);
    munmap(base_, bytes_);
  }

  int rank() const override { return options_.rank; }
  int size() const override { return options_.size; }

  bool allReduceSum(float *data, size_t count, uint32_t, std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t chunk = kChunkBytes / sizeof(float);
    for (size_t offset = 0; offset < count; offset += chunk) {
      size_t n = std::min(chunk, count - offset);
      std::memcpy(slot(rank()), data + offset, n * sizeof(float));
      if (!wait("all-reduce", error))
        return false;
      float *result = reinterpret_cast<float *>(resultChunk());
      size_t lo = n * rank() / size(), hi = n * (rank() + 1) / size();
      const float *first = reinterpret_cast<const float *>(slot(0));
      std::copy(first + lo, first + hi, result + lo);
      for (int r = 1; r < size(); ++r) {
        const float *in = reinterpret_cast<const float *>(slot(r));
        for (size_t i = lo; i < hi; ++i)
          result[i] += in[i];
      }
      if (!wait("all-reduce", error))
        return false;
      std::memcpy(data + offset, result, n * sizeof(float));
      ++parity_;
    }
    return true;
  }

  bool allGather(const void *input, size_t bytes, void *output, uint32_t,
                 std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto *in = static_cast<const uint8_t *>(input);
    auto *out = static_cast<uint8_t *>(output);
    for (size_t offset = 0; offset < bytes || (bytes == 0 && offset == 0); offset += kChunkBytes) {
      size_t n = std::min(kChunkBytes, bytes - offset);
      std::memcpy(slot(rank()), in + offset, n);
      if (!wait("all-gather", error))
        return false;
      for (int r = 0; r < size(); ++r)
        std::memcpy(out + static_cast<size_t>(r) * bytes + offset, slot(r), n);
      if (!wait("all-gather", error))
        return false;
      if (bytes == 0)
        break;
    }
    return true;
  }

  bool broadcast(void *data, size_t bytes, int root, uint32_t, std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto *bytesOut = static_cast<uint8_t *>(data);
    for (size_t offset = 0; offset < bytes; offset += kChunkBytes) {
      size_t n = std::min(kChunkBytes, bytes - offset);
      if (rank() == root)
        std::memcpy(slot(root), bytesOut + offset, n);
      if (!wait("broadcast", error))
        return false;
      if (rank() != root)
        std::memcpy(bytesOut + offset, slot(root), n);
      if (!wait("broadcast", error))
        return false;
    }
    return true;
  }

  bool barrier(uint32_t, std::string &error) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return wait("barrier", error);
  }

  /// The group's first barrier (every member has mapped the segment).
  bool meet(std::chrono::milliseconds timeout, std::string &error) {
    return wait("rendezvous", error, timeout);
  }

private:
  Header *header() const { return reinterpret_cast<Header *>(base_); }
  uint8_t *slot(int r) const { return base_ + kHeaderBytes + static_cast<size_t>(r) * kChunkBytes; }
  uint8_t *resultChunk() const { return slot(size() + static_cast<int>(parity_ & 1)); }

  bool fail(const char *what, const std::string &why, std::string &error) {
    if (broken_.empty())
      broken_ = std::string(what) + " failed on rank " + std::to_string(rank()) + " of " +
                std::to_string(size()) + ": " + why;
    header()->broken.store(1, std::memory_order_release);
    futexWakeAll(&header()->generation);
    error = broken_;
    return false;
  }

  /// The barrier every step of a collective meets at.
  bool wait(const char *what, std::string &error, std::chrono::milliseconds timeout = {}) {
    if (!broken_.empty()) {
      error = broken_;
      return false;
    }
    Header *h = header();
    uint32_t generation = h->generation.load(std::memory_order_acquire);
    if (h->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        static_cast<uint32_t>(size())) {
      h->arrived.store(0, std::memory_order_relaxed);
      h->generation.fetch_add(1, std::memory_order_release);
      futexWakeAll(&h->generation);
      return true;
    }
    std::chrono::milliseconds limit = timeout.count() > 0 ? timeout : options_.timeout;
    Clock::time_point deadline = Clock::now() + limit;
    Clock::time_point nextCheck = Clock::now() + std::chrono::milliseconds(20);
    auto finished = [&] { return h->generation.load(std::memory_order_acquire) != generation; };
    // A member that left (or exited) after this barrier finished did so
    // after the generation moved (its own barrier returned first): before
    // failing, read the generation again, or a waiter preempted after its
    // last look would fail a barrier that succeeded.
    auto failUnlessFinished = [&](const std::string &why) {
      return finished() || fail(what, why, error);
    };
    for (int spin = 0;; ++spin) {
      if (finished())
        return true;
      if (h->broken.load(std::memory_order_acquire))
        return failUnlessFinished("another member failed or left the group");
      if (spin < 2000) {
        cpuRelax();
        continue;
      }
      Clock::time_point now = Clock::now();
      if (now >= deadline)
        return failUnlessFinished("timed out after " + std::to_string(limit.count()) + " ms");
      if (now >= nextCheck) {
        nextCheck = now + std::chrono::milliseconds(20);
        for (int r = 0; r < size(); ++r) {
          int32_t pid = h->pids[r].load(std::memory_order_relaxed);
          if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
            return failUnlessFinished("rank " + std::to_string(r) + " (pid " +
                                      std::to_string(pid) + ") exited");
        }
      }
      futexWait(&h->generation, generation, std::chrono::milliseconds(20));
    }
  }

  uint8_t *base_;
  size_t bytes_;
  GlooOptions options_;
  std::mutex mutex_;
  uint64_t parity_ = 0;
  std::string broken_;
};

/// Maps segment `name`, `bytes` long; null with `error` on failure.
uint8_t *mapSegment(const std::string &name, size_t bytes, bool create, std::string &error) {
  int fd = shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
  if (fd < 0) {
    error = "shm_open " + name + ": " + std::strerror(errno);
    return nullptr;
  }
  // Reserved, not only sized: a /dev/shm too small fails here, not with a
  // SIGBUS at the first touch of a page it cannot back.
  int reserved = create ? posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : 0;
  if (reserved != 0) {
    error = "posix_fallocate " + name + ": " + std::strerror(reserved);
    close(fd);
    return nullptr;
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    error = "mmap " + name + ": " + std::strerror(errno);
    return nullptr;
  }
  return static_cast<uint8_t *>(base);
}

} // namespace

std::unique_ptr<Collective> connectSharedMemory(KeyValueStore &store, const GlooOptions &options,
                                                bool &sameHost, std::string &error) {
  sameHost = false;
  std::chrono::milliseconds patience = std::max(options.timeout, options.rendezvousTimeout);
  std::string prefix = options.prefix + "/shm/";
  if (!store.set(prefix + "host/" + std::to_string(options.rank), hostIdentity(), error))
    return nullptr;
  std::vector<std::string> hosts;
  for (int r = 0; r < options.size; ++r)
    hosts.push_back(prefix + "host/" + std::to_string(r));
  if (!store.wait(hosts, patience, error))
    return nullptr;
  std::string mine = hostIdentity();
  for (const std::string &key : hosts) {
    std::string host;
    if (!store.get(key, host, error))
      return nullptr;
    if (host != mine)
      return nullptr; // Not all here: Gloo over TCP.
  }
  if (options.size > kMaxMembers)
    return nullptr;
  sameHost = true;
  size_t bytes = segmentBytes(options.size);
  std::string name;
  uint8_t *base = nullptr;
  if (options.rank == 0) {
    std::random_device random;
    char text[64];
    std::snprintf(text, sizeof(text), "/kiln-%d-%08x%08x", static_cast<int>(getpid()), random(),
                  random());
    name = text;
    std::string problem;
    base = mapSegment(name, bytes, /*create=*/true, problem);
    if (!base) {
      // No usable /dev/shm (too small, or none): everyone takes Gloo.
      shm_unlink(name.c_str());
      sameHost = false;
      store.set(prefix + "name", "", error);
      return nullptr;
    }
    auto *header = new (base) Header();
    header->magic = kMagic;
    header->size = static_cast<uint32_t>(options.size);
    if (!store.set(prefix + "name", name, error)) {
      shm_unlink(name.c_str());
      munmap(base, bytes);
      return nullptr;
    }
  } else {
    if (!store.wait({prefix + "name"}, patience, error) || !store.get(prefix + "name", name, error))
      return nullptr;
    if (name.empty()) {
      sameHost = false; // Member 0 could not make a segment: Gloo.
      return nullptr;
    }
    base = mapSegment(name, bytes, /*create=*/false, error);
    if (!base)
      return nullptr;
    if (reinterpret_cast<Header *>(base)->magic != kMagic) {
      munmap(base, bytes);
      error = "shared memory segment " + name + " is not a Kiln group's";
      return nullptr;
    }
  }
  reinterpret_cast<Header *>(base)->pids[options.rank].store(static_cast<int32_t>(getpid()));
  auto collective = std::make_unique<SharedMemoryCollective>(base, bytes, options);
  // Once every member has mapped it, the name can go.
  bool met = collective->meet(patience, error);
  if (options.rank == 0)
    shm_unlink(name.c_str());
  if (!met) {
    error = "cannot connect rank " + std::to_string(options.rank) + " of " +
            std::to_string(options.size) + " in shared memory: " + error;
    return nullptr;
  }
  return collective;
}

} // namespace kiln::collective
