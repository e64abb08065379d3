//===- BatchReader.h - Batches of a data set for training -------*- C++ -*-===//
//
// Cuts a Dataset into batches, optionally shuffled, prefetched on a
// background thread. The batch at index k depends only on the data, the
// options and k, never on what was read before: a run restored at step k
// calls start(k) and sees exactly the batches an uninterrupted run would.
//
// Order. The examples form an endless stream: position g of the stream is
// example g mod rows of epoch g / rows. Batch k holds positions
// [k * batchSize, (k + 1) * batchSize), wrapping from the last row to the
// first (into the next epoch) so that every batch is full. Without shuffle,
// position r of every epoch is row r. With shuffle, it is row perm_e[r],
// where perm_e is, for epoch e: the identity, then Fisher-Yates with the
// SplitMix64 stream seeded with splitMix(seed ^ splitMix(e)) (SplitMix.h):
// for i from rows - 1 down to 1, j = below(i + 1) (the high 64 bits of
// next() * (i + 1)), swap perm_e[i] and perm_e[j]. Every row appears exactly
// once per epoch.
//
// Replicas. With `replicas` N and `replica` i (data-parallel training),
// batch k is the i-th block of batch k of an N-times larger batch size:
// positions [(kN + i) * batchSize, (kN + i + 1) * batchSize). N replicas at
// batch B together read exactly what one reader at batch N*B reads.
//
// Threading. One thread (the training loop) calls start, next and
// nextIndex; the reader's own thread only fills batches ahead of it. The
// Dataset is shared read-only. A failure on the background thread (out of
// memory) is rethrown by next(). Waking a sleeping reader from next() costs
// the step a system call and, in a virtual machine, an interrupt to another
// CPU (13-20 us measured, 2-3% of a 0.6 ms step): a reader with a core of
// its own (`pollForFreeSlots`) looks for the slot next() frees by itself
// instead, sleeping an eighth of a step (kMinPollNanos..kMaxPollNanos)
// between looks, so next() never wakes it; the sleeps cost its own core a
// timer tick each, not a spinning core.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_BATCHREADER_H
#define KILN_RUNTIME_DATA_BATCHREADER_H

#include "runtime/data/Dataset.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::data {

struct BatchOptions {
  int64_t batchSize = 0; ///< Examples per batch, at least 1.
  bool shuffle = false;
  uint64_t seed = 0; ///< The shuffle's seed.
  /// Batches prepared ahead on a background thread; 0 makes each batch in
  /// next(), on the caller's thread.
  int prefetch = 2;
  /// Data-parallel replicas sharing each global batch, and which one this
  /// reader serves (0 <= replica < replicas).
  int64_t replicas = 1;
  int64_t replica = 0;
  /// OpenMP threads that gather a shuffled batch's rows when it is made on
  /// the caller's thread (prefetch 0) and large enough to pay for waking
  /// them (kGatherBytesPerThread each): the threads the step's kernels use,
  /// idle while the batch is read.
  int gatherThreads = 1;
  /// The prefetch thread has a core of its own (no step thread needs it):
  /// it looks for a freed slot every eighth of a step rather than waiting
  /// for next() to wake it.
  bool pollForFreeSlots = false;
};

/// The reader's sleep between two looks for a freed slot (pollForFreeSlots):
/// an eighth of the steps' interval, within these bounds.
constexpr int64_t kMinPollNanos = 20'000;
constexpr int64_t kMaxPollNanos = 1'000'000;

/// The least bytes of a shuffled batch each gathering thread copies.
constexpr size_t kGatherBytesPerThread = 32 * 1024;

class BatchReader {
public:
  /// Throws std::invalid_argument for a null or empty data set (or one of
  /// more than 2^32 rows with shuffle), a batchSize below 1 or a negative
  /// prefetch.
  BatchReader(std::shared_ptr<const Dataset> data, BatchOptions options);
  /// Stops and joins the prefetch thread.
  ~BatchReader();
  BatchReader(const BatchReader &) = delete;
  BatchReader &operator=(const BatchReader &) = delete;

