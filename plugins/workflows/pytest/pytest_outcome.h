// What pytest itself reported in a job's log, and the verdict that follows from it.
//
// pytest's exit code alone does not say whether anything ran: a GPU test on a machine
// with too few GPUs is skipped by TensorRT-LLM's conftest and pytest exits 0. The final
// summary line ("== 1 failed, 3 passed, 1 skipped in 4.2s ==", with or without -q/-v),
// the per-test lines of -v and the short test summary (-rA, and by default -rfE) say
// what did. Lines may carry srun -l's "<task>: " prefix.
#ifndef TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTEST_OUTCOME_H_
#define TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTEST_OUTCOME_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/result.h"

namespace trtllm_run {
namespace pytest_outcome {

struct Report {
  std::optional<TestCounts> counts;       // from the last summary line
  std::vector<TestCaseOutcome> tests;     // every test pytest named with an outcome, in order
  std::vector<std::string> skip_reasons;  // distinct reasons pytest printed for skips
  bool session_started = false;           // "test session starts" was printed
  std::string interrupted;     // "1 error during collection" of "!!! Interrupted: ... !!!"
  std::string internal_error;  // the first INTERNALERROR> line
  std::string usage_error;     // "ERROR: file or directory not found: x", "pytest: error: ..."
  // pytest-timeout's expiry: the "+++++ Timeout +++++" banner it prints (both methods),
  // and the test -v printed last without an outcome (the one running when the thread
  // method ended the process); tests whose failure is "Failed: Timeout >Ns" (signal method)
  // are in `tests` with that message.
  bool timeout_banner = false;
  std::string last_started;
};

// At most this many per-test outcomes are kept (a huge -v log cannot bloat result.json).
inline constexpr std::size_t kMaxTests = 20000;

// Parses the summary line of pytest's terminal report, e.g. "=== 2 passed, 1 skipped in
// 0.12s ===", "1 skipped in 0.00s", "no tests ran in 0.01s", "7 deselected in 0.01s
// (0:00:00)". False for any other line.
bool ParseSummaryLine(std::string_view line, TestCounts* counts);

// The lines of `log` that srun -l gave task 0 (prefix "0: "), and the lines without a task
// prefix (the batch script's own); the other tasks' lines are left out. For a job whose
// every rank runs pytest, rank 0's is the one reported.
std::string TaskZeroLines(std::string_view log);

// Reads everything above from a log (or its tail). Linear in the log's size.
Report ParseLog(std::string_view log);

// Applies pytest's outcome to a verdict the executor made (Workflow::Judge): attaches the
// counts and tests; then, only when the command ended by itself (PASSED or FAILED with an
// exit code) and the log shows pytest ran: exit 0 with failed tests or errors in the
// summary (its status lost in a pipe) -> FAILED; exit 0 with every selected test skipped
// -> SKIPPED with the skip reasons; exit 1 -> FAILED naming the failed tests; exit 2 / 3 / 4
// -> ERROR naming interrupted / internal error / usage error; exit 5 -> ERROR "no tests
// were collected" naming `asked` (the command). A non-zero exit after pytest-timeout
// stopped a test -> TIMEOUT naming the test(s). Other verdicts keep their status.
void Judge(const Report& report, const std::string& asked, RunResult* result);

}  // namespace pytest_outcome
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTEST_OUTCOME_H_
