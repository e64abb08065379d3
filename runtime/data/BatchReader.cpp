//===- BatchReader.cpp - Batches of a data set for training ---------------===//
//
// prefetch + 1 slots circulate: the producer fills free slots in index
// order and queues them; next() hands the oldest out and frees the one it
// handed out before.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/BatchReader.h"

#include "runtime/data/SplitMix.h"

#include <omp.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace kiln::data {

BatchReader::BatchReader(std::shared_ptr<const Dataset> data,
                         BatchOptions options)
    : data_(std::move(data)), options_(options) {
  if (!data_ || data_->rows <= 0)
    throw std::invalid_argument("BatchReader: the data set holds no examples");
  if (options_.batchSize < 1)
    throw std::invalid_argument("BatchReader: batch size " +
                                std::to_string(options_.batchSize) +
                                " is below 1");
  if (options_.replicas < 1 || options_.replica < 0 || options_.replica >= options_.replicas)
    throw std::invalid_argument("BatchReader: replica " + std::to_string(options_.replica) +
                                " of " + std::to_string(options_.replicas));
  if (options_.prefetch < 0)
    throw std::invalid_argument("BatchReader: negative prefetch " +
                                std::to_string(options_.prefetch));
  if (options_.shuffle && data_->rows > (int64_t(1) << 32))
    throw std::invalid_argument("BatchReader: shuffling more than 2^32 rows "
                                "is not supported");
  for (const FeedSpec &spec : data_->specs) {
    exampleBytes_.push_back(exampleBytes(spec));
    rowBytes_ += exampleBytes_.back();
  }
  slots_.resize(static_cast<size_t>(options_.prefetch) + 1);
  for (Slot &slot : slots_) {
    for (size_t bytes : exampleBytes_)
      slot.buffers.emplace_back(bytes * options_.batchSize);
    for (std::vector<uint8_t> &buffer : slot.buffers)
      slot.pointers.push_back(buffer.data());
  }
}

BatchReader::~BatchReader() { stop(); }

void BatchReader::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stopPolling_.store(true, std::memory_order_relaxed);
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void BatchReader::start(int64_t first) {
  if (first < 0)
    throw std::invalid_argument("BatchReader: negative batch index " +
                                std::to_string(first));
  stop();
  ready_.clear();
  free_.resize(slots_.size());
  std::iota(free_.begin(), free_.end(), 0);
  handed_ = -1;
  failure_ = nullptr;
  stopping_ = false;
  producerAsleep_ = false;
  stopPolling_.store(false, std::memory_order_relaxed);
  lastNext_ = {};
  nextIndex_ = produceIndex_ = first;
  started_ = true;
  if (options_.prefetch > 0)
    thread_ = std::thread([this] { produce(); });
}

