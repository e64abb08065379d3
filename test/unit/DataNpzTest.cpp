//===- DataNpzTest.cpp - Data sets from numpy .npz archives ---------------===//
//
// Most archives are built here byte by byte: stored members as np.savez
// writes them, deflated ones (zlib) as np.savez_compressed does, with the
// ZIP64 extra fields numpy puts in every local header. Archives numpy itself
// wrote are in test/Inputs (scripts/make_npz_fixtures.py); ZIP64 archives
// (more than 65,535 members) are written at test time by libzip and, where
// python3 exists, by Python's zipfile, which numpy writes through.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/data/Npy.h"
#include "runtime/data/RaggedIds.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <zip.h>
#include <zlib.h>

using namespace kiln::data;
using namespace kiln::test;

namespace {

void put16(std::vector<uint8_t> &out, uint32_t value) {
  out.push_back(uint8_t(value));
  out.push_back(uint8_t(value >> 8));
}
void put32(std::vector<uint8_t> &out, uint32_t value) {
  put16(out, value & 0xffff);
  put16(out, value >> 16);
}
void put64(std::vector<uint8_t> &out, uint64_t value) {
  put32(out, uint32_t(value));
  put32(out, uint32_t(value >> 32));
}

uint32_t get32(const std::vector<uint8_t> &bytes, size_t at) {
  return uint32_t(bytes[at]) | uint32_t(bytes[at + 1]) << 8 |
         uint32_t(bytes[at + 2]) << 16 | uint32_t(bytes[at + 3]) << 24;
}

/// Raw deflate (no zlib header or trailer) from zlib's compress.
std::vector<uint8_t> deflateRaw(const std::vector<uint8_t> &data) {
  uLongf size = compressBound(data.size());
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress2(out.data(), &size, data.data(), data.size(), 9), Z_OK);
  return {out.begin() + 2, out.begin() + size - 4};
}

struct Member {
  std::string name;
  std::vector<uint8_t> data;
  /// Bytes cut off the end of the stored or deflated body; the headers give
  /// the cut length as the compressed size, and the uncompressed size and
  /// the CRC-32 of `data`.
  size_t cut = 0;
  /// The uncompressed size the headers claim, where not data.size().
  int64_t claimedSize = -1;
  /// General purpose flags, in both headers (1: encrypted).
  uint16_t flags = 0;
};

enum class Method { Stored, Deflated };

/// A zip archive of `members`. With `numpyHeaders`, the local headers carry
/// sizes 0xffffffff and a ZIP64 extra field, as numpy's force_zip64 writes.
/// `methodCode`, where not 0, replaces the method in both headers.
std::vector<uint8_t> zipBytes(const std::vector<Member> &members,
                              Method method = Method::Stored,
                              bool numpyHeaders = true,
                              uint16_t methodCode = 0) {
  std::vector<uint8_t> out, directory;
  for (const Member &member : members) {
    std::vector<uint8_t> body =
        method == Method::Stored ? member.data : deflateRaw(member.data);
    body.resize(body.size() - member.cut);
    uint64_t size = member.claimedSize >= 0 ? uint64_t(member.claimedSize)
                                            : member.data.size();
    uint32_t crc = crc32(0, member.data.data(), member.data.size());
    uint16_t code = methodCode ? methodCode : method == Method::Stored ? 0 : 8;
    uint32_t offset = out.size();
    put32(out, 0x04034b50);
    put16(out, numpyHeaders ? 45 : 20);
    put16(out, member.flags);
    put16(out, code);
    put32(out, 0); // Time and date.
    put32(out, crc);
    put32(out, numpyHeaders ? 0xffffffff : body.size());
    put32(out, numpyHeaders ? 0xffffffff : size);
    put16(out, member.name.size());
    put16(out, numpyHeaders ? 20 : 0);
    out.insert(out.end(), member.name.begin(), member.name.end());
    if (numpyHeaders) {
      put16(out, 1);
      put16(out, 16);
      put64(out, size);
      put64(out, body.size());
    }
    out.insert(out.end(), body.begin(), body.end());

    put32(directory, 0x02014b50);
    put16(directory, 45);
    put16(directory, numpyHeaders ? 45 : 20);
    put16(directory, member.flags);
    put16(directory, code);
    put32(directory, 0);
    put32(directory, crc);
    put32(directory, body.size());
    put32(directory, size);
    put16(directory, member.name.size());
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0);
    put32(directory, 0);
    put32(directory, offset);
    directory.insert(directory.end(), member.name.begin(), member.name.end());
  }
  uint32_t directoryOffset = out.size();
  out.insert(out.end(), directory.begin(), directory.end());
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, members.size());
  put16(out, members.size());
  put32(out, directory.size());
  put32(out, directoryOffset);
  put16(out, 0);
  return out;
}

