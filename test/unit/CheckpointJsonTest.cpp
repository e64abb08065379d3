//===- CheckpointJsonTest.cpp - The checkpoint's strict JSON reader -------===//
//
// parseJsonStrict (nlohmann-json underneath) and what the safetensors and
// manifest readers make of duplicate keys and wrongly typed fields. The
// library's own wording is checked by a fragment, the offset exactly.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/Checkpoint.h"
#include "runtime/checkpoint/Json.h"
#include "runtime/checkpoint/Safetensors.h"
#include "runtime/support/JsonText.h"

#include "test/unit/CheckpointTestSupport.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace kiln::checkpoint;
using namespace kiln::test;
using kiln::jsonString;
using Json = nlohmann::ordered_json;

namespace {

Json parse(const std::string &text) {
  Json value;
  std::string problem;
  EXPECT_TRUE(parseJsonStrict(text.data(), text.size(), value, problem))
      << text << ": " << problem;
  return value;
}

std::string problemOf(const std::string &text, size_t offsetBase = 0) {
  Json value = "untouched";
  std::string problem;
  EXPECT_FALSE(
      parseJsonStrict(text.data(), text.size(), value, problem, offsetBase))
      << text;
  EXPECT_EQ(value, "untouched") << text;
  EXPECT_EQ(problem.find('\n'), std::string::npos) << problem;
  return problem;
}

/// Checks that `text` is refused "at byte OFFSET: " with a message holding
/// `fragment`.
void expectRefused(const std::string &text, size_t offset,
                   const std::string &fragment, size_t offsetBase = 0) {
  std::string problem = problemOf(text, offsetBase);
  std::string prefix = "at byte " + std::to_string(offset) + ": ";
  EXPECT_EQ(problem.substr(0, prefix.size()), prefix)
      << text << ": " << problem;
  EXPECT_NE(problem.find(fragment), std::string::npos)
      << text << ": " << problem;
}

TEST(CheckpointJsonTest, Values) {
  Json value = parse(
      " {\"b\": [1, -2.5, \"x\", true, false, null, {}], \"a\": {\"c\": []}} ");
  ASSERT_TRUE(value.is_object());
  ASSERT_EQ(value.size(), 2u);
  // Keys stay in file order.
  EXPECT_EQ(value.begin().key(), "b");
  const Json &b = value.at("b");
  ASSERT_TRUE(b.is_array());
  ASSERT_EQ(b.size(), 7u);
  EXPECT_EQ(b[0].type(), Json::value_t::number_integer);
  EXPECT_EQ(b[0].get<int64_t>(), 1);
  EXPECT_EQ(b[1].type(), Json::value_t::number_float);
  EXPECT_EQ(b[1].get<double>(), -2.5);
  EXPECT_EQ(b[2].get<std::string>(), "x");
  EXPECT_TRUE(b[3].is_boolean() && b[3].get<bool>());
  EXPECT_TRUE(b[4].is_boolean() && !b[4].get<bool>());
  EXPECT_TRUE(b[5].is_null());
  EXPECT_TRUE(b[6].is_object() && b[6].empty());
  const Json &c = value.at("a").at("c");
  ASSERT_TRUE(c.is_array());
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(value.find("z"), value.end());
  EXPECT_EQ(value.dump(),
            "{\"b\":[1,-2.5,\"x\",true,false,null,{}],\"a\":{\"c\":[]}}");
}

// Tests that every integer that fits in int64 is one, and only those.
TEST(CheckpointJsonTest, Numbers) {
  EXPECT_EQ(parse("9223372036854775807").get<int64_t>(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse("-9223372036854775808").get<int64_t>(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(parse("7").type(), Json::value_t::number_integer);
  EXPECT_EQ(parse("-7").type(), Json::value_t::number_integer);
  // Beyond int64: a double, whether or not it fits in uint64.
  Json big = parse("9223372036854775808");
  EXPECT_EQ(big.type(), Json::value_t::number_float);
  EXPECT_EQ(big.get<double>(), 9223372036854775808.0);
  EXPECT_EQ(parse("18446744073709551616").type(), Json::value_t::number_float);
  EXPECT_EQ(parse("-9223372036854775809").type(), Json::value_t::number_float);
  EXPECT_EQ(parse("1e3").type(), Json::value_t::number_float);
  EXPECT_EQ(parse("1E+3").get<double>(), 1000);
  EXPECT_EQ(parse("0.125").get<double>(), 0.125);
  EXPECT_EQ(parse("-0").get<int64_t>(), 0);
  EXPECT_EQ(parse("0").get<double>(), 0);
  EXPECT_EQ(jsonKindName(parse("7")), std::string("an integer"));
  EXPECT_EQ(jsonKindName(parse("7.5")), std::string("a number"));
  expectRefused("1e999", 4, "number overflow");
}

TEST(CheckpointJsonTest, StringEscapes) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")").get<std::string>(),
            "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u00e9\u20AC")").get<std::string>(),
            "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parse(R"("\ud83d\ude00")").get<std::string>(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parse("\"\xc3\xa9\"").get<std::string>(), "\xc3\xa9");
  EXPECT_EQ(parse(R"("\u0000")").get<std::string>(), std::string(1, '\0'));
}

