//===- MetricsBackgroundWriterTest.cpp - Metrics off the step's path ------===//

#include "runtime/metrics/BackgroundWriter.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::metrics {
namespace {

TEST(BackgroundWriterTest, WritesRunInOrder) {
  std::vector<int> written;
  std::string error;
  {
    BackgroundWriter writer(4); // Fewer than the posts: posting waits.
    for (int i = 0; i < 100; ++i)
      ASSERT_TRUE(writer.post(
          [&written, i](std::string &) {
            written.push_back(i);
            return true;
          },
          error))
          << error;
    ASSERT_TRUE(writer.drain(error)) << error;
    EXPECT_EQ(written.size(), 100u);
    for (int i = 0; i < 100; ++i)
      EXPECT_EQ(written[i], i);
  }
}

TEST(BackgroundWriterTest, TheFirstFailureStopsTheRest) {
  std::vector<int> written;
  std::string error;
  BackgroundWriter writer;
  ASSERT_TRUE(writer.post(
      [&](std::string &failure) {
        failure = "m.jsonl: error: cannot write: No space left on device";
        return false;
      },
      error));
  ASSERT_FALSE(writer.drain(error));
  EXPECT_EQ(error, "m.jsonl: error: cannot write: No space left on device");
  error.clear();
  EXPECT_FALSE(writer.post(
      [&](std::string &) {
        written.push_back(1);
        return true;
      },
      error));
  EXPECT_EQ(error, "m.jsonl: error: cannot write: No space left on device");
  EXPECT_TRUE(written.empty());
}

TEST(BackgroundWriterTest, TheDestructorFinishesQueuedWrites) {
  int written = 0;
  std::string error;
  {
    BackgroundWriter writer;
    for (int i = 0; i < 10; ++i)
      ASSERT_TRUE(writer.post(
          [&written](std::string &) {
            ++written;
            return true;
          },
          error));
  }
  EXPECT_EQ(written, 10);
}

} // namespace
} // namespace kiln::metrics
