// Which step of a Slurm job failed, in words, for JudgeSlurmJob (slurm_verdict.h).
#ifndef TRTLLM_RUN_SLURM_VERDICT_SLURM_FAILING_STEP_H_
#define TRTLLM_RUN_SLURM_VERDICT_SLURM_FAILING_STEP_H_

#include <string>

#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"

namespace trtllm_run {

// "CODE:SIGNAL" of a Slurm exit, "?" for a part not recorded.
std::string ExitText(const SlurmExit& exit);

// The first failing step of the job's step records and `[trtllm-run] step` lines, e.g.
// "step run (49.1, bash, FAILED 3:0)", followed by the first task srun saw exit non-zero
// ("; task 3 on node gpunode2 exited with exit code 1"); "" when none failed.
std::string FailingStep(const SlurmJobEvidence& e);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_VERDICT_SLURM_FAILING_STEP_H_