TEST(CheckpointJsonTest, QuoteRoundTrips) {
  std::string text = "a\"b\\c\n\t\r\x01 \xc3\xa9";
  std::string quoted = jsonString(text);
  EXPECT_EQ(quoted, "\"a\\\"b\\\\c\\n\\t\\r\\u0001 \xc3\xa9\"");
  EXPECT_EQ(parse(quoted).get<std::string>(), text);
}

// Tests that malformed text is refused with the offset at fault.
TEST(CheckpointJsonTest, RejectsMalformedText) {
  expectRefused("", 0, "unexpected end of input");
  expectRefused("   ", 3, "unexpected end of input");
  expectRefused("{\"a\":}", 5, "unexpected '}'");
  expectRefused("{\"a\" 1}", 5, "expected ':'");
  expectRefused("{\"a\":1,}", 7, "expected string literal");
  expectRefused("{a:1}", 1, "expected string literal");
  expectRefused("[1 2]", 3, "expected ']'");
  expectRefused("[1,]", 3, "unexpected ']'");
  expectRefused("{} x", 3, "expected end of input");
  expectRefused("[1,2]]", 5, "expected end of input");
  expectRefused("\"abc", 4, "missing closing quote");
  expectRefused("\"a\x01\"", 2, "control character U+0001");
  expectRefused("\"\\x\"", 2, "forbidden character after backslash");
  expectRefused("\"\\u12g4\"", 5, "4 hex digits");
  expectRefused("\"\\ud83d\"", 7, "must be followed by U+DC00..U+DFFF");
  expectRefused("\"\\ude00\"", 6, "must follow U+D800..U+DBFF");
  expectRefused("01", 1, "expected end of input");
  expectRefused("-", 1, "expected digit after '-'");
  expectRefused("1.", 2, "expected digit after '.'");
  expectRefused("1e", 2, "after exponent");
  expectRefused("tru", 3, "invalid literal");
  expectRefused("{\"x\":1} // no comments", 8, "expected end of input");
  // Not UTF-8; the message stays valid UTF-8.
  std::string problem = problemOf("\"\xff\"");
  EXPECT_EQ(problem.substr(0, 11), "at byte 1: ") << problem;
  EXPECT_NE(problem.find("ill-formed UTF-8"), std::string::npos) << problem;
  EXPECT_TRUE(isValidUtf8(problem)) << problem;
  // Offsets count from where the text starts in its file.
  expectRefused("[nul]", 12, "invalid literal", 8);
}

