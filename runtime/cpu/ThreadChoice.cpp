//===- ThreadChoice.cpp - One or all threads for a step -------------------===//

#include "runtime/cpu/ThreadChoice.h"

#include <algorithm>

namespace kiln::cpu {

int ThreadChoice::next(int available, bool splittable) {
  if (!settled_ && !chosen_ && (available <= 1 || !splittable)) {
    settled_ = true;
    chosen_ = 1;
  }
  trial_ = false;
  if (settled_)
    return 1;
  long run = runs_++;
  if (run >= window_ && run < window_ + windowLength()) {
    trial_ = true;
    return (run - window_) % 2 ? available : 1;
  }
  return chosen_ ? std::min(chosen_, std::max(available, 1)) : available;
}

void ThreadChoice::record(int threads, int available, double seconds) {
  if (!trial_) // next() gives no trial to a step settled on one thread.
    return;
  trial_ = false;
  double &fastest = fastest_[threads == 1 ? 0 : 1];
  fastest = std::min(fastest, seconds);
  if (runs_ < window_ + windowLength())
    return;
  chosen_ = fastest_[1] < 0.9 * fastest_[0] ? available : 1;
  fastest_[0] = fastest_[1] = INFINITY;
  window_ = runs_ * kRetrialFactor;
  ++windows_;
}

} // namespace kiln::cpu
