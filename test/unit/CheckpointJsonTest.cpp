//===- CheckpointJsonTest.cpp - The checkpoint's JSON reader --------------===//

#include "runtime/checkpoint/Json.h"
#include "runtime/support/JsonText.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace kiln::checkpoint;
using kiln::jsonString;

namespace {

JsonValue parse(const std::string &text) {
  JsonValue value;
  std::string problem;
  EXPECT_TRUE(parseJson(text.data(), text.size(), value, problem))
      << text << ": " << problem;
  return value;
}

std::string problemOf(const std::string &text, size_t offsetBase = 0) {
  JsonValue value;
  std::string problem;
  EXPECT_FALSE(parseJson(text.data(), text.size(), value, problem, offsetBase))
      << text;
  return problem;
}

TEST(CheckpointJsonTest, Values) {
  JsonValue value = parse(
      " {\"a\": [1, -2.5, \"x\", true, false, null, {}], \"b\": {\"c\": []}} ");
  ASSERT_TRUE(value.isObject());
  ASSERT_EQ(value.members().size(), 2u);
  EXPECT_EQ(value.members()[0].first, "a");
  const JsonValue *a = value.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->elements().size(), 7u);
  EXPECT_TRUE(a->elements()[0].isInt());
  EXPECT_EQ(a->elements()[0].asInt(), 1);
  EXPECT_EQ(a->elements()[1].kind(), JsonValue::Kind::Double);
  EXPECT_EQ(a->elements()[1].asDouble(), -2.5);
  EXPECT_EQ(a->elements()[2].asString(), "x");
  EXPECT_TRUE(a->elements()[3].isBool() && a->elements()[3].asBool());
  EXPECT_TRUE(a->elements()[4].isBool() && !a->elements()[4].asBool());
  EXPECT_TRUE(a->elements()[5].isNull());
  EXPECT_TRUE(a->elements()[6].isObject());
  const JsonValue *c = value.find("b")->find("c");
  ASSERT_TRUE(c && c->isArray());
  EXPECT_TRUE(c->elements().empty());
  EXPECT_EQ(value.find("z"), nullptr);
}

TEST(CheckpointJsonTest, Numbers) {
  EXPECT_EQ(parse("9223372036854775807").asInt(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(parse("-9223372036854775808").asInt(),
            std::numeric_limits<int64_t>::min());
  // Beyond int64: a double.
  JsonValue big = parse("9223372036854775808");
  EXPECT_EQ(big.kind(), JsonValue::Kind::Double);
  EXPECT_EQ(big.asDouble(), 9223372036854775808.0);
  EXPECT_EQ(parse("1e3").kind(), JsonValue::Kind::Double);
  EXPECT_EQ(parse("1E+3").asDouble(), 1000);
  EXPECT_EQ(parse("0.125").asDouble(), 0.125);
  EXPECT_EQ(parse("-0").asInt(), 0);
  EXPECT_EQ(parse("0").asDouble(), 0);
}

TEST(CheckpointJsonTest, StringEscapes) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\b\f\n\r\t")").asString(),
            "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u00e9\u20AC")").asString(), "\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(parse(R"("\ud83d\ude00")").asString(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(parse("\"\xc3\xa9\"").asString(), "\xc3\xa9");
}

TEST(CheckpointJsonTest, QuoteRoundTrips) {
  std::string text = "a\"b\\c\n\t\r\x01 \xc3\xa9";
  std::string quoted = jsonString(text);
  EXPECT_EQ(quoted, "\"a\\\"b\\\\c\\n\\t\\r\\u0001 \xc3\xa9\"");
  EXPECT_EQ(parse(quoted).asString(), text);
}

// Tests that malformed text is refused with the offset at fault.
TEST(CheckpointJsonTest, RejectsMalformedText) {
  EXPECT_EQ(problemOf(""), "at byte 0: expected a value, found end of text");
  EXPECT_EQ(problemOf("{\"a\":}"), "at byte 5: expected a value, found '}'");
  EXPECT_EQ(problemOf("{\"a\" 1}"), "at byte 5: expected ':', found '1'");
  EXPECT_EQ(problemOf("{\"a\":1,}"),
            "at byte 7: expected a string key, found '}'");
  EXPECT_EQ(problemOf("{a:1}"), "at byte 1: expected a string key, found 'a'");
  EXPECT_EQ(problemOf("[1 2]"), "at byte 3: expected ']', found '2'");
  EXPECT_EQ(problemOf("[1,]"), "at byte 3: expected a value, found ']'");
  EXPECT_EQ(problemOf("{} x"), "at byte 3: unexpected 'x' after the value");
  EXPECT_EQ(problemOf("\"abc"), "at byte 0: unterminated string");
  EXPECT_EQ(problemOf("\"a\x01\""),
            "at byte 2: unescaped control character (byte 0x01) in a string");
  EXPECT_EQ(problemOf("\"\\x\""), "at byte 1: invalid escape '\\x'");
  EXPECT_EQ(problemOf("\"\\u12g4\""),
            "at byte 5: expected a hex digit in \\u escape, found 'g'");
  EXPECT_EQ(problemOf("\"\\ud83d\""),
            "at byte 1: unpaired high surrogate in \\u escape");
  EXPECT_EQ(problemOf("\"\\ude00\""),
            "at byte 1: unpaired low surrogate in \\u escape");
  EXPECT_EQ(problemOf("01"), "at byte 0: leading zero in a number");
  EXPECT_EQ(problemOf("-"), "at byte 1: expected a digit, found end of text");
  EXPECT_EQ(problemOf("1."),
            "at byte 2: expected a digit after '.', found end of text");
  EXPECT_EQ(problemOf("1e"),
            "at byte 2: expected a digit in the exponent, found end of text");
  EXPECT_EQ(problemOf("tru"), "at byte 0: expected a value, found 't'");
  EXPECT_EQ(problemOf("{\"a\":1,\"a\":2}"), "at byte 7: duplicate key \"a\"");
  EXPECT_EQ(problemOf("[nul]", 8), "at byte 9: expected a value, found 'n'");
}

// Tests that nesting is bounded rather than exhausting the stack.
TEST(CheckpointJsonTest, BoundsNesting) {
  EXPECT_TRUE(parse(std::string(64, '[') + std::string(64, ']')).isArray());
  EXPECT_EQ(problemOf(std::string(100000, '[')),
            "at byte 64: nesting deeper than 64");
}

} // namespace
