//===- HashEviction.cpp - Removing hash rows by age or frequency ----------===//
//
// The eviction half of HashPolicy (ShardStore.h): after each applied
// update, rows untouched for more than `evictTtl` steps go, then each table
// keeps at most `maxRows` rows, dropping the least often pulled (then the
// longest untouched, then the smallest id, so every server decides alike).
//
//===----------------------------------------------------------------------===//

#include "runtime/ps/ShardStore.h"

#include <algorithm>
#include <cstring>

namespace kiln::ps {

void ShardStore::evictRows(int64_t step) {
  if (policy_.evictTtl <= 0 && policy_.maxRows <= 0)
    return;
  for (VariableState &state : variables_) {
    HashPart &part = state.hash;
    // Rows waiting for an update keep their places (none do after apply()).
    if (!state.shards.isHash() || !part.pushedRowIds.empty())
      continue;
    std::vector<int64_t> doomed;
    if (policy_.evictTtl > 0)
      for (size_t row = 0; row < part.ids.size(); ++row)
        if (step - part.lastSeen[row] > policy_.evictTtl)
          doomed.push_back(static_cast<int64_t>(row));
    int64_t kept = static_cast<int64_t>(part.ids.size() - doomed.size());
    if (policy_.maxRows > 0 && kept > policy_.maxRows) {
      std::vector<bool> going(part.ids.size(), false);
      for (int64_t row : doomed)
        going[row] = true;
      std::vector<int64_t> candidates;
      for (size_t row = 0; row < part.ids.size(); ++row)
        if (!going[row])
          candidates.push_back(static_cast<int64_t>(row));
      auto colder = [&](int64_t a, int64_t b) {
        if (part.pulls[a] != part.pulls[b])
          return part.pulls[a] < part.pulls[b];
        if (part.lastSeen[a] != part.lastSeen[b])
          return part.lastSeen[a] < part.lastSeen[b];
        return part.ids[a] < part.ids[b];
      };
      size_t excess = static_cast<size_t>(kept - policy_.maxRows);
      std::nth_element(candidates.begin(), candidates.begin() + excess, candidates.end(), colder);
      doomed.insert(doomed.end(), candidates.begin(), candidates.begin() + excess);
    }
    state.counters.rowsEvicted += static_cast<int64_t>(doomed.size());
    removeHashRows(state, std::move(doomed));
  }
}

void ShardStore::removeHashRows(VariableState &state, std::vector<int64_t> rows) {
  HashPart &part = state.hash;
  RowBlock &block = part.block;
  size_t width = static_cast<size_t>(block.width);
  // From the highest row down, each moves the last row into its place.
  std::sort(rows.rbegin(), rows.rend());
  for (int64_t row : rows) {
    size_t last = part.ids.size() - 1;
    part.rowOf.erase(part.ids[row]);
    if (static_cast<size_t>(row) != last) {
      std::memcpy(block.values.data() + row * width, block.values.data() + last * width,
                  width * sizeof(float));
      for (FloatRows &slot : block.slots)
        std::memcpy(slot.data() + row * width, slot.data() + last * width, width * sizeof(float));
      part.ids[row] = part.ids[last];
      part.pulls[row] = part.pulls[last];
      part.lastSeen[row] = part.lastSeen[last];
      part.rowOf[part.ids[row]] = row;
    }
    block.values.resize(last * width);
    for (FloatRows &slot : block.slots)
      slot.resize(last * width);
    part.ids.pop_back();
    part.pulls.pop_back();
    part.lastSeen.pop_back();
  }
}

} // namespace kiln::ps
