// Running a planned CI stage (stage_plan.h): each shard is one case of a multi-case run
// (multi_run.h: Slurm jobs of one cluster share one watcher; the shards run at once),
// running pytest on its tests from tests/integration/defs with a JUnit file per pytest
// process (ISOLATION tests each in their own). Then failed tests are rerun by CI's policy
// (rerun_policy.h), in rounds of one case per shard, and everything is merged into the
// stage's JUnit and result.json (stage_junit.h).
//
// Layout of the stage's run dir:
//   result.json            the stage's verdict, counts, shards and per-test outcomes
//   <stage>.xml            the merged JUnit
//   junit/s<split>_r<round>_<n>.xml, .progress   each pytest process's JUnit and progress
//   pytest_plugin/trtllm_stage_progress.py       records test starts (for "unfinished")
//   shards/, rerun_1/, rerun_2/                  the multi-case runs (their result.json)
#ifndef TRTLLM_RUN_STAGE_STAGE_RUN_H_
#define TRTLLM_RUN_STAGE_STAGE_RUN_H_

#include <ostream>
#include <string>
#include <vector>

#include "stage/stage_junit.h"
#include "stage/stage_plan.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct StageRunOptions {
  // The case flags every shard job takes (scenario, partition, image, repo_root, ...).
  CaseRequest shared;
  // The stage's run dir; "": <repo_root>/work_dirs/stage_<name>_<time>. Must not exist.
  std::string run_dir;
  std::vector<std::string> failure_signatures;  // --rerun-signatures
  bool reruns = true;                           // false: --no-reruns
  std::string python = "python3";               // the interpreter that runs pytest
  int max_parallel_local = 0;                   // 0: every shard at once
  std::ostream* progress = nullptr;
  CancellationToken* cancel = nullptr;
  int kill_grace_seconds = 30;
};

struct StageShardRun {
  int split_id = 0;
  int round = 0;  // 0: the shard's run; 1, 2: reruns
  std::vector<std::string> test_ids;
  std::string status;  // the case's verdict (RunStatusName)
  std::string reason;
  std::string job_id;
  std::string work_dir;
  double seconds = 0;
};

struct StageRunResult {
  std::string stage_name;
  std::string test_db_context;
  std::string run_dir;
  std::string junit_path;
  std::string started_at, finished_at;
  double duration_seconds = 0;
  std::vector<int> splits;
  int split_count = 1;
  std::vector<stage::StageTestResult> tests;  // shard order, then list order
  std::vector<StageShardRun> shard_runs;      // every case of every round
  stage::StageCounts counts;
  bool interrupted = false;  // cancelled (Ctrl-C): the verdict is CANCELLED
  std::string status;        // PASSED, FAILED, CANCELLED, ERROR
  std::string reason;        // one line: the counts, or why
  std::vector<std::string> warnings;
  std::vector<SessionReport> sessions;  // of the shards' round
};

// The shell command of one pytest process in a shard's job (exposed for the tests):
// cd into `dir` (tests/integration/defs; tests/ for unittest/ ids), run `python` -m pytest
// -v with `pytest_args` (ids, -k/-m EXPR) and --junitxml=`junit_path`, the progress plugin
// from `plugin_dir` writing `progress_path`; every word quoted.
std::string PytestCommand(const std::string& python, const std::string& dir,
                          const std::vector<std::string>& pytest_args,
                          const std::string& junit_path, const std::string& plugin_dir,
                          const std::string& progress_path, const std::string& timeouts_path);

// Runs `plan` (waived tests are never submitted) and returns the merged outcome; writes
// result.json and the JUnit in the run dir. Errors only when nothing could run at all
// (the run dir cannot be made, every shard failed to plan): a failing shard job is a
// FAILED stage with its tests "not run".
Result<StageRunResult> RunStage(Runtime& runtime, const StagePlan& plan,
                                const StageRunOptions& options);

// The stage's result.json (docs/result-schema.md "CI stages").
std::string StageResultToJson(const StageRunResult& result);

// 0 PASSED, 1 FAILED, 130 CANCELLED by SIGINT, 6 CANCELLED otherwise, 3 ERROR.
int ExitCodeForStage(const StageRunResult& result);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_STAGE_RUN_H_
