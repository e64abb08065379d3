//===- UniqueIds.h - Distinct ids numbered in order of appearance -*- C++ -*-===//
//
// A sparse update sums the rows of duplicate ids, and a parameter-server
// client sends each id once: both number the distinct ids of a batch 0, 1,
// 2, ... in order of first appearance. An open-addressing table kept between
// calls does it without allocating (a std::unordered_map allocated a node per
// id, every step: most of a parameter-server worker's allocations); a slot
// belongs to the current call when its stamp is the call's generation, so
// starting a call clears nothing.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPU_UNIQUEIDS_H
#define KILN_RUNTIME_CPU_UNIQUEIDS_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::cpu {

class UniqueIds {
public:
  /// Forgets the ids of the last call, with room for `count` distinct ids
  /// (the table at most half full; a table grown for more is kept). At
  /// most 2^31 - 1: a batch's ids.
  void reset(size_t count) {
    assert(count <= size_t(INT32_MAX));
    size_t capacity = 16;
    while (capacity < 2 * count)
      capacity *= 2;
    if (slots_.size() < capacity) {
      slots_.assign(capacity, Slot{});
      generation_ = 0;
    }
    bits_ = __builtin_ctzll(slots_.size());
    if (++generation_ == 0) { // Wrapped: every stamp is stale again.
      for (Slot &slot : slots_)
        slot.stamp = 0;
      generation_ = 1;
    }
    size_ = 0;
  }

  /// The number of `id` (0 for the first distinct id of the call, then 1,
  /// ...), and whether this call had not seen it before. At most the count
  /// given to reset() distinct ids.
  std::pair<int64_t, bool> insert(int64_t id) {
    size_t mask = slots_.size() - 1;
    // Multiplicative hashing, the product's high bits (another multiplier
    // than the one that splits a sparse update's ids between threads, whose
    // part's ids would otherwise crowd one stretch of the table).
    size_t at = static_cast<size_t>((static_cast<uint64_t>(id) * 0xD6E8FEB86659FD93ull) >>
                                    (64 - bits_));
    for (;; at = (at + 1) & mask) {
      Slot &slot = slots_[at];
      if (slot.stamp != generation_) {
        slot = Slot{id, static_cast<int32_t>(size_), generation_};
        return {size_++, true};
      }
      if (slot.key == id)
        return {slot.number, false};
    }
  }

  /// Distinct ids inserted since reset().
  int64_t size() const { return size_; }

private:
  /// One probe reads one slot: key, number and stamp in 16 bytes (three
  /// arrays made each probe three cache misses once the table left L1).
  struct Slot {
    int64_t key = 0;
    int32_t number = 0;
    uint32_t stamp = 0; ///< The slot is this call's when it is generation_.
  };
  std::vector<Slot> slots_;
  uint32_t generation_ = 0;
  int bits_ = 4;
  int64_t size_ = 0;
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_UNIQUEIDS_H
