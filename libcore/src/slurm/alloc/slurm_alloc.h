// Slurm allocations held for later runs (persistent mode), recorded in state files.
#ifndef TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_H_
#define TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_H_

#include <string>
#include <vector>

#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// ---- Held allocations (persistent mode) ----

// One allocation held for later runs (`salloc --no-shell`), as its state file records it.
struct HeldAllocation {
  std::string key;     // what it was made for: cluster, partition, account, shape
  std::string job_id;  // the allocation's job id
  std::string host;    // "" (this host) or the ssh destination it lives on
  std::string user;    // the ssh user, when the destination names none
  std::string ssh_config_file;
  std::string ssh_port, ssh_identity_file, ssh_options;  // as job_spec.json `extra` has them
  std::string partition, account, time_limit;
  long long created_at = 0;    // unix seconds
  long long last_used_at = 0;  // unix seconds; the idle check compares it with idle_limit
  int idle_limit_seconds = 1800;
  std::string state_file;  // where this record lives
};

// $XDG_RUNTIME_DIR/trtllm-run/allocations, else ~/.cache/trtllm-run/allocations.
std::string AllocationStateDir();

// Every recorded allocation (state files that cannot be read are skipped).
std::vector<HeldAllocation> ListHeldAllocations();

// scancel the allocation (through `scenario`, the host it lives on) and forget it.
Status ReleaseHeldAllocation(const HeldAllocation& allocation, Scenario* scenario);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_ALLOC_SLURM_ALLOC_H_
