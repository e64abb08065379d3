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

AllReduceBuckets::Bucket *AllReduceBuckets::claim(uint32_t tag, const char *kind,
                                                 std::string &error) {
  if (!failure_.empty()) {
    error = failure_;
    return nullptr;
  }
  Bucket &bucket = buckets_[tag];
  if (bucket.state == State::Queued) {
    error = std::string(kind) + " tag " + std::to_string(tag) + " started again before its wait";
    return nullptr;
  }
  return &bucket;
}

void AllReduceBuckets::queue(uint32_t tag, Bucket &bucket) {
  if (groupSize() == 1) {
    bucket.state = State::Done;
    return;
  }
  bucket.state = State::Queued;
  queue_.push_back(tag);
  changed_.notify_all();
}

bool AllReduceBuckets::start(uint32_t tag, const std::vector<BucketPart> &inputs,
                             std::string &error) {
  size_t bytes = 0;
  for (const BucketPart &part : inputs)
    bytes += part.bytes;
  std::unique_lock<std::mutex> lock(mutex_);
  Bucket *claimed = claim(tag, "all-reduce", error);
  if (!claimed)
    return false;
  Bucket &bucket = *claimed;
  lock.unlock(); // The communication thread does not touch an idle bucket.
  bucket.gather = false;
  bucket.external = nullptr;
  bucket.staging.resize(bytes / sizeof(float));
  auto *out = reinterpret_cast<uint8_t *>(bucket.staging.data());
  for (const BucketPart &part : inputs) {
    std::memcpy(out, part.data, part.bytes);
    out += part.bytes;
  }
  lock.lock();
  queue(tag, bucket);
  return true;
}

bool AllReduceBuckets::startInPlace(uint32_t tag, float *data, size_t count,
                                    std::string &error) {
  std::lock_guard<std::mutex> lock(mutex_);
  Bucket *claimed = claim(tag, "all-reduce", error);
  if (!claimed)
    return false;
  Bucket &bucket = *claimed;
  bucket.gather = false;
  bucket.external = data;
  bucket.externalCount = count;
  queue(tag, bucket);
  return true;
}

bool AllReduceBuckets::waitInPlace(uint32_t tag, bool mean, float *data, size_t count,
                                   std::string &error) {
  std::unique_lock<std::mutex> lock;
  if (!awaitBucket(tag, lock, error))
    return false;
  lock.unlock();
  if (mean && groupSize() > 1) {
    float scale = 1.0f / static_cast<float>(groupSize());
    for (size_t i = 0; i < count; ++i)
      data[i] *= scale;
  }
  return true;
}

bool AllReduceBuckets::startGather(uint32_t tag, BucketPart ids, BucketPart rows,
                                   std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  Bucket *claimed = claim(tag, "sparse all-reduce", error);
  if (!claimed)
    return false;
  Bucket &bucket = *claimed;
  lock.unlock();
  bucket.gather = true;
  bucket.idBytes = ids.bytes;
  bucket.rowBytes = rows.bytes;
  bucket.payload.resize(ids.bytes + rows.bytes);
  std::memcpy(bucket.payload.data(), ids.data, ids.bytes);
  std::memcpy(bucket.payload.data() + ids.bytes, rows.data, rows.bytes);
  bucket.received.resize(bucket.payload.size() * static_cast<size_t>(groupSize()));
  if (groupSize() == 1)
    bucket.received = bucket.payload;
  lock.lock();
  queue(tag, bucket);
  return true;
}

AllReduceBuckets::Bucket *AllReduceBuckets::awaitBucket(uint32_t tag,
                                                       std::unique_lock<std::mutex> &lock,
                                                       std::string &error) {
  Clock::time_point begin = Clock::now();
  lock = std::unique_lock<std::mutex>(mutex_);
  auto it = buckets_.find(tag);
  if (it == buckets_.end() || it->second.state == State::Idle) {
    error = "all-reduce tag " + std::to_string(tag) + " waited for but never started";
    return nullptr;
  }
  Bucket &bucket = it->second;
  changed_.wait(lock, [&] { return bucket.state != State::Queued; });
  if (bucket.state == State::Failed || !failure_.empty()) {
    bucket.state = State::Idle;
    error = failure_;
    return nullptr;
  }
  bucket.state = State::Idle;
  if (groupSize() > 1) {
    totals_.blockedSeconds += std::chrono::duration<double>(Clock::now() - begin).count();
    totals_.commSeconds += bucket.commSeconds;
    totals_.bytes += bucket.gather     ? bucket.received.size()
                     : bucket.external ? bucket.externalCount * sizeof(float)
                                       : bucket.staging.size() * sizeof(float);
    ++totals_.count;
  }
  return &bucket;
}

bool AllReduceBuckets::wait(uint32_t tag, bool mean, const std::vector<BucketOutput> &outputs,
                            std::string &error) {
  std::unique_lock<std::mutex> lock;
  Bucket *bucket = awaitBucket(tag, lock, error);
  if (!bucket)
    return false;
  lock.unlock();
  const float *in = bucket->staging.data();
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

bool AllReduceBuckets::waitGather(uint32_t tag, bool mean, std::string &error) {
  std::unique_lock<std::mutex> lock;
  Bucket *bucket = awaitBucket(tag, lock, error);
  if (!bucket)
    return false;
  lock.unlock();
  size_t replicas = static_cast<size_t>(groupSize());
  size_t payload = bucket->idBytes + bucket->rowBytes;
  bucket->ids.resize(bucket->idBytes * replicas);
  bucket->rows.resize(bucket->rowBytes / sizeof(float) * replicas);
  float scale = mean ? 1.0f / static_cast<float>(replicas) : 1.0f;
  size_t rowFloats = bucket->rowBytes / sizeof(float);
  for (size_t r = 0; r < replicas; ++r) {
    const uint8_t *from = bucket->received.data() + r * payload;
    std::memcpy(bucket->ids.data() + r * bucket->idBytes, from, bucket->idBytes);
    const auto *rows = reinterpret_cast<const float *>(from + bucket->idBytes);
    float *out = bucket->rows.data() + r * rowFloats;
    for (size_t i = 0; i < rowFloats; ++i)
      out[i] = rows[i] * scale;
  }
  return true;
}

AllReduceBuckets::Gathered AllReduceBuckets::gathered(uint32_t tag) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = buckets_.find(tag);
  if (it == buckets_.end() || !it->second.gather)
    return {};
  const Bucket &bucket = it->second;
  return {bucket.ids.data(), bucket.rows.data(), static_cast<size_t>(groupSize())};
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
    bool ok = bucket.gather
                  ? collective_->allGather(bucket.payload.data(), bucket.payload.size(),
                                           bucket.received.data(), tag, error)
                  : bucket.external
                        ? collective_->allReduceSum(bucket.external, bucket.externalCount, tag,
                                                    error)
                        : collective_->allReduceSum(bucket.staging.data(), bucket.staging.size(),
                                                    tag, error);
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
