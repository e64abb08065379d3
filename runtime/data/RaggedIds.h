//===- RaggedIds.h - Ragged id lists padded to a fixed length ---*- C++ -*-===//
//
// A multi-hot input (an embedding bag's id lists) may come ragged, as
// TensorFlow's RaggedTensor stores it: a flat `values` array of ids and
// `row_splits` ([rows + 1] offsets into it; row i holds
// values[row_splits[i] : row_splits[i + 1]]). The model takes [rows, L]
// lists padded with -1; padRaggedIds builds that array.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_RAGGEDIDS_H
#define KILN_RUNTIME_DATA_RAGGEDIDS_H

#include "runtime/data/Npy.h"

#include <string>

namespace kiln::data {

/// Pads the ragged lists (`values` and `rowSplits`, integer arrays of rank 1)
/// to an int64 array [rows, listLength], -1 after each list's ids. On bad
/// input returns false with `problem` naming the array and the row or
/// offset ("row_splits[3] = 7 is below row_splits[2] = 9").
bool padRaggedIds(const NpyArray &values, const NpyArray &rowSplits, int64_t listLength,
                  NpyArray &padded, std::string &problem);

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_RAGGEDIDS_H
