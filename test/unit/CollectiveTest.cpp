//===- CollectiveTest.cpp - Collectives between threads -------------------===//
//
// Ranks are threads of this process meeting in a MemoryStore and talking
// over loopback (Gloo) or in shared memory, as `kiln run --replicas N`
// does; every wait is bounded by the group's timeout.
//
//===----------------------------------------------------------------------===//

#include "runtime/collective/AllReduceBuckets.h"
#include "runtime/collective/Collective.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <unistd.h>

namespace kiln::collective {
namespace {

using namespace std::chrono_literals;

/// Runs `body(rank, collective)` on `size` threads, one connected rank each.
/// With `finishTogether`, the ranks meet at a barrier before they close
/// their connections (as the training loop's replicas do): a rank closing a
/// connection with bytes it has not read resets it under a peer still
/// reading.
void onRanks(int size, AllReduceAlgorithm algorithm,
             const std::function<void(int, Collective &)> &body,
             std::chrono::milliseconds timeout = 20s, bool finishTogether = true,
             bool sharedMemory = false) {
  MemoryStore store;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank)
    threads.emplace_back([&, rank] {
      GlooOptions options;
      options.rank = rank;
      options.size = size;
      options.algorithm = algorithm;
      options.timeout = timeout;
      std::string error;
      std::unique_ptr<Collective> collective = sharedMemory
                                                   ? connectCollective(store, options, error)
                                                   : connectGloo(store, options, error);
      ASSERT_TRUE(collective) << error;
      body(rank, *collective);
      if (finishTogether) {
        EXPECT_TRUE(collective->barrier(1000, error)) << error;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
}

class AllReduceTest
    : public ::testing::TestWithParam<std::tuple<int, AllReduceAlgorithm, size_t>> {};

// Tests that every algorithm sums each element over the ranks, for a
// message below and above the size where `auto` switches algorithms.
TEST_P(AllReduceTest, SumsOverRanks) {
  auto [size, algorithm, count] = GetParam();
  onRanks(size, algorithm, [&, count = count, size = size](int rank, Collective &c) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i)
      data[i] = static_cast<float>(rank + 1) * static_cast<float>(i % 97);
    std::string error;
    ASSERT_TRUE(c.allReduceSum(data.data(), count, /*tag=*/0, error)) << error;
    float ranks = static_cast<float>(size * (size + 1) / 2);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(data[i], ranks * static_cast<float>(i % 97)) << "element " << i;
  });
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, AllReduceTest,
    ::testing::Combine(::testing::Values(2, 3, 4),
                       ::testing::Values(AllReduceAlgorithm::Ring,
                                         AllReduceAlgorithm::HalvingDoubling,
                                         AllReduceAlgorithm::Bcube, AllReduceAlgorithm::Auto),
                       ::testing::Values(size_t(1000), size_t(300000))));

// Tests that a broadcast gives every rank the root's bytes.
TEST(CollectiveTest, BroadcastsFromRoot) {
  onRanks(3, AllReduceAlgorithm::Auto, [](int rank, Collective &c) {
    std::vector<uint8_t> bytes(1001, static_cast<uint8_t>(rank));
    std::string error;
    ASSERT_TRUE(c.broadcast(bytes.data(), bytes.size(), /*root=*/1, 7, error)) << error;
    for (uint8_t byte : bytes)
      ASSERT_EQ(byte, 1);
    ASSERT_TRUE(c.barrier(8, error)) << error;
  });
}

// Tests that buckets in flight together come back each with its own mean,
// whatever order the waits are in.
TEST(CollectiveTest, BucketsAverageConcurrently) {
  onRanks(2, AllReduceAlgorithm::Ring, [](int rank, Collective &c) {
    // The buckets own the collective from here; it outlives the test body.
    std::shared_ptr<Collective> shared(&c, [](Collective *) {});
    AllReduceBuckets buckets;
    buckets.setCollective(shared);
    std::vector<float> a(5000, rank == 0 ? 1.0f : 3.0f), b(7, rank == 0 ? 10.0f : 20.0f);
    std::vector<float> outA(a.size(), -1), outB(b.size(), -1);
    std::string error;
    ASSERT_TRUE(buckets.start(0, {{a.data(), a.size() * 4}}, error)) << error;
    ASSERT_TRUE(buckets.start(1, {{b.data(), b.size() * 4}}, error)) << error;
    // The inputs were copied at the start: overwriting them changes nothing.
    std::fill(a.begin(), a.end(), 1e9f);
    ASSERT_TRUE(buckets.wait(1, /*mean=*/true, {{outB.data(), outB.size() * 4}}, error)) << error;
    ASSERT_TRUE(buckets.wait(0, /*mean=*/false, {{outA.data(), outA.size() * 4}}, error)) << error;
    for (float x : outA)
      ASSERT_EQ(x, 4.0f);
    for (float x : outB)
      ASSERT_EQ(x, 15.0f);
    EXPECT_EQ(buckets.totals().count, 2u);
  });
}

// Tests that an all-gather lays every rank's bytes out in rank order.
TEST(CollectiveTest, AllGathersInRankOrder) {
  onRanks(3, AllReduceAlgorithm::Auto, [](int rank, Collective &c) {
    std::vector<uint8_t> mine(5, static_cast<uint8_t>(10 + rank)), all(15);
    std::string error;
    ASSERT_TRUE(c.allGather(mine.data(), mine.size(), all.data(), 3, error)) << error;
    for (size_t i = 0; i < all.size(); ++i)
      ASSERT_EQ(all[i], 10 + i / 5) << "byte " << i;
  });
}

// Tests that a sparse bucket gathers every rank's ids and rows, the rows
// divided by the group size for a mean, next to a dense bucket in flight.
TEST(CollectiveTest, GathersSparseBuckets) {
  onRanks(2, AllReduceAlgorithm::Ring, [](int rank, Collective &c) {
    std::shared_ptr<Collective> shared(&c, [](Collective *) {});
    AllReduceBuckets buckets;
    buckets.setCollective(shared);
    std::vector<int64_t> ids = {rank * 10, rank * 10 + 1};
    std::vector<float> rows = {1.0f + rank, 2.0f + rank, 3.0f + rank, 4.0f + rank};
    std::vector<float> dense(3, 1.0f), out(3);
    std::string error;
    ASSERT_TRUE(buckets.start(0, {{dense.data(), 12}}, error)) << error;
    ASSERT_TRUE(buckets.startGather(1, {ids.data(), 16}, {rows.data(), 16}, error)) << error;
    ASSERT_TRUE(buckets.wait(0, true, {{out.data(), 12}}, error)) << error;
    ASSERT_TRUE(buckets.waitGather(1, /*mean=*/true, error)) << error;
    AllReduceBuckets::Gathered all = buckets.gathered(1);
    ASSERT_EQ(all.replicas, 2u);
    const auto *allIds = static_cast<const int64_t *>(all.ids);
    EXPECT_EQ(std::vector<int64_t>(allIds, allIds + 4), (std::vector<int64_t>{0, 1, 10, 11}));
    EXPECT_EQ(std::vector<float>(all.rows, all.rows + 8),
              (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f, 1.0f, 1.5f, 2.0f, 2.5f}));
  });
}

// Tests that a group of one copies the bucket back without a thread.
TEST(CollectiveTest, GroupOfOneCopies) {
  AllReduceBuckets buckets;
  std::vector<float> in = {1, 2, 3}, out(3);
  std::string error;
  ASSERT_TRUE(buckets.start(4, {{in.data(), 12}}, error));
  ASSERT_TRUE(buckets.wait(4, true, {{out.data(), 12}}, error));
  EXPECT_EQ(out, in);
  EXPECT_FALSE(buckets.wait(5, true, {{out.data(), 12}}, error));
  EXPECT_EQ(error, "all-reduce tag 5 waited for but never started");
  int32_t ids[2] = {3, 4};
  ASSERT_TRUE(buckets.startGather(6, {ids, 8}, {in.data(), 8}, error));
  ASSERT_TRUE(buckets.waitGather(6, true, error));
  AllReduceBuckets::Gathered all = buckets.gathered(6);
  EXPECT_EQ(all.replicas, 1u);
  EXPECT_EQ(static_cast<const int32_t *>(all.ids)[1], 4);
  EXPECT_EQ(all.rows[1], 2.0f);
}

// Tests that when a rank goes away, the others' all-reduce fails well
// within the timeout (its connections close) and the group stays failed.
TEST(CollectiveTest, LostPeerFailsTheOthers) {
  auto begin = std::chrono::steady_clock::now();
  std::atomic<int> failures{0};
  onRanks(
      3, AllReduceAlgorithm::Ring,
      [&](int rank, Collective &c) {
        std::vector<float> data(100000, 1.0f);
        std::string error;
        ASSERT_TRUE(c.allReduceSum(data.data(), data.size(), 0, error)) << error;
        if (rank == 2)
          return; // Its connections close when onRanks drops it.
        if (!c.allReduceSum(data.data(), data.size(), 1, error)) {
          ++failures;
          EXPECT_NE(error.find("all-reduce failed on rank " + std::to_string(rank) + " of 3"),
                    std::string::npos)
              << error;
          std::string again;
          EXPECT_FALSE(c.allReduceSum(data.data(), 1, 2, again));
          EXPECT_EQ(again, error);
        }
      },
      /*timeout=*/30s, /*finishTogether=*/false);
  EXPECT_EQ(failures.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 20s);
}

// Tests that a rendezvous nobody joins ends at the timeout with the key.
TEST(CollectiveTest, RendezvousTimesOut) {
  MemoryStore store;
  GlooOptions options;
  options.rank = 0;
  options.size = 2;
  options.timeout = 500ms;
  std::string error;
  EXPECT_FALSE(connectGloo(store, options, error));
  EXPECT_NE(error.find("cannot connect rank 0 of 2"), std::string::npos) << error;
  EXPECT_NE(error.find("timed out after 500 ms"), std::string::npos) << error;
}

/// Runs `body` on `size` ranks meeting in shared memory.
void onSharedRanks(int size, const std::function<void(int, Collective &)> &body,
                   std::chrono::milliseconds timeout = 20s, bool finishTogether = true) {
  onRanks(size, AllReduceAlgorithm::Auto, body, timeout, finishTogether, /*sharedMemory=*/true);
}

// Tests that ranks on one host meet in shared memory (the store names the
// segment; /dev/shm holds nothing once they have met) and that the sums
// cover messages of several chunks, bit for bit the same on every rank
// (each element is summed in rank order by one rank).
TEST(SharedMemoryCollectiveTest, SumsInRankOrderAcrossChunks) {
  for (int size : {2, 3}) {
    for (size_t count : {size_t(1), size_t(1000), size_t(700001)}) {
      std::vector<std::vector<float>> results(size);
      onSharedRanks(size, [&](int rank, Collective &c) {
        std::vector<float> data(count);
        for (size_t i = 0; i < count; ++i)
          data[i] = 0.1f * static_cast<float>(rank + 1) + 1e-3f * static_cast<float>(i % 89);
        std::string error;
        ASSERT_TRUE(c.allReduceSum(data.data(), count, 0, error)) << error;
        results[rank] = data;
      });
      for (size_t i = 0; i < count; ++i) {
        float want = 0.0f;
        for (int r = 0; r < size; ++r)
          want += 0.1f * static_cast<float>(r + 1) + 1e-3f * static_cast<float>(i % 89);
        ASSERT_EQ(results[0][i], want) << "element " << i << " of " << count;
      }
      for (int r = 1; r < size; ++r)
        EXPECT_EQ(results[r], results[0]) << "rank " << r;
    }
  }
}

// Tests all-gather and broadcast over several chunks, an empty all-gather,
// and that connectCollective chose shared memory.
TEST(SharedMemoryCollectiveTest, GathersAndBroadcastsAcrossChunks) {
  MemoryStore store;
  const size_t bytes = (3 << 20) + 5;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank)
    threads.emplace_back([&, rank] {
      GlooOptions options;
      options.rank = rank;
      options.size = 3;
      options.timeout = 20s;
      std::string error;
      std::unique_ptr<Collective> c = connectCollective(store, options, error);
      ASSERT_TRUE(c) << error;
      std::vector<uint8_t> mine(bytes), all(3 * bytes);
      for (size_t i = 0; i < bytes; ++i)
        mine[i] = static_cast<uint8_t>(i * 7 + rank);
      ASSERT_TRUE(c->allGather(mine.data(), bytes, all.data(), 1, error)) << error;
      for (int r = 0; r < 3; ++r)
        for (size_t i = 0; i < bytes; i += 4099)
          ASSERT_EQ(all[r * bytes + i], static_cast<uint8_t>(i * 7 + r));
      ASSERT_TRUE(c->allGather(mine.data(), 0, all.data(), 2, error)) << error;
      ASSERT_TRUE(c->broadcast(mine.data(), bytes, /*root=*/2, 3, error)) << error;
      for (size_t i = 0; i < bytes; i += 4099)
        ASSERT_EQ(mine[i], static_cast<uint8_t>(i * 7 + 2));
      ASSERT_TRUE(c->barrier(4, error)) << error;
    });
  for (std::thread &thread : threads)
    thread.join();
  std::string name, error;
  ASSERT_TRUE(store.get("gloo/shm/name", name, error)) << error;
  if (name.empty() && access("/dev/shm", W_OK) != 0)
    GTEST_SKIP() << "no writable /dev/shm: the members fell back to Gloo";
  ASSERT_FALSE(name.empty()) << "the members fell back to Gloo with /dev/shm writable";
  EXPECT_NE(access(("/dev/shm" + name).c_str(), F_OK), 0) << name << " was left behind";
}

