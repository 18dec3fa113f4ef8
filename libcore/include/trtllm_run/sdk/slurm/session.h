// The local_slurm session of `run --cases`: many jobs submitted and followed by one
// SlurmWatcher.
#ifndef TRTLLM_RUN_SDK_SLURM_SESSION_H_
#define TRTLLM_RUN_SDK_SLURM_SESSION_H_

#include <memory>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"

namespace trtllm_run {

// The local_slurm executor's session (Executor::NewSession, `trtllm-run run --cases`):
// each Execute() submits its job from the calling thread exactly as ExecuteSlurmJob
// does (sbatch from the work dir, slurm_job_id and run_state.json recorded) and then
// waits for the verdict of ONE SlurmWatcher shared by every job of the session, driven
// by one thread the session owns: one batched controller query per interval for all
// jobs. options.cancel firing cancels every job (scancel; CANCELLED once each ended).
// The job output is not echoed (context.terminal is ignored; it is in the work dir).
// Persistent-mode jobs run as ExecuteSlurmJob runs them. Stats(): "watchers" (always
// "1"), "jobs" (handed to the watcher), "submits", "controller_queries",
// "accounting_queries", "config_queries", "cancels".
// `executor` (the session's executor name) prefixes the session's progress lines.
TRTLLM_RUN_API std::unique_ptr<ExecutorSession> NewLocalSlurmSession(const SessionOptions& options,
                                                                     const std::string& executor);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_SESSION_H_
