//===- NpyTest.cpp - numpy .npy files -------------------------------------===//

#include "runtime/data/Npy.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <random>

using namespace kiln::data;
using namespace kiln::test;

namespace {

/// A .npy file: magic, version, header length, `dict` padded as numpy pads
/// it (unless `pad` is false), then `data`.
std::vector<uint8_t> npyBytes(const std::string &dict,
                              const std::vector<uint8_t> &data,
                              uint8_t major = 1, bool pad = true) {
  size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  if (pad) {
    while ((preamble + header.size() + 1) % 64)
      header += ' ';
    header += '\n';
  }
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  for (size_t i = 8; i < preamble; ++i)
    bytes.push_back(uint8_t(header.size() >> (8 * (i - 8))));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string dictFor(const std::string &descr, const std::string &shape,
                    const std::string &order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order +
         ", 'shape': " + shape + ", }";
}

/// The message parsing `bytes` gives.
std::string parseError(const std::vector<uint8_t> &bytes) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(parseNpy(bytes.data(), bytes.size(), "t.npy", array, error));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

/// The message reading `bytes` from a file gives; it must match parsing.
std::string readError(const std::vector<uint8_t> &bytes) {
  TemporaryDirectory dir;
  writeFile(dir.file("t.npy"), bytes);
  NpyArray array;
  std::string error;
  EXPECT_FALSE(readNpyFile(dir.file("t.npy"), array, error));
  std::string parsed = parseError(bytes);
  std::string prefix = dir.file("t.npy") + ": error: ";
  EXPECT_EQ(error.substr(0, prefix.size()), prefix);
  EXPECT_EQ("t.npy: error: " + error.substr(prefix.size()), parsed);
  return parsed;
}

TEST(NpyTest, WritesNumpysHeader) {
  NpyArray array{NpyDType::F32, {2, 3}, std::vector<uint8_t>(24, 7)};
  std::vector<uint8_t> bytes = encodeNpy(array);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (2, 3), }";
  EXPECT_EQ(bytes, npyBytes(dict, array.data));
  EXPECT_EQ((bytes.size() - 24) % 64, 0u);
  EXPECT_EQ(bytes[8], 118); // Header length, little-endian.
  EXPECT_EQ(bytes[9], 0);
  // One dimension is written as a 1-tuple, a scalar as ().
  EXPECT_EQ(encodeNpy({NpyDType::Bool, {5}, std::vector<uint8_t>(5, 1)}),
            npyBytes(dictFor("|b1", "(5,)"), std::vector<uint8_t>(5, 1)));
  EXPECT_EQ(encodeNpy({NpyDType::I64, {}, std::vector<uint8_t>(8, 0)}),
            npyBytes(dictFor("<i8", "()"), std::vector<uint8_t>(8, 0)));
}

TEST(NpyTest, RoundTripsEveryDTypeAndShape) {
  std::mt19937 rng(std::random_device{}());
  TemporaryDirectory dir;
  for (NpyDType dtype : {NpyDType::F32, NpyDType::F16, NpyDType::I32,
                         NpyDType::I64, NpyDType::Bool})
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {0}, {7}, {2, 3}, {2, 0, 4}, {3, 1, 2, 5}}) {
      NpyArray array{dtype, shape, {}};
      size_t count = 1;
      for (int64_t dim : shape)
        count *= dim;
      array.data.resize(count * npyItemSize(dtype));
      for (uint8_t &byte : array.data)
        byte = dtype == NpyDType::Bool ? rng() % 2 : rng() % 256;
      std::string error;
      ASSERT_TRUE(writeNpyFile(dir.file("a.npy"), array, error)) << error;
      NpyArray read;
      ASSERT_TRUE(readNpyFile(dir.file("a.npy"), read, error)) << error;
      EXPECT_EQ(read.dtype, dtype);
      EXPECT_EQ(read.shape, shape);
      EXPECT_EQ(read.data, array.data);
    }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"a.npy"});
}

TEST(NpyTest, ReadsVersions2And3AndHandWrittenHeaders) {
  std::vector<uint8_t> data = {1, 0, 0, 0, 2, 0, 0, 0};
  for (uint8_t major : {2, 3}) {
    NpyArray array;
    std::string error;
    std::vector<uint8_t> bytes = npyBytes(dictFor("<i4", "(2,)"), data, major);
    ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), "t.npy", array, error))
        << error;
    EXPECT_EQ(array.shape, std::vector<int64_t>{2});
    EXPECT_EQ(array.data, data);
  }
  for (std::string dict :
       {"{\"shape\":(2,),\"descr\":\"<i4\",\"fortran_order\":False}",
        "{ 'descr' : '<i4' , 'fortran_order' : False , 'shape' : ( 2 , ) }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2L,)}"}) {
    NpyArray array;
    std::string error;
    std::vector<uint8_t> bytes = npyBytes(dict, data, 1, /*pad=*/false);
    EXPECT_TRUE(parseNpy(bytes.data(), bytes.size(), "t.npy", array, error))
        << dict << ": " << error;
  }
}

