//===- DataBatchReaderTest.cpp - Batches of a data set --------------------===//
//
// The data sets here hold each row's own index in an i64 feed, so every
// batch says which rows it was cut from.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/BatchReader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <thread>

using namespace kiln::data;

namespace {

/// `rows` rows: "row" (i64) = r, "pair" (f32 [2]) = {r, -r / 2}.
std::shared_ptr<const Dataset> indexedDataset(int64_t rows) {
  auto data = std::make_shared<Dataset>();
  data->path = "indexed";
  data->rows = rows;
  data->specs = {{"row", ElementType::I64, {}, 0},
                 {"pair", ElementType::F32, {2}, 0}};
  data->columns.resize(2);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&r);
    data->columns[0].insert(data->columns[0].end(), bytes, bytes + 8);
    float pair[2] = {float(r), -float(r) / 2};
    bytes = reinterpret_cast<const uint8_t *>(pair);
    data->columns[1].insert(data->columns[1].end(), bytes, bytes + 8);
  }
  return data;
}

/// The rows of one batch, after checking that the feeds agree.
std::vector<int64_t> rowsOf(const std::vector<std::vector<uint8_t>> &batch,
                            int64_t batchSize) {
  EXPECT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].size(), size_t(batchSize) * 8);
  EXPECT_EQ(batch[1].size(), size_t(batchSize) * 8);
  std::vector<int64_t> rows(batchSize);
  std::memcpy(rows.data(), batch[0].data(), batch[0].size());
  for (int64_t i = 0; i < batchSize; ++i) {
    float pair[2];
    std::memcpy(pair, batch[1].data() + i * 8, 8);
    EXPECT_EQ(pair[0], float(rows[i]));
    EXPECT_EQ(pair[1], -float(rows[i]) / 2);
  }
  return rows;
}

