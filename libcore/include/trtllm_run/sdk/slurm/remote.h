// Running a prepared Slurm job on a remote cluster over SSH: repo setup, the build
// job, transfer, submit, watch, and the SSH options of a job spec.
#ifndef TRTLLM_RUN_SDK_SLURM_REMOTE_H_
#define TRTLLM_RUN_SDK_SLURM_REMOTE_H_

#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The build job's command, run in remote_repo_path when build_project is true.
TRTLLM_RUN_API extern const char kDefaultBuildCommand[];

// Runs a prepared remote_slurm job over one SSH master connection: preflight (reachable,
// Slurm tools, writable remote work dir), repo setup (clone or fetch + checkout of
// repo_url at repo_branch into remote_repo_path), the build job when build_project is true
// (a failed build stops the run: ERROR, reason "BUILD_FAILED: ..."), transfer of the
// script and extra_files, sbatch, watch, cancel; the job's output is copied into the
// local work dir as it grows. A dropped connection is re-established and the watch goes on.
TRTLLM_RUN_API RunResult RunRemoteSlurmJob(const JobSpec& spec, const ExecContext& context);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_REMOTE_H_