TEST(NpyTest, WritesVersion2ForHugeHeaders) {
  // 30000 dimensions of 1 make a header beyond version 1.0's 64 KiB.
  NpyArray array{NpyDType::F32, std::vector<int64_t>(30000, 1),
                 std::vector<uint8_t>(4, 9)};
  std::vector<uint8_t> bytes = encodeNpy(array);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ((bytes.size() - 4) % 64, 0u);
  NpyArray read;
  std::string error;
  ASSERT_TRUE(parseNpy(bytes.data(), bytes.size(), "t.npy", read, error))
      << error;
  EXPECT_EQ(read.shape.size(), 30000u);
}

TEST(NpyTest, RejectsFilesThatAreNotNpy) {
  NpyArray array;
  std::string error;
  EXPECT_FALSE(readNpyFile("/no/such.npy", array, error));
  EXPECT_EQ(error, "/no/such.npy: error: cannot read: No such file or "
                   "directory");
  TemporaryDirectory dir;
  EXPECT_FALSE(readNpyFile(dir.path(), array, error));
  EXPECT_EQ(error, dir.path() + ": error: not a regular file");
  EXPECT_EQ(readError({'P', 'K', 3, 4}),
            "t.npy: error: not a .npy file (it does not start with "
            "\\x93NUMPY)");
  EXPECT_EQ(readError({}), "t.npy: error: not a .npy file (it does not start "
                           "with \\x93NUMPY)");
  EXPECT_EQ(readError({0x93, 'N', 'U', 'M', 'P', 'Y', 1}),
            "t.npy: error: broken header: the file ends inside the preamble");
  EXPECT_EQ(readError({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0}),
            "t.npy: error: broken header: the file ends inside the preamble");
}

TEST(NpyTest, RejectsUnknownVersions) {
  std::vector<uint8_t> bytes = npyBytes(dictFor("<f4", "()"), {0, 0, 0, 0});
  bytes[6] = 4;
  EXPECT_EQ(readError(bytes), "t.npy: error: unsupported .npy format version "
                              "4.0 (1.0, 2.0 and 3.0 are read)");
  bytes[6] = 1;
  bytes[7] = 1;
  EXPECT_EQ(readError(bytes), "t.npy: error: unsupported .npy format version "
                              "1.1 (1.0, 2.0 and 3.0 are read)");
}

TEST(NpyTest, RejectsAHeaderLongerThanTheFile) {
  std::vector<uint8_t> bytes = npyBytes(dictFor("<f4", "()"), {});
  bytes[8] = 0xFF;
  bytes[9] = 0xFF;
  EXPECT_EQ(readError(bytes), "t.npy: error: broken header: its length field "
                              "says 65535 bytes, past the end of the file "
                              "(128 bytes)");
}

TEST(NpyTest, RejectsBrokenDicts) {
  auto error = [](const std::string &dict) {
    return readError(npyBytes(dict, {}, 1, /*pad=*/false));
  };
  EXPECT_EQ(error("['descr']"),
            "t.npy: error: broken header at byte 10: expected '{'");
  EXPECT_EQ(error("{'descr' '<f4'}"),
            "t.npy: error: broken header at byte 19: expected ':' after "
            "'descr'");
  EXPECT_EQ(error("{'descr: '<f4'}"),
            "t.npy: error: broken header at byte 20: expected ':' after "
            "'descr: '");
  EXPECT_EQ(error("{'descr"),
            "t.npy: error: broken header at byte 12: unterminated string");
  EXPECT_EQ(error("{'type': 1}"),
            "t.npy: error: broken header at byte 18: unexpected key 'type'");
  EXPECT_EQ(error("{'shape': (), 'shape': ()}"),
            "t.npy: error: broken header at byte 32: key 'shape' appears "
            "twice");
  EXPECT_EQ(error("{'descr': '<f4', 'shape': ()}"),
            "t.npy: error: broken header: no 'fortran_order' key");
  EXPECT_EQ(error("{'fortran_order': 0}"),
            "t.npy: error: broken header at byte 28: expected True or False");
  EXPECT_EQ(error("{'shape': [2]}"),
            "t.npy: error: broken header at byte 20: expected a shape tuple "
            "such as (2, 3)");
  EXPECT_EQ(error("{'shape': (2 3)}"),
            "t.npy: error: broken header at byte 23: expected ',' or ')' in "
            "the shape");
  EXPECT_EQ(error("{'shape': (x,)}"),
            "t.npy: error: broken header at byte 21: expected a dimension");
  EXPECT_EQ(error("{'shape': (99999999999999999999,)}"),
            "t.npy: error: broken header at byte 21: shape dimension does not "
            "fit 64 bits");
  EXPECT_EQ(error("{'shape': ()} x"),
            "t.npy: error: broken header at byte 24: unexpected text after "
            "the dict");
  EXPECT_EQ(error("{'shape': () 'descr': '<f4'}"),
            "t.npy: error: broken header at byte 23: expected ',' or '}'");
}

