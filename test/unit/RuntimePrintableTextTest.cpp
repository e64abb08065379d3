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
}

} // namespace
