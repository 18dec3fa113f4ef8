// Cancelling the run of a work dir from another process: what `trtllm-run cancel
// WORK_DIR` and the MCP server's cancel_case do, written once.
//
// The protocol (docs/security.md): only the directory's own run (job_spec.json
// names this directory, CheckWorkDirLocation), only on the host that supervises it, and
// only processes proven to be that run's (CheckRecordedSupervisor). Then
//   1. the supervising trtllm-run, when alive, gets SIGTERM (it cancels as on Ctrl-C and
//      writes the verdict) and is waited for;
//   2. the executor (Executor::Cancel) stops whatever is left of the job (process group,
//      container, Slurm job after its ownership proof);
//   3. the verdict is the supervisor's result.json, else CANCELLED written here with
//      `cancelled_by` naming the canceller.
#ifndef TRTLLM_RUN_WORKDIR_CANCEL_H_
#define TRTLLM_RUN_WORKDIR_CANCEL_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/result.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct CancelWorkDirOptions {
  // SIGTERM -> SIGKILL grace the executor gives what it stops itself.
  int kill_grace_seconds = 10;
  // How long the supervising trtllm-run is given to stop the job and write its verdict;
  // unset: its own kill grace (run_state.json kill_grace_seconds, else 30) + 30 s.
  std::optional<double> wait_seconds;
  // Lines for people while it works ("<canceller>: asking trtllm-run (pid N) to stop the
  // job ...", the executor's own lines); null: quiet.
  std::ostream* progress = nullptr;
  // Who cancels: the prefix of the progress lines and result.json's cancelled_by.
  std::string canceller = "trtllm-run cancel";
  // Waits up to `seconds` between looks at the work dir; false stops waiting for the
  // supervisor (e.g. the caller was itself cancelled). Unset: sleeps.
  std::function<bool(double seconds)> sleep;
};

struct CancelWorkDirReport {
  // False: nothing to cancel (the run had finished, or nothing was started).
  bool cancelled = false;
  // One line for people: "nothing to cancel: ...", or "cancelled: <dir>: <VERDICT>
  // (<reason>)"; empty when there is no verdict to tell.
  std::string summary;
  // result.json as it is now; unset when nothing was started or no verdict was written.
  std::optional<RunResult> result;
  // The executor's Executor::Cancel: OK when nothing of the job is left running.
  Status stop_status;
};

// Cancels the run of work dir `work_dir` (absolute, normalized) as the protocol above
// says, with the executors of `registry`. Errors, returned before anything is signalled:
// kNotFound / kInvalidInput when it is no work dir (ReadWorkDirState's messages);
// kExecutionError when another host supervises the run; kInvalidInput when the work dir
// was copied or moved, or its recorded supervisor is not proven to be its run's. Also an
// error when the CANCELLED verdict cannot be written. A failed stop by the executor is
// in the report (stop_status), with the verdict that exists.
TRTLLM_RUN_API Result<CancelWorkDirReport> CancelWorkDir(const Registry& registry,
                                                         const std::string& work_dir,
                                                         const CancelWorkDirOptions& options);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_WORKDIR_CANCEL_H_