TEST(NpyTest, RejectsNegativeAndOverflowingShapes) {
  EXPECT_EQ(readError(npyBytes(dictFor("<f4", "(2, -3)"), {})),
            "t.npy: error: shape dimension -3 is negative");
  EXPECT_EQ(readError(npyBytes(dictFor("<f4", "(4294967296, 4294967296)"), {})),
            "t.npy: error: shape (4294967296, 4294967296) overflows 64 bits");
  EXPECT_EQ(readError(npyBytes(dictFor("<i8", "(4611686018427387904,)"), {})),
            "t.npy: error: shape (4611686018427387904,) overflows 64 bits");
}

TEST(NpyTest, RejectsOtherDTypesByteOrdersAndFortranOrder) {
  EXPECT_EQ(readError(npyBytes(dictFor("<f8", "()"), std::vector<uint8_t>(8))),
            "t.npy: error: dtype '<f8' is not supported (supported: <f4, "
            "<f2, <i4, <i8, |b1)");
  EXPECT_EQ(readError(npyBytes(dictFor(">f4", "()"), std::vector<uint8_t>(4))),
            "t.npy: error: big-endian data ('>f4'); only little-endian data "
            "is read (numpy: a.astype(a.dtype.newbyteorder('<')))");
  EXPECT_EQ(readError(npyBytes(dictFor(">i8", "()"), std::vector<uint8_t>(8))),
            "t.npy: error: big-endian data ('>i8'); only little-endian data "
            "is read (numpy: a.astype(a.dtype.newbyteorder('<')))");
  EXPECT_EQ(readError(npyBytes(dictFor(">f8", "()"), std::vector<uint8_t>(8))),
            "t.npy: error: big-endian data ('>f8'); only little-endian data "
            "is read (numpy: a.astype('<f4'))");
  // What np.save writes for a record array.
  EXPECT_EQ(readError(npyBytes("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, "
                               "'shape': (1,), }",
                               std::vector<uint8_t>(8))),
            "t.npy: error: a structured (record) dtype, [('a', '<f4'), ('b', '<i4')]; each "
            "input must be a plain numeric array (numpy: one array per field)");
  EXPECT_EQ(readError(npyBytes(dictFor("<f4", "(2, 2)", "True"),
                               std::vector<uint8_t>(16))),
            "t.npy: error: Fortran-order data; only C order is read (numpy: "
            "np.ascontiguousarray(a))");
}

TEST(NpyTest, RejectsTruncatedAndTrailingData) {
  EXPECT_EQ(
      readError(npyBytes(dictFor("<f4", "(2, 3)"), std::vector<uint8_t>(20))),
      "t.npy: error: truncated data: shape (2, 3) of <f4 needs 24 "
      "bytes of data, the file holds 20");
  EXPECT_EQ(
      readError(npyBytes(dictFor("<f2", "(3,)"), std::vector<uint8_t>(9))),
      "t.npy: error: 3 unexpected bytes after the data (shape (3,) of "
      "<f2 needs 6 bytes of data)");
}

TEST(NpyTest, RejectsBoolsOtherThanZeroAndOne) {
  EXPECT_EQ(readError(npyBytes(dictFor("|b1", "(3,)"), {1, 0, 2})),
            "t.npy: error: element 2 of the |b1 data is 2; bools are 0 or 1");
}

TEST(NpyTest, FailedWriteNamesTheFileAndLeavesNothing) {
  TemporaryDirectory dir;
  NpyArray array{NpyDType::F32, {1}, std::vector<uint8_t>(4)};
  std::string error;
  EXPECT_FALSE(writeNpyFile(dir.file("no/a.npy"), array, error));
  EXPECT_EQ(error, dir.file("no/a.npy") +
                       ": error: cannot write: No such file or directory");
  EXPECT_TRUE(dir.entries().empty());
}

} // namespace
