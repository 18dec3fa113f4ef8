// The remote-only inputs of a Slurm run over SSH (the run itself: sdk/slurm/submit.h
// RunSlurmJob).
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

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_REMOTE_H_
