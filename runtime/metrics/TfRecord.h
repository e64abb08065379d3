//===- TfRecord.h - TFRecord framing ----------------------------*- C++ -*-===//
//
// The record framing of TensorFlow's record files, which TensorBoard event
// files use. Each record is
//
//   uint64 length (little-endian)
//   uint32 masked CRC-32C of those 8 length bytes
//   length bytes of data
//   uint32 masked CRC-32C of the data
//
// with the mask of maskCrc32c() (Crc32c.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_TFRECORD_H
#define KILN_RUNTIME_METRICS_TFRECORD_H

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::metrics {

/// Appends the framed record holding `size` bytes at `data` to `out`.
void appendTfRecord(std::string &out, const void *data, size_t size);

/// Reads every record of the file at `path`, checking both CRCs of each and
/// each length against what is left of the file before allocating. On
/// failure sets `error` to "PATH: error: record at byte OFFSET: PROBLEM" (or
/// "PATH: error: cannot read: REASON") and returns false.
bool readTfRecords(const std::string &path, std::vector<std::string> &records,
                   std::string &error);

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_TFRECORD_H
