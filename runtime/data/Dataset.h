//===- Dataset.h - Training data held in memory -----------------*- C++ -*-===//
//
// A data set is every example of a file in memory, one column per model input
// ("feed"). It is read from a numpy .npz archive (one array per feed), from a
// Criteo-layout text file (label, dense columns, categorical columns), or made
// up (syntheticDataset). Everything that could stop training later is checked
// while loading: names, dtypes, shapes, row counts, NaN and infinities, and
// ids outside their table; a bad row is reported before the first step.
//
// Every failure is one line, "PATH: error: PROBLEM", naming the array, input,
// row (counted from 1) and, for text files, the line at fault.
//
// Threading: the functions are reentrant; a loaded Dataset is immutable and
// may be shared by any number of readers (BatchReader.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DATA_DATASET_H
#define KILN_RUNTIME_DATA_DATASET_H

#include "runtime/cpu/HugePages.h"
#include "runtime/support/Fnv1a.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::data {

/// The element types of feeds.
enum class ElementType { F32, I32, I64 };

/// "f32", "i32" or "i64".
const char *elementTypeName(ElementType type);

/// Bytes per element: 4 or 8.
size_t elementSize(ElementType type);

/// One model input the data must provide, per example (the batch dimension
/// removed).
struct FeedSpec {
  std::string name; ///< Graph input name, e.g. "dense", "site", "click".
  ElementType type = ElementType::F32;
  /// {13} for a [B, 13] feed, {} for a [B] feed, {1} for [B, 1].
  std::vector<int64_t> exampleShape;
  /// For integer feeds: ids must lie in [0, idBound); 0 = unchecked.
  int64_t idBound = 0;
  /// For integer feeds: the example is a list of ids padded with -1 (an
  /// embedding bag's input), so -1 is allowed too.
  bool paddedIds = false;
  /// For integer feeds: the labels of a loss that ignores this label
  /// (PyTorch's ignore_index), so it is allowed too.
  std::optional<int64_t> ignoredId = std::nullopt;
};

/// Elements per example: the product of `spec.exampleShape` (1 for {}).
int64_t exampleElements(const FeedSpec &spec);

/// Bytes per example of the feed.
size_t exampleBytes(const FeedSpec &spec);

/// One feed's examples. A column of 2 MB or more lies on transparent huge
/// pages (cpu::HugePageAllocator): a shuffled batch reads its rows at
/// random, and on 4 KB pages nearly every row of a data set larger than the
/// TLB's reach is a page walk.
using DatasetColumn = std::vector<uint8_t, cpu::HugePageAllocator<uint8_t>>;

/// All examples of a data set in memory, one column per feed, row-major.
struct Dataset {
  std::string path; ///< For messages.
  int64_t rows = 0;
  std::vector<FeedSpec> specs;
  /// columns[i] holds rows * exampleElements(specs[i]) elements of
  /// specs[i].type, little-endian, example after example.
  std::vector<DatasetColumn> columns;
  int64_t skippedRows = 0; ///< Rows dropped by ReadOptions::skipBadRows.
};

struct ReadOptions {
  /// Drop bad rows (NaN or infinity in a float feed, an id out of range; in
  /// text files also a wrong number of fields or a field that is not a
  /// number) and count them in Dataset::skippedRows, instead of failing.
  bool skipBadRows = false;
};

/// Reads a numpy .npz archive (np.savez or np.savez_compressed): one array
/// "NAME.npy" per feed, of shape [rows] + exampleShape ([rows] and [rows, 1]
/// are interchangeable), all with the same number of rows. Other arrays are
/// ignored. Accepted dtypes: the feed's own, <f8 and <f2 and |b1 for f32
/// feeds, <i8 for i32 feeds when every value fits, <i4 for i64 feeds, |b1
/// for integer feeds.
bool loadNpz(const std::string &path, const std::vector<FeedSpec> &specs,
             const ReadOptions &options, Dataset &out, std::string &error);

/// Reads a Criteo-layout text file: a label, then dense columns, then
/// categorical columns, one example per line (docs/runtime.md, "Training
/// data"). Fields are separated by tabs or commas: by the extension
/// (.tsv, .csv), else by the first line (a tab if it has one, else a comma).
/// There is no quoting. A first line whose label field is not a number is a
/// header and is skipped; blank lines are ignored.
///
/// Feeds: `labelFeed` (f32 or integer, one element per example) gets the
/// label; the one f32 feed of shape {D} other than the label gets the D dense
/// columns (none: D = 0); the integer feeds, in `specs` order, get the
/// categorical columns, one each (shape {} or {1}), so their count must be
/// fields - 1 - D. A categorical string becomes fnv1a64(string) % idBound
/// (idBound > 0 required). An empty dense field is 0; an empty categorical
/// field hashes the empty string.
bool loadCriteo(const std::string &path, const std::vector<FeedSpec> &specs,
                const std::string &labelFeed, const ReadOptions &options,
                Dataset &out, std::string &error);

/// Opens `path` by its extension: .npz with loadNpz (`labelFeed` unused),
/// .csv, .tsv and .txt with loadCriteo; any other extension is an error
/// naming the file.
bool loadDataset(const std::string &path, const std::vector<FeedSpec> &specs,
                 const std::string &labelFeed, const ReadOptions &options,
                 Dataset &out, std::string &error);

/// A deterministic, learnable, CTR-like data set of `rows` examples
/// (docs/runtime.md, "Training data", gives the exact rule): floats N(0, 1);
/// ids log-uniform (Zipf-like) in [0, idBound), [0, 1000) where idBound is 0;
/// a float `labelFeed` gets 0/1 clicks from a hidden logistic model of the
/// other feeds, an integer one the class in [0, idBound) (2 classes where
/// idBound is 0) with the highest hidden linear score. Row i depends only on
/// (seed, i). Invalid specs or a negative `rows` throw
/// std::invalid_argument. An empty `labelFeed` makes every
/// feed a feature; a `labelFeed` not in `specs` throws
/// std::invalid_argument.
Dataset syntheticDataset(const std::vector<FeedSpec> &specs,
                         const std::string &labelFeed, int64_t rows,
                         uint64_t seed);

/// How loadCriteo turns categorical strings into ids (runtime/support/Fnv1a.h).
using kiln::fnv1a64;

} // namespace kiln::data

#endif // KILN_RUNTIME_DATA_DATASET_H
