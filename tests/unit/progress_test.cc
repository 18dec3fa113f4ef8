// Progress lines: the live line on a terminal, plain lines elsewhere.
#include "trtllm_run/sdk/supervise/progress.h"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

namespace trtllm_run {
namespace {

TEST_CASE("FormatProgressLine: state, elapsed, limit, last line", "[progress]") {
  ProgressSnapshot s{"running", 65.4, 3600, "step 3/10 loss=0.1"};
  CHECK(FormatProgressLine("local_docker", s, 0) ==
        "[local_docker] running 1m05s / 1h00m00s limit | step 3/10 loss=0.1");
  s.time_limit_seconds = 0;
  s.last_line = "";
  CHECK(FormatProgressLine("x", s, 0) == "[x] running 1m05s");
}

TEST_CASE("FormatProgressLine: control characters dropped, cut to the width", "[progress]") {
  ProgressSnapshot s{"running", 1, 0, "\x1b[31mred\x1b[0m\rover\ttab"};
  CHECK(FormatProgressLine("x", s, 0) == "[x] running 1s | redover tab");
  s.last_line = "ünïcödé ✓ and more text";
  std::string cut = FormatProgressLine("x", s, 20);
  CHECK(cut == "[x] running 1s | ünï");  // 20 columns, no split UTF-8 sequence
}

TEST_CASE("ProgressReporter: plain lines on state changes only", "[progress]") {
  std::ostringstream out;
  {
    ProgressReporter reporter(&out, /*live=*/false, "d", /*heartbeat_seconds=*/3600);
    reporter.Update({"starting", 0, 10, ""});
    reporter.Update({"starting", 0.1, 10, "a"});
    reporter.Update({"running", 0.2, 10, "b"});
    reporter.Message("sent SIGTERM");
  }
  CHECK(out.str() ==
        "[d] starting 0s / 10s limit\n[d] running 0s / 10s limit | b\n"
        "[d] sent SIGTERM\n");
}

TEST_CASE("ProgressReporter: the live line is rewritten in place and cleared", "[progress]") {
  std::ostringstream out;
  {
    ProgressReporter reporter(&out, /*live=*/true, "d");
    reporter.Update({"running", 0, 0, "first"});
    reporter.Clear();                               // job output is about to be written
    reporter.Update({"stopping", 1, 0, "second"});  // a new state redraws at once
    reporter.Message("done");
  }
  std::string text = out.str();
  CHECK(text.find('\n') == text.rfind('\n'));  // only the message ends a line
  CHECK_THAT(text, Catch::StartsWith("\r\033[K[d] running 0s | first\r\033[K"));
  CHECK_THAT(text, Catch::Contains("\r\033[K[d] stopping 1s | second"));
  CHECK_THAT(text, Catch::EndsWith("\r\033[K[d] done\n"));
}

TEST_CASE("IsTerminalStream: string streams are never terminals", "[progress]") {
  std::ostringstream out;
  CHECK_FALSE(IsTerminalStream(&out));
  CHECK_FALSE(IsTerminalStream(nullptr));
}

}  // namespace
}  // namespace trtllm_run
