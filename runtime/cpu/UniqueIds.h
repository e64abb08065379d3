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

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::cpu {

class UniqueIds {
public:
  /// Forgets the ids of the last call, with room for `count` distinct ids
  /// (the table at most half full; a table grown for more is kept).
  void reset(size_t count) {
    size_t capacity = 16;
    while (capacity < 2 * count)
      capacity *= 2;
    if (keys_.size() < capacity) {
      keys_.assign(capacity, 0);
      numbers_.assign(capacity, 0);
      stamps_.assign(capacity, 0);
      generation_ = 0;
    }
    bits_ = __builtin_ctzll(keys_.size());
    if (++generation_ == 0) { // Wrapped: every stamp is stale again.
      std::fill(stamps_.begin(), stamps_.end(), 0u);
      generation_ = 1;
    }
    size_ = 0;
  }

  /// The number of `id` (0 for the first distinct id of the call, then 1,
  /// ...), and whether this call had not seen it before. At most the count
  /// given to reset() distinct ids.
  std::pair<int64_t, bool> insert(int64_t id) {
    size_t mask = keys_.size() - 1;
    // Multiplicative hashing, the product's high bits (another multiplier
    // than the one that splits a sparse update's ids between threads, whose
    // part's ids would otherwise crowd one stretch of the table).
    size_t slot = static_cast<size_t>((static_cast<uint64_t>(id) * 0xD6E8FEB86659FD93ull) >>
                                      (64 - bits_));
    while (stamps_[slot] == generation_ && keys_[slot] != id)
      slot = (slot + 1) & mask;
    if (stamps_[slot] == generation_)
      return {numbers_[slot], false};
    stamps_[slot] = generation_;
    keys_[slot] = id;
    numbers_[slot] = size_;
    return {size_++, true};
  }

  /// Distinct ids inserted since reset().
  int64_t size() const { return size_; }

private:
  std::vector<int64_t> keys_, numbers_;
  std::vector<uint32_t> stamps_;
  uint32_t generation_ = 0;
  int bits_ = 4;
  int64_t size_ = 0;
};

} // namespace kiln::cpu

#endif // KILN_RUNTIME_CPU_UNIQUEIDS_H
