//===- AllReduceBuckets.cpp - A program's all-reduces in flight -----------===//

#include "runtime/collective/AllReduceBuckets.h"

#include <chrono>
#include <cstring>

namespace kiln::collective {

using Clock = std::chrono::steady_clock;

AllReduceBuckets::~AllReduceBuckets() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void AllReduceBuckets::setCollective(std::shared_ptr<Collective> collective) {
  collective_ = std::move(collective);
  if (collective_ && collective_->size() > 1 && !thread_.joinable())
    thread_ = std::thread([this] { communicate(); });
}

bool AllReduceBuckets::start(uint32_t tag, const std::vector<BucketPart> &inputs,
                             std::string &error) {
  size_t bytes = 0;
  for (const BucketPart &part : inputs)
    bytes += part.bytes;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.empty()) {
    error = failure_;
    return false;
  }
  Bucket &bucket = buckets_[tag];
  if (bucket.state == State::Queued) {
    error = "all-reduce tag " + std::to_string(tag) + " started again before its wait";
    return false;
  }
  lock.unlock(); // The communication thread does not touch an idle bucket.
  bucket.staging.resize(bytes / sizeof(float));
  auto *out = reinterpret_cast<uint8_t *>(bucket.staging.data());
  for (const BucketPart &part : inputs) {
    std::memcpy(out, part.data, part.bytes);
    out += part.bytes;
  }
  lock.lock();
  if (groupSize() == 1) {
    bucket.state = State::Done;
    return true;
  }
  bucket.state = State::Queued;
  queue_.push_back(tag);
  changed_.notify_all();
  return true;
}

bool AllReduceBuckets::wait(uint32_t tag, bool mean, const std::vector<BucketOutput> &outputs,
                            std::string &error) {
  Clock::time_point begin = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = buckets_.find(tag);
  if (it == buckets_.end() || it->second.state == State::Idle) {
    error = "all-reduce tag " + std::to_string(tag) + " waited for but never started";
    return false;
  }
  Bucket &bucket = it->second;
  changed_.wait(lock, [&] { return bucket.state != State::Queued; });
  if (bucket.state == State::Failed || !failure_.empty()) {
    bucket.state = State::Idle;
    error = failure_;
    return false;
  }
  bucket.state = State::Idle;
  if (groupSize() > 1) {
    totals_.blockedSeconds += std::chrono::duration<double>(Clock::now() - begin).count();
    totals_.commSeconds += bucket.commSeconds;
    totals_.bytes += bucket.staging.size() * sizeof(float);
    ++totals_.count;
  }
  lock.unlock();
  const float *in = bucket.staging.data();
  float scale = mean ? 1.0f / static_cast<float>(groupSize()) : 1.0f;
  for (const BucketOutput &part : outputs) {
    size_t count = part.bytes / sizeof(float);
    float *out = static_cast<float *>(part.data);
    if (scale == 1.0f)
      std::memcpy(out, in, part.bytes);
    else
      for (size_t i = 0; i < count; ++i)
        out[i] = in[i] * scale;
    in += count;
  }
  return true;
}

AllReduceTotals AllReduceBuckets::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return totals_;
}

void AllReduceBuckets::communicate() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return;
    uint32_t tag = queue_.front();
    queue_.pop_front();
    Bucket &bucket = buckets_[tag];
    lock.unlock();
    std::string error;
    Clock::time_point begin = Clock::now();
    bool ok = collective_->allReduceSum(bucket.staging.data(), bucket.staging.size(), tag,
                                        error);
    double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    lock.lock();
    bucket.commSeconds = seconds;
    bucket.state = ok ? State::Done : State::Failed;
    if (!ok && failure_.empty())
      failure_ = error;
    changed_.notify_all();
  }
}

} // namespace kiln::collective
