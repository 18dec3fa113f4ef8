// A stage's gpu / system_gpu_count from a Slurm partition's GRES (see stage_target.h).
#include "stage/stage_target.h"

#include <algorithm>
#include <cctype>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// The elements of a GRES list, split on the commas outside parentheses
// ("gpu:b200:8(S:0,1),nic:1" -> "gpu:b200:8(S:0,1)", "nic:1"), blanks trimmed.
std::vector<std::string> Elements(std::string_view gres) {
  std::vector<std::string> elements(1);
  int depth = 0;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      elements.emplace_back();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      elements.back() += c;
    }
  }
  return elements;
}

std::string Plural(long count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

std::optional<GresGpu> GpuOfGres(std::string_view gres) {
  for (std::string element : Elements(gres)) {
    if (element.rfind("gpu:", 0) != 0) continue;
    element.resize(std::min(element.size(), element.find('(')));
    // gpu:<count> or gpu:<type>:<count>
    const std::size_t last = element.rfind(':');
    const std::string count = element.substr(last + 1);
    if (count.empty() || count.size() > 6 ||
        !std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return std::nullopt;
    }
    GresGpu gpu;
    gpu.per_node = std::stoi(count);
    if (last > 3) gpu.type = element.substr(4, last - 4);
    return gpu;
  }
  return std::nullopt;
}

StageTargetKeys StageKeysFromPartition(const StagePartitionFacts& partition, int stage_gpus,
                                       int stage_nodes) {
  StageTargetKeys keys;
  const std::string where = "partition " + partition.name;
  std::optional<GresGpu> gpu = GpuOfGres(partition.gres);
  if (!gpu || gpu->per_node <= 0) {
    keys.warnings.push_back(where + " has no GPU GRES (sinfo %G: " + partition.gres +
                            "): gpu and system_gpu_count come from the stage's name and table");
    return keys;
  }
  const std::string gres = "GRES " + partition.gres;
  if (!gpu->type.empty()) {
    keys.gpu = AsciiLower(gpu->type);
    keys.gpu_origin = gres + " of " + where;
  } else {
    keys.warnings.push_back(where + "'s " + gres +
                            " names no GPU type: gpu comes from the stage's name; give "
                            "--match gpu=<type> to plan for another GPU");
  }
  const long nodes_there = std::max(1L, partition.nodes);
  const long stage_node_count = std::max(1, stage_nodes);
  const long usable_nodes = std::min(stage_node_count, nodes_there);
  const long available = static_cast<long>(gpu->per_node) * usable_nodes;
  const std::string size = gres + " x " + Plural(usable_nodes, "node") + " of " + where;
  if (stage_gpus <= 0) {
    keys.system_gpu_count = static_cast<int>(available);
    keys.system_gpu_count_origin = size + " (no stage table count: a whole node)";
    return keys;
  }
  keys.system_gpu_count = static_cast<int>(std::min<long>(stage_gpus, available));
  keys.system_gpu_count_origin =
      available >= stage_gpus
          ? "the stage's " + Plural(stage_gpus, "GPU") + ", which " + size + " holds"
          : size;
  if (available < stage_gpus || stage_node_count > nodes_there) {
    keys.warnings.push_back(
        where + " offers " + Plural(gpu->per_node, "GPU") + " per node on " +
        Plural(nodes_there, "node") + " (" + gres + "), the stage asks for " +
        Plural(stage_gpus, "GPU") + " on " + Plural(stage_node_count, "node") +
        ": rendered with system_gpu_count=" + std::to_string(*keys.system_gpu_count) +
        "; its jobs will not fit there");
  }
  return keys;
}

}  // namespace trtllm_run
