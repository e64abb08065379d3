//===- ThreadChoice.cpp - One or all threads for a step -------------------===//

#include "runtime/cpu/ThreadChoice.h"

#include <algorithm>

namespace kiln::cpu {

int ThreadChoice::next(int available, bool splittable) {
  if (!chosen_ && (available <= 1 || !splittable))
    chosen_ = 1;
  if (chosen_)
    return std::min(chosen_, std::max(available, 1));
  return runs_ >= kWarmup && (runs_ - kWarmup) % 2 ? available : 1;
}

void ThreadChoice::record(int threads, int available, double seconds) {
  if (chosen_ || available <= 1 || threads == 0)
    return;
  if (runs_++ < kWarmup)
    return;
  double &fastest = fastest_[threads == 1 ? 0 : 1];
  fastest = std::min(fastest, seconds);
  if (runs_ == kWarmup + kTrials)
    chosen_ = fastest_[1] < 0.9 * fastest_[0] ? available : 1;
}

} // namespace kiln::cpu
