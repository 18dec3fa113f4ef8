// What the Slurm executors tell about a job they started, from another process
// (Executor::DescribeJob, for `trtllm-run status` and the MCP server's case state): the
// controller's record of the job, asked where the job runs: on this host for local_slurm,
// on the login node over the executor's SSH connection (SshOptionsForSpec) for
// remote_slurm. The two differ only in the scenario.
#ifndef TRTLLM_RUN_SDK_SLURM_DESCRIBE_H_
#define TRTLLM_RUN_SDK_SLURM_DESCRIBE_H_

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

// The controller's record of the job run_state.json records (`scontrol show job`, one
// query, bounded): scheduler_state (JobState; "UNKNOWN" once the controller no longer
// knows the job), scheduler_reason, and a "slurm state" fact. Nothing when no job id is
// recorded; `problem` says why when the id is no Slurm job id or the controller could not
// be asked. Remote (spec.ssh_host set): the SSH settings come from a work dir someone else
// may have written, so its ssh_options must pass the untrusted allow-list (model/trust.h)
// and its ssh_config_file must be owned by the caller or root and writable by neither
// group nor others; otherwise nothing is run and `problem` says which. `local` runs the
// command for a local job (null: this host).
TRTLLM_RUN_API JobDescription DescribeSlurmJob(const JobSpec& spec, const RunState* state,
                                               Scenario* local = nullptr);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_DESCRIBE_H_
