//===- MetricsEventWriterTest.cpp - TensorBoard event files ---------------===//

#include "runtime/metrics/Crc32c.h"
#include "runtime/metrics/EventWriter.h"
#include "runtime/metrics/TfRecord.h"

#include "proto/tensorboard/event.pb.h"
#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>

using namespace kiln::metrics;
using namespace kiln::test;

namespace {

/// Parses one TFRecord payload as an Event; fails the test if it is not one.
tensorflow::Event parseEvent(const std::string &record) {
  tensorflow::Event event;
  EXPECT_TRUE(event.ParseFromString(record));
  return event;
}

// Tests CRC-32C against the check value and the vectors of RFC 3720, B.4.
TEST(MetricsCrc32cTest, KnownVectors) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = uint8_t(i);
    down[i] = uint8_t(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up.data(), up.size()), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down.data(), down.size()), 0x113FDB5Cu);
}

// Tests that a CRC continued over pieces equals the CRC of the whole, for
// every split (which exercises the 8-byte and the 1-byte loops).
TEST(MetricsCrc32cTest, ContinuesAcrossPieces) {
  std::string text = "The quick brown fox jumps over the lazy dog, twice.";
  uint32_t whole = crc32c(text.data(), text.size());
  for (size_t split = 0; split <= text.size(); ++split)
    EXPECT_EQ(crc32c(text.data() + split, text.size() - split,
                     crc32c(text.data(), split)),
              whole)
        << "split at " << split;
}

