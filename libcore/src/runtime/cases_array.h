// The local_slurm cases of `run --cases` as Slurm job arrays (multi_run.cc): cases whose
// batch scripts ask for the same resources (every #SBATCH line but the job name and output
// paths) are one `sbatch --array` per chunk of at most MaxArraySize tasks, each task running
// its own case's script from its own work dir; a case alone in its shape is a plain job.
// Every job and task is followed by ONE SharedSlurmWatcher and judged by the main loop
// here: no thread per case in flight. Not installed.
#ifndef TRTLLM_RUN_RUNTIME_CASES_ARRAY_H_
#define TRTLLM_RUN_RUNTIME_CASES_ARRAY_H_

#include <cstddef>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/result.h"
#include "trtllm_run/runtime.h"

namespace trtllm_run {

// $TRTLLM_RUN_SLURM_ARRAYS: "0" keeps one sbatch per local_slurm case of `run --cases`
// (the escape hatch); unset or anything else submits them as job arrays (RunArrayCases).
extern const char kSlurmArraysEnv[];
bool SlurmArraysEnabled();

// RunCases (multi_run.h) with every case submitted on its own, whatever SlurmArraysEnabled()
// says: `stage`'s shards (arrays are not yet proven for its shards and reruns).
Result<MultiRunResult> RunCasesPerCase(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                       const MultiRunOptions& options);

// [begin, end) ranges that cut `n` tasks into chunks of at most `max_tasks` (>= 1; a
// cluster's MaxArraySize allows task ids 0..MaxArraySize-1, so chunks of MaxArraySize).
std::vector<std::pair<std::size_t, std::size_t>> ArrayChunks(std::size_t n, std::size_t max_tasks);

// The resource request of a batch script: its #SBATCH lines in order, without --job-name,
// --output and --error (each task keeps its own), one per line. Scripts with the same
// shape can be tasks of one array.
std::string SbatchShape(const std::string& script_text);

// One task of an array: where its case's script runs and writes.
struct ArrayTask {
  std::string dir;     // its work dir (the task cd's there, as sbatch would have)
  std::string script;  // its own batch script, run with bash
  // Its stdout (and stderr, "" = into stdout) paths cut where the task's job id
  // (ARRAYJOB_TASK) goes: the pieces around each occurrence.
  std::vector<std::string> out_pieces, err_pieces;
};

// The wrapper script of one array: the shape's #SBATCH lines, `job_name`, the wrapper's
// own output `wrapper_output` (a Slurm filename pattern), --array=0-(tasks-1)[%throttle]
// (throttle 0: none), then a dispatch on $SLURM_ARRAY_TASK_ID that runs each task's script
// with its output redirected; every path is shell-quoted.
std::string RenderArrayWrapper(const std::string& shape, const std::string& job_name,
                               const std::string& wrapper_output, int throttle,
                               const std::vector<ArrayTask>& tasks);

// The cluster's MaxArraySize (`scontrol show config`), or 1001 (Slurm's default) when it
// cannot be read.
int ProbeMaxArraySize();

// What the array cases are doing, for the live board of `run --cases`.
struct ArrayBoardCounts {
  std::size_t queued = 0;   // submitted, not yet running: Slurm's queue
  std::size_t running = 0;  // running, or ended and waiting for their verdict
  std::size_t done = 0;     // with a verdict
  std::map<std::string, std::size_t> queued_reasons;  // Slurm's pending reason -> tasks
};

// ArrayBoardCounts of the watcher's states (SharedSlurmWatcher::StateCounts), the cases
// submitted and waiting for a verdict (`in_flight`) and those with one (`done`):
// "PENDING (Reason)" and "submitted" (not asked about yet) are queued, any other state
// running; in-flight cases the states do not count yet (the watcher's first round) are
// queued.
ArrayBoardCounts CountArrayStates(const std::map<std::string, int>& states, std::size_t in_flight,
                                  std::size_t done);

struct ArrayRunOptions {
  std::string run_dir;    // wrapper scripts go to <run_dir>/arrays
  int max_parallel = 32;  // tasks of one array running at once (%throttle)
  int kill_grace_seconds = 30;
  std::ostream* progress = nullptr;
  CancellationToken* cancel = nullptr;
  std::function<void(RunResult*)> finalize;
  // Called on this thread once a case's work dir exists, then once with its verdict.
  std::function<void(std::size_t index, const std::string& work_dir)> on_prepared;
  std::function<void(std::size_t index, RunResult result)> on_done;
  std::function<void()> on_all_prepared;  // once every work dir exists, before any sbatch
  // About once a second on this thread while jobs are in flight, and once at the end.
  std::function<void(const ArrayBoardCounts&)> on_progress;
  int max_array_size = 0;  // 0: ProbeMaxArraySize()
};

// Prepares, submits, watches and judges the cases `indices` of `planned` (local_slurm,
// not persistent mode) on the calling thread plus one watcher thread; every verdict goes
// to options.on_done. Returns the session's counters for the run's report.
std::map<std::string, std::string> RunArrayCases(Runtime& runtime,
                                                 const std::vector<PlannedCase>& planned,
                                                 const std::vector<std::size_t>& indices,
                                                 const ArrayRunOptions& options);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_CASES_ARRAY_H_
