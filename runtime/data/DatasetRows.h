//===- DatasetRows.h - Checks the data set readers share --------*- C++ -*-===//
//
// Internal to runtime/data: spec checks, per-row value checks and the
// message format the .npz and text readers have in common.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_DATASETROWS_H
#define KILN_RUNTIME_DATA_DATASETROWS_H

#include "runtime/data/Dataset.h"

#include <string>
#include <vector>

namespace kiln::data {

/// printableText("PATH: error: PROBLEM").
std::string dataError(const std::string &path, const std::string &problem);

/// "[13]", "[]", "[2, 3]".
std::string shapeText(const std::vector<int64_t> &shape);

/// Checks what a caller asks for: non-empty, distinct names; dimensions of
/// at least 1; idBound >= 0, and 0 for f32 feeds. Sets `problem` on failure.
bool checkSpecs(const std::vector<FeedSpec> &specs, std::string &problem);

/// The first problem of example `row` of `data` ("input NAME: NaN",
/// "input NAME: id 12 out of range [0, 10)", with " at [k]" for feeds of
/// more than one element), or "" when it has none.
std::string rowProblem(const Dataset &data, int64_t row);

/// Keeps the rows of `data` whose `bad` entry is false, in order; counts the
/// others in skippedRows.
void dropRows(Dataset &data, const std::vector<bool> &bad);

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_DATASETROWS_H