/// Writes `members` to `path` with libzip's writer, then `padding` empty
/// members (more than 65,535 members in all make it a ZIP64 archive). With
/// `password`, the first member is encrypted (AES-256).
void writeWithLibzip(const std::string &path,
                     const std::vector<Member> &members, Method method,
                     size_t padding = 0, const char *password = nullptr) {
  int code = 0;
  zip_t *archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  ASSERT_NE(archive, nullptr) << "zip_open failed: " << code;
  auto add = [&](const std::string &name, const void *data, size_t size,
                 zip_int32_t compression) {
    zip_source_t *source = zip_source_buffer(archive, data, size, 0);
    ASSERT_NE(source, nullptr);
    zip_int64_t index =
        zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(index, 0) << zip_strerror(archive);
    ASSERT_EQ(zip_set_file_compression(archive, index, compression, 0), 0);
  };
  for (const Member &member : members)
    add(member.name, member.data.data(), member.data.size(),
        method == Method::Stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE);
  for (size_t i = 0; i < padding; ++i)
    add("pad/" + std::to_string(i), nullptr, 0, ZIP_CM_STORE);
  if (password) {
    ASSERT_EQ(zip_file_set_encryption(archive, 0, ZIP_EM_AES_256, password), 0)
        << zip_strerror(archive);
  }
  ASSERT_EQ(zip_close(archive), 0) << zip_strerror(archive);
}

/// Whether `bytes` end with a ZIP64 end of central directory: the end
/// record (0x06054b50, no comment) follows a ZIP64 locator (0x07064b50)
/// that points at a ZIP64 end of central directory record (0x06064b50).
bool hasZip64End(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < 22 + 20)
    return false;
  size_t end = bytes.size() - 22, locator = end - 20;
  if (get32(bytes, end) != 0x06054b50 || get32(bytes, locator) != 0x07064b50)
    return false;
  uint64_t record =
      get32(bytes, locator + 8) | uint64_t(get32(bytes, locator + 12)) << 32;
  return record + 4 <= locator && get32(bytes, record) == 0x06064b50;
}

template <typename T>
std::vector<uint8_t> npy(NpyDType dtype, std::vector<int64_t> shape,
                         const std::vector<T> &values) {
  NpyArray array{dtype, std::move(shape), {}};
  array.data.resize(values.size() * sizeof(T));
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return encodeNpy(array);
}

/// numpy's float64: an <i8 header renamed, the doubles' bits as data.
std::vector<uint8_t> npyF64(std::vector<int64_t> shape,
                            const std::vector<double> &values) {
  std::vector<uint8_t> bytes = npy(NpyDType::I64, std::move(shape), values);
  std::string text(bytes.begin(), bytes.end());
  bytes[text.find("<i8") + 1] = 'f';
  return bytes;
}

template <typename T> std::vector<T> column(const Dataset &data, size_t i) {
  std::vector<T> values(data.columns[i].size() / sizeof(T));
  std::memcpy(values.data(), data.columns[i].data(), data.columns[i].size());
  return values;
}

std::vector<FeedSpec> ctrSpecs() {
  return {{"dense", ElementType::F32, {2}, 0},
          {"site", ElementType::I32, {}, 10},
          {"click", ElementType::F32, {1}, 0}};
}

std::vector<Member> ctrMembers() {
  return {{"dense.npy",
           npy<float>(NpyDType::F32, {3, 2}, {1.5f, -2, 3, 4, 5, 6.25f})},
          {"site.npy", npy<int64_t>(NpyDType::I64, {3}, {7, 0, 9})},
          {"click.npy", npy<float>(NpyDType::F32, {3, 1}, {1, 0, 1})}};
}

