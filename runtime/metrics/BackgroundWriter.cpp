//===- BackgroundWriter.cpp - Metrics written off the step's path ---------===//

#include "runtime/metrics/BackgroundWriter.h"

#include <algorithm>

namespace kiln::metrics {

BackgroundWriter::BackgroundWriter(size_t capacity)
    : capacity_(std::max<size_t>(1, capacity)), thread_([this] { run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool BackgroundWriter::post(Write write, std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < capacity_ || !failure_.empty(); });
  if (!failure_.empty()) {
    error = failure_;
    return false;
  }
  queue_.push_back(std::move(write));
  changed_.notify_all();
  return true;
}

bool BackgroundWriter::drain(std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && !writing_) || !failure_.empty(); });
  if (!failure_.empty()) {
    error = failure_;
    return false;
  }
  return true;
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty())
      return; // Stopping, with nothing left to write.
    Write write = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    std::string error;
    bool written = write(error);
    lock.lock();
    writing_ = false;
    if (!written && failure_.empty()) {
      failure_ = error;
      queue_.clear(); // Dropped: the run stops at its next post or drain.
    }
    changed_.notify_all();
  }
}

} // namespace kiln::metrics
