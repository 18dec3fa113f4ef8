// The directory of a `run --cases` run (<repo>/work_dirs/cases_<time>, or --run-dir), as
// later processes read it (`status`, `attach`, `cancel`, `list`, `run --rerun-failed`):
//   cases.json        the cases as they were run, written before any case starts: a cases
//                     file ({"cases": [...]}, multi_run.h) whose every case carries its
//                     name and its own inputs with the command line's shared options in;
//   cases_state.json  who supervises the run (pid, start time, host) and each case's work
//                     dir once it is made ("" before), rewritten atomically as they are;
//   result.json       the combined result (multi_run.h CasesToJson), at the end;
//   .lock             flock(2) held by the supervising trtllm-run while it runs.
// Everything there is untrusted: files are read only as regular files inside the
// directory (no symlink followed), and a case's work dir only when it is a directory
// directly under the run's work_dirs parent or the run dir's parent.
#ifndef TRTLLM_RUN_RUNTIME_CASES_DIR_H_
#define TRTLLM_RUN_RUNTIME_CASES_DIR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/multi_run.h"
#include "trtllm_run/status.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

struct CasesState {
  int supervisor_pid = 0;
  std::uint64_t supervisor_start_time = 0;
  std::string host;
  std::string started_at;
  std::vector<std::string> work_dirs;  // by case, "" until made
};

// True when `dir` holds cases.json or cases_state.json (a regular file each).
bool IsCasesDir(const std::string& dir);

Status WriteCasesInput(const std::string& run_dir, const std::vector<CaseEntry>& cases);
Status WriteCasesState(const std::string& run_dir, const CasesState& state);
Result<CasesState> ReadCasesState(const std::string& run_dir);

// One case of a cases dir as it stands.
struct CasesDirCase {
  int index = 0;
  std::string name;
  std::string work_dir;  // "" when never made
  std::string status;    // a verdict (PASSED, ...), or "pending", "running", "abandoned"
  std::string scenario;
  std::string job_id;
};

struct CasesDirInfo {
  std::string run_dir;
  std::string phase;  // "running", "finished", "abandoned" (supervisor gone, no result.json)
  bool supervisor_alive = false;
  std::optional<CasesState> state;
  std::vector<CasesDirCase> cases;
  int exit_code = 0;  // of result.json when finished
  std::vector<std::string> problems;
};

// Reads the cases dir (result.json when there, else cases_state.json and each case's work
// dir). kInvalidInput when `dir` is not a cases dir.
Result<CasesDirInfo> InspectCasesDir(const std::string& dir);

// <case work dir>/cases_run_dir: the run dir of the `run --cases` run that made the case,
// written before the case starts. A cases dir acts (cancel) only on cases that name it.
extern const char kCasesRunFile[];
Status RecordCaseOfRun(const std::string& case_work_dir, const std::string& run_dir);
// OK when `case_work_dir` records `run_dir` (kCasesRunFile, the same directory);
// kInvalidInput naming what it records instead (or that it records nothing).
Status CheckCaseOfRun(const std::string& case_work_dir, const std::string& run_dir);

// The cases of `run_dir`'s cases.json that did not pass (any verdict other than PASSED
// and SKIPPED, or no verdict), with their original inputs and `shared` under them as for
// a cases file. kInvalidInput when there is no cases.json or every case passed or was
// skipped.
Result<std::vector<CaseEntry>> LoadFailedCases(const std::string& run_dir,
                                               const CaseRequest& shared);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_CASES_DIR_H_
