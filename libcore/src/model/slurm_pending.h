// Pending reasons of a Slurm job that waiting cannot clear.
//
// The controller gives a pending job one Reason (squeue %r, scontrol's Reason=). Most
// clear by themselves (Resources, Priority, Dependency, BeginTime, JobHeld*, the Grp*
// and Max*PerUser limits that free up as other jobs end); the ones in this table only
// clear when the request or the cluster's configuration changes, so a watcher cancels
// such a job at once. docs/cli.md (Slurm runs) lists the table.
#ifndef TRTLLM_RUN_MODEL_SLURM_PENDING_H_
#define TRTLLM_RUN_MODEL_SLURM_PENDING_H_

#include <optional>
#include <string>
#include <vector>

namespace trtllm_run {

struct HopelessPendingReason {
  std::string reason;   // Slurm's name, e.g. "PartitionDown"
  std::string meaning;  // what it says about the job, one clause
  std::string fix;      // what the user changes, one sentence
};

// Every reason the table holds, in docs/cli.md's order.
const std::vector<HopelessPendingReason>& HopelessPendingReasons();

// The table's row for a job's Reason ("PartitionDown", or "ReqNodeNotAvail, ..." forms:
// the name before the first comma counts); nullopt when waiting may clear it.
std::optional<HopelessPendingReason> FindHopelessPendingReason(const std::string& reason);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_SLURM_PENDING_H_
