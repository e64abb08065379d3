//===- MetricsJsonlTest.cpp - Training logs as JSON lines -----------------===//

#include "runtime/metrics/MetricsJsonl.h"
#include "runtime/support/JsonText.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sys/stat.h>

using namespace kiln::metrics;
using kiln::jsonNumber;
using kiln::jsonString;
using namespace kiln::test;

namespace {

std::string readText(const std::string &path) {
  std::vector<uint8_t> bytes = readFile(path);
  return std::string(bytes.begin(), bytes.end());
}

TEST(MetricsJsonlTest, Numbers) {
  EXPECT_EQ(jsonNumber(120), "120");
  EXPECT_EQ(jsonNumber(-3), "-3");
  EXPECT_EQ(jsonNumber(0), "0");
  EXPECT_EQ(jsonNumber(9007199254740991.0), "9007199254740991");
  EXPECT_EQ(jsonNumber(0.5), "0.5");
  EXPECT_EQ(jsonNumber(0.1), "0.1");
  EXPECT_EQ(jsonNumber(1e20), "1e+20");
  EXPECT_EQ(jsonNumber(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(jsonNumber(std::nan("")), "null");
  EXPECT_EQ(jsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(jsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

// Tests that every written double reads back exactly.
TEST(MetricsJsonlTest, NumbersRoundTrip) {
  std::mt19937_64 random(std::random_device{}());
  std::uniform_real_distribution<double> exponent(-30, 30);
  std::normal_distribution<double> mantissa;
  for (int i = 0; i < 10000; ++i) {
    double value = mantissa(random) * std::pow(10.0, exponent(random));
    std::string text = jsonNumber(value);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
    float single = float(value);
    EXPECT_EQ(std::strtod(jsonNumber(single).c_str(), nullptr), double(single));
  }
}

TEST(MetricsJsonlTest, Strings) {
  EXPECT_EQ(jsonString("loss"), "\"loss\"");
  EXPECT_EQ(jsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  // UTF-8 is kept; bytes that are not (a name from a graph file's escapes)
  // become the text \xNN, so the line stays valid JSON.
  EXPECT_EQ(jsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(jsonString("a\xff\xfe" "b\xe2\x82"), "\"a\\\\xff\\\\xfeb\\\\xe2\\\\x82\"");
}

// Tests the lines written, in field order, and that a reopened file is
// appended to.
TEST(MetricsJsonlTest, WritesLines) {
  TemporaryDirectory dir;
  std::string path = dir.file("metrics.jsonl");
  std::string error;
  {
    MetricsJsonl log;
    ASSERT_TRUE(log.open(path, error)) << error;
    ASSERT_TRUE(log.write({{"step", 1}, {"loss", 0.6931471805599453}}, error));
    // Each line is in the file as soon as it is written.
    EXPECT_EQ(readText(path), "{\"step\":1,\"loss\":0.6931471805599453}\n");
    ASSERT_TRUE(log.write({{"step", 2}, {"loss", std::nan("")}}, error));
  }
  MetricsJsonl log;
  ASSERT_TRUE(log.open(path, error)) << error;
  ASSERT_TRUE(log.write({}, error));
  EXPECT_EQ(readText(path), "{\"step\":1,\"loss\":0.6931471805599453}\n"
                            "{\"step\":2,\"loss\":null}\n"
                            "{}\n");
}

TEST(MetricsJsonlTest, OpenErrors) {
  TemporaryDirectory dir;
  MetricsJsonl log;
  std::string error;
  EXPECT_FALSE(log.open(dir.file("missing/metrics.jsonl"), error));
  EXPECT_EQ(error, dir.file("missing/metrics.jsonl") +
                       ": error: cannot open: No such file or directory");
  EXPECT_FALSE(log.write({{"step", 1}}, error));
  EXPECT_EQ(error, dir.file("missing/metrics.jsonl") +
                       ": error: cannot write: the file is not open");
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root, which ignores directory permissions";
  ASSERT_EQ(::mkdir(dir.file("ro").c_str(), 0500), 0);
  EXPECT_FALSE(log.open(dir.file("ro/metrics.jsonl"), error));
  EXPECT_EQ(error, dir.file("ro/metrics.jsonl") +
                       ": error: cannot open: Permission denied");
  ::rmdir(dir.file("ro").c_str());
}

} // namespace
