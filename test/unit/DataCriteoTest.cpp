//===- DataCriteoTest.cpp - Data sets from Criteo-layout text files -------===//

#include "runtime/data/Dataset.h"

#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace kiln::data;
using namespace kiln::test;

namespace {

template <typename T> std::vector<T> column(const Dataset &data, size_t i) {
  std::vector<T> values(data.columns[i].size() / sizeof(T));
  std::memcpy(values.data(), data.columns[i].data(), data.columns[i].size());
  return values;
}

std::vector<uint8_t> bytesOf(const std::string &text) {
  return {text.begin(), text.end()};
}

int64_t hashId(const std::string &text, int64_t bound) {
  return static_cast<int64_t>(fnv1a64(text.data(), text.size()) %
                              static_cast<uint64_t>(bound));
}

/// label, dense [3], two categorical columns (i32 and i64).
std::vector<FeedSpec> ctrSpecs() {
  return {{"click", ElementType::F32, {}, 0},
          {"dense", ElementType::F32, {3}, 0},
          {"site", ElementType::I32, {}, 100},
          {"app", ElementType::I64, {1}, 7}};
}

class DataCriteoTest : public ::testing::Test {
protected:
  Dataset load(const std::string &name, const std::string &text,
               std::vector<FeedSpec> specs = ctrSpecs(),
               ReadOptions options = {}, const std::string &label = "click") {
    writeFile(dir_.file(name), bytesOf(text));
    Dataset data;
    std::string error;
    EXPECT_TRUE(loadCriteo(dir_.file(name), specs, label, options, data, error))
        << error;
    return data;
  }

