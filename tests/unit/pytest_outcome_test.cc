// The pytest workflow's log reader on real pytest 7.2.1 output (tests/fixtures/pytest,
// see its README) and on the shapes srun -l and -q give it; and the verdicts it makes.
#include "pytest_outcome.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;
using pytest_outcome::Judge;
using pytest_outcome::ParseLog;
using pytest_outcome::ParseSummaryLine;
using pytest_outcome::Report;

std::string Fixture(const std::string& name) {
  fs::path path = fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "pytest" / name;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

RunResult Ended(RunStatus status, int exit_code) {
  RunResult result;
  result.status = status;
  result.exit_code = exit_code;
  result.reason = "command exited with code " + std::to_string(exit_code);
  return result;
}

const TestCaseOutcome* FindTest(const Report& report, const std::string& name) {
  for (const TestCaseOutcome& test : report.tests) {
    if (test.name == name) return &test;
  }
  return nullptr;
}

TEST_CASE("pytest summary lines in every mode", "[pytest_outcome]") {
  TestCounts counts;
  REQUIRE(ParseSummaryLine(
      "========= 1 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.03s =========", &counts));
  CHECK(counts.failed == 1);
  CHECK(counts.passed == 3);
  CHECK(counts.skipped == 1);
  CHECK(counts.xfailed == 1);
  CHECK(counts.xpassed == 1);
  CHECK(counts.summary == "1 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed in 0.03s");

  REQUIRE(ParseSummaryLine("1 skipped in 0.00s", &counts));  // -q
  CHECK(counts.skipped == 1);
  CHECK(counts.passed == 0);
  REQUIRE(ParseSummaryLine("== 2 passed, 1 warning in 65.20s (0:01:05) ==", &counts));
  CHECK(counts.passed == 2);
  REQUIRE(ParseSummaryLine("=== 1 error in 0.08s ===", &counts));
  CHECK(counts.errors == 1);
  REQUIRE(ParseSummaryLine("=== 3 errors in 0.08s ===", &counts));
  CHECK(counts.errors == 3);
  REQUIRE(ParseSummaryLine("==== 7 deselected in 0.01s ====", &counts));
  CHECK(counts.deselected == 7);
  REQUIRE(ParseSummaryLine("===== no tests ran in 0.01s =====", &counts));
  CHECK(FormatTestCounts(counts) == "no tests ran");

  // Lines that only look alike.
  CHECK_FALSE(ParseSummaryLine("3 passed the check in 2s", &counts));
  CHECK_FALSE(ParseSummaryLine("the run passed in 3s", &counts));
  CHECK_FALSE(ParseSummaryLine("1 passed in 3 minutes", &counts));
  CHECK_FALSE(ParseSummaryLine("== 1 passed in 0.1s", &counts));
  CHECK_FALSE(ParseSummaryLine("99999999999 passed in 0.1s", &counts));
  CHECK_FALSE(ParseSummaryLine("", &counts));
}

TEST_CASE("a run whose only test is skipped is SKIPPED with pytest's reason", "[pytest_outcome]") {
  SECTION("-q -rs: the reason is printed") {
    Report report = ParseLog(Fixture("all_skipped_quiet_rs.log"));
    REQUIRE(report.counts);
    CHECK(report.counts->skipped == 1);
    RunResult result = Ended(RunStatus::kPassed, 0);
    Judge(report, "pytest -q -rs accuracy/test_outcomes.py::TestLlama::test_fp8", &result);
    CHECK(result.status == RunStatus::kSkipped);
    CHECK(ExitCodeFor(result) == kExitSkipped);
    CHECK_THAT(result.reason, Catch::Contains("need 2 GPUs, have 0"));
    CHECK_THAT(result.reason, Catch::Contains("1 skipped"));
  }
  SECTION("default output: no reason printed, the fix is named") {
    Report report = ParseLog(Fixture("all_skipped.log"));
    RunResult result = Ended(RunStatus::kPassed, 0);
    Judge(report, "pytest x", &result);
    CHECK(result.status == RunStatus::kSkipped);
    CHECK_THAT(result.reason, Catch::Contains("-rs"));
  }
}

TEST_CASE("pytest -v and -rA output name every test with its outcome", "[pytest_outcome]") {
  for (const char* name : {"mixed_verbose.log", "mixed_rA.log"}) {
    INFO(name);
    Report report = ParseLog(Fixture(name));
    REQUIRE(report.counts);
    CHECK(report.counts->failed == 1);
    CHECK(report.counts->passed == 3);
    // -rA names skips by file and line, not by test.
    const bool verbose = std::string(name) == "mixed_verbose.log";
    REQUIRE(report.tests.size() == (verbose ? 7u : 6u));
    REQUIRE(report.skip_reasons.size() == 1);
    // pytest cuts -v lines at the terminal width (80 columns in a pipe).
    CHECK_THAT(report.skip_reasons[0], Catch::StartsWith("need 2 GPUs,"));
    const std::string base = "accuracy/test_outcomes.py::TestLlama::";
    REQUIRE(FindTest(report, base + "test_bad"));
    CHECK(FindTest(report, base + "test_bad")->outcome == "failed");
    // The whole message, from the FAILURES section (the short summary cuts it at 80
    // columns: "AssertionError: numbers di...").
    CHECK(FindTest(report, base + "test_bad")->message ==
          "AssertionError: numbers differ | assert 1 == 2");
    CHECK(FindTest(report, base + "test_ok")->outcome == "passed");
    CHECK(FindTest(report, base + "test_xf")->outcome == "xfailed");
    CHECK(FindTest(report, base + "test_xp")->outcome == "xpassed");
    // A parameter with a blank stays part of the id.
    REQUIRE(FindTest(report, base + "test_param[a b]"));
    CHECK(FindTest(report, base + "test_param[a b]")->outcome == "passed");
    RunResult result = Ended(RunStatus::kFailed, 1);
    Judge(report, "pytest", &result);
    CHECK(result.status == RunStatus::kFailed);
    CHECK_THAT(result.reason, Catch::Contains("1 failed, 3 passed"));
    CHECK_THAT(result.reason, Catch::Contains(base + "test_bad"));
    CHECK(result.test_cases.size() == report.tests.size());
  }
  Report verbose = ParseLog(Fixture("mixed_verbose.log"));
  const TestCaseOutcome* fp8 = FindTest(verbose, "accuracy/test_outcomes.py::TestLlama::test_fp8");
  REQUIRE(fp8);
  CHECK(fp8->outcome == "skipped");
  CHECK_THAT(fp8->message, Catch::StartsWith("need 2 GPUs,"));
}

TEST_CASE("a test reported PASSED and ERROR (teardown) is an error, in either order",
          "[pytest_outcome]") {
  const std::string base = "tests/test_teardown.py::";
  // -v: "PASSED" then "ERROR"; -rEp: the summary's "ERROR" then its "PASSED".
  for (const char* name : {"teardown_verbose.log", "teardown_rEp.log"}) {
    INFO(name);
    Report report = ParseLog(Fixture(name));
    REQUIRE(report.counts);
    CHECK(report.counts->passed == 2);
    CHECK(report.counts->errors == 2);
    const TestCaseOutcome* teardown = FindTest(report, base + "test_passes_then_teardown_errors");
    REQUIRE(teardown);
    CHECK(teardown->outcome == "error");
    CHECK_THAT(teardown->message, Catch::Contains("teardown failed"));
    REQUIRE(FindTest(report, base + "test_setup_errors"));
    CHECK(FindTest(report, base + "test_setup_errors")->outcome == "error");
    REQUIRE(FindTest(report, base + "test_ok"));
    CHECK(FindTest(report, base + "test_ok")->outcome == "passed");
    RunResult result = Ended(RunStatus::kFailed, 1);
    Judge(report, "pytest", &result);
    CHECK(result.status != RunStatus::kPassed);
    CHECK_THAT(result.reason, Catch::Contains("test_passes_then_teardown_errors"));
  }
}

TEST_CASE("xfailed and xpassed tests ran: PASSED stays PASSED", "[pytest_outcome]") {
  Report report = ParseLog(Fixture("xfail_xpass_quiet.log"));
  REQUIRE(report.counts);
  RunResult result = Ended(RunStatus::kPassed, 0);
  Judge(report, "pytest", &result);
  CHECK(result.status == RunStatus::kPassed);
  CHECK(result.tests->xfailed == 1);
  CHECK(result.tests->xpassed == 1);
}

TEST_CASE("pytest's exit codes 2 to 5 are ERROR naming what happened", "[pytest_outcome]") {
  SECTION("5: no tests collected, naming what was asked") {
    RunResult result = Ended(RunStatus::kFailed, 5);
    Judge(ParseLog(Fixture("none_collected.log")), "pytest a.py -k nomatch", &result);
    CHECK(result.status == RunStatus::kError);
    CHECK_THAT(result.reason, Catch::Contains("no tests were collected"));
    CHECK_THAT(result.reason, Catch::Contains("7 deselected"));
    CHECK_THAT(result.reason, Catch::Contains("pytest a.py -k nomatch"));
  }
  SECTION("4: a missing file is a usage error naming the file") {
    RunResult result = Ended(RunStatus::kFailed, 4);
    Judge(ParseLog(Fixture("file_not_found.log")), "pytest accuracy/nosuch.py", &result);
    CHECK(result.status == RunStatus::kError);
    CHECK_THAT(result.reason, Catch::Contains("usage error"));
    CHECK_THAT(result.reason, Catch::Contains("file or directory not found: accuracy/nosuch.py"));
  }
  SECTION("2: a collection error interrupts the session") {
    RunResult result = Ended(RunStatus::kFailed, 2);
    Judge(ParseLog(Fixture("import_error.log")), "pytest tests/test_import.py", &result);
    CHECK(result.status == RunStatus::kError);
    CHECK_THAT(result.reason, Catch::Contains("interrupted"));
    CHECK_THAT(result.reason, Catch::Contains("1 error during collection"));
  }
  SECTION("3: an internal error") {
    RunResult result = Ended(RunStatus::kFailed, 3);
    Judge(ParseLog("INTERNALERROR> Traceback (most recent call last):\n"
                   "INTERNALERROR>   File \"x\", line 1\n"),
          "pytest", &result);
    CHECK(result.status == RunStatus::kError);
    CHECK_THAT(result.reason, Catch::Contains("internal error"));
  }
}

TEST_CASE("pytest's outcome is only read where pytest ran and the command ended",
          "[pytest_outcome]") {
  SECTION("exit 2 of a command that printed nothing of pytest stays FAILED") {
    RunResult result = Ended(RunStatus::kFailed, 2);
    Judge(ParseLog("pip: error: something\n"), "pytest x", &result);
    CHECK(result.status == RunStatus::kFailed);
  }
  SECTION("a TIMEOUT keeps its verdict, with the counts") {
    RunResult result;
    result.status = RunStatus::kTimeout;
    Judge(ParseLog(Fixture("all_skipped.log")), "pytest", &result);
    CHECK(result.status == RunStatus::kTimeout);
    CHECK(result.tests);
  }
  SECTION("a skip on one test among passes is PASSED") {
    RunResult result = Ended(RunStatus::kPassed, 0);
    Judge(ParseLog("== 1 passed, 1 skipped in 0.1s ==\n"), "pytest", &result);
    CHECK(result.status == RunStatus::kPassed);
  }
  SECTION("failures reported while the command exited 0 (a pipe) are FAILED") {
    RunResult result = Ended(RunStatus::kPassed, 0);
    Judge(ParseLog(Fixture("mixed_verbose.log")), "pytest -v x | tee log", &result);
    CHECK(result.status == RunStatus::kFailed);
    CHECK_THAT(result.reason, Catch::Contains("pipe"));
  }
  SECTION("the last summary line wins (pytest run twice)") {
    RunResult result = Ended(RunStatus::kPassed, 0);
    Judge(ParseLog("== 2 passed in 0.1s ==\n== 1 skipped in 0.1s ==\n"), "pytest", &result);
    CHECK(result.status == RunStatus::kSkipped);
  }
}

TEST_CASE("srun -l prefixes are read through", "[pytest_outcome]") {
  std::string log;
  std::istringstream lines(Fixture("mixed_verbose.log"));
  for (std::string line; std::getline(lines, line);) log += "0: " + line + "\n";
  Report report = ParseLog(log);
  REQUIRE(report.counts);
  CHECK(report.counts->failed == 1);
  CHECK(report.tests.size() == 7);
}

TEST_CASE("hostile logs stay bounded", "[pytest_outcome]") {
  std::string log;
  for (int i = 0; i < 30000; ++i) {
    log += "t.py::test_" + std::to_string(i) + " PASSED [ 50%]\n";
  }
  log += std::string(200000, '[') + "\n" + std::string(100000, '=') + "\n";
  Report report = ParseLog(log);
  CHECK(report.tests.size() == pytest_outcome::kMaxTests);
}

}  // namespace
}  // namespace trtllm_run