// Tests that a NUL byte, which nlohmann takes for the end of the text, is
// refused wherever it is.
TEST(CheckpointJsonTest, RejectsNulBytes) {
  EXPECT_EQ(problemOf(std::string("{}\0garbage", 10)),
            "at byte 2: unexpected byte 0x00");
  EXPECT_EQ(problemOf(std::string("{} \0", 4), 8),
            "at byte 11: unexpected byte 0x00");
  EXPECT_EQ(problemOf(std::string("[1,\0]", 5)),
            "at byte 3: unexpected byte 0x00");
  EXPECT_EQ(problemOf(std::string("\"a\0\"", 4)),
            "at byte 2: unexpected byte 0x00");
  // An error before the NUL is the one reported.
  expectRefused(std::string("[1;\0]", 5), 2, "invalid literal");
}

// Tests that a key twice in one object is refused at the second, and the
// same key in different objects is not.
TEST(CheckpointJsonTest, RejectsDuplicateKeys) {
  EXPECT_EQ(problemOf("{\"a\":1,\"a\":2}"), "at byte 7: duplicate key \"a\"");
  EXPECT_EQ(problemOf("{\"a\":{\"b\":1},\n \"c\":[{\"d\":1,\"d\":1}]}"),
            "at byte 27: duplicate key \"d\"");
  // Escapes are decoded before keys are compared, and quoted back.
  EXPECT_EQ(problemOf(R"({"a\"":1, "a\u0022":2})"),
            "at byte 10: duplicate key \"a\\\"\"");
  EXPECT_EQ(problemOf("{\"\\u00e9\":1,\"\xc3\xa9\":2}", 8),
            "at byte 20: duplicate key \"\xc3\xa9\"");
  // A large object, whose keys are hashed rather than searched.
  std::string large = "{";
  for (int i = 0; i < 40; ++i)
    large += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  EXPECT_EQ(parse(large.substr(0, large.size() - 1) + "}").size(), 40u);
  EXPECT_EQ(problemOf(large + "\"k3\":0}"), "at byte " +
                                                std::to_string(large.size()) +
                                                ": duplicate key \"k3\"");
  EXPECT_EQ(problemOf(large + "\"k39\":0}"), "at byte " +
                                                 std::to_string(large.size()) +
                                                 ": duplicate key \"k39\"");
  Json value = parse(R"({"a":{"a":1},"b":{"a":2},"c":[{"a":3},{"a":4}]})");
  EXPECT_EQ(value.at("c")[1].at("a"), 4);
}

// Tests that nesting is bounded rather than exhausting the stack.
TEST(CheckpointJsonTest, BoundsNesting) {
  EXPECT_TRUE(
      parse(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'))
          .is_array());
  EXPECT_EQ(problemOf(std::string(100000, '[')),
            "at byte 64: nesting deeper than 64");
  std::string objects;
  for (int i = 0; i <= kMaxJsonDepth; ++i)
    objects += "{\"k\":";
  EXPECT_EQ(problemOf(objects), "at byte " + std::to_string(5 * kMaxJsonDepth) +
                                    ": nesting deeper than 64");
}

TEST(CheckpointJsonTest, ReadsNonNegativeIntegers) {
  std::vector<int64_t> out;
  EXPECT_EQ(
      readNonNegativeIntegers(parse("[0,3,9223372036854775807]"), "shape", out),
      "");
  EXPECT_EQ(out, (std::vector<int64_t>{0, 3, INT64_MAX}));
  EXPECT_EQ(readNonNegativeIntegers(parse("\"2x3\""), "shape", out),
            "shape is a string, expected an array of non-negative integers");
  EXPECT_EQ(readNonNegativeIntegers(parse("[2,\"3\"]"), "shape", out),
            "shape[1] is a string, expected a non-negative integer");
  EXPECT_EQ(readNonNegativeIntegers(parse("[2,-3]"), "shape", out),
            "shape[1] is -3, expected a non-negative integer");
  EXPECT_EQ(readNonNegativeIntegers(parse("[2.5]"), "shape", out),
            "shape[0] is a number, expected a non-negative integer");
  EXPECT_EQ(
      readNonNegativeIntegers(parse("[9223372036854775808]"), "shape", out),
      "shape[0] is a number, expected a non-negative integer");
}

TEST(CheckpointJsonTest, ChecksUtf8) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8("w \xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(isValidUtf8("\xff"));
  EXPECT_FALSE(isValidUtf8("\xc3"));         // Truncated.
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));     // Overlong.
  EXPECT_FALSE(isValidUtf8("\xed\xa0\x80")); // A surrogate.
}

