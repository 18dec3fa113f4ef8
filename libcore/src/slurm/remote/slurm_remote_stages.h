// The stages of a Slurm run (slurm_remote.cc): the remote-only ones (preflight, repo
// setup, work dir check, transfer, build job), run when the scenario's files live on
// another host, and the job itself. Shared by RunSlurmJob (one case, its own watcher)
// and the remote_slurm session (many cases of a destination, each remote stage done once
// where the cases share it). Not installed.
#ifndef TRTLLM_RUN_SLURM_REMOTE_SLURM_REMOTE_STAGES_H_
#define TRTLLM_RUN_SLURM_REMOTE_SLURM_REMOTE_STAGES_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "os/ssh.h"
#include "slurm/submit/slurm_internal.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run::internal {

// A Slurm run between connecting and submitting. Each stage returns the ERROR result
// that ends the run, or nullopt to go on; `base` collects notes and details for the
// final result.
struct StagedRun {
  const JobSpec& spec;
  const ExecContext& context;
  Scenario* scenario;  // where the Slurm tools run: this host, or a login node over SSH
  std::string where;   // the ssh destination ("" for this host), named in messages
  RunResult base;
  std::string job_script;  // the job script as the cluster sees it (once transferred)
};

// Submits one request and watches it to a verdict: SubmitAndWatch with a client of the
// run, or a session's shared watcher.
using SubmitAndWatchFn = std::function<RunResult(const SubmitRequest& request)>;

// Opens the master connection for the spec's destination (SshOptionsForSpec), prompting
// once on the terminal for a password when the key is refused and none was given.
// Null with *error set when it cannot.
std::unique_ptr<SshScenario> ConnectRemote(const JobSpec& spec, const ExecContext& context,
                                           const RunResult& base, std::optional<RunResult>* error);

// The Slurm tools are there.
std::optional<RunResult> RunPreflight(StagedRun* run);
// The remote repo: clone or fetch + check out repo_branch into remote_repo_path (nothing
// when the spec names no repo_url / remote_repo_path).
std::optional<RunResult> SetUpRemoteRepo(StagedRun* run);
// The remote work dir exists and is writable.
std::optional<RunResult> CheckRemoteWorkDir(StagedRun* run);
// Copies the script and the extra files over the master; sets run->job_script.
std::optional<RunResult> TransferFiles(StagedRun* run);
// The build job (build_project) in run->spec.remote_repo_path: BUILD_FAILED (ERROR)
// stops the run before the workload is submitted; CANCELLED when cancelled during it.
std::optional<RunResult> RunBuildJob(StagedRun* run, const SubmitAndWatchFn& submit);
// The build job's command (extra build_command, else kDefaultBuildCommand).
std::string BuildCommandOf(const JobSpec& spec);
// Preflight, repo setup, work dir check, transfer and (build_project) the build job, in
// that order, over run->scenario: what a run needs first when its files live on another
// host. The first failing stage's result, or nullopt.
std::optional<RunResult> StageOnLoginNode(StagedRun* run, const SubmitAndWatchFn& submit);
// Whether the spec's job runs as steps inside a held allocation instead of through
// sbatch: persistent mode, or, on a login node (`scenario` remote), a kept allocation
// (release_allocation "false").
bool RunsInHeldAllocation(const JobSpec& spec, const Scenario& scenario);
// The job itself: run->job_script submitted from the work dir as the cluster sees it
// (spec.remote_work_dir when run->scenario is remote, else spec.work_dir) and watched
// through `submit`, or run in a held allocation (RunsInHeldAllocation) over
// run->scenario; run->base's notes and details added.
RunResult RunJob(StagedRun* run, const SubmitAndWatchFn& submit);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_REMOTE_SLURM_REMOTE_STAGES_H_
