// RunResult: the verdict of one case, and how it maps to exit codes and reports.
#ifndef TRTLLM_RUN_RESULT_H_
#define TRTLLM_RUN_RESULT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

enum class RunStatus {
  kPassed,
  kFailed,
  kTimeout,
  kHangDetected,
  kCancelled,
  kOutOfMemory,
  kError,    // infrastructure failure, or evidence that does not support any other verdict
  kSkipped,  // the command succeeded, but every test it selected was skipped (none ran)
};

// "PASSED", "FAILED", "TIMEOUT", "HANG_DETECTED", "CANCELLED", "OUT_OF_MEMORY", "ERROR",
// "SKIPPED".
TRTLLM_RUN_API const char* RunStatusName(RunStatus status);
TRTLLM_RUN_API std::optional<RunStatus> RunStatusFromName(const std::string& name);

// Process exit codes of the CLI. Bad input (nothing started) is 2; see README.
enum ExitCode : int {
  kExitPassed = 0,
  kExitFailed = 1,
  kExitBadInput = 2,
  kExitError = 3,
  kExitTimeout = 4,
  kExitHangDetected = 5,
  kExitCancelled = 6,
  kExitOutOfMemory = 7,
  kExitSkipped = 8,
  kExitUserInterrupt = 130,
};

// What a test runner (pytest) reported about the tests it ran: its final summary line.
struct TestCounts {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  int xfailed = 0;
  int xpassed = 0;
  int errors = 0;
  int deselected = 0;
  std::string summary;  // the runner's own summary line, e.g. "1 failed, 3 passed in 0.03s"
  bool operator==(const TestCounts& o) const {
    return passed == o.passed && failed == o.failed && skipped == o.skipped &&
           xfailed == o.xfailed && xpassed == o.xpassed && errors == o.errors &&
           deselected == o.deselected && summary == o.summary;
  }
};

// One test the runner reported by name (pytest -v / -rA output).
struct TestCaseOutcome {
  std::string name;     // the node id, e.g. "accuracy/test_a.py::TestX::test_y[p]"
  std::string outcome;  // passed, failed, skipped, xfailed, xpassed, error
  std::string message;  // failure message or skip/xfail reason, when printed
  bool operator==(const TestCaseOutcome& o) const {
    return name == o.name && outcome == o.outcome && message == o.message;
  }
};

// The perf section of result.json (docs/perf.md, docs/result-schema.md "perf"): the
// metrics a perf case's log printed, its CI match key, and the gate's verdict.
struct PerfMetric {
  std::string name;  // "total_token_throughput"; "<name>#<k>" for the k-th block (k >= 2)
  double value = 0;
  std::string unit;      // "tok/s", "ms", "req/s", ""
  bool maximize = true;  // direction: larger is better (throughput) or smaller (latency)
  bool gated = false;    // checked by --perf-gate
};

// One row of the gate's table: a metric with a baseline.
struct PerfGateRow {
  std::string metric;
  double new_value = 0;
  double baseline = 0;
  double threshold = 0;  // fraction: 0.05 is 5 %
  double change = 0;     // (new - baseline) / baseline, signed as measured (-0.12: 12 % lower)
  bool gated = false;
  bool regressed = false;  // a gated metric beyond baseline * (1 -/+ threshold)
};

struct PerfGate {
  std::string mode;             // "pre-merge", "post-merge", "warn", "off"
  bool regressed = false;       // some gated metric regressed
  bool exempt = false;          // pre-merge: the latest post-merge point misses the gate too
  std::string baseline_source;  // "history <store>" or "file <path>"; "" when none
  std::vector<PerfGateRow> rows;
  std::vector<std::string> notes;  // why there is no baseline, why exempt, ...
};

struct PerfSection {
  std::vector<PerfMetric> metrics;
  std::map<std::string, std::string> match_key;  // model, gpu_type, tp, pp, ep, ...
  std::optional<PerfGate> gate;                  // absent: no gate was asked for
  // Per metric, the (recorded_at, value) points the baseline was computed from.
  std::map<std::string, std::vector<std::pair<std::string, double>>> history;
};

struct RunResult {
  RunStatus status = RunStatus::kError;
  std::string reason;            // one line: why this verdict (the evidence)
  std::optional<int> exit_code;  // of the command or job, when it exited
  std::optional<int> signal;     // the signal that ended it, when one did
  bool user_interrupt = false;   // CANCELLED because the user pressed Ctrl-C (exit 130)
  std::string cancelled_by;      // "SIGINT", "SIGTERM", "scancel by <user>", ...

  std::string workflow_type;
  std::string scenario;
  std::string model_name;
  std::string command;
  std::string work_dir;
  std::string log_file;
  std::vector<std::string> log_tail;  // last lines of the log
  std::string diagnosis;              // what the failure likely means and what to do
  std::vector<std::string> errors;
  std::vector<std::string> notes;  // routing and derivation decisions

  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // ISO 8601 UTC
  double duration_seconds = 0;
  int monitor_timeout_seconds = 0;
  std::uint64_t log_bytes_written = 0;  // size of the log when the verdict was made
  std::uint64_t log_bytes_read = 0;     // bytes the watcher read to make it

  // Set when the job's log holds a test runner's summary (pytest), else absent.
  std::optional<TestCounts> tests;
  std::vector<TestCaseOutcome> test_cases;  // per-test outcomes the runner printed, in order

  // Scheduler or executor details (job id, container name, ...), reported as-is.
  std::map<std::string, std::string> details;

  // Set for a perf case (bench, perf-sanity) whose log was read for metrics.
  std::optional<PerfSection> perf;
};

// The CLI exit code for a result (PASSED 0 ... OUT_OF_MEMORY 7, SKIPPED 8, user interrupt 130).
TRTLLM_RUN_API int ExitCodeFor(const RunResult& result);

// result.json: a JSON object with schema_version 1 (documented in docs/result-schema.md).
TRTLLM_RUN_API std::string ResultToJson(const RunResult& result);
TRTLLM_RUN_API Result<RunResult> ResultFromJson(const std::string& text, const std::string& origin);

// Writes <result.work_dir>/result.json atomically.
TRTLLM_RUN_API Status WriteResult(const RunResult& result);

// The human summary (spec 000 Step 6): task type, image, command, status, exit code,
// log file, work dir, errors. Multi-line, no trailing newline.
TRTLLM_RUN_API std::string FormatSummary(const RunResult& result);

// "1 failed, 3 passed, 1 skipped" (non-zero counts, pytest's order); "no tests ran" when all
// are zero.
TRTLLM_RUN_API std::string FormatTestCounts(const TestCounts& counts);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RESULT_H_
