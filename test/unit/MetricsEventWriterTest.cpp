//===- MetricsEventWriterTest.cpp - TensorBoard event files ---------------===//

#include "runtime/metrics/Crc32c.h"
#include "runtime/metrics/EventWriter.h"
#include "runtime/metrics/TfRecord.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <sys/stat.h>

using namespace kiln::metrics;
using namespace kiln::test;

namespace {

/// One field of a protobuf message: varints and fixed values in `number`,
/// length-delimited ones in `bytes`.
struct ProtoField {
  uint32_t wireType;
  uint64_t number = 0;
  std::string bytes;
};

/// Decodes a message into its fields by number; fails the test on bad input.
std::multimap<uint32_t, ProtoField> decodeProto(const std::string &message) {
  std::multimap<uint32_t, ProtoField> fields;
  size_t pos = 0;
  auto varint = [&] {
    uint64_t value = 0;
    for (int shift = 0; pos < message.size(); shift += 7) {
      uint8_t byte = uint8_t(message[pos++]);
      value |= uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80))
        return value;
    }
    ADD_FAILURE() << "truncated varint";
    return value;
  };
  while (pos < message.size()) {
    uint64_t key = varint();
    ProtoField field;
    field.wireType = uint32_t(key & 7);
    if (field.wireType == 0) {
      field.number = varint();
    } else if (field.wireType == 1 || field.wireType == 5) {
      size_t size = field.wireType == 1 ? 8 : 4;
      EXPECT_LE(pos + size, message.size());
      for (size_t i = 0; i < size; ++i)
        field.number |= uint64_t(uint8_t(message[pos + i])) << (8 * i);
      pos += size;
    } else if (field.wireType == 2) {
      uint64_t size = varint();
      EXPECT_LE(pos + size, message.size());
      field.bytes = message.substr(pos, size_t(size));
      pos += size_t(size);
    } else {
      ADD_FAILURE() << "unexpected wire type " << field.wireType;
      break;
    }
    fields.emplace(uint32_t(key >> 3), field);
  }
  return fields;
}

double asDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float asFloat(uint64_t bits) {
  uint32_t low = uint32_t(bits);
  float value;
  std::memcpy(&value, &low, sizeof value);
  return value;
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
  ASSERT_TRUE(writer.flush(error)) << error;

  std::vector<std::string> records;
  ASSERT_TRUE(readTfRecords(writer.path(), records, error)) << error;
  ASSERT_EQ(records.size(), 3u);
  auto first = decodeProto(records[0]);
  ASSERT_EQ(first.count(3), 1u);
  EXPECT_EQ(first.find(3)->second.bytes, "brain.Event:2");
  ASSERT_EQ(first.count(1), 1u);
  double wallTime = asDouble(first.find(1)->second.number);
  EXPECT_GT(wallTime, 1.6e9);

  struct Expected {
    std::string tag;
    uint64_t step;
    float value;
  };
  std::vector<Expected> expected = {{"loss", 7, 0.25f},
                                    {"train/accuracy", 1ULL << 40, -3.5f}};
  for (size_t i = 0; i < expected.size(); ++i) {
    auto event = decodeProto(records[i + 1]);
    ASSERT_EQ(event.count(1), 1u);
    EXPECT_EQ(event.find(1)->second.wireType, 1u);
    EXPECT_GE(asDouble(event.find(1)->second.number), wallTime);
    ASSERT_EQ(event.count(2), 1u);
    EXPECT_EQ(event.find(2)->second.number, expected[i].step);
    ASSERT_EQ(event.count(5), 1u);
    auto summary = decodeProto(event.find(5)->second.bytes);
    ASSERT_EQ(summary.count(1), 1u);
    auto value = decodeProto(summary.find(1)->second.bytes);
    ASSERT_EQ(value.count(1), 1u);
    EXPECT_EQ(value.find(1)->second.bytes, expected[i].tag);
    ASSERT_EQ(value.count(2), 1u);
    EXPECT_EQ(value.find(2)->second.wireType, 5u);
    EXPECT_EQ(asFloat(value.find(2)->second.number), expected[i].value);
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
  EXPECT_GT(records.size(), 1000u);
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
