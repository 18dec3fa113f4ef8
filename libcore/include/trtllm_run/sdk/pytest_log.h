// What pytest itself reported in a job's log: the one reader of pytest's terminal output,
// used by the pytest workflow's verdict and by core's failure diagnosis (any workflow may
// run pytest).
//
// pytest's exit code alone does not say whether anything ran: a GPU test on a machine
// with too few GPUs is skipped by TensorRT-LLM's conftest and pytest exits 0. The final
// summary line ("== 1 failed, 3 passed, 1 skipped in 4.2s ==", with or without -q/-v),
// the per-test lines of -v and the short test summary (-rA, and by default -rfE) say
// what did. Lines may carry srun -l's "<task>: " prefix.
#ifndef TRTLLM_RUN_SDK_PYTEST_LOG_H_
#define TRTLLM_RUN_SDK_PYTEST_LOG_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"

namespace trtllm_run {
namespace pytest_log {

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
TRTLLM_RUN_API bool ParseSummaryLine(std::string_view line, TestCounts* counts);

// The lines of `log` that srun -l gave task 0 (prefix "0: "), and the lines without a task
// prefix (the batch script's own); the other tasks' lines are left out. For a job whose
// every rank runs pytest, rank 0's is the one reported.
TRTLLM_RUN_API std::string TaskZeroLines(std::string_view log);

// Reads everything above from a log (or its tail). Linear in the log's size.
TRTLLM_RUN_API Report ParseLog(std::string_view log);

}  // namespace pytest_log
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_PYTEST_LOG_H_