class DataNpzTest : public ::testing::Test {
protected:
  /// Loads `bytes` written as t.npz; expects success.
  Dataset load(const std::vector<uint8_t> &bytes,
               const std::vector<FeedSpec> &specs, ReadOptions options = {}) {
    writeFile(path(), bytes);
    Dataset data;
    std::string error;
    EXPECT_TRUE(loadNpz(path(), specs, options, data, error)) << error;
    return data;
  }

  /// Loads `bytes` written as t.npz; expects one line naming the file.
  std::string loadError(const std::vector<uint8_t> &bytes,
                        const std::vector<FeedSpec> &specs,
                        ReadOptions options = {}) {
    writeFile(path(), bytes);
    Dataset data;
    std::string error;
    EXPECT_FALSE(loadNpz(path(), specs, options, data, error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.rfind(path() + ": error: ", 0), 0u) << error;
    return error.substr(std::min(error.size(), path().size() + 9));
  }

  std::string path() const { return dir_.file("t.npz"); }

  TemporaryDirectory dir_;
};

TEST_F(DataNpzTest, ReadsNumpysStoredArchive) {
  Dataset data = load(zipBytes(ctrMembers()), ctrSpecs());
  EXPECT_EQ(data.path, path());
  EXPECT_EQ(data.rows, 3);
  EXPECT_EQ(data.skippedRows, 0);
  ASSERT_EQ(data.columns.size(), 3u);
  EXPECT_EQ(column<float>(data, 0),
            (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f}));
  EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{7, 0, 9}));
  EXPECT_EQ(column<float>(data, 2), (std::vector<float>{1, 0, 1}));
}

TEST_F(DataNpzTest, ReadsDeflatedArchivesWithEitherLocalHeader) {
  for (bool numpyHeaders : {true, false}) {
    Dataset data = load(zipBytes(ctrMembers(), Method::Deflated, numpyHeaders),
                        ctrSpecs());
    EXPECT_EQ(data.rows, 3);
    EXPECT_EQ(column<float>(data, 0),
              (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f}));
    EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{7, 0, 9}));
  }
  // A large, compressible member inflates across zlib's window.
  std::vector<int64_t> ids(50000);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = int64_t(i % 97);
  Dataset data = load(zipBytes({{"id.npy", npy(NpyDType::I64, {50000}, ids)}},
                               Method::Deflated),
                      {{"id", ElementType::I64, {}, 97}});
  EXPECT_EQ(column<int64_t>(data, 0), ids);
}

TEST_F(DataNpzTest, ConvertsSafeDtypes) {
  std::vector<FeedSpec> specs = {
      {"f8", ElementType::F32, {}, 0}, {"f2", ElementType::F32, {}, 0},
      {"b1", ElementType::F32, {}, 0}, {"i8label", ElementType::F32, {}, 0},
      {"i4", ElementType::I64, {}, 0}, {"b1id", ElementType::I32, {}, 2}};
  std::vector<Member> members = {
      {"f8.npy", npyF64({2}, {0.1, -3e5})},
      {"f2.npy", npy<uint16_t>(NpyDType::F16, {2}, {0x3c00, 0xc000})},
      {"b1.npy", npy<uint8_t>(NpyDType::Bool, {2}, {1, 0})},
      {"i8label.npy", npy<int64_t>(NpyDType::I64, {2}, {0, 16777216})},
      {"i4.npy", npy<int32_t>(NpyDType::I32, {2}, {-5, 2147483647})},
      {"b1id.npy", npy<uint8_t>(NpyDType::Bool, {2}, {0, 1})}};
  Dataset data = load(zipBytes(members), specs);
  EXPECT_EQ(column<float>(data, 0), (std::vector<float>{0.1f, -3e5f}));
  EXPECT_EQ(column<float>(data, 1), (std::vector<float>{1, -2}));
  EXPECT_EQ(column<float>(data, 2), (std::vector<float>{1, 0}));
  EXPECT_EQ(column<float>(data, 3), (std::vector<float>{0, 16777216}));
  EXPECT_EQ(column<int64_t>(data, 4), (std::vector<int64_t>{-5, 2147483647}));
  EXPECT_EQ(column<int32_t>(data, 5), (std::vector<int32_t>{0, 1}));
}

