// The pytest workflow's verdict from pytest's own report (pytest_outcome.h).
#include "pytest_outcome.h"

#include <string>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace pytest_outcome {
namespace {

// TIMEOUT when pytest-timeout stopped a test: each test whose failure is its "Failed:
// Timeout >Ns" (signal method), else the test running when its banner was printed
// (thread method, which ends pytest before any summary). False when it did not fire.
bool JudgeTestTimeout(const Report& report, RunResult* result) {
  std::string named;
  for (const TestCaseOutcome& test : report.tests) {
    if (test.outcome != "failed" && test.outcome != "error") continue;
    if (test.message.find("Timeout >") == std::string::npos) continue;
    named += (named.empty() ? "" : ", ") + test.name + " (" + test.message + ")";
  }
  if (named.empty() && !report.timeout_banner) return false;
  if (named.empty()) {
    named = report.last_started.empty() ? std::string("a test (run pytest with -v to see which)")
                                        : report.last_started;
  }
  result->notes.push_back(std::string("the executor's verdict was ") +
                          RunStatusName(result->status) +
                          (result->reason.empty() ? "" : ": " + result->reason));
  result->status = RunStatus::kTimeout;
  result->reason = "pytest-timeout stopped " + named +
                   ": the test ran past its own timeout (--timeout / PYTEST_TIMEOUT)" +
                   (report.counts ? "; pytest: " + FormatTestCounts(*report.counts) : "");
  result->errors.push_back(result->reason);
  return true;
}

}  // namespace

void Judge(const Report& report, const std::string& asked, RunResult* result) {
  if (report.counts) result->tests = report.counts;
  if (!report.tests.empty()) result->test_cases = report.tests;
  const bool ended_by_itself =
      result->status == RunStatus::kPassed || result->status == RunStatus::kFailed;
  if (!ended_by_itself || !result->exit_code) return;
  const bool pytest_ran = report.counts || report.session_started || !report.interrupted.empty() ||
                          !report.internal_error.empty() || !report.usage_error.empty();
  if (!pytest_ran) return;

  const std::string counts_text = report.counts ? FormatTestCounts(*report.counts) : "";
  if (*result->exit_code != 0 && JudgeTestTimeout(report, result)) return;
  auto become_error = [&](const std::string& why) {
    result->notes.push_back(std::string("the executor's verdict was ") +
                            RunStatusName(result->status) +
                            (result->reason.empty() ? "" : ": " + result->reason));
    result->status = RunStatus::kError;
    result->reason = why;
    result->errors.push_back(why);
  };
  switch (*result->exit_code) {
    case 0: {
      const TestCounts* c = report.counts ? &*report.counts : nullptr;
      if (c && (c->failed > 0 || c->errors > 0)) {
        // pytest said it failed, but the command exited 0: `pytest ... | tee log`.
        result->status = RunStatus::kFailed;
        result->reason = "pytest reported " + counts_text +
                         ", but the command exited 0 (its exit status was lost, e.g. in a pipe "
                         "such as `pytest ... | tee log`)";
        return;
      }
      if (c && c->skipped > 0 && c->passed == 0 && c->failed == 0 && c->errors == 0 &&
          c->xfailed == 0 && c->xpassed == 0) {
        std::string reasons;
        for (const std::string& reason : report.skip_reasons) {
          reasons += (reasons.empty() ? "" : "; ") + reason;
        }
        result->status = RunStatus::kSkipped;
        result->reason =
            "pytest ran no test: every selected test was skipped (" + counts_text + "): " +
            (reasons.empty() ? "pytest printed no skip reason (add -rs to the command to see them)"
                             : reasons);
      } else if (c) {
        result->reason +=
            std::string(result->reason.empty() ? "" : "; ") + "pytest: " + counts_text;
      }
      return;
    }
    case 1: {
      std::string failed;
      int named = 0;
      for (const TestCaseOutcome& test : report.tests) {
        if (test.outcome != "failed" && test.outcome != "error") continue;
        if (++named > 5) {
          failed += ", ...";
          break;
        }
        failed += (failed.empty() ? "" : ", ") + test.name;
      }
      if (!counts_text.empty() || !failed.empty()) {
        result->reason += std::string(result->reason.empty() ? "" : "; ") +
                          "pytest: " + (counts_text.empty() ? "tests failed" : counts_text) +
                          (failed.empty() ? "" : " (" + failed + ")");
      }
      return;
    }
    case 2:
      become_error("pytest was interrupted (exit 2)" +
                   (report.interrupted.empty() ? std::string() : ": " + report.interrupted) +
                   (counts_text.empty() ? "" : " [" + counts_text + "]"));
      return;
    case 3:
      become_error("pytest hit an internal error (exit 3)" +
                   (report.internal_error.empty() ? std::string() : ": " + report.internal_error));
      return;
    case 4:
      become_error("pytest was used wrongly (exit 4, usage error)" +
                   (report.usage_error.empty() ? std::string() : ": " + report.usage_error) +
                   " for: " + asked);
      return;
    case 5:
      become_error("no tests were collected (pytest exit 5" +
                   (counts_text.empty() ? std::string() : ": " + counts_text) + ") for: " + asked);
      return;
    default:
      return;
  }
}

}  // namespace pytest_outcome
}  // namespace trtllm_run