  /// Starts producing batches from index `first` (0 for a new run, the
  /// restored step for a resumed one), `prefetch` batches ahead. Calling it
  /// again restarts from the new index.
  void start(int64_t first);

  /// The next batch: one contiguous buffer per feed (in the order of the
  /// data set's specs), batchSize examples each. Blocks until it is ready;
  /// valid until the following next() or start(). Throws std::logic_error
  /// before start().
  const std::vector<std::vector<uint8_t>> &next();

  /// Without prefetch: writes the next batch straight into `destinations`
  /// (one per feed, feedBytes(f) bytes each), on the caller's thread: one
  /// copy, from the data set to where the step reads it. Throws
  /// std::logic_error before start() or with prefetch.
  void nextInto(const std::vector<uint8_t *> &destinations);

  /// Without prefetch or shuffle, when the next batch lies in one piece in
  /// the data set (it does not wrap into the next epoch): sets `pieces` to
  /// where each feed's bytes are (feedBytes(f) each, valid as long as the
  /// data set) and moves on, as nextInto would; returns false, consuming
  /// nothing, otherwise. Throws std::logic_error before start().
  bool nextInPlace(std::vector<const uint8_t *> &pieces);

  /// The bytes of feed `f` in a batch.
  size_t feedBytes(size_t f) const { return exampleBytes_[f] * options_.batchSize; }
  int prefetch() const { return options_.prefetch; }

  /// The index of the batch next() will return.
  int64_t nextIndex() const { return nextIndex_; }

private:
  struct Slot {
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<uint8_t *> pointers; ///< buffers[f].data(), for fillInto.
  };
  struct Permutation {
    int64_t epoch = -1;
    std::vector<uint32_t> rows;
  };

  void stop();
  void produce();
  /// Looks (pollForFreeSlots) until next() has freed a slot after the count
  /// `seen` or the reader stops, sleeping in between.
  void pollForFreeSlot(uint64_t seen) const;
  /// Batch `index` into `outs`, one per feed.
  void fillInto(uint8_t *const *outs, int64_t index);
  /// The data set's rows rows[0..count) into `outs` from the batch's
  /// position `done` on (a shuffled run), on gatherThreads threads when it
  /// is large enough.
  void gather(uint8_t *const *outs, int64_t done, const uint32_t *rows, int64_t count);
  const std::vector<uint32_t> &permutation(int64_t epoch);

  std::shared_ptr<const Dataset> data_;
  BatchOptions options_;
  std::vector<size_t> exampleBytes_;
  size_t rowBytes_ = 0; ///< exampleBytes_ summed: one example of every feed.
  std::vector<Slot> slots_;
  Permutation permutations_[2]; ///< The two epochs a batch can span.
  int64_t nextIndex_ = 0;
  bool started_ = false;

  // Shared with the background thread, under mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> ready_; ///< Filled slots, in index order.
  std::vector<size_t> free_; ///< Slots the producer may fill.
  int64_t produceIndex_ = 0; ///< The index the producer fills next.
  long handed_ = -1;         ///< The slot next() returned last.
  bool stopping_ = false;
  bool producerAsleep_ = false; ///< The producer waits on changed_ for a slot.
  std::exception_ptr failure_;
  // Polled by the producer without the mutex (pollForFreeSlots).
  std::atomic<uint64_t> slotsFreed_{0};
  std::atomic<bool> stopPolling_{false};
  /// The interval between next() calls (0 before two): the last one when
  /// shorter, else moving up by at most a quarter, which sizes the reader's
  /// sleeps; next() alone writes it and lastNext_.
  std::atomic<int64_t> stepNanos_{0};
  std::chrono::steady_clock::time_point lastNext_;
  std::thread thread_;
};

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_BATCHREADER_H