TEST_F(DataNpzTest, TreatsRowsAndRowsByOneAlike) {
  std::vector<FeedSpec> specs = {{"a", ElementType::F32, {}, 0},
                                 {"b", ElementType::F32, {1}, 0}};
  Dataset data =
      load(zipBytes({{"a.npy", npy<float>(NpyDType::F32, {2, 1}, {1, 2})},
                     {"b.npy", npy<float>(NpyDType::F32, {2}, {3, 4})}}),
           specs);
  EXPECT_EQ(column<float>(data, 0), (std::vector<float>{1, 2}));
  EXPECT_EQ(column<float>(data, 1), (std::vector<float>{3, 4}));
}

TEST_F(DataNpzTest, NamesAMissingArray) {
  std::vector<Member> members = ctrMembers();
  members.pop_back();
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "no array 'click.npy' for input 'click' (the archive holds: "
            "dense.npy, site.npy)");
}

TEST_F(DataNpzTest, NamesTheArrayOfAWrongDtype) {
  std::vector<Member> members = ctrMembers();
  members[1].data = npy<float>(NpyDType::F32, {3}, {7, 0, 9});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "array 'site.npy' is <f4; input 'site' is i32 (accepted: <i4, "
            "<i8 (values that fit), |b1)");
  members[1].data = npy<int64_t>(NpyDType::I64, {3}, {7, 5000000000, 9});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 2: array 'site.npy': value 5000000000 does not fit in i32 "
            "(<i8 to i32)");
  members = ctrMembers();
  members[2].data = npy<int64_t>(NpyDType::I64, {3}, {1, 0, 16777217});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 3: array 'click.npy': value 16777217 is not exactly an f32 "
            "(integers convert up to 2^24) (<i8 to f32)");
}

TEST_F(DataNpzTest, NamesArraysOfDifferentRowCounts) {
  std::vector<Member> members = ctrMembers();
  members[1].data = npy<int64_t>(NpyDType::I64, {2}, {7, 0});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "array 'site.npy' has 2 rows, array 'dense.npy' has 3");
}

TEST_F(DataNpzTest, NamesShapeMismatches) {
  std::vector<Member> members = ctrMembers();
  members[0].data = npy<float>(NpyDType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(
      loadError(zipBytes(members), ctrSpecs()),
      "array 'dense.npy' has shape [2, 3]; input 'dense' needs [rows, 2]");
  members[0].data = npy<float>(NpyDType::F32, {}, {1});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "array 'dense.npy' has shape []; input 'dense' needs [rows, 2]");
  members = ctrMembers();
  members[1].data = npy<int64_t>(NpyDType::I64, {3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "array 'site.npy' has shape [3, 2]; input 'site' needs [rows]");
}

TEST_F(DataNpzTest, ReportsBadValuesByRowAndInput) {
  std::vector<Member> members = ctrMembers();
  members[0].data = npy<float>(NpyDType::F32, {3, 2}, {1, 2, 3, NAN, 5, 6});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 2: input dense: NaN at [1]");
  members[0].data =
      npy<float>(NpyDType::F32, {3, 2}, {1, 2, 3, 4, -INFINITY, 6});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 3: input dense: -Inf at [0]");
  members = ctrMembers();
  members[1].data = npy<int64_t>(NpyDType::I64, {3}, {7, 0, 12});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 3: input site: id 12 out of range [0, 10)");
  members[1].data = npy<int64_t>(NpyDType::I64, {3}, {-1, 0, 1});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 1: input site: id -1 out of range [0, 10)");
  members = ctrMembers();
  members[2].data = npy<float>(NpyDType::F32, {3}, {NAN, 0, 1});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "row 1: input click: NaN");
}

