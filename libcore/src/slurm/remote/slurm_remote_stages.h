// The stages of a remote_slurm run (slurm_remote.cc), shared by RunRemoteSlurmJob (one
// case, its own connection) and the remote_slurm session (many cases of a destination,
// each stage done once where the cases share it). Not installed.
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

// A remote run between connecting and submitting. Each stage returns the ERROR result
// that ends the run, or nullopt to go on; `base` collects notes and details for the
// final result.
struct RemoteRun {
  const JobSpec& spec;
  const ExecContext& context;
  Scenario* ssh;      // the login node, over the master connection
  std::string where;  // the ssh destination, named in messages
  RunResult base;
  std::string remote_script;  // the job script as the cluster sees it, once transferred
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
std::optional<RunResult> RunPreflight(RemoteRun* run);
// The remote repo: clone or fetch + check out repo_branch into remote_repo_path (nothing
// when the spec names no repo_url / remote_repo_path).
std::optional<RunResult> SetUpRemoteRepo(RemoteRun* run);
// The remote work dir exists and is writable.
std::optional<RunResult> CheckRemoteWorkDir(RemoteRun* run);
// Copies the script and the extra files over the master; sets run->remote_script.
std::optional<RunResult> TransferFiles(RemoteRun* run);
// The build job (build_project) in run->spec.remote_repo_path: BUILD_FAILED (ERROR)
// stops the run before the workload is submitted; CANCELLED when cancelled during it.
std::optional<RunResult> RunBuildJob(RemoteRun* run, const SubmitAndWatchFn& submit);
// The build job's command (extra build_command, else kDefaultBuildCommand).
std::string BuildCommandOf(const JobSpec& spec);
// The job itself: submitted and watched through `submit`, or run in a held allocation
// (release_allocation false) over run->ssh; run->base's notes and details added.
RunResult RunJob(RemoteRun* run, const SubmitAndWatchFn& submit);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_REMOTE_SLURM_REMOTE_STAGES_H_
