//===- SyntheticFeeds.h - Made-up feeds and fetch summaries -----*- C++ -*-===//
//
// For smoke runs and benchmarks without data files (kiln run
// --synthetic-feeds, --summary).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_SYNTHETICFEEDS_H
#define KILN_TOOLS_KILN_SYNTHETICFEEDS_H

#include "runtime/api/kiln.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tool {

/// Deterministic data for a feed, drawn from a stream seeded by its name:
/// floats uniform in [-1, 1), integers uniform in [0, 10), or in [0,
/// idBound) where the feed's ids must lie below a smaller bound (a table's
/// rows, a loss's classes), bools 0 or 1.
std::vector<uint8_t> syntheticFeed(const kiln_tensor_info &info, int64_t idBound = 0);

/// "NAME f32[64, 10]: min -0.5, mean 0.1, max 2.3" for a fetch's bytes.
std::string summarizeTensor(const kiln_tensor_info &info,
                            const std::vector<uint8_t> &bytes);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_SYNTHETICFEEDS_H
