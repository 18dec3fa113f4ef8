// Running a prepared Slurm job to a verdict: what the local_slurm and remote_slurm
// executors' Execute() and Cancel() do. The Slurm logic is written once; the two differ
// only in the Scenario that runs the commands (this host, or a login node over one
// OpenSSH ControlMaster connection) and in how the output reaches the work dir (read in
// place, or copied incrementally over the same connection).
//
// Work dir contract (besides job_spec.json and result.json): <work_dir>/slurm_job_id
// holds the job id (written atomically the moment sbatch returns it) and
// run_state.json (workdir.h) records the job id and the log file, so that `trtllm-run
// status|cancel WORK_DIR` work from another shell and after a crash.
#ifndef TRTLLM_RUN_SLURM_RUN_H_
#define TRTLLM_RUN_SLURM_RUN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/executor.h"
#include "trtllm_run/export.h"
#include "trtllm_run/job_spec.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/ssh.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// Environment variables read by the Slurm executors.
//   TRTLLM_RUN_SLURM_PASSWORD       the SSH password (remote_slurm), handed to ssh only
//   TRTLLM_RUN_SLURM_PASSWORD_FILE  a file holding it (what --password-file sets)
//   TRTLLM_RUN_TEST_FIRST_POLL_DELAY  tests only: no scheduler query until this many
//                                     seconds after the job's end line
TRTLLM_RUN_API extern const char kSlurmPasswordEnv[];
TRTLLM_RUN_API extern const char kSlurmPasswordFileEnv[];
TRTLLM_RUN_API extern const char kFirstPollDelayEnv[];

// job_spec.json `extra` keys of the Slurm executors.
//   ssh_config_file     remote_slurm: an ssh_config file (ssh -F) for the connection
//   ssh_port, ssh_identity_file, ssh_options (one Key=Value a line): ssh -p, -i, -o
//   release_allocation  remote_slurm: "false" keeps the allocation for later runs
//   alloc_time_limit    persistent/held allocations: their Slurm --time (default 01:00:00)
//   build_command       remote_slurm: the build job's command (default kDefaultBuildCommand)

// The build job's command, run in remote_repo_path when build_project is true.
TRTLLM_RUN_API extern const char kDefaultBuildCommand[];

// `#SBATCH --output/--error` of a batch script: the paths with %j (and %x, %u, %%)
// still in them. `out` defaults to "slurm-%j.out" (relative to the submit dir); `err`
// is "" when stderr goes to `out`.
struct BatchOutputPaths {
  std::string out;
  std::string err;
  std::string job_name;
};
TRTLLM_RUN_API BatchOutputPaths ParseBatchOutputPaths(const std::string& script_text);

// %j -> job_id, %x -> job_name, %u -> user, %% -> %; a relative path is made absolute
// against `dir`.
TRTLLM_RUN_API std::string ExpandSlurmFilename(const std::string& pattern, const std::string& dir,
                                               const std::string& job_id,
                                               const std::string& job_name,
                                               const std::string& user);

// Copies the Slurm executors' run inputs from the request into `spec` and rewrites
// job_spec.json: persistent_mode (local_slurm only; spec 001/002 Step 5), and into
// `extra`: ssh_config_file, release_allocation, alloc_time_limit. The executors' Prepare
// calls it after PrepareSlurmJob (render.h).
TRTLLM_RUN_API Status AddSlurmRunFields(const CaseRequest& request, bool remote, JobSpec* spec);

// Runs a prepared local_slurm job: sbatch from the work dir (or, in persistent mode, the
// script's steps inside a held allocation), watches it to a verdict, cancels it on
// context.cancel. Never leaves the job running unless the verdict says it may be.
TRTLLM_RUN_API RunResult RunLocalSlurmJob(const JobSpec& spec, const ExecContext& context);

