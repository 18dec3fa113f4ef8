// Parsers of the Slurm probe's stream and of the individual command outputs in it (sinfo,
// scontrol show node, scontrol show assoc_mgr, srun --mpi=list), and the default-partition
// rule; exposed for tests and reuse.
#ifndef TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_PARSERS_H_
#define TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_PARSERS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "os/probe_script.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// sinfo -h -o '%P|%a|%l|%D|%G' -> partitions in order (duplicates merged: node counts
// added, the first gres kept); the default partition's trailing '*' is stripped and
// reported in `default_marked`.
struct SinfoPartition {
  std::string name;
  std::string state;
  std::string time_limit;
  long nodes = 0;
  std::string gres;  // "(null)" when empty
  bool default_marked = false;
};
std::vector<SinfoPartition> ParseSinfoPartitions(std::string_view text);

// `scontrol show node` (one-line -o records or the multi-line format): node name ->
// {Arch, Partitions}. Keys are found wherever they stand in a record.
struct NodeInfo {
  std::string name;
  std::string arch;  // "" when absent or "(null)"
  std::vector<std::string> partitions;
};
std::vector<NodeInfo> ParseScontrolNodes(std::string_view text);

// gpus_per_node of a gres string: "gpu:4", "gpu:4(IDX:0-3)", "gpu:a100:8" -> 4, 4, 8;
// the gpu element of a comma-separated list counts; nullopt without one.
std::optional<int> GpusPerNodeFromGres(std::string_view gres);
bool GresRequiresGpu(std::string_view gres);

// `srun --mpi=list` -> every pmix* token (deduplicated, order kept), and the preferred
// one: the highest pmix_vN, else pmix, else nullopt.
std::vector<std::string> ParsePmixPlugins(std::string_view text);
std::optional<std::string> PreferredPmix(const std::vector<std::string>& available);

// `scontrol -o show assoc_mgr users=USER flags=users,assoc` (slurmctld's association
// cache; one-line or multi-line records, other users' and account-level records
// ignored) -> `user`'s DefAccount ("" when not listed) and the accounts of its
// associations, ordered by Lft (the order `sacctmgr show assoc where user=USER` lists
// them in), duplicates (per-partition associations) removed. No accounts: the cache
// holds no association of the user (accounting disabled, user unknown, ...).
struct AssocMgrUser {
  std::string default_account;
  std::vector<std::string> accounts;
};
AssocMgrUser ParseAssocMgr(std::string_view text, const std::string& user);

// The default-partition rule: among `accepted` (in `partitions` order) a plain name
// beats *-backfill, which beats *-hp / *-admin; ties go to the partition sinfo marks
// default, else the first. nullopt when none is accepted.
std::optional<std::string> ChooseDefaultPartition(const std::vector<SinfoPartition>& partitions,
                                                  const std::vector<std::string>& accepted);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_PROBE_SLURM_PROBE_PARSERS_H_
