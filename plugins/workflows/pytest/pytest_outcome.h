// The pytest workflow's verdict from what pytest itself reported in a job's log (read by
// trtllm_run/sdk/pytest_log.h).
#ifndef TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTEST_OUTCOME_H_
#define TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PYTEST_OUTCOME_H_

#include <string>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/pytest_log.h"

namespace trtllm_run {
namespace pytest_outcome {

using pytest_log::kMaxTests;
using pytest_log::ParseLog;
using pytest_log::ParseSummaryLine;
using pytest_log::Report;
using pytest_log::TaskZeroLines;

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