/// A one-tensor safetensors file whose header is `header` (padded).
std::string safetensorsFile(std::string header, size_t dataBytes) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string file;
  for (int i = 0; i < 8; ++i)
    file.push_back(char((uint64_t(header.size()) >> (8 * i)) & 0xFF));
  return file + header + std::string(dataBytes, '\x01');
}

std::string safetensorsError(const ScratchDirectory &scratch,
                             const std::string &header) {
  std::string path = scratch.file("t.safetensors");
  writeText(path, safetensorsFile(header, 8));
  SafetensorsReader reader;
  std::string error;
  EXPECT_FALSE(reader.open(path, error)) << header;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error.substr(error.find(": error: ") + 9);
}

// Tests that the safetensors reader refuses duplicate keys and wrongly
// typed fields with one line naming the tensor and the field.
TEST(CheckpointJsonTest, SafetensorsHeaderProblems) {
  ScratchDirectory scratch;
  std::string path = scratch.file("t.safetensors");
  std::string good =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  writeText(path, safetensorsFile(good, 8));
  SafetensorsReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(path, error)) << error;
  ASSERT_EQ(reader.tensors().size(), 1u);
  EXPECT_EQ(reader.tensors()[0].offset, 8 + 56u);

  // Offsets count from the start of the file: the JSON starts at byte 8.
  EXPECT_EQ(safetensorsError(scratch,
                             R"({"w":{"dtype":"F32","shape":[2],)"
                             R"("data_offsets":[0,8]},"w":{"dtype":"F32"}})"),
            "header is not JSON: at byte 62: duplicate key \"w\"");
  EXPECT_EQ(safetensorsError(scratch,
                             R"({"w":{"dtype":"F32","dtype":"I32","shape":[2],)"
                             R"("data_offsets":[0,8]}})"),
            "header is not JSON: at byte 28: duplicate key \"dtype\"");
  EXPECT_EQ(safetensorsError(scratch, R"({"w":{"dtype":"F32","shape":"2",)"
                                      R"("data_offsets":[0,8]}})"),
            "tensor 'w': shape is a string, expected an array of non-negative "
            "integers");
  EXPECT_EQ(
      safetensorsError(scratch, R"({"w":{"dtype":"F32","shape":[2,"1"],)"
                                R"("data_offsets":[0,8]}})"),
      "tensor 'w': shape[1] is a string, expected a non-negative integer");
  EXPECT_EQ(safetensorsError(scratch, R"({"w":{"dtype":"F32","shape":[2],)"
                                      R"("data_offsets":[0,8.0]}})"),
            "tensor 'w': data_offsets[1] is a number, expected a "
            "non-negative integer");
  EXPECT_EQ(safetensorsError(scratch, R"({"w":{"dtype":32,"shape":[2],)"
                                      R"("data_offsets":[0,8]}})"),
            "tensor 'w': dtype is an integer, expected a string");
  EXPECT_EQ(safetensorsError(scratch, R"({"w":{"dtype":"F32","shape":[2]}})"),
            "tensor 'w': missing field 'data_offsets'");
  EXPECT_EQ(safetensorsError(scratch, R"({"w":[1]})"),
            "tensor 'w': entry is an array, expected an object");
  EXPECT_EQ(safetensorsError(scratch, R"({"__metadata__":"x"})"),
            "__metadata__ is a string, expected an object");
  EXPECT_EQ(safetensorsError(scratch, R"([])"),
            "header is an array, expected an object");
}