// Tests that a member leaving makes the others fail at once, naming their
// rank, and that the group stays failed; and that a member waiting for one
// that never comes fails at the timeout.
TEST(SharedMemoryCollectiveTest, LostOrLateMembersFailTheOthers) {
  auto begin = std::chrono::steady_clock::now();
  std::atomic<int> failures{0};
  onSharedRanks(
      3,
      [&](int rank, Collective &c) {
        std::vector<float> data(1000, 1.0f);
        std::string error;
        ASSERT_TRUE(c.allReduceSum(data.data(), data.size(), 0, error)) << error;
        if (rank == 2)
          return; // Destroyed when onRanks drops it.
        if (!c.allReduceSum(data.data(), data.size(), 1, error)) {
          ++failures;
          EXPECT_NE(error.find("all-reduce failed on rank " + std::to_string(rank) + " of 3"),
                    std::string::npos)
              << error;
          EXPECT_TRUE(isCollectiveFailure(error)) << error;
          std::string again;
          EXPECT_FALSE(c.allReduceSum(data.data(), 1, 2, again));
          EXPECT_EQ(again, error);
        }
      },
      /*timeout=*/30s, /*finishTogether=*/false);
  EXPECT_EQ(failures.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s);

  std::atomic<bool> timedOut{false};
  onSharedRanks(
      2,
      [&](int rank, Collective &c) {
        std::string error;
        if (rank == 1) {
          std::this_thread::sleep_for(1500ms); // Late, then gone.
          return;
        }
        std::vector<float> data(10, 1.0f);
        EXPECT_FALSE(c.allReduceSum(data.data(), data.size(), 0, error));
        timedOut = error.find("timed out after 500 ms") != std::string::npos;
        EXPECT_TRUE(timedOut) << error;
      },
      /*timeout=*/500ms, /*finishTogether=*/false);
  EXPECT_TRUE(timedOut.load());
}

} // namespace
} // namespace kiln::collective
