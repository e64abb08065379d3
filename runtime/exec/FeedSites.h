//===- FeedSites.h - Where a program holds its feeds' addresses -*- C++ -*-===//
//
// A session may bind a feed to the caller's bytes where they are instead of
// copying them into the feed's buffer (Session::borrowFeed): a batch the
// data set holds in one piece is then read in place, with no copy on the
// step's path. Every instruction that reads the feed must then read there.
// While a program is resolved, FeedSites hands out the buffers' addresses:
// through site(), for a pointer the step keeps and point() may later change
// (a kernel's argument, an f32 product's A or B, a sparse update's ids and
// rows), and through operator[] for every other use, which leaves a feed
// read so fixed in its buffer (always copied). A feed the program also
// fetches, or that an instruction writes, is fixed too. A feed's views (the
// buffers its binding lists: reshapes of it, at its offset) count as the
// feed; a feed whose binding lists none (an older artifact) is fixed.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_EXEC_FEEDSITES_H
#define KILN_RUNTIME_EXEC_FEEDSITES_H

#include "proto/kiln/artifact_generated.h"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::exec {

/// The address of every buffer of an artifact in one session's memory.
using BufferAddresses = std::vector<uint8_t *>;

class FeedSites {
public:
  FeedSites() = default;
  /// For resolving `program` against `addresses` (which must outlive the
  /// resolution, not this object).
  FeedSites(const BufferAddresses &addresses, const artifact::Program &program);

  /// The address of `buffer`, for a use point() cannot follow.
  uint8_t *operator[](uint32_t buffer) const;
  /// The address of `buffer`, stored by the caller in the pointer at
  /// `where` (a kernel argument, a step's field), which must stay put for
  /// the program's life; recorded when `buffer` is a feed.
  uint8_t *site(uint32_t buffer, const void *where) const;

  /// Whether point() can move feed buffer `buffer`: every read of it is a
  /// recorded site.
  bool movable(uint32_t buffer) const;
  /// Makes every recorded site of feed buffer `buffer` hold `address`.
  void point(uint32_t buffer, const void *address) const;

private:
  /// The feed buffer `buffer` is or views, or -1.
  int64_t feedOf(uint32_t buffer) const;

  const BufferAddresses *addresses_ = nullptr;
  /// Feed buffers and their views, by buffer: the feed's buffer.
  std::unordered_map<uint32_t, uint32_t> feeds_;
  mutable std::unordered_set<uint32_t> fixed_;
  mutable std::unordered_map<uint32_t, std::vector<void *>> sites_;
};

} // namespace kiln::exec

#endif // KILN_RUNTIME_EXEC_FEEDSITES_H