TEST_F(DataNpzTest, SkipsBadRowsWhenAsked) {
  std::vector<Member> members = ctrMembers();
  members[0].data = npy<float>(NpyDType::F32, {3, 2}, {1, 2, 3, NAN, 5, 6});
  members[1].data = npy<int64_t>(NpyDType::I64, {3}, {10, 4, 9});
  Dataset data = load(zipBytes(members), ctrSpecs(), {true});
  EXPECT_EQ(data.rows, 1);
  EXPECT_EQ(data.skippedRows, 2);
  EXPECT_EQ(column<float>(data, 0), (std::vector<float>{5, 6}));
  EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{9}));
  EXPECT_EQ(column<float>(data, 2), (std::vector<float>{1}));
  members[2].data = npy<float>(NpyDType::F32, {3}, {1, 0, INFINITY});
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs(), {true}),
            "holds no examples (all 3 rows were bad and skipped)");
}

TEST_F(DataNpzTest, NamesABrokenMember) {
  std::vector<Member> members = ctrMembers();
  members[0].data.resize(members[0].data.size() - 3);
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "array 'dense.npy': truncated data: shape (3, 2) of <f4 needs 24 "
            "bytes of data, the file holds 21");
}

TEST_F(DataNpzTest, RefusesWhatItDoesNotRead) {
  std::vector<Member> members = ctrMembers();
  members[0].flags = 1;
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "zip member 'dense.npy': encrypted members are not supported");
  EXPECT_EQ(
      loadError(zipBytes(ctrMembers(), Method::Stored, true, 12), ctrSpecs()),
      "zip member 'dense.npy': compression method 12 is not supported "
      "(only stored and deflate: np.savez, np.savez_compressed)");
  EXPECT_EQ(loadError(npy<float>(NpyDType::F32, {1}, {1}), ctrSpecs()),
            "not a zip archive, or a damaged one (libzip: Not a zip "
            "archive); a .npz is written by np.savez or np.savez_compressed");
}

TEST_F(DataNpzTest, RefusesAnEncryptedMember) {
  if (!zip_encryption_method_supported(ZIP_EM_AES_256, 1))
    GTEST_SKIP() << "this libzip cannot encrypt (AES-256)";
  for (Method method : {Method::Stored, Method::Deflated}) {
    std::vector<Member> members = ctrMembers();
    writeWithLibzip(path(), members, method, 0, "secret");
    Dataset data;
    std::string error;
    EXPECT_FALSE(loadNpz(path(), ctrSpecs(), {}, data, error));
    EXPECT_EQ(error, path() + ": error: zip member 'dense.npy': encrypted "
                              "members are not supported");
  }
}

TEST_F(DataNpzTest, RefusesMemberNamesThatLeaveTheFolder) {
  // Member names become input names: "../dense.npy" must not match, nor
  // stand beside, an input "dense".
  for (const char *name : {"../dense.npy", "/dense.npy", "a/../../dense.npy",
                           "..\\dense.npy", "C:/dense.npy"}) {
    std::vector<Member> members = ctrMembers();
    members.push_back({name, members[0].data});
    EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
              std::string("zip member '") + name +
                  "': the name leaves the archive's folder (an absolute path "
                  "or a '..' component); members are NAME.npy, one per input");
  }
  std::vector<Member> members = ctrMembers();
  members.push_back(members[1]);
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "two members have the same name (libzip: File already exists)");
  // Names that only look alike are fine.
  members = ctrMembers();
  members.push_back({"a..b/..c.npy", members[0].data});
  members.push_back({"x:0.npy", members[0].data});
  load(zipBytes(members), ctrSpecs());
}

TEST_F(DataNpzTest, NamesAMemberThatIsNotAnArray) {
  std::vector<Member> members = ctrMembers();
  std::string text = "1.5,-2\n3,4\n5,6.25\n";
  members[0].data.assign(text.begin(), text.end());
  for (Method method : {Method::Stored, Method::Deflated})
    EXPECT_EQ(loadError(zipBytes(members, method), ctrSpecs()),
              "array 'dense.npy': not a .npy file (it does not start with "
              "\\x93NUMPY)");
  members[0].name = "dense.csv";
  EXPECT_EQ(loadError(zipBytes(members), ctrSpecs()),
            "no array 'dense.npy' for input 'dense' (the archive holds: "
            "dense.csv, site.npy, click.npy)");
}

