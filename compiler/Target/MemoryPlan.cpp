//===- MemoryPlan.cpp - Arena offsets from live ranges --------------------===//

#include "compiler/Target/MemoryPlan.h"

namespace kiln {

uint64_t assignArenaOffsets(llvm::MutableArrayRef<Slot> slots,
                            llvm::ArrayRef<int> arena,
                            llvm::ArrayRef<LiveRange> ranges) {
  llvm::SmallVector<int> order(arena);
  llvm::stable_sort(order, [&](int a, int b) { return slots[a].bytes > slots[b].bytes; });
  llvm::SmallVector<int> placed;
  uint64_t size = 0;
  for (int slot : order) {
    // The byte ranges taken while this slot is alive, by offset.
    llvm::SmallVector<std::pair<uint64_t, uint64_t>> taken;
    for (int other : placed)
      if (ranges[slot].overlaps(ranges[other]))
        taken.push_back({slots[other].offset, slots[other].offset + slots[other].bytes});
    llvm::sort(taken);
    uint64_t offset = 0, bytes = slots[slot].bytes;
    for (auto [begin, end] : taken) {
      if (offset + bytes <= begin)
        break;
      offset = std::max(offset, alignTo(end));
    }
    slots[slot].offset = offset;
    size = std::max(size, alignTo(offset + bytes));
    placed.push_back(slot);
  }
  return size;
}

} // namespace kiln