/// The rows of `count` batches from index `first`.
std::vector<std::vector<int64_t>> read(int64_t rows, BatchOptions options,
                                       int64_t first, int count) {
  BatchReader reader(indexedDataset(rows), options);
  reader.start(first);
  std::vector<std::vector<int64_t>> batches;
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(reader.nextIndex(), first + i);
    batches.push_back(rowsOf(reader.next(), options.batchSize));
  }
  EXPECT_EQ(reader.nextIndex(), first + count);
  return batches;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>> &batches) {
  std::vector<int64_t> all;
  for (const std::vector<int64_t> &batch : batches)
    all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

// SplitMix64 and the shuffle as BatchReader.h documents them, written out
// again so that the documented rule is what is tested.
uint64_t splitMix(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<int64_t> documentedPermutation(uint64_t seed, int64_t epoch,
                                           int64_t rows) {
  std::vector<int64_t> perm(rows);
  std::iota(perm.begin(), perm.end(), 0);
  uint64_t state = splitMix(seed ^ splitMix(uint64_t(epoch)));
  for (int64_t i = rows - 1; i > 0; --i) {
    uint64_t draw = splitMix(state);
    state += 0x9e3779b97f4a7c15ull;
    uint64_t j = uint64_t((unsigned __int128)draw * uint64_t(i + 1) >> 64);
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

TEST(DataBatchReaderTest, ReadsInOrderAndWrapsWithoutShrinking) {
  std::vector<std::vector<int64_t>> batches = read(10, {4}, 0, 4);
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batches[2], (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(batches[3], (std::vector<int64_t>{2, 3, 4, 5}));
  // A batch larger than the data set wraps more than once.
  EXPECT_EQ(read(3, {7}, 1, 1)[0], (std::vector<int64_t>{1, 2, 0, 1, 2, 0, 1}));
}

TEST(DataBatchReaderTest, ShufflesEachEpochAsDocumented) {
  const int64_t rows = 10;
  BatchOptions options{3, true, 42};
  // 10 batches of 3: three whole epochs.
  std::vector<int64_t> stream = flatten(read(rows, options, 0, 10));
  ASSERT_EQ(stream.size(), 30u);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> seen(stream.begin() + epoch * rows,
                              stream.begin() + (epoch + 1) * rows);
    EXPECT_EQ(seen, documentedPermutation(42, epoch, rows)) << epoch;
    std::sort(seen.begin(), seen.end());
    std::vector<int64_t> all(rows);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(seen, all) << "epoch " << epoch << " is not a permutation";
  }
  EXPECT_NE(
      std::vector<int64_t>(stream.begin(), stream.begin() + rows),
      std::vector<int64_t>(stream.begin() + rows, stream.begin() + 2 * rows));
}

TEST(DataBatchReaderTest, TheSeedDecidesTheShuffle) {
  BatchOptions options{5, true, 7};
  std::vector<std::vector<int64_t>> first = read(100, options, 0, 30);
  EXPECT_EQ(read(100, options, 0, 30), first);
  options.seed = 8;
  EXPECT_NE(read(100, options, 0, 30), first);
  options.shuffle = false;
  EXPECT_NE(read(100, options, 0, 30), first);
}

TEST(DataBatchReaderTest, StartingAtKEqualsSkippingKBatches) {
  for (bool shuffle : {false, true}) {
    BatchOptions options{7, shuffle, 3};
    std::vector<std::vector<int64_t>> all = read(23, options, 0, 40);
    for (int64_t k : {1, 3, 10, 33}) {
      std::vector<std::vector<int64_t>> resumed = read(23, options, k, 7);
      EXPECT_EQ(resumed, std::vector<std::vector<int64_t>>(all.begin() + k,
                                                           all.begin() + k + 7))
          << "start(" << k << "), shuffle " << shuffle;
    }
  }
}

TEST(DataBatchReaderTest, PrefetchDoesNotChangeTheBatches) {
  BatchOptions options{6, true, 11, 0};
  std::vector<std::vector<int64_t>> synchronous = read(50, options, 2, 40);
  for (int prefetch : {1, 2, 8}) {
    options.prefetch = prefetch;
    EXPECT_EQ(read(50, options, 2, 40), synchronous) << prefetch;
  }
}

// Tests that writing each batch straight into the caller's buffers (no
// prefetch, TrainingModel::bindBatch) gives the batches next() gives, over
// shuffled epochs and the wrap from the last row to the first.
TEST(DataBatchReaderTest, WritesBatchesIntoTheCallersBuffers) {
  BatchOptions options{6, true, 11, 0};
  std::vector<std::vector<int64_t>> expected = read(50, options, 2, 40);
  BatchReader reader(indexedDataset(50), options);
  reader.start(2);
  std::vector<std::vector<uint8_t>> batch = {std::vector<uint8_t>(reader.feedBytes(0)),
                                             std::vector<uint8_t>(reader.feedBytes(1))};
  for (size_t i = 0; i < expected.size(); ++i) {
    reader.nextInto({batch[0].data(), batch[1].data()});
    EXPECT_EQ(rowsOf(batch, 6), expected[i]) << "batch " << i;
  }
  EXPECT_EQ(reader.nextIndex(), 42);
}

// Tests that a shuffled batch gathered on several threads (one large enough
// to split: 16 bytes a row, 7,000 rows a batch, 3 threads of at least
// kGatherBytesPerThread each) holds what one thread gathers, batches that
// span two epochs included; and that with prefetch the reader's own thread
// gathers alone, the same rows.
TEST(DataBatchReaderTest, GathersShuffledBatchesOnSeveralThreads) {
  BatchOptions options{7000, true, 5, 0};
  ASSERT_GE(size_t(options.batchSize) * 16, 3 * kGatherBytesPerThread);
  std::vector<std::vector<int64_t>> alone = read(12000, options, 0, 5);
  options.gatherThreads = 3;
  EXPECT_EQ(read(12000, options, 0, 5), alone);
  options.prefetch = 1;
  EXPECT_EQ(read(12000, options, 0, 5), alone);
}

// Tests reading a batch where the data set holds it (no shuffle, no
// prefetch, TrainingModel::bindBatch): the pieces are the data set's own
// bytes for exactly the batches that lie in one piece, the others (those
// that wrap into the next epoch) are written as nextInto writes them, and
// the two ways together give the batches next() gives; replicas too.
TEST(DataBatchReaderTest, ReadsBatchesInPlaceWhereTheyLieInOnePiece) {
  for (int64_t replicas : {1, 2}) {
    BatchOptions options{6, false, 0, 0, replicas, replicas - 1};
    std::vector<std::vector<int64_t>> expected = read(50, options, 1, 30);
    std::shared_ptr<const Dataset> data = indexedDataset(50);
    BatchReader reader(data, options);
    reader.start(1);
    std::vector<std::vector<uint8_t>> batch = {std::vector<uint8_t>(reader.feedBytes(0)),
                                               std::vector<uint8_t>(reader.feedBytes(1))};
    int inPlace = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      std::vector<const uint8_t *> pieces;
      uint64_t first = ((i + 1) * replicas + replicas - 1) * 6 % 50;
      if (reader.nextInPlace(pieces)) {
        ++inPlace;
        EXPECT_LE(first + 6, 50u) << "batch " << i;
        ASSERT_EQ(pieces.size(), 2u);
        EXPECT_EQ(pieces[0], data->columns[0].data() + first * 8) << "batch " << i;
        EXPECT_EQ(pieces[1], data->columns[1].data() + first * 8) << "batch " << i;
        std::memcpy(batch[0].data(), pieces[0], batch[0].size());
        std::memcpy(batch[1].data(), pieces[1], batch[1].size());
      } else {
        EXPECT_GT(first + 6, 50u) << "batch " << i;
        reader.nextInto({batch[0].data(), batch[1].data()});
      }
      EXPECT_EQ(rowsOf(batch, 6), expected[i]) << "batch " << i;
    }
    EXPECT_GT(inPlace, 20);
    EXPECT_EQ(reader.nextIndex(), 31);
  }
  // Shuffled or prefetched batches are never in place; before start(), an error.
  std::vector<const uint8_t *> pieces;
  BatchReader shuffled(indexedDataset(50), {6, true, 11, 0});
  EXPECT_THROW(shuffled.nextInPlace(pieces), std::logic_error);
  shuffled.start(0);
  EXPECT_FALSE(shuffled.nextInPlace(pieces));
  EXPECT_EQ(shuffled.nextIndex(), 0);
  BatchReader prefetched(indexedDataset(50), {6, false, 0, 2});
  prefetched.start(0);
  EXPECT_FALSE(prefetched.nextInPlace(pieces));
}

TEST(DataBatchReaderTest, RestartsFromAnyIndex) {
  BatchOptions options{4, true, 5, 3};
  BatchReader reader(indexedDataset(9), options);
  std::vector<std::vector<int64_t>> expected = read(9, options, 0, 12);
  reader.start(0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(rowsOf(reader.next(), 4), expected[i]);
  reader.start(2);
  EXPECT_EQ(reader.nextIndex(), 2);
  for (int i = 2; i < 12; ++i)
    EXPECT_EQ(rowsOf(reader.next(), 4), expected[i]);
}

TEST(DataBatchReaderTest, StopsWhileTheProducerWaits) {
  // The destructor joins a thread that has filled every slot.
  BatchReader reader(indexedDataset(5), {2, false, 0, 4});
  reader.start(0);
  EXPECT_EQ(rowsOf(reader.next(), 2), (std::vector<int64_t>{0, 1}));
}

// Tests a reader with a core of its own (pollForFreeSlots): it looks for the
// slot next() frees by itself, between sleeps sized to the steps' pace. The
// same batches whether the steps come at once or far apart (past
// kMaxPollNanos); stopping while it sleeps between looks returns.
TEST(DataBatchReaderTest, FindsFreedSlotsWithoutBeingWoken) {
  BatchOptions options{6, true, 11, 0};
  std::vector<std::vector<int64_t>> expected = read(50, options, 0, 12);
  options.pollForFreeSlots = true;
  for (int prefetch : {1, 3}) {
    options.prefetch = prefetch;
    EXPECT_EQ(read(50, options, 0, 12), expected) << prefetch;
    BatchReader reader(indexedDataset(50), options);
    reader.start(0);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(rowsOf(reader.next(), 6), expected[i]) << prefetch << " batch " << i;
      std::this_thread::sleep_for(std::chrono::nanoseconds(3 * kMaxPollNanos));
    }
  }
  BatchReader polling(indexedDataset(50), options);
  polling.start(0);
  polling.next();
}

TEST(DataBatchReaderTest, RefusesInvalidUse) {
  EXPECT_THROW(BatchReader(indexedDataset(0), {1}), std::invalid_argument);
  EXPECT_THROW(BatchReader(nullptr, {1}), std::invalid_argument);
  EXPECT_THROW(BatchReader(indexedDataset(3), {0}), std::invalid_argument);
  EXPECT_THROW(BatchReader(indexedDataset(3), {1, false, 0, -1}),
               std::invalid_argument);
  BatchReader reader(indexedDataset(3), {1});
  EXPECT_THROW(reader.next(), std::logic_error);
  EXPECT_THROW(reader.start(-1), std::invalid_argument);
  // nextInto: only after start, without prefetch, one buffer per feed.
  uint8_t row[8], pair[8];
  BatchReader direct(indexedDataset(3), {1, false, 0, 0});
  EXPECT_THROW(direct.nextInto({row, pair}), std::logic_error);
  direct.start(0);
  EXPECT_THROW(direct.nextInto({row}), std::logic_error);
  reader.start(0);
  EXPECT_THROW(reader.nextInto({row, pair}), std::logic_error);
}

} // namespace
