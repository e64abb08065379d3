//===- AllReduceBuckets.h - A program's all-reduces in flight ---*- C++ -*-===//
//
// The runtime side of kdist.all_reduce_start / kdist.wait (the artifact's
// AllReduceStart and AllReduceWait instructions) for one session:
//
//   start(tag)  copies the bucket's buffers into the tag's staging buffer
//               (so the program may reuse their bytes at once) and queues
//               its all-reduce for the communication thread;
//   wait(tag)   blocks until that all-reduce is done, then copies the
//               result out, divided by the group size for a mean.
//
// One communication thread runs the queued all-reduces in the order they
// were started, which is the same on every replica, as Gloo requires; it
// overlaps them with the compute between start and wait. A group of one
// (no collective set) needs no thread: the wait copies the bucket back.
//
// Sparse tensors (an embedding table's gradient as ids and rows) travel
// the same way by all-gather: startGather() copies this replica's ids and
// rows out; waitGather() leaves every replica's, in rank order, for
// gathered() (the rows divided by the group size for a mean).
//
// A failed all-reduce fails its wait and every later start and wait of the
// session with the same error (the group is unusable: Collective.h).
//
// Thread safety: start and wait are called by the one thread running the
// session's programs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_COLLECTIVE_ALLREDUCEBUCKETS_H
#define KILN_RUNTIME_COLLECTIVE_ALLREDUCEBUCKETS_H

#include "runtime/collective/Collective.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln::collective {

/// A buffer of a bucket: address and byte size.
struct BucketPart {
  const void *data;
  size_t bytes;
};
struct BucketOutput {
  void *data;
  size_t bytes;
};

/// Time spent on all-reduces since the session began, for the overlap
/// measurement (bench/) and the metrics.
struct AllReduceTotals {
  uint64_t count = 0;          ///< All-reduces completed.
  uint64_t bytes = 0;          ///< Their payload.
  double commSeconds = 0;      ///< On the communication thread, in the collective.
  /// The time waits blocked the program: the collective's part not hidden
  /// behind compute, and also any time the bucket sat queued behind others
  /// or the communication thread waited for a core (so it may exceed
  /// commSeconds where replicas' threads take every core).
  double blockedSeconds = 0;
};

class AllReduceBuckets {
public:
  AllReduceBuckets() = default;
  /// Joins the communication thread (after its current all-reduce).
  ~AllReduceBuckets();
  AllReduceBuckets(const AllReduceBuckets &) = delete;
  AllReduceBuckets &operator=(const AllReduceBuckets &) = delete;

  /// The group the all-reduces run over; null or a group of one makes
  /// start/wait local copies. Set before the first start.
  void setCollective(std::shared_ptr<Collective> collective);
  const std::shared_ptr<Collective> &collective() const { return collective_; }
  /// The number of replicas a mean divides by.
  int groupSize() const { return collective_ ? collective_->size() : 1; }

  bool start(uint32_t tag, const std::vector<BucketPart> &inputs, std::string &error);
  /// Writes the reduced bucket into `outputs` (the start's inputs, in
  /// order), divided by groupSize() when `mean`.
  bool wait(uint32_t tag, bool mean, const std::vector<BucketOutput> &outputs,
            std::string &error);

  /// The same for a bucket laid out in one range, reduced where it is: the
  /// `count` floats at `data` must stay untouched until the wait, which
  /// leaves the result there (divided by groupSize() when `mean`).
  bool startInPlace(uint32_t tag, float *data, size_t count, std::string &error);
  bool waitInPlace(uint32_t tag, bool mean, float *data, size_t count, std::string &error);

  /// Gathers this replica's `ids` and `rows` with every other replica's.
  bool startGather(uint32_t tag, BucketPart ids, BucketPart rows, std::string &error);
  /// Waits for the gather of `tag`; its result is gathered(tag) until the
  /// tag starts again.
  bool waitGather(uint32_t tag, bool mean, std::string &error);
  /// Every replica's ids (in their dtype) and rows, one replica's share
  /// after another: `replicas` times what each started with.
  struct Gathered {
    const void *ids = nullptr;
    const float *rows = nullptr;
    size_t replicas = 0;
  };
  Gathered gathered(uint32_t tag) const;

  AllReduceTotals totals() const;

private:
  enum class State { Idle, Queued, Done, Failed };
  struct Bucket {
    std::vector<float> staging;
    /// In place: the bucket's own bytes instead of `staging`.
    float *external = nullptr;
    size_t externalCount = 0;
    State state = State::Idle;
    double commSeconds = 0;
    /// A gather: this replica's payload (ids then rows) in `payload`, all
    /// replicas' in `received`, split into `ids` and `rows` by the wait.
    bool gather = false;
    size_t idBytes = 0, rowBytes = 0;
    std::vector<uint8_t> payload, received, ids;
    std::vector<float> rows;
  };
  /// The bucket of `tag`, to start a `kind` in; null with `error` set when
  /// the group failed or the tag is in flight. With `mutex_` held.
  Bucket *claim(uint32_t tag, const char *kind, std::string &error);
  /// Queues `bucket` (under `tag`) for the communication thread; with
  /// `mutex_` held.
  void queue(uint32_t tag, Bucket &bucket);
  /// Waits for `tag`'s bucket to leave the queue and accounts for it; false
  /// with `error` set when it failed. Takes `lock` on mutex_.
  Bucket *awaitBucket(uint32_t tag, std::unique_lock<std::mutex> &lock, std::string &error);

  void communicate();

  std::shared_ptr<Collective> collective_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint32_t, Bucket> buckets_;
  std::deque<uint32_t> queue_;
  std::string failure_;
  AllReduceTotals totals_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace kiln::collective

#endif // KILN_RUNTIME_COLLECTIVE_ALLREDUCEBUCKETS_H
