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

int ThreadChoice::groupOf(size_t position, size_t count) {
  static_assert(kGroups > 3, "group 2 must differ from groups 0 and kGroups - 1");
  int group = static_cast<int>(position % kGroups);
  // The program runs again and again, its last step just before its first:
  // in the first's group, the first's trials on all threads would each
  // follow one of the last's on one thread, long enough for the other
  // threads to fall asleep (the MLP's bf16 step of 25 measured steps: the
  // rounding of its input chose one thread, 0.036 ms against 0.023 ms).
  if (position + 1 == count && position > 1 && group == 0)
    return 2; // Neither the first's (0) nor the one before's (kGroups - 1).
  return group;
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
