// Many cases in one run (`trtllm-run run --cases FILE`): parse a cases file, plan every
// case before anything is written, then prepare and run them with a concurrency bound,
// Slurm cases followed by one shared watcher per executor session (executor.h
// ExecutorSession), and report them together (table, combined result.json, JUnit).
//
// Cases files (the format is what the content parses as; a UTF-8 byte order mark is
// skipped; at most kMaxCasesFileBytes, input_limits.h):
//   - YAML/JSON: a list of request mappings (the keys of request files, request.h), or a
//     mapping {defaults: {...}, cases: [...]} whose defaults apply under every case. A
//     case may carry `name:` (its label in the table and JUnit; default: model name).
//     Any text that parses as a YAML/JSON list or mapping is read so, never as lines.
//   - Plain text (anything else): one pytest node id, perf-sanity id or test command per
//     line; `#` comments and blank lines are ignored. A line is the test_cmd of a case:
//       tests/x/test_a.py::test_b[p]   -> pytest 'tests/x/test_a.py::test_b[p]'
//       test_e2e[<perf-sanity id>]     -> pytest 'perf/test_perf_sanity.py::test_e2e[<id>]'
//       a path (tests/unittest/x)      -> pytest 'tests/unittest/x'
//       a command (`python3 x.py -v`)  -> used as the test_cmd as it is; its first word
//                                         must be a program name or a path
//       a test-list line (commands/test_list_line.h: markers, -k/-m, full:, unittest/)
//                                      -> the test_cmd as written (the pytest workflow
//                                         reads its grammar)
//     Any other line (one starting with a YAML/JSON character such as - [ { " ', or
//     whose first word is not a program, e.g. `key:`) is refused, naming its line; so is
//     a Mako template line (% ...). A command's trailing " TIMEOUT (N)" sets the case's
//     monitor_timeout to N minutes.
//   - A TensorRT-LLM test-db YAML (`version:` and lists of {condition:, tests:} blocks):
//     every block's tests, each a test-list line; the case's notes name its block.
// Precedence of a case's fields: its own keys > the shared options (the command line) >
// the file's defaults.
#ifndef TRTLLM_RUN_MULTI_RUN_H_
#define TRTLLM_RUN_MULTI_RUN_H_

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// One case of a cases file, with the shared options and defaults applied.
struct CaseEntry {
  int index = 0;       // 1-based position in the file
  std::string name;    // `name:` or the plain-list id; "" when none was given
  std::string origin;  // "cases.yaml:12 (case 3)": named in every message about the case
  CaseRequest request;
  // Where the case came from when that is worth saying (a test-db block and its
  // condition); shown with the case's plan.
  std::vector<std::string> notes;
};

// Parses a cases file. `shared` holds the options given with it (the command line).
// Every problem of every case is reported at once: kInvalidInput listing them, each
// naming the case's origin; an empty file (no case) is an error too.
TRTLLM_RUN_API Result<std::vector<CaseEntry>> LoadCasesFile(const std::string& path,
                                                            const CaseRequest& shared);
TRTLLM_RUN_API Result<std::vector<CaseEntry>> ParseCasesText(const std::string& text,
                                                             const std::string& origin,
                                                             const CaseRequest& shared);

struct CaseOutcome;  // below

struct MultiRunOptions {
  // Cases in flight at once, all executors together (Slurm jobs are cheap to wait for).
  int max_parallel = 32;
  // Of those, cases that run on this host (local_direct, local_docker): they share its
  // GPUs and CPUs, so one at a time by default.
  int max_parallel_local = 1;
  std::ostream* progress = nullptr;     // planning, start/verdict lines, the sessions' lines
  CancellationToken* cancel = nullptr;  // fires: every case is cancelled (Ctrl-C)
  int kill_grace_seconds = 30;
  // Where the combined result.json goes; "": <repo_root of case 1>/work_dirs/cases_<time>.
  std::string run_dir;
  std::string cases_file;  // recorded in the combined result
  // Called once per case as soon as its verdict is known, on the case's own thread (so
  // possibly on several threads at once); the CLI records the case in the history here.
  std::function<void(const CaseOutcome&)> on_verdict;
  // RunOptions::finalize of every case (the perf gate), on the case's own thread.
  std::function<void(RunResult*)> finalize;
};

// A case's verdict in a multi-case run.
struct CaseOutcome {
  CaseEntry entry;
  std::string scenario;
  std::string job_id;  // the Slurm job id (details.job_id), or ""
  RunResult result;    // as written to the case's own <work_dir>/result.json
};

// One executor session's counters (ExecutorSession::Stats), e.g. local_slurm's
// "watchers": "1", "controller_queries": "7".
struct SessionReport {
  std::string scenario;
  int cases = 0;
  std::map<std::string, std::string> stats;
};

struct MultiRunResult {
  std::string cases_file;
  std::string run_dir;
  std::string started_at, finished_at;  // ISO 8601 UTC
  double duration_seconds = 0;
  int max_parallel = 0;
  int max_parallel_local = 0;
  std::vector<CaseOutcome> cases;  // in file order
  std::vector<SessionReport> sessions;
};

// Plans every case (Runtime::Plan, Slurm probes shared). Nothing is written. Any failing
// case -> kInvalidInput listing every failure, each naming the case.
TRTLLM_RUN_API Result<std::vector<PlannedCase>> PlanCases(Runtime& runtime,
                                                          const std::vector<CaseEntry>& cases,
                                                          std::ostream* progress);

// Plans all cases (any error: nothing prepared or submitted, the error returned), then
// prepares and runs them within the bounds, each through Runtime::Execute (its work dir,
// job_spec.json, result.json exactly as a single run), executors with a session
// (Executor::NewSession) sharing one session per scenario, the others on a worker thread
// per case. Writes <run_dir>/result.json (CasesToJson). A case whose preparation fails is
// an ERROR verdict; the others still run.
TRTLLM_RUN_API Result<MultiRunResult> RunCases(Runtime& runtime,
                                               const std::vector<CaseEntry>& cases,
                                               const MultiRunOptions& options);

// The exit code of a multi-case run: 0 when every case PASSED, or some PASSED and the
// rest were SKIPPED (as pytest: skips beside passes are a pass); 130 when the run was
// interrupted by SIGINT; else the code of the most severe verdict, in this order:
// ERROR 3 > OUT_OF_MEMORY 7 > HANG_DETECTED 5 > TIMEOUT 4 > FAILED 1 > CANCELLED 6 > SKIPPED 8
// (SKIPPED only when no case passed).
TRTLLM_RUN_API int ExitCodeForCases(const MultiRunResult& result);

// The combined result.json (docs/result-schema.md "Multi-case runs").
TRTLLM_RUN_API std::string CasesToJson(const MultiRunResult& result);

// JUnit XML: one <testsuite name="trtllm-run"> with one <testcase> per case (name = the
// case's name, else its model name; classname "trtllm-run.<scenario>.<workflow_type>").
TRTLLM_RUN_API std::string CasesToJUnit(const MultiRunResult& result);

// The table for people: case, scenario, job id, status, duration, work dir; then counts.
TRTLLM_RUN_API std::string FormatCasesTable(const MultiRunResult& result);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MULTI_RUN_H_
