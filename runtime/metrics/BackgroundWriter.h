//===- BackgroundWriter.h - Metrics written off the step's path -*- C++ -*-===//
//
// The writes of a training run's metrics (JSON lines, TensorBoard events)
// run on a thread of their own, in the order they were posted, so a step
// does not wait for the file system. The first write that fails is kept:
// later writes are dropped, and the next post or drain returns its error.
//
// Thread safety: post and drain are called by one thread (the trainer's).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_BACKGROUNDWRITER_H
#define KILN_RUNTIME_METRICS_BACKGROUNDWRITER_H

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::metrics {

class BackgroundWriter {
public:
  /// One write: false with `error` set ("PATH: error: ...") on failure.
  using Write = std::function<bool(std::string &error)>;

  /// At most `capacity` writes wait at once; a post beyond them waits for
  /// the thread to catch up.
  explicit BackgroundWriter(size_t capacity = 1024);
  /// Runs the writes still queued, then joins the thread.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter &) = delete;
  BackgroundWriter &operator=(const BackgroundWriter &) = delete;

  /// Queues `write`; false with `error` set when an earlier write failed.
  bool post(Write write, std::string &error);
  /// Waits until every posted write has run; false with the first failure.
  bool drain(std::string &error);

private:
  void run();

  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Write> queue_;
  bool writing_ = false;  ///< The thread is running a write taken off the queue.
  bool stopping_ = false;
  std::string failure_;
  std::thread thread_;
};

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_BACKGROUNDWRITER_H