  /// The message after "PATH: error: ", checked to be one line naming the
  /// file.
  std::string loadError(const std::string &name, const std::string &text,
                        std::vector<FeedSpec> specs = ctrSpecs(),
                        ReadOptions options = {},
                        const std::string &label = "click") {
    std::string path = dir_.file(name);
    writeFile(path, bytesOf(text));
    Dataset data;
    std::string error;
    EXPECT_FALSE(loadCriteo(path, specs, label, options, data, error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.rfind(path + ": error: ", 0), 0u) << error;
    return error.substr(std::min(error.size(), path.size() + 9));
  }

  TemporaryDirectory dir_;
};

TEST_F(DataCriteoTest, HashesWithFnv1a64) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
}

TEST_F(DataCriteoTest, ReadsATsv) {
  Dataset data = load("t.tsv", "1\t0.5\t-2\t3e2\t68fd1e64\t80e26c9b\n"
                               "0\t\t7\t\t\tfb936136\n");
  EXPECT_EQ(data.rows, 2);
  EXPECT_EQ(data.skippedRows, 0);
  EXPECT_EQ(column<float>(data, 0), (std::vector<float>{1, 0}));
  EXPECT_EQ(column<float>(data, 1),
            (std::vector<float>{0.5f, -2, 300, 0, 7, 0}));
  EXPECT_EQ(column<int32_t>(data, 2),
            (std::vector<int32_t>{int32_t(hashId("68fd1e64", 100)),
                                  int32_t(hashId("", 100))}));
  EXPECT_EQ(
      column<int64_t>(data, 3),
      (std::vector<int64_t>{hashId("80e26c9b", 7), hashId("fb936136", 7)}));
}

TEST_F(DataCriteoTest, HashesOntoEveryIdWithoutABound) {
  // A hash embedding's ids have no bound: every non-negative id of the type.
  std::vector<FeedSpec> specs = ctrSpecs();
  specs[2].idBound = 0;
  specs[3].idBound = 0;
  Dataset data = load("t.tsv", "1\t1\t2\t3\t68fd1e64\t80e26c9b\n", specs);
  uint64_t site = fnv1a64("68fd1e64", 8), app = fnv1a64("80e26c9b", 8);
  EXPECT_EQ(column<int32_t>(data, 2),
            (std::vector<int32_t>{int32_t(site & uint64_t(INT32_MAX))}));
  EXPECT_EQ(column<int64_t>(data, 3),
            (std::vector<int64_t>{int64_t(app & uint64_t(INT64_MAX))}));
  EXPECT_GT(column<int64_t>(data, 3)[0], int64_t(1) << 32);
}

TEST_F(DataCriteoTest, ReadsACsvWithAHeaderAndCrlf) {
  Dataset data = load("t.csv", "label,i1,i2,i3,c1,c2\r\n"
                               "1,1,2,3,a,b\r\n"
                               "\r\n"
                               "0, 4 ,+5,6,c,d\r\n");
  EXPECT_EQ(data.rows, 2);
  EXPECT_EQ(column<float>(data, 1), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(column<int64_t>(data, 3),
            (std::vector<int64_t>{hashId("b", 7), hashId("d", 7)}));
}

TEST_F(DataCriteoTest, DetectsTheDelimiterOfATxtFile) {
  Dataset commas = load("t.txt", "1,1,2,3,a,b\n");
  EXPECT_EQ(column<float>(commas, 1), (std::vector<float>{1, 2, 3}));
  Dataset tabs = load("u.txt", "1\t1\t2\t3\ta,x\tb\n");
  EXPECT_EQ(column<int32_t>(tabs, 2),
            (std::vector<int32_t>{int32_t(hashId("a,x", 100))}));
  // The first line has a tab: "2,5" is one field, and not a number.
  EXPECT_EQ(loadError("v.txt", "1\t1\t2,5\t3\ta\tb\n"),
            "line 1: row 1: column 3 (input dense[1]): '2,5' is not a number");
}

TEST_F(DataCriteoTest, ReadsIntegerLabelsAndNoDenseColumns) {
  std::vector<FeedSpec> specs = {{"site", ElementType::I32, {}, 50},
                                 {"label", ElementType::I64, {}, 3}};
  Dataset data = load("t.tsv", "2\tx\n0\ty\n1.0\tz\n", specs, {}, "label");
  EXPECT_EQ(column<int64_t>(data, 1), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(
      column<int32_t>(data, 0),
      (std::vector<int32_t>{int32_t(hashId("x", 50)), int32_t(hashId("y", 50)),
                            int32_t(hashId("z", 50))}));
  EXPECT_EQ(loadError("u.tsv", "2\tx\n3\ty\n", specs, {}, "label"),
            "line 2: row 2: input label: id 3 out of range [0, 3)");
  EXPECT_EQ(loadError("u.tsv", "0.5\tx\n", specs, {}, "label"),
            "line 1: row 1: column 1 (input label): '0.5' is not an integer");
}

TEST_F(DataCriteoTest, ReportsBadRowsByLineRowAndInput) {
  std::string header = "label\tI1\tI2\tI3\tC1\tC2\n";
  EXPECT_EQ(
      loadError("t.tsv", header + "1\t1\t2\t3\ta\tb\n0\t1\tnan\t3\ta\tb\n"),
      "line 3: row 2: input dense: NaN at [1]");
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\n\n0\t1\t2\tinf\ta\tb\n"),
            "line 3: row 2: input dense: +Inf at [2]");
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\n0\t1\tabc\t3\ta\tb\n"),
            "line 2: row 2: column 3 (input dense[1]): 'abc' is not a number");
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\n0\t1\t2\t1e999\ta\tb\n"),
            "line 2: row 2: column 4 (input dense[2]): '1e999' is out of "
            "range");
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\nx1\t1\t2\t3\ta\tb\n"),
            "line 2: row 2: column 1 (input click): 'x1' is not a number");
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\n0\t1\t2\t3\ta\n"),
            "line 2: row 2: 5 fields; expected 6 (the label, 3 dense, 2 "
            "categorical)");
}

