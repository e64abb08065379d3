//===- ClientSupport.h - Pieces the client's files share --------*- C++ -*-===//
//
// Internal to runtime/ps: a countdown latch for calls in flight, and the
// ids and bytes conversions of the wire format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PS_CLIENTSUPPORT_H
#define KILN_RUNTIME_PS_CLIENTSUPPORT_H

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::ps {

/// Counts calls down to zero.
class Latch {
public:
  explicit Latch(int count) : count_(count) {}
  void countDown() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--count_ == 0)
      zero_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    zero_.wait(lock, [&] { return count_ == 0; });
  }

private:
  std::mutex mutex_;
  std::condition_variable zero_;
  int count_;
};

/// `count` ids, i32 or i64, as int64.
inline std::vector<int64_t> widenIds(const void *ids, bool ids64, int64_t count) {
  std::vector<int64_t> wide(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    wide[i] = ids64 ? static_cast<const int64_t *>(ids)[i] : static_cast<const int32_t *>(ids)[i];
  return wide;
}

inline std::string bytesOf(const void *data, size_t bytes) {
  return std::string(static_cast<const char *>(data), bytes);
}

} // namespace kiln::ps

#endif // KILN_RUNTIME_PS_CLIENTSUPPORT_H