TEST_F(DataNpzTest, ReportsCorruptData) {
  // A flipped byte inside the first member's deflate stream.
  std::vector<uint8_t> flipped = zipBytes(ctrMembers(), Method::Deflated);
  flipped[30 + 9 + 20 + 4] ^= 0x55;
  std::string error = loadError(flipped, ctrSpecs());
  EXPECT_EQ(error.rfind("zip member 'dense.npy': corrupt data", 0), 0u)
      << error;
  // Stored data whose CRC-32 does not match.
  std::vector<uint8_t> stored = zipBytes(ctrMembers());
  stored[30 + 9 + 20 + 100] ^= 1;
  EXPECT_EQ(loadError(stored, ctrSpecs()),
            "zip member 'dense.npy': corrupt data: CRC error");
}

TEST_F(DataNpzTest, ReportsTruncatedArchives) {
  for (Method method : {Method::Stored, Method::Deflated}) {
    // The file cut short: its end record is gone.
    std::vector<uint8_t> bytes = zipBytes(ctrMembers(), method);
    bytes.resize(bytes.size() / 2);
    EXPECT_EQ(loadError(bytes, ctrSpecs()),
              "not a zip archive, or a damaged one (libzip: Not a zip "
              "archive); a .npz is written by np.savez or "
              "np.savez_compressed");
    // The end record only cut off: the directory says where it was.
    bytes = zipBytes(ctrMembers(), method);
    bytes.resize(bytes.size() - 10);
    std::string error = loadError(bytes, ctrSpecs());
    EXPECT_EQ(error.rfind("not a zip archive, or a damaged one", 0), 0u)
        << error;
  }
  // A member cut short inside an archive that agrees with itself.
  std::vector<Member> members = ctrMembers();
  members[0].cut = 5;
  EXPECT_EQ(loadError(zipBytes(members, Method::Stored), ctrSpecs()),
            "zip member 'dense.npy': corrupt zip archive: a stored member of "
            "147 bytes claims 152 uncompressed");
  std::string error =
      loadError(zipBytes(members, Method::Deflated), ctrSpecs());
  EXPECT_EQ(error.rfind("zip member 'dense.npy': corrupt data after ", 0), 0u)
      << error;
  EXPECT_NE(error.find(" of 152 bytes: "), std::string::npos) << error;
}

TEST_F(DataNpzTest, ChecksClaimedSizesBeforeAllocating) {
  std::vector<Member> members = ctrMembers();
  members[0].claimedSize = 4000000000;
  EXPECT_EQ(loadError(zipBytes(members, Method::Stored), ctrSpecs()),
            "zip member 'dense.npy': corrupt zip archive: a stored member of "
            "152 bytes claims 4000000000 uncompressed");
  std::string error =
      loadError(zipBytes(members, Method::Deflated), ctrSpecs());
  EXPECT_NE(error.find(" deflated bytes cannot hold the 4000000000 bytes "
                       "claimed"),
            std::string::npos)
      << error;
  // Within deflate's ratio, a claim other than the data is found reading.
  members[0].claimedSize = 200;
  error = loadError(zipBytes(members, Method::Deflated), ctrSpecs());
  EXPECT_EQ(error, "zip member 'dense.npy': corrupt data: 152 bytes, the "
                   "directory says 200");
  members[0].claimedSize = 100;
  error = loadError(zipBytes(members, Method::Deflated), ctrSpecs());
  EXPECT_EQ(error, "zip member 'dense.npy': corrupt data: more than the 100 "
                   "bytes the directory says");
}

TEST_F(DataNpzTest, ReadsArchivesNumpyWrote) {
  // np.savez and np.savez_compressed of the same arrays (<f8, <i8, |b1).
  std::vector<FeedSpec> specs = {{"dense", ElementType::F32, {2}, 0},
                                 {"site", ElementType::I32, {}, 10},
                                 {"click", ElementType::F32, {}, 0}};
  for (const char *name : {"ctr_savez.npz", "ctr_savez_compressed.npz"}) {
    std::string file = std::string(KILN_TEST_INPUTS "/data/") + name;
    Dataset data;
    std::string error;
    ASSERT_TRUE(loadNpz(file, specs, {}, data, error)) << error;
    EXPECT_EQ(data.rows, 5);
    EXPECT_EQ(column<float>(data, 0),
              (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f, 0, -0.5f, 7, 8}));
    EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{7, 0, 9, 3, 1}));
    EXPECT_EQ(column<float>(data, 2), (std::vector<float>{1, 0, 1, 0, 1}));
  }
  // An onnxruntime reference (np.savez): arrays named "in.x", "out.y".
  Dataset data;
  std::string error;
  ASSERT_TRUE(loadNpz(
      KILN_TEST_INPUTS "/onnx/gemm.reference.npz",
      {{"in.x", ElementType::F32, {3}, 0}, {"out.z", ElementType::F32, {2}, 0}},
      {}, data, error))
      << error;
  EXPECT_EQ(data.rows, 4);
  EXPECT_EQ(data.columns[0].size(), 4u * 3 * sizeof(float));
}

