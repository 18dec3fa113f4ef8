// `--repeat N` statistics (history/repeat_stats.h): the Wilson score interval against
// published values (R's prop.test(correct = FALSE) and the textbook 0/10, 5/10 cases),
// the summary's counts, spread, nodes and failure signatures, and the acceptance rule.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "history/repeat_stats.h"

namespace trtllm_run::history {
namespace {

RepeatRun Run(int index, const std::string& verdict, double seconds, const std::string& nodes,
              const std::string& signature = "") {
  RepeatRun run;
  run.index = index;
  run.verdict = verdict;
  run.duration_seconds = seconds;
  run.nodes = nodes;
  run.signature = signature;
  run.work_dir = "/w/" + std::to_string(index);
  return run;
}

TEST_CASE("repeat: the Wilson 95% interval matches published values", "[history][repeat]") {
  // prop.test(14, 20, correct = FALSE)$conf.int: 0.4810 0.8545.
  Interval i = WilsonInterval(14, 20);
  CHECK(i.low == Approx(0.481027).margin(1e-6));
  CHECK(i.high == Approx(0.854523).margin(1e-6));
  // No success in 10: the upper bound is 0.2775, the lower exactly 0.
  i = WilsonInterval(0, 10);
  CHECK(i.low == 0.0);
  CHECK(i.high == Approx(0.277533).margin(1e-6));
  i = WilsonInterval(10, 10);
  CHECK(i.low == Approx(0.722467).margin(1e-6));
  CHECK(i.high == Approx(1.0).margin(1e-12));
  CHECK(i.high <= 1.0);
  i = WilsonInterval(5, 10);
  CHECK(i.low == Approx(0.236593).margin(1e-6));
  CHECK(i.high == Approx(0.763407).margin(1e-6));
  // The "348 of 349 passed" of a stability report.
  i = WilsonInterval(348, 349);
  CHECK(i.low == Approx(0.983951).margin(1e-6));
  CHECK(i.high == Approx(0.999494).margin(1e-6));
  // A 99% interval is wider than the 95% one.
  Interval wide = WilsonInterval(14, 20, 2.5758293035489);
  CHECK(wide.low < 0.481);
  CHECK(wide.high > 0.8546);
  // No run: nothing known.
  i = WilsonInterval(0, 0);
  CHECK(i.low == 0.0);
  CHECK(i.high == 1.0);
}

TEST_CASE("repeat: the summary counts, spreads and groups the failures by signature",
          "[history][repeat]") {
  std::vector<RepeatRun> runs = {
      Run(3, "FAILED", 4.0, "gpunode2", "AssertionError: seeded failure N"),
      Run(1, "PASSED", 2.0, "localhost"),
      Run(2, "PASSED", 3.0, "gpunode2"),
      Run(5, "TIMEOUT", 9.0, "localhost"),
      Run(4, "FAILED", 1.0, "localhost", "AssertionError: seeded failure N"),
  };
  RepeatSummary s = SummarizeRepeat("t.py::test_x", runs, std::nullopt);
  CHECK(s.runs == 5);
  CHECK(s.passed == 2);
  CHECK(s.pass_rate == Approx(0.4));
  CHECK(s.min_seconds == 1.0);
  CHECK(s.median_seconds == 3.0);
  CHECK(s.max_seconds == 9.0);
  CHECK(s.nodes == std::vector<std::string>{"localhost", "gpunode2"});
  REQUIRE(s.failures.size() == 2);
  CHECK(s.failures[0].signature == "AssertionError: seeded failure N");
  CHECK(s.failures[0].runs == std::vector<int>{3, 4});
  CHECK(s.failures[1].signature == "TIMEOUT");  // no signature: the verdict
  CHECK(s.failures[1].runs == std::vector<int>{5});
  CHECK_FALSE(s.accepted);
  REQUIRE(s.each.size() == 5);
  CHECK(s.each[0].index == 1);  // index order
  const std::string text = FormatRepeatSummary(s);
  CHECK(text.find("2/5 passed (40.0%, Wilson 95% 11.8%..76.9%): FAILED") != std::string::npos);
  CHECK(text.find("1.0 s / 3.0 s / 9.0 s (min/median/max)") != std::string::npos);
  CHECK(text.find("2x AssertionError: seeded failure N (run 3, 4)") != std::string::npos);
  const std::string json = RepeatSummaryJson(s);
  CHECK(json.find("\"runs\":5,\"passed\":2,\"pass_rate\":0.4,\"wilson_95\":[0.117621,0.769276]") !=
        std::string::npos);
  CHECK(json.find("\"required_pass_rate\":null,\"status\":\"FAILED\"") != std::string::npos);
}

TEST_CASE("repeat: PASSED only when all passed unless a required pass rate accepts it",
          "[history][repeat]") {
  std::vector<RepeatRun> runs;
  for (int i = 1; i <= 10; ++i) runs.push_back(Run(i, i == 7 ? "FAILED" : "PASSED", 1, ""));
  CHECK_FALSE(SummarizeRepeat("x", runs, std::nullopt).accepted);
  CHECK(SummarizeRepeat("x", runs, 0.9).accepted);  // 9/10 >= 0.9
  CHECK_FALSE(SummarizeRepeat("x", runs, 0.95).accepted);
  CHECK(SummarizeRepeat("x", runs, 0.0).accepted);
  runs[6].verdict = "PASSED";
  CHECK(SummarizeRepeat("x", runs, std::nullopt).accepted);
  CHECK(SummarizeRepeat("x", runs, 1.0).accepted);
  CHECK(SummarizeRepeat("x", runs, std::nullopt).nodes.empty());  // local runs: no node
  CHECK_FALSE(SummarizeRepeat("x", {}, 0.0).accepted);            // nothing ran
}

}  // namespace
}  // namespace trtllm_run::history