TEST_F(DataCriteoTest, SkipsBadRowsWhenAsked) {
  Dataset data = load("t.tsv",
                      "1\t1\t2\t3\ta\tb\n"
                      "0\t1\tnan\t3\ta\tb\n"
                      "0\t1\t2\t3\ta\n"
                      "0\t1\tabc\t3\ta\tb\n"
                      "0\t4\t5\t6\tc\td\n",
                      ctrSpecs(), {true});
  EXPECT_EQ(data.rows, 2);
  EXPECT_EQ(data.skippedRows, 3);
  EXPECT_EQ(column<float>(data, 0), (std::vector<float>{1, 0}));
  EXPECT_EQ(column<float>(data, 1), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(column<int32_t>(data, 2).size(), 2u);
  EXPECT_EQ(column<int64_t>(data, 3),
            (std::vector<int64_t>{hashId("b", 7), hashId("d", 7)}));
  EXPECT_EQ(loadError("u.tsv", "0\t1\tnan\t3\ta\tb\n", ctrSpecs(), {true}),
            "holds no examples (all 1 rows were bad and skipped)");
}

// Tests that a column of 2 MB or more, grown row by row and shrunk to fit
// after dropping bad rows, lies on huge pages and keeps every value.
TEST_F(DataCriteoTest, LargeColumnsLieOnHugePages) {
  const int rows = 200000; // dense [3] f32: 2.4 MB.
  std::string text;
  for (int i = 0; i < rows; ++i) {
    std::string dense = i == 7 ? "nan" : std::to_string(i);
    text += std::to_string(i % 2) + "\t" + dense + "\t1\t-" + std::to_string(i) + "\ta\tb\n";
  }
  Dataset data = load("big.tsv", text, ctrSpecs(), {true});
  ASSERT_EQ(data.rows, rows - 1);
  ASSERT_GE(data.columns[1].size(), kiln::cpu::kHugePageBytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data.columns[1].data()) % kiln::cpu::kHugePageBytes, 0u);
  std::vector<float> dense = column<float>(data, 1);
  for (int row = 0; row < rows - 1; ++row) {
    int line = row < 7 ? row : row + 1; // Line 8 was dropped.
    ASSERT_EQ(dense[3 * row], static_cast<float>(line)) << row;
    ASSERT_EQ(dense[3 * row + 2], -static_cast<float>(line)) << row;
  }
}

TEST_F(DataCriteoTest, RefusesALayoutThatDoesNotMatchTheInputs) {
  // The first row decides the layout: even skipBadRows does not skip it.
  EXPECT_EQ(loadError("t.tsv", "1\t1\t2\t3\ta\tb\tc\td\n", ctrSpecs(), {true}),
            "line 1: row 1: 8 fields; expected 6 (the label, 3 dense, 2 "
            "categorical): the inputs take 2 categorical columns, the file "
            "has 4");
}

TEST_F(DataCriteoTest, RefusesInputsItCannotFill) {
  std::vector<FeedSpec> specs = ctrSpecs();
  EXPECT_EQ(loadError("t.tsv", "1\n", specs, {}, "clicked"),
            "no input named 'clicked' for the label (inputs: click, dense, "
            "site, app)");
  specs.push_back({"more", ElementType::F32, {2}, 0});
  EXPECT_EQ(loadError("t.tsv", "1\n", specs),
            "inputs 'dense' and 'more' both ask for the dense columns (f32 "
            "[D]); a Criteo file has one set");
  specs = ctrSpecs();
  specs[0].exampleShape = {2};
  EXPECT_EQ(loadError("t.tsv", "1\n", specs),
            "label input 'click' (f32 [2]) must hold one value per example");
  specs = ctrSpecs();
  specs.push_back({"image", ElementType::F32, {2, 2}, 0});
  EXPECT_EQ(loadError("t.tsv", "1\n", specs),
            "input 'image' (f32 [2, 2]) has no column in a Criteo file "
            "(label, one f32 [D] dense input, integer inputs of one id each)");
}

TEST_F(DataCriteoTest, ReportsEmptyAndMissingFiles) {
  EXPECT_EQ(loadError("t.tsv", ""), "holds no examples");
  EXPECT_EQ(loadError("t.tsv", "label\tI1\n"), "holds no examples");
  Dataset data;
  std::string error;
  std::string missing = dir_.file("missing.tsv");
  EXPECT_FALSE(loadCriteo(missing, ctrSpecs(), "click", {}, data, error));
  EXPECT_EQ(error, missing + ": error: cannot read: No such file or directory");
}

TEST_F(DataCriteoTest, LoadDatasetOpensTextByExtension) {
  for (auto [name, text] : {std::pair{"t.csv", "1,1,2,3,a,b\n"},
                            {"t.TSV", "1\t1\t2\t3\ta\tb\n"},
                            {"t.txt", "1,1,2,3,a,b\n"}}) {
    writeFile(dir_.file(name), bytesOf(text));
    Dataset data;
    std::string error;
    EXPECT_TRUE(
        loadDataset(dir_.file(name), ctrSpecs(), "click", {}, data, error))
        << error;
    EXPECT_EQ(data.rows, 1) << name;
  }
}

} // namespace
