//===- GemmThreadChoice.cpp - One or all threads for a product ------------===//

#include "runtime/cpu/GemmThreadChoice.h"

#include "runtime/cpu/Gemm.h"

#include <algorithm>

namespace kiln::cpu {

int GemmThreadChoice::next(int available, const GemmShape &shape) const {
  if (fixedGemmThreshold())
    return 0;
  if (available <= 1 || !canSplitGemm(shape, available))
    return 1;
  if (chosen_)
    return std::min(chosen_, available);
  return runs_ >= kWarmup && (runs_ - kWarmup) % 2 ? available : 1;
}

void GemmThreadChoice::record(int threads, int available, double seconds) {
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