// The local_slurm executor's session (Executor::NewSession, `trtllm-run run --cases`):
// each Execute() submits its job from the calling thread exactly as RunLocalSlurmJob
// does (sbatch from the work dir, slurm_job_id and run_state.json recorded) and then
// waits for the verdict of ONE SlurmWatcher shared by every job of the session, driven
// by one thread the session owns: one batched controller query per interval for all
// jobs. options.cancel firing cancels every job (scancel; CANCELLED once each ended).
// The job output is not echoed (context.terminal is ignored; it is in the work dir).
// Persistent-mode jobs run as RunLocalSlurmJob runs them. Stats(): "watchers" (always
// "1"), "jobs" (handed to the watcher), "submits", "controller_queries",
// "accounting_queries", "config_queries", "cancels".
// `executor` (the session's executor name) prefixes the session's progress lines.
TRTLLM_RUN_API std::unique_ptr<ExecutorSession> NewLocalSlurmSession(const SessionOptions& options,
                                                                     const std::string& executor);

// Runs a prepared remote_slurm job over one SSH master connection: preflight (reachable,
// Slurm tools, writable remote work dir), repo setup (clone or fetch + checkout of
// repo_url at repo_branch into remote_repo_path), the build job when build_project is true
// (a failed build stops the run: ERROR, reason "BUILD_FAILED: ..."), transfer of the
// script and extra_files, sbatch, watch, cancel; the job's output is copied into the
// local work dir as it grows. A dropped connection is re-established and the watch goes on.
TRTLLM_RUN_API RunResult RunRemoteSlurmJob(const JobSpec& spec, const ExecContext& context);

// Stops, from another process, the job recorded in spec.work_dir (slurm_job_id, else
// run_state.json): scancel, then waits until the job left the queue. OK when nothing is
// left running (also when the job already ended).
TRTLLM_RUN_API Status CancelSlurmJob(const JobSpec& spec, const ExecContext& context);

// The SSH options of a remote_slurm job spec: destination ssh_host (slurm_user when the
// destination names no user), ssh_config_file from `extra`, the password from
// $TRTLLM_RUN_SLURM_PASSWORD or the file named by $TRTLLM_RUN_SLURM_PASSWORD_FILE.
TRTLLM_RUN_API Result<SshOptions> SshOptionsForSpec(const JobSpec& spec);

// The request's SSH connection fields (ssh_config_file, ssh_port, identity, ssh_option)
// as the `extra` keys SshOptionsForSpec reads.
TRTLLM_RUN_API void AddSshConnectionExtras(const CaseRequest& request, JobSpec* spec);

// The job id recorded in a work dir ("" when none). Not checked: see IsSlurmJobId.
TRTLLM_RUN_API std::string RecordedSlurmJobId(const std::string& work_dir);

// True for Slurm job id syntax only: a job (123), an array task (123_4) or a
// heterogeneous job component (123+1). Anything else read from a work dir never reaches
// scancel or scontrol (`--user=root` would be an option there).
TRTLLM_RUN_API bool IsSlurmJobId(const std::string& id);

// ---- Held allocations (persistent mode) ----

// One allocation held for later runs (`salloc --no-shell`), as its state file records it.
struct HeldAllocation {
  std::string key;     // what it was made for: cluster, partition, account, shape
  std::string job_id;  // the allocation's job id
  std::string host;    // "" (this host) or the ssh destination it lives on
  std::string user;    // the ssh user, when the destination names none
  std::string ssh_config_file;
  std::string ssh_port, ssh_identity_file, ssh_options;  // as job_spec.json `extra` has them
  std::string partition, account, time_limit;
  long long created_at = 0;    // unix seconds
  long long last_used_at = 0;  // unix seconds; the idle check compares it with idle_limit
  int idle_limit_seconds = 1800;
  std::string state_file;  // where this record lives
};

// $XDG_RUNTIME_DIR/trtllm-run/allocations, else ~/.cache/trtllm-run/allocations.
TRTLLM_RUN_API std::string AllocationStateDir();

// Every recorded allocation (state files that cannot be read are skipped).
TRTLLM_RUN_API std::vector<HeldAllocation> ListHeldAllocations();

// scancel the allocation (through `scenario`, the host it lives on) and forget it.
TRTLLM_RUN_API Status ReleaseHeldAllocation(const HeldAllocation& allocation, Scenario* scenario);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_RUN_H_
