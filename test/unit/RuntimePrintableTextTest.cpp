//===- RuntimePrintableTextTest.cpp - Names safe in a message -------------===//

#include "runtime/support/PrintableText.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

TEST(RuntimePrintableTextTest, EscapesControlCharactersOnly) {
  EXPECT_EQ(printableText("plain name"), "plain name");
  EXPECT_EQ(printableText("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");
  EXPECT_EQ(printableText(std::string("nul\0!", 5)), "nul\\x00!");
  EXPECT_EQ(printableText("del\x7f"), "del\\x7f");
  EXPECT_EQ(printableText("caf\xc3\xa9 \\ '"),
            "caf\xc3\xa9 \\ '"); // UTF-8 kept.
  EXPECT_EQ(printableText("\xe2\x82\xac \xf0\x9f\x94\xa5 \xed\x9f\xbf"),
            "\xe2\x82\xac \xf0\x9f\x94\xa5 \xed\x9f\xbf"); // 3 and 4 bytes.
}

// Tests that bytes which are not well-formed UTF-8 are escaped one by one:
// stray continuation bytes, 0xFE/0xFF, a truncated sequence, overlong forms,
// surrogates, code points above U+10FFFF, and C1 controls (U+009B is CSI).
TEST(RuntimePrintableTextTest, EscapesBytesThatAreNotUtf8) {
  EXPECT_EQ(printableText(std::string("\0\xff\xfe", 3)), "\\x00\\xff\\xfe");
  EXPECT_EQ(printableText("a\x80" "b"), "a\\x80b");
  EXPECT_EQ(printableText("end\xe2\x82"), "end\\xe2\\x82");
  EXPECT_EQ(printableText("\xc0\xaf \xe0\x80\xaf"), "\\xc0\\xaf \\xe0\\x80\\xaf");
  EXPECT_EQ(printableText("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(printableText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(printableText("\xc2\x9b[2J"), "\\xc2\\x9b[2J");
}

} // namespace