// Tests that the manifest reader refuses duplicate keys and wrongly typed
// fields with one line naming the field.
TEST(CheckpointJsonTest, ManifestProblems) {
  ScratchDirectory scratch;
  std::vector<float> w = {1, 2};
  SaveRequest request{scratch.path(), "mlp", 3, {{"batches_consumed", 3}}, {}};
  request.tensors = {{"w", DType::F32, {2}, w.data(), 8}};
  std::string error;
  ASSERT_TRUE(saveCheckpoint(request, error)) << error;
  std::string manifest = scratch.file("ckpt-3/manifest.json");
  std::string good = readText(manifest);
  auto errorWith = [&](const std::string &from, const std::string &to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos)
      text.replace(at, from.size(), to);
    writeText(manifest, text);
    Checkpoint loaded;
    std::string error;
    EXPECT_FALSE(loadCheckpoint(scratch.path(), loaded, error)) << to;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.substr(0, manifest.size()), manifest) << error;
    return error.substr(error.find(": error: ") + 9);
  };
  std::string step = "\"step\":3,";
  EXPECT_EQ(errorWith(step, step + step),
            "manifest is not JSON: at byte " +
                std::to_string(good.find(step) + step.size()) +
                ": duplicate key \"step\"");
  EXPECT_EQ(errorWith("\"shape\":[2]", "\"shape\":\"2\""),
            "field 'tensors.w.shape' is a string, expected an array");
  EXPECT_EQ(errorWith("\"shape\":[2]", "\"shape\":[\"2\"]"),
            "tensor 'w': shape[0] is a string, expected a non-negative "
            "integer");
  EXPECT_EQ(errorWith("\"shape\":[2]", "\"shape\":[-2]"),
            "tensor 'w': shape[0] is -2, expected a non-negative integer");
  EXPECT_EQ(errorWith("\"shard\":0", "\"shard\":\"0\""),
            "field 'tensors.w.shard' is a string, expected an integer");
  EXPECT_EQ(errorWith("\"step\":3", "\"step\":3.0"),
            "field 'step' is a number, expected an integer");
  EXPECT_EQ(errorWith("\"step\":3", "\"step\":9223372036854775808"),
            "field 'step' is a number, expected an integer");
  EXPECT_EQ(errorWith("\"model\":\"mlp\"", "\"model\":null"),
            "field 'model' is null, expected a string");
  EXPECT_EQ(errorWith("\"data\":{", "\"data\":{\"x\":true,"),
            "data.x is a boolean, expected an integer");
  EXPECT_EQ(errorWith("\"tensors\":{", "\"tensors\":{\"v\":[],"),
            "field 'tensors.v' is an array, expected an object");
}

// Tests that a save refuses names the strict reader could not read back.
TEST(CheckpointJsonTest, SaveRefusesNamesThatAreNotUtf8) {
  ScratchDirectory scratch;
  float w = 1;
  SaveRequest request{scratch.path(), "mlp", 1, {}, {}};
  request.tensors = {{"w\xff", DType::F32, {}, &w, 4}};
  std::string error;
  EXPECT_FALSE(saveCheckpoint(request, error));
  EXPECT_EQ(error, scratch.path() + ": error: cannot write checkpoint: "
                                    "tensor 'w\xff': the name is not valid "
                                    "UTF-8");
  request.tensors[0].name = "w";
  request.model = "\xc3";
  EXPECT_FALSE(saveCheckpoint(request, error));
  EXPECT_EQ(error, scratch.path() + ": error: cannot write checkpoint: the "
                                    "model name is not valid UTF-8");
  // UTF-8 names round-trip.
  request.model = "m\xc3\xa9";
  request.tensors[0].name = "\xf0\x9f\x98\x80\n\"";
  ASSERT_TRUE(saveCheckpoint(request, error)) << error;
  Checkpoint loaded;
  ASSERT_TRUE(loadCheckpoint(scratch.path(), loaded, error)) << error;
  EXPECT_EQ(loaded.model, request.model);
  ASSERT_EQ(loaded.tensors.size(), 1u);
  EXPECT_EQ(loaded.tensors[0].name, request.tensors[0].name);
}

} // namespace
