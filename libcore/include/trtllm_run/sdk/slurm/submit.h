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
#ifndef TRTLLM_RUN_SDK_SLURM_SUBMIT_H_
#define TRTLLM_RUN_SDK_SLURM_SUBMIT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/scenario.h"
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
// calls it after PrepareSlurmJob (sdk/slurm/render.h).
TRTLLM_RUN_API Status AddSlurmRunFields(const CaseRequest& request, bool remote, JobSpec* spec);

// Runs a prepared Slurm job to a verdict through `scenario`, the host whose Slurm client
// tools submit and watch it: this host (MakeLocalScenario) or a login node over SSH.
// When the scenario's files live on another host (Scenario::IsRemote), the remote-only
// stages run first over it, in this order: preflight (the Slurm tools are there), repo
// setup (clone or fetch + checkout of repo_url at repo_branch into remote_repo_path),
// the check that spec.remote_work_dir is writable, the transfer of the script and
// extra_files, and the build job when build_project is true (a failed build stops the
// run: ERROR, reason "BUILD_FAILED: ..."); the job's output is then copied into the
// local work dir as it grows. Then the job: sbatch from the work dir as the cluster sees
// it, watched to a verdict, cancelled on context.cancel; or, for persistent_mode (or
// release_allocation "false" on a login node), the script's steps inside a held
// allocation. Never leaves the job running unless the verdict says it may be. ERROR
// without running anything when the spec has no script_path (or, for a remote
// scenario, no remote_work_dir).
TRTLLM_RUN_API RunResult RunSlurmJob(const JobSpec& spec, const ExecContext& context,
                                     Scenario& scenario);

// Executor::Execute of the Slurm executors: RunSlurmJob through the scenario the job spec
// names. A spec naming a login node (ssh_host or remote_work_dir: a remote executor's)
// runs over one new OpenSSH master connection to it (the spec's ssh_host, slurm_user
// and ssh_* extras; a password
// prompted on the terminal at most once when the key is refused and none was given; a
// dropped connection is re-established and the watch goes on), closed at the end; the
// result's details then say ssh_host and ssh_connections. Any other spec runs through
// context.scenario when it is this host, else a new local scenario.
TRTLLM_RUN_API RunResult ExecuteSlurmJob(const JobSpec& spec, const ExecContext& context);

// Stops, from another process, the job recorded in spec.work_dir (slurm_job_id, else
// run_state.json), once ProveSlurmJobOwnership proved it this run's: scancel, then waits
// until the job left the queue. OK when nothing is left running (also when the
// controller no longer knows the job: nothing to cancel, said on context.progress);
// kInvalidInput, nothing cancelled, when the proof fails.
TRTLLM_RUN_API Status CancelSlurmJob(const JobSpec& spec, const ExecContext& context);

// The per-run token of a submitted job: 32 random hex digits, recorded in
// <work_dir>/<kSlurmJobTokenFile> before sbatch and given to the job as
// `--comment=<kSlurmJobCommentPrefix>TOKEN`. "" when no randomness could be read.
TRTLLM_RUN_API extern const char kSlurmJobTokenFile[];
TRTLLM_RUN_API extern const char kSlurmJobCommentPrefix[];
TRTLLM_RUN_API std::string NewSlurmJobToken();

class SlurmClient;
// Whether Slurm job `job_id`, which spec.work_dir records, is that run's, asked of the
// controller through `client` (`scontrol show job`, `id -u`; on the login node for a
// remote client): its UserId must be the caller's uid, its Comment the token recorded at
// submit, its StdOut under the work dir (spec.remote_work_dir for a remote client). OK:
// proven. kNotFound: the controller no longer knows the job. kInvalidInput naming each
// mismatch. kExecutionError: the controller or `id` could not be asked.
TRTLLM_RUN_API Status ProveSlurmJobOwnership(SlurmClient* client, const JobSpec& spec,
                                             const std::string& job_id);

// The request's SSH connection fields (ssh_config_file, ssh_port, identity, ssh_option)
// as the `extra` keys SshOptionsForSpec reads.
TRTLLM_RUN_API void AddSshConnectionExtras(const CaseRequest& request, JobSpec* spec);

// The job id recorded in a work dir ("" when none). Not checked: see IsSlurmJobId.
TRTLLM_RUN_API std::string RecordedSlurmJobId(const std::string& work_dir);

// True for Slurm job id syntax only: a job (123), an array task (123_4) or a
// heterogeneous job component (123+1). Anything else read from a work dir never reaches
// scancel or scontrol (`--user=root` would be an option there).
TRTLLM_RUN_API bool IsSlurmJobId(const std::string& id);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_SUBMIT_H_
