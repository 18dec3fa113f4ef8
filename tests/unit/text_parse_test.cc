// The one Join, Trim, integer parser, whitespace splitter and identifier check (text.h)
// that the library, the workflows and the executors share.
#include <catch2/catch.hpp>
#include <climits>
#include <string>
#include <vector>

#include "trtllm_run/sdk/text.h"

using namespace trtllm_run;

namespace {

TEST_CASE("Join: the separator between each two items, empty items kept", "[text]") {
  CHECK(Join({}, ", ").empty());
  CHECK(Join({"a"}, ", ") == "a");
  CHECK(Join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(Join({"", "b"}, ";") == ";b");
}

TEST_CASE("Trim: ASCII whitespace off both ends, the view points into the text", "[text]") {
  CHECK(Trim("  a b \t\r\n") == "a b");
  CHECK(Trim("\v\fx") == "x");
  CHECK(Trim("   ").empty());
  CHECK(Trim("").empty());
  std::string text = " kept ";
  CHECK(Trim(text).data() == text.data() + 1);
}

TEST_CASE("ParseInteger: the whole text, decimal, within the bounds", "[text]") {
  CHECK(ParseInteger("0", 0, 10) == 0);
  CHECK(ParseInteger("10", 0, 10) == 10);
  CHECK(ParseInteger("007", 0, 10) == 7);
  CHECK(ParseInteger("-3", -5, 5) == -3);
  CHECK_FALSE(ParseInteger("11", 0, 10));
  CHECK_FALSE(ParseInteger("0", 1, 10));
  CHECK_FALSE(ParseInteger("-0", 0, 10));  // no sign where negatives are not allowed
  CHECK_FALSE(ParseInteger("+1", 0, 10));
  CHECK_FALSE(ParseInteger(" 1", 0, 10));
  CHECK_FALSE(ParseInteger("1 ", 0, 10));
  CHECK_FALSE(ParseInteger("1x", 0, 10));
  CHECK_FALSE(ParseInteger("", 0, 10));
  CHECK_FALSE(ParseInteger("-", -5, 5));
  CHECK_FALSE(ParseInteger("99999999999999999999999", 0, LLONG_MAX));  // overflow
  CHECK(ParseInteger("9223372036854775807", 0, LLONG_MAX) == LLONG_MAX);
}

TEST_CASE("SplitWhitespace and IsShellIdentifier", "[text]") {
  CHECK(SplitWhitespace("  a\tb\n c  ") == std::vector<std::string>{"a", "b", "c"});
  CHECK(SplitWhitespace(" \n ").empty());
  CHECK(IsShellIdentifier("CUDA_VISIBLE_DEVICES"));
  CHECK(IsShellIdentifier("_x1"));
  CHECK_FALSE(IsShellIdentifier("1x"));
  CHECK_FALSE(IsShellIdentifier("A-B"));
  CHECK_FALSE(IsShellIdentifier(""));
}

}  // namespace
