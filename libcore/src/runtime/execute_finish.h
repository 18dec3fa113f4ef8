// The part of Runtime::Execute after the executor's verdict, for runners that reach the
// verdict themselves (the Slurm job arrays of `run --cases`, cases_array.h). Not installed.
#ifndef TRTLLM_RUN_RUNTIME_EXECUTE_FINISH_H_
#define TRTLLM_RUN_RUNTIME_EXECUTE_FINISH_H_

#include "trtllm_run/registry.h"
#include "trtllm_run/runtime.h"

namespace trtllm_run {

// `result` (the executor's verdict of `prepared`) completed as Runtime::Execute completes
// it: the plan's names filled in, the workflow's judgement, the test list's markers, the
// failure diagnosis, options.finalize; written to the work dir's result.json.
RunResult FinishExecuted(const Registry& registry, const PreparedCase& prepared, RunResult result,
                         const RunOptions& options);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_EXECUTE_FINISH_H_