TEST_F(DataNpzTest, ReadsZip64ArchivesFromLibzip) {
  writeWithLibzip(path(), ctrMembers(), Method::Deflated);
  EXPECT_FALSE(hasZip64End(readFile(path())));
  for (Method method : {Method::Stored, Method::Deflated}) {
    writeWithLibzip(path(), ctrMembers(), method, 65536);
    ASSERT_TRUE(hasZip64End(readFile(path())));
    Dataset data;
    std::string error;
    ASSERT_TRUE(loadNpz(path(), ctrSpecs(), {}, data, error)) << error;
    EXPECT_EQ(data.rows, 3);
    EXPECT_EQ(column<float>(data, 0),
              (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f}));
    EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{7, 0, 9}));
    EXPECT_EQ(column<float>(data, 2), (std::vector<float>{1, 0, 1}));
  }
  // A missing array's message lists the first members only.
  std::vector<FeedSpec> specs = ctrSpecs();
  specs[0].name = "wide";
  Dataset data;
  std::string error;
  EXPECT_FALSE(loadNpz(path(), specs, {}, data, error));
  EXPECT_EQ(error, path() + ": error: no array 'wide.npy' for input 'wide' "
                            "(the archive holds: dense.npy, site.npy, "
                            "click.npy, pad/0, pad/1, pad/2, pad/3, pad/4, "
                            "pad/5, pad/6, pad/7, pad/8, pad/9, pad/10, "
                            "pad/11, pad/12, pad/13, pad/14, pad/15, pad/16 "
                            "and 65519 more)");
}

TEST_F(DataNpzTest, ReadsZip64ArchivesFromPythonsZipfile) {
  // numpy writes .npz files through zipfile, each member opened with
  // force_zip64; more than 65,535 members make the archive ZIP64.
  if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1"))
    GTEST_SKIP() << "python3 is not available";
  std::string script = dir_.file("write.py");
  std::string text =
      "import sys, zipfile\n"
      "out, directory, *names = sys.argv[1:]\n"
      "with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:\n"
      "    for name in names:\n"
      "        with open(directory + '/' + name, 'rb') as f, "
      "z.open(name, 'w', force_zip64=True) as m:\n"
      "            m.write(f.read())\n"
      "    for i in range(65536):\n"
      "        z.writestr('pad/%d' % i, b'')\n";
  writeFile(script, {text.begin(), text.end()});
  std::string command = "python3 " + script + " " + path() + " " + dir_.path();
  for (const Member &member : ctrMembers()) {
    writeFile(dir_.file(member.name), member.data);
    command += " " + member.name;
  }
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_TRUE(hasZip64End(readFile(path())));
  Dataset data;
  std::string error;
  ASSERT_TRUE(loadNpz(path(), ctrSpecs(), {}, data, error)) << error;
  EXPECT_EQ(data.rows, 3);
  EXPECT_EQ(column<float>(data, 0),
            (std::vector<float>{1.5f, -2, 3, 4, 5, 6.25f}));
  EXPECT_EQ(column<int32_t>(data, 1), (std::vector<int32_t>{7, 0, 9}));
}

TEST_F(DataNpzTest, NeverCrashesOnTruncatedOrDamagedArchives) {
  for (Method method : {Method::Stored, Method::Deflated}) {
    std::vector<uint8_t> bytes = zipBytes(ctrMembers(), method);
    for (size_t size = 0; size < bytes.size(); ++size)
      loadError({bytes.begin(), bytes.begin() + size}, ctrSpecs());
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::vector<uint8_t> damaged = bytes;
      damaged[i] ^= 0xa5;
      writeFile(path(), damaged);
      Dataset data;
      std::string error;
      if (!loadNpz(path(), ctrSpecs(), {}, data, error)) {
        EXPECT_EQ(error.find('\n'), std::string::npos);
        EXPECT_EQ(error.rfind(path() + ": error: ", 0), 0u) << error;
      }
    }
  }
}