TEST(MetricsCrc32cTest, Mask) {
  uint32_t crc = 0xE3069283u;
  EXPECT_EQ(maskCrc32c(crc), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

// Tests the framing byte by byte for a known payload.
TEST(MetricsTfRecordTest, Framing) {
  std::string framed;
  appendTfRecord(framed, "abc", 3);
  ASSERT_EQ(framed.size(), 8u + 4 + 3 + 4);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  uint32_t lengthCrc, dataCrc;
  std::memcpy(&lengthCrc, framed.data() + 8, 4);
  std::memcpy(&dataCrc, framed.data() + 15, 4);
  EXPECT_EQ(lengthCrc, maskCrc32c(crc32c(framed.data(), 8)));
  EXPECT_EQ(framed.substr(12, 3), "abc");
  EXPECT_EQ(dataCrc, maskCrc32c(crc32c("abc", 3)));
}

// Tests that readTfRecords() refuses a flipped byte, a truncated record and
// a length beyond the file, naming the record's offset.
TEST(MetricsTfRecordTest, ReaderRejectsDamage) {
  TemporaryDirectory dir;
  std::string framed;
  appendTfRecord(framed, "first", 5);
  size_t second = framed.size();
  appendTfRecord(framed, "second", 6);
  auto errorFor = [&](const std::string &bytes) {
    writeFile(dir.file("r"), std::vector<uint8_t>(bytes.begin(), bytes.end()));
    std::vector<std::string> records;
    std::string error;
    EXPECT_FALSE(readTfRecords(dir.file("r"), records, error));
    return error;
  };
  std::string prefix = dir.file("r") + ": error: record at byte " +
                       std::to_string(second) + ": ";
  std::string flipped = framed;
  flipped[second + 13] ^= 1;
  EXPECT_EQ(errorFor(flipped), prefix + "data CRC mismatch");
  std::string badLength = framed;
  badLength[second] = 7;
  EXPECT_EQ(errorFor(badLength), prefix + "length CRC mismatch");
  EXPECT_EQ(errorFor(framed.substr(0, framed.size() - 1)),
            prefix + "length 6 is beyond the end of the file (9 bytes left)");
  EXPECT_EQ(errorFor(framed.substr(0, second + 5)),
            prefix + "truncated length header (5 bytes left)");

  writeFile(dir.file("r"), std::vector<uint8_t>(framed.begin(), framed.end()));
  std::vector<std::string> records;
  std::string error;
  ASSERT_TRUE(readTfRecords(dir.file("r"), records, error)) << error;
  EXPECT_EQ(records, (std::vector<std::string>{"first", "second"}));
}

// Tests a written file end to end: its name, CRCs, the file_version event
// first, then one Event{wall_time, step, summary{value{tag, simple_value}}}
// per scalar.
TEST(MetricsEventWriterTest, WritesScalarEvents) {
  TemporaryDirectory dir;
  std::string logdir = dir.file("logs");
  EventWriter writer;
  std::string error;
  ASSERT_TRUE(writer.open(logdir, error)) << error;
  EXPECT_EQ(writer.path().rfind(logdir + "/events.out.tfevents.", 0), 0u);
  EXPECT_EQ(writer.path().substr(writer.path().size() - 5), ".kiln");
  EXPECT_NE(writer.path().find("." + std::to_string(::getpid()) + ".kiln"),
            std::string::npos);
  ASSERT_TRUE(writer.scalar("loss", 7, 0.25, error)) << error;
  ASSERT_TRUE(writer.scalar("train/accuracy", 1LL << 40, -3.5, error)) << error;
  ASSERT_TRUE(writer.scalar("zero", 0, 0.0, error)) << error;
  ASSERT_TRUE(writer.flush(error)) << error;

  std::vector<std::string> records;
  ASSERT_TRUE(readTfRecords(writer.path(), records, error)) << error;
  ASSERT_EQ(records.size(), 4u);
  tensorflow::Event first = parseEvent(records[0]);
  ASSERT_EQ(first.what_case(), tensorflow::Event::kFileVersion);
  EXPECT_EQ(first.file_version(), "brain.Event:2");
  EXPECT_EQ(first.step(), 0);
  double wallTime = first.wall_time();
  EXPECT_GT(wallTime, 1.6e9);

  struct Expected {
    std::string tag;
    int64_t step;
    float value;
  };
  // A zero is still a scalar: simple_value sits in a oneof, so proto3
  // writes it even when it is 0.
  std::vector<Expected> expected = {{"loss", 7, 0.25f},
                                    {"train/accuracy", 1LL << 40, -3.5f},
                                    {"zero", 0, 0.0f}};
  for (size_t i = 0; i < expected.size(); ++i) {
    tensorflow::Event event = parseEvent(records[i + 1]);
    EXPECT_GE(event.wall_time(), wallTime);
    EXPECT_EQ(event.step(), expected[i].step);
    ASSERT_EQ(event.what_case(), tensorflow::Event::kSummary);
    ASSERT_EQ(event.summary().value_size(), 1);
    const tensorflow::Summary::Value &value = event.summary().value(0);
    EXPECT_EQ(value.tag(), expected[i].tag);
    ASSERT_EQ(value.value_case(), tensorflow::Summary::Value::kSimpleValue);
    EXPECT_EQ(value.simple_value(), expected[i].value);
  }
  ASSERT_TRUE(writer.close(error)) << error;
  std::remove(writer.path().c_str());
  ::rmdir(logdir.c_str());
}

// Tests that events are buffered until flush() and that a second writer in
// the same directory and second gets a file of its own.
TEST(MetricsEventWriterTest, BuffersAndNamesFilesApart) {
  TemporaryDirectory dir;
  EventWriter a, b;
  std::string error;
  ASSERT_TRUE(a.open(dir.path(), error)) << error;
  ASSERT_TRUE(b.open(dir.path(), error)) << error;
  EXPECT_NE(a.path(), b.path());
  std::vector<std::string> records;
  ASSERT_TRUE(a.scalar("loss", 1, 1.0, error)) << error;
  ASSERT_TRUE(readTfRecords(a.path(), records, error)) << error;
  EXPECT_EQ(records.size(), 1u);
  ASSERT_TRUE(a.flush(error)) << error;
  ASSERT_TRUE(readTfRecords(a.path(), records, error)) << error;
  EXPECT_EQ(records.size(), 2u);
  // Past 64 KiB the buffer goes out without a flush.
  for (int step = 0; step < 2000; ++step)
    ASSERT_TRUE(b.scalar("a/rather/long/tag/name", step, step, error));
  ASSERT_TRUE(readTfRecords(b.path(), records, error)) << error;
  ASSERT_GT(records.size(), 1000u);
  for (size_t i = 1; i < records.size(); ++i)
    EXPECT_EQ(parseEvent(records[i]).step(), int64_t(i - 1));
}

// Tests the errors of a log directory that cannot be created or written.
TEST(MetricsEventWriterTest, UnusableLogDirectory) {
  TemporaryDirectory dir;
  writeFile(dir.file("file"), {1});
  EventWriter writer;
  std::string error;
  EXPECT_FALSE(writer.open(dir.file("file/logs"), error));
  EXPECT_EQ(error, dir.file("file/logs") +
                       ": error: cannot create the log directory: Not a "
                       "directory");
  EXPECT_FALSE(writer.scalar("loss", 1, 1.0, error));
  EXPECT_EQ(error, "events: error: cannot write: the event file is not open");
  if (::geteuid() == 0)
    GTEST_SKIP() << "running as root, which ignores directory permissions";
  ASSERT_EQ(::mkdir(dir.file("ro").c_str(), 0500), 0);
  EXPECT_FALSE(writer.open(dir.file("ro"), error));
  EXPECT_EQ(error, dir.file("ro") +
                       ": error: cannot create an event file: Permission "
                       "denied");
  ::rmdir(dir.file("ro").c_str());
}

} // namespace
