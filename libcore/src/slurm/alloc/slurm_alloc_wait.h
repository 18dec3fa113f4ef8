// The queue wait of a held allocation's `salloc --no-shell` (slurm_alloc.cc), on this host
// or on a login node.
// Like the batch watcher (slurm_watch.h), a request that pends with a reason waiting
// cannot clear (slurm_pending.h), or longer than max_pending_seconds, is withdrawn with
// scancel at once instead of waiting until the run's monitor timeout.
#ifndef TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_WAIT_H_
#define TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_WAIT_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/verdict.h"

namespace trtllm_run::internal {

// Why a pending salloc request was withdrawn; action kNone: it was not.
struct SallocPendingStop {
  SlurmAction action = SlurmAction::kNone;  // kHopelessPending or kMaxPending
  std::string job_id;                       // the request's job id
  std::string reason;                       // Slurm's pending reason when it was withdrawn
  int max_pending_seconds = 0;              // the bound that ran out (kMaxPending)
  bool left_queue = false;                  // the request was seen to leave the queue
};

struct SallocOutcome {
  std::string output;  // salloc's stdout and stderr
  ProcessExit exit;
  bool interrupted = false;  // context.cancel asked for it: salloc got SIGINT
  SallocPendingStop stop;
};

// Runs `argv` (salloc --no-shell ...) through `client`'s scenario (Scenario::Start: here
// or on a login node, the same way) until salloc ends, reading what it prints as it
// prints it. While its request pends ("Pending job allocation N"), the controller is asked
// for the pending reason about once a second; a hopeless reason or `max_pending_seconds`
// (> 0) passing withdraws it with scancel. context.cancel firing scancels the request
// (interrupted: true); salloc gets SIGINT only when it named none within 10 s, or when it
// has not ended 15 s after a scancel.
Result<SallocOutcome> RunSalloc(const std::vector<std::string>& argv, const ExecContext& context,
                                SlurmClient* client, int max_pending_seconds,
                                const std::string& progress_prefix);

// The verdict of a run whose allocation request was withdrawn (stop.action != kNone):
// ERROR naming the reason and what happened to the request; details["pending_reason"]
// makes the diagnosis name the fix (supervise/diagnosis.h).
RunResult PendingAllocationResult(RunResult base, const SallocPendingStop& stop);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_WAIT_H_