TEST_F(DataNpzTest, ReportsAFileThatCannotBeRead) {
  Dataset data;
  std::string error;
  std::string missing = dir_.file("missing.npz");
  EXPECT_FALSE(loadNpz(missing, ctrSpecs(), {}, data, error));
  EXPECT_EQ(error, missing + ": error: cannot read: No such file or directory");
}

TEST_F(DataNpzTest, LoadDatasetOpensByExtension) {
  writeFile(path(), zipBytes(ctrMembers()));
  Dataset data;
  std::string error;
  EXPECT_TRUE(loadDataset(path(), ctrSpecs(), "click", {}, data, error))
      << error;
  EXPECT_EQ(data.rows, 3);
  std::string parquet = dir_.file("t.parquet");
  EXPECT_FALSE(loadDataset(parquet, ctrSpecs(), "click", {}, data, error));
  EXPECT_EQ(error, parquet + ": error: unknown extension '.parquet'; data "
                             "files are .npz, .csv, .tsv or .txt");
  EXPECT_FALSE(
      loadDataset(dir_.file("data"), ctrSpecs(), "click", {}, data, error));
  EXPECT_EQ(error, dir_.file("data") +
                       ": error: the name has no extension; data files are "
                       ".npz, .csv, .tsv or .txt");
}

TEST_F(DataNpzTest, RefusesInvalidSpecs) {
  std::vector<FeedSpec> specs = ctrSpecs();
  specs[2].name = "dense";
  EXPECT_EQ(loadError(zipBytes(ctrMembers()), specs),
            "input 'dense' is asked for twice");
  specs = ctrSpecs();
  specs[1].idBound = -1;
  EXPECT_EQ(loadError(zipBytes(ctrMembers()), specs),
            "input 'site' has an invalid idBound -1");
}

} // namespace

namespace {

NpyArray int64Vector(std::vector<int64_t> values) {
  NpyArray array;
  array.dtype = NpyDType::I64;
  array.shape = {static_cast<int64_t>(values.size())};
  array.data.resize(values.size() * 8);
  std::memcpy(array.data.data(), values.data(), array.data.size());
  return array;
}

} // namespace

/// Ragged lists (a RaggedTensor's values and row_splits) padded with -1, and
/// each way the offsets can be wrong named by its element.
TEST(RaggedIdsTest, PadsListsAndNamesBadSplits) {
  NpyArray padded;
  std::string problem;
  ASSERT_TRUE(padRaggedIds(int64Vector({7, 8, 9, 4}), int64Vector({0, 2, 2, 4}), 3, padded,
                           problem))
      << problem;
  EXPECT_EQ(padded.shape, (std::vector<int64_t>{3, 3}));
  std::vector<int64_t> values(9);
  std::memcpy(values.data(), padded.data.data(), 72);
  EXPECT_EQ(values, (std::vector<int64_t>{7, 8, -1, -1, -1, -1, 9, 4, -1}));
  struct Case {
    std::vector<int64_t> splits;
    std::string problem;
  } cases[] = {
      {{1, 2, 4}, "row_splits[0] = 1, expected 0"},
      {{0, 2, 3}, "row_splits[2] = 3, expected the length of 'values' (4)"},
      {{0, 3, 1, 4}, "row_splits[2] = 1 is below row_splits[1] = 3"},
      {{0, 9, 4}, "row_splits[1] = 9 is past the end of 'values' (4)"},
      {{0, 4}, "row 1 has 4 ids; the input takes at most 3"},
      {{}, "'row_splits' must be integers of rank 1 with at least one element"},
  };
  for (const Case &c : cases) {
    EXPECT_FALSE(padRaggedIds(int64Vector({7, 8, 9, 4}), int64Vector(c.splits), 3, padded,
                              problem));
    EXPECT_EQ(problem, c.problem);
  }
}