namespace trtllm_run {
namespace {

TEST_CASE("a pytest-timeout expiry is TIMEOUT naming the test", "[pytest_outcome][timeout]") {
  SECTION("signal method: the test fails with 'Failed: Timeout >Ns'") {
    RunResult result = Ended(RunStatus::kFailed, 1);
    Judge(ParseLog(Fixture("timeout_signal.log")), "pytest -v test_t.py", &result);
    CHECK(result.status == RunStatus::kTimeout);
    CHECK_THAT(result.reason, Catch::Contains("pytest-timeout stopped test_t.py::test_slow") &&
                                  Catch::Contains("Timeout >2.0s") &&
                                  Catch::Contains("1 failed, 1 passed"));
  }
  SECTION("thread method: the banner, and the test -v named last without an outcome") {
    Report report = ParseLog(Fixture("timeout_thread.log"));
    CHECK(report.timeout_banner);
    CHECK(report.last_started == "test_t.py::test_slow");
    RunResult result = Ended(RunStatus::kFailed, 1);
    Judge(report, "pytest -v test_t.py", &result);
    CHECK(result.status == RunStatus::kTimeout);
    CHECK_THAT(result.reason, Catch::Contains("pytest-timeout stopped test_t.py::test_slow"));
  }
  SECTION("an ordinary failure is not a timeout") {
    RunResult result = Ended(RunStatus::kFailed, 1);
    Judge(ParseLog(Fixture("mixed_verbose.log")), "pytest -v x", &result);
    CHECK(result.status == RunStatus::kFailed);
  }
}

}  // namespace
}  // namespace trtllm_run
