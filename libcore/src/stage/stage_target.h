// The target's side of a stage's match keys: CI renders a stage's test-db on the machine
// that runs it, where tests/integration/defs/sysinfo/get_sysinfo.py reports gpu (the
// device's product name) and system_gpu_count (the GPUs the job sees). On a Slurm target
// trtllm-run plans before any job runs, so it reads the same facts from the partition:
// its GPU GRES ("gpu:b200:8": type b200, 8 per node) and its node count (sinfo %D).
#ifndef TRTLLM_RUN_STAGE_STAGE_TARGET_H_
#define TRTLLM_RUN_STAGE_STAGE_TARGET_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trtllm_run {

// A Slurm partition as the probe saw it (sinfo -o '%P|%a|%l|%D|%G').
struct StagePartitionFacts {
  std::string name;
  std::string gres = "(null)";  // sinfo %G: "gpu:b200:8(S:0-1)", "gpu:2", "(null)"
  long nodes = 0;               // sinfo %D
};

// The GPU element of a GRES list: "gpu:b200:8(S:0-1),nic:1" -> {type "b200", 8};
// "gpu:2" -> {type "", 2}. nullopt when the list has no gpu element or its count is not a
// number ("(null)", "nic:1", "gpu:b200:x").
struct GresGpu {
  std::string type;  // "" when the GRES names no type
  int per_node = 0;
};
std::optional<GresGpu> GpuOfGres(std::string_view gres);

// gpu / system_gpu_count for a stage planned on `partition`, and where each came from.
// The stage asks for `stage_gpus` GPUs (all nodes together; 0 when no stage table gave a
// count) on `stage_nodes` nodes. gpu: the GRES type, lower-cased (the test-db's wildcards
// such as '*b200*'); none when the GRES names no type. system_gpu_count: the GPUs the
// stage's job gets there, min(stage_gpus, per node x min(stage_nodes, partition nodes));
// a whole node's GPUs when the stage gives no count. Without GPU GRES both are none and
// `warnings` says so. A partition that cannot hold the stage is a warning, not an error.
struct StageTargetKeys {
  std::optional<std::string> gpu;
  std::optional<int> system_gpu_count;
  std::string gpu_origin;               // "GRES gpu:b200:8 of partition batch"
  std::string system_gpu_count_origin;  // "GRES gpu:b200:8 x 1 node of partition batch"
  std::vector<std::string> warnings;
};
StageTargetKeys StageKeysFromPartition(const StagePartitionFacts& partition, int stage_gpus,
                                       int stage_nodes);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_STAGE_TARGET_H_
