//===- MemoryPlan.h - Arena offsets from live ranges ------------*- C++ -*-===//

#ifndef KILN_COMPILER_TARGET_MEMORYPLAN_H
#define KILN_COMPILER_TARGET_MEMORYPLAN_H

#include "compiler/Target/ExecutionPlan.h"

namespace kiln {

/// The steps during which a slot holds a value, both ends included; a feed
/// starts at -1 (before the first step), a fetch ends at INT_MAX.
struct LiveRange {
  int first;
  int last;
  bool overlaps(const LiveRange &other) const {
    return first <= other.last && other.first <= last;
  }
};

/// `bytes` rounded up to the slot alignment.
inline uint64_t alignTo(uint64_t bytes) {
  return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
}

/// Gives each slot in `arena` (indices into `slots`) an offset such that two
/// slots alive at the same step never share a byte; returns the arena size.
/// Largest slots are placed first, each at the lowest aligned offset that
/// fits between the slots already placed whose ranges overlap its own.
uint64_t assignArenaOffsets(llvm::MutableArrayRef<Slot> slots,
                            llvm::ArrayRef<int> arena,
                            llvm::ArrayRef<LiveRange> ranges);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_MEMORYPLAN_H