const std::vector<std::vector<uint8_t>> &BatchReader::next() {
  if (!started_)
    throw std::logic_error("BatchReader: next() before start()");
  if (options_.prefetch == 0) {
    fillInto(slots_[0].pointers.data(), nextIndex_);
    ++nextIndex_;
    return slots_[0].buffers;
  }
  if (options_.pollForFreeSlots) {
    // The steps' pace, for the reader's looks at the freed slots.
    auto now = std::chrono::steady_clock::now();
    if (lastNext_ != std::chrono::steady_clock::time_point()) {
      int64_t interval = std::chrono::duration_cast<std::chrono::nanoseconds>(now - lastNext_)
                             .count();
      // Down at once, up a little at a time: a slow first step or a pause
      // (an evaluation, a checkpoint) would have the reader sleep through
      // the steps after it.
      int64_t before = stepNanos_.load(std::memory_order_relaxed);
      if (before && interval > before)
        interval = (3 * before + std::min(interval, 2 * before)) / 4;
      stepNanos_.store(interval, std::memory_order_relaxed);
    }
    lastNext_ = now;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (handed_ >= 0) {
    free_.push_back(static_cast<size_t>(handed_));
    handed_ = -1;
    slotsFreed_.fetch_add(1, std::memory_order_release);
    // A polling producer sees the count; only one waiting here needs waking.
    if (producerAsleep_)
      changed_.notify_all();
  }
  changed_.wait(lock, [this] { return !ready_.empty() || failure_; });
  if (ready_.empty())
    std::rethrow_exception(failure_);
  handed_ = static_cast<long>(ready_.front());
  ready_.pop_front();
  ++nextIndex_;
  return slots_[handed_].buffers;
}

void BatchReader::pollForFreeSlot(uint64_t seen) const {
  while (slotsFreed_.load(std::memory_order_acquire) == seen &&
         !stopPolling_.load(std::memory_order_relaxed)) {
    int64_t slice = std::clamp<int64_t>(stepNanos_.load(std::memory_order_relaxed) / 8,
                                        kMinPollNanos, kMaxPollNanos);
    std::this_thread::sleep_for(std::chrono::nanoseconds(slice));
  }
}

void BatchReader::produce() {
  // Its sleeps end when asked, not up to 50 us later (the default slack).
  if (options_.pollForFreeSlots)
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  for (;;) {
    size_t slot;
    int64_t index;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (free_.empty() && !stopping_ && options_.pollForFreeSlots) {
        uint64_t seen = slotsFreed_.load(std::memory_order_acquire);
        lock.unlock();
        pollForFreeSlot(seen);
        lock.lock();
      }
      producerAsleep_ = true;
      changed_.wait(lock, [this] { return stopping_ || !free_.empty(); });
      producerAsleep_ = false;
      if (stopping_)
        return;
      slot = free_.back();
      free_.pop_back();
      index = produceIndex_++;
    }
    try {
      fillInto(slots_[slot].pointers.data(), index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(slot);
    }
    changed_.notify_all();
  }
}

const std::vector<uint32_t> &BatchReader::permutation(int64_t epoch) {
  for (Permutation &cached : permutations_)
    if (cached.epoch == epoch)
      return cached.rows;
  // Batches move forward: replace the older epoch.
  Permutation &fresh = permutations_[0].epoch < permutations_[1].epoch
                           ? permutations_[0]
                           : permutations_[1];
  fresh.epoch = epoch;
  fresh.rows.resize(static_cast<size_t>(data_->rows));
  std::iota(fresh.rows.begin(), fresh.rows.end(), 0u);
  SplitMixStream stream(
      splitMix(options_.seed ^ splitMix(static_cast<uint64_t>(epoch))));
  for (uint64_t i = fresh.rows.size() - 1; i > 0; --i)
    std::swap(fresh.rows[i], fresh.rows[stream.below(i + 1)]);
  return fresh.rows;
}

void BatchReader::nextInto(const std::vector<uint8_t *> &destinations) {
  if (!started_ || options_.prefetch != 0)
    throw std::logic_error("BatchReader: nextInto() before start() or with prefetch");
  if (destinations.size() != exampleBytes_.size())
    throw std::logic_error("BatchReader: nextInto() needs one destination per feed");
  fillInto(destinations.data(), nextIndex_);
  ++nextIndex_;
}

namespace {

/// How many rows ahead a shuffled gather asks for a row's first line.
constexpr int64_t kRowsAhead = 16;

/// One example's bytes of a feed: the common small sizes (an id, a label, a
/// few ids or features) as inlined moves, not a call to memcpy each.
inline void copyRow(uint8_t *out, const uint8_t *in, size_t size) {
  switch (size) {
  case 4: std::memcpy(out, in, 4); return;
  case 8: std::memcpy(out, in, 8); return;
  case 16: std::memcpy(out, in, 16); return;
  case 24: std::memcpy(out, in, 24); return;
  case 32: std::memcpy(out, in, 32); return;
  case 64: std::memcpy(out, in, 64); return;
  default: std::memcpy(out, in, size); return;
  }
}

} // namespace

bool BatchReader::nextInPlace(std::vector<const uint8_t *> &pieces) {
  if (!started_)
    throw std::logic_error("BatchReader: nextInPlace() before start()");
  if (options_.prefetch != 0 || options_.shuffle)
    return false;
  uint64_t batch = static_cast<uint64_t>(options_.batchSize);
  uint64_t position =
      (static_cast<uint64_t>(nextIndex_) * options_.replicas + options_.replica) * batch;
  uint64_t rows = static_cast<uint64_t>(data_->rows);
  uint64_t first = position % rows;
  if (first + batch > rows)
    return false; // Wraps into the next epoch: two pieces.
  pieces.resize(exampleBytes_.size());
  for (size_t f = 0; f < exampleBytes_.size(); ++f)
    pieces[f] = data_->columns[f].data() + first * exampleBytes_[f];
  ++nextIndex_;
  return true;
}

void BatchReader::fillInto(uint8_t *const *outs, int64_t index) {
  const Dataset &data = *data_;
  int64_t batch = options_.batchSize;
  uint64_t position =
      (static_cast<uint64_t>(index) * options_.replicas + options_.replica) * batch;
  uint64_t rows = static_cast<uint64_t>(data.rows);
  for (int64_t done = 0; done < batch;) {
    int64_t epoch = static_cast<int64_t>(position / rows);
    uint64_t first = position % rows;
    int64_t run = static_cast<int64_t>(
        std::min<uint64_t>(rows - first, static_cast<uint64_t>(batch - done)));
    if (options_.shuffle) {
      gather(outs, done, permutation(epoch).data() + first, run);
    } else {
      for (size_t f = 0; f < exampleBytes_.size(); ++f) {
        size_t size = exampleBytes_[f];
        std::memcpy(outs[f] + done * size, data.columns[f].data() + first * size, run * size);
      }
    }
    done += run;
    position += run;
  }
}

void BatchReader::gather(uint8_t *const *outs, int64_t done, const uint32_t *rows,
                         int64_t count) {
  const Dataset &data = *data_;
  auto copyRows = [&](int64_t begin, int64_t end) {
    for (size_t f = 0; f < exampleBytes_.size(); ++f) {
      size_t size = exampleBytes_[f];
      uint8_t *out = outs[f] + done * size;
      const uint8_t *in = data.columns[f].data();
      for (int64_t k = begin; k < end; ++k) {
        // Each row's first line asked for ahead: about 10% less gather time
        // on a large data set (wide&deep's 1M rows, 88 MB), none measured
        // on small ones (docs/performance.md).
        if (k + kRowsAhead < end)
          __builtin_prefetch(in + rows[k + kRowsAhead] * size);
        copyRow(out + k * size, in + rows[k] * size, size);
      }
    }
  };
  int64_t threads = std::min<int64_t>(
      {options_.prefetch == 0 ? options_.gatherThreads : 1,
       static_cast<int64_t>(count * rowBytes_ / kGatherBytesPerThread), count});
  if (threads <= 1) {
    copyRows(0, count);
    return;
  }
  // The rows are disjoint: any split copies the same bytes.
#pragma omp parallel num_threads(threads)
  {
    int64_t part = omp_get_thread_num(), parts = omp_get_num_threads();
    copyRows(count * part / parts, count * (part + 1) / parts);
  }
}

} // namespace kiln::data
