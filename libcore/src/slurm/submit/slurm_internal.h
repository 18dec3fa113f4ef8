// Shared pieces of the Slurm executors' run (slurm_job.cc, remote_repo.cc,
// slurm_alloc.cc). Not installed.
#ifndef TRTLLM_RUN_SLURM_SUBMIT_SLURM_INTERNAL_H_
#define TRTLLM_RUN_SLURM_SUBMIT_SLURM_INTERNAL_H_

#include <string>
#include <vector>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/watch.h"

namespace trtllm_run::internal {

// One sbatch submission to watch to a verdict.
struct SubmitRequest {
  std::string label;          // "job", "build job": named in messages
  std::string script_local;   // the script here (its #SBATCH lines are read)
  std::string script_submit;  // the script as sbatch sees it (remote path when remote)
  std::string submit_dir;     // sbatch runs there (relative output paths resolve there)
  std::vector<std::string> sbatch_args;
  std::vector<std::string> success_patterns;
  std::vector<std::string> failure_patterns;
  int monitor_timeout_seconds = 0;
  int max_pending_seconds = 0;
  int silence_timeout_seconds = 0;
  bool echo = false;    // the job's output goes to context.terminal
  bool record = false;  // write slurm_job_id and run_state.json into the work dir
};

// A result with the spec's names filled in and started_at set.
RunResult BaseResult(const JobSpec& spec);

// `result` as ERROR for `reason` (also its first error), with the diagnosis table's
// findings (e.g. "Invalid generic resource") before `diagnosis`.
RunResult ErrorResult(RunResult result, const std::string& reason, const std::string& diagnosis);

// Gives `result` the verdict of `judged`: status, reason, exit code, signal, interrupt,
// who cancelled, diagnosis, and judged's errors appended. Notes, details and log fields
// stay the caller's to merge.
void TakeVerdict(const RunResult& judged, RunResult* result);

void Say(const ExecContext& context, const std::string& prefix, const std::string& line);

// $TRTLLM_RUN_TEST_FIRST_POLL_DELAY in seconds, or 0.
double FirstPollDelay();

// The watch options of a job run through `scenario`: where its files live elsewhere
// (Scenario::IsRemote: the log is copied over the connection), the log is read at most
// once a second; on this host every 0.25 s.
SlurmWatchOptions WatchOptions(const JobSpec& spec, const ExecContext& context,
                               const Scenario& scenario);

// Bulk runs (`run --cases`): confirmation queries brought forward only within this many
// controller queries per job-minute (SlurmWatchOptions). The bulk target is <= 2 with the
// two free queries and the last confirmation on top: 50 jobs of 5 s (4.2 job-minutes) may
// then send 2 + 5 + 1 queries.
constexpr double kBulkConfirmQueriesPerJobMinute = 1.2;

// The submission of a local_slurm job: spec.script_path from the work dir, echoed and
// recorded (slurm_job_id, run_state.json). remote_slurm starts from it and changes where
// the script and the submit dir are.
SubmitRequest LocalSubmitRequest(const JobSpec& spec);

// A job sbatch accepted, ready to be watched (SubmitJob), or the verdict reached
// without a job (ERROR: sbatch refused it; CANCELLED: cancelled before submission).
struct SubmitOutcome {
  bool submitted = false;
  SlurmWatchJob job;  // when submitted
  RunResult result;   // when submitted: the base of the final result; else the verdict
  // The job's log path on the host that ran it, when that is another host (the watch
  // copies it to job.local_out); "" when the log is read in place.
  std::string remote_log_file;
};

// sbatch (recording slurm_job_id and run_state.json when request.record). Watches nothing.
SubmitOutcome SubmitJob(SlurmClient* client, const JobSpec& spec, const ExecContext& context,
                        const SubmitRequest& request);

// The final result of a submitted job from the watcher's verdict: the base result with
// the verdict's fields, the scheduler counters of `stats`, run_state.json "finished";
// details.remote_log_file when the log was copied from another host.
RunResult FinishJob(const SubmitOutcome& submitted, const RunResult& judged,
                    const SlurmClientStats& stats, const JobSpec& spec,
                    const SubmitRequest& request);

// SubmitJob, then watch to a verdict with a watcher of its own (cancelling on
// context.cancel), then FinishJob.
RunResult SubmitAndWatch(SlurmClient* client, const JobSpec& spec, const ExecContext& context,
                         const SubmitRequest& request);

// Where a held-allocation run happens: the script and its directory as the submit host
// sees them, and the host ("" for this one) the allocation is recorded for.
struct HeldPlace {
  std::string host;
  std::string script;
  std::string run_dir;
};

// The script's steps inside a held allocation (local_slurm persistent mode; remote_slurm
// with release_allocation false), on this host or a login node (`scenario`).
RunResult RunInHeldAllocation(const JobSpec& spec, const ExecContext& context, Scenario* scenario,
                              const HeldPlace& place);

// Whether a job spec names a login node to reach its cluster through (ssh_host or
// remote_work_dir: a remote executor's spec); else its Slurm is this host's.
bool NamesLoginNode(const JobSpec& spec);

// Stops a persistent-mode run recorded in spec.work_dir (its process group on this host).
Status CancelHeldAllocationRun(const JobSpec& spec);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_SUBMIT_SLURM_INTERNAL_H_
