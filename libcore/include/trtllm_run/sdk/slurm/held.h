// The Slurm allocations persistent mode holds for later runs (sdk/slurm/submit.h, "Held
// allocations"), as the Slurm executors list and end them for `trtllm-run release`
// (Executor::ListHeld / ReleaseHeld).
#ifndef TRTLLM_RUN_SDK_SLURM_HELD_H_
#define TRTLLM_RUN_SDK_SLURM_HELD_H_

#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The recorded allocations of this host (`remote` false) or of SSH destinations
// (`remote` true), sorted by job id; description: "allocation ID on WHERE (KEY, --time
// T, idle Ns of Ms)".
TRTLLM_RUN_API std::vector<HeldResource> HeldSlurmAllocations(bool remote);

// scancel the recorded allocation `job_id` (over SSH for a remote one, connected as the
// record says) and forget it. kNotFound when no such allocation is recorded.
TRTLLM_RUN_API Status ReleaseHeldSlurmAllocation(const std::string& job_id, bool remote);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_HELD_H_
