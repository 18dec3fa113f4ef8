// gpu / system_gpu_count of a stage from a Slurm partition's GRES and node count
// (stage_target.h), over sinfo output captured on the test cluster
// (tests/fixtures/stage_target/sinfo_test_cluster.txt: untyped gpu:2, a GPU-less cpu
// partition, a 2-node multi partition) and typed GRES in sinfo's %G format, and PlanStage
// with a partition as its target.
#include "stage/stage_target.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "slurm/probe/slurm_probe_parsers.h"
#include "stage/stage_plan.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The captured partition `name` as the probe turns sinfo's lines into partitions.
StagePartitionFacts Captured(const std::string& name) {
  const std::string text = Read(fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" /
                                "stage_target" / "sinfo_test_cluster.txt");
  for (const SinfoPartition& partition : ParseSinfoPartitions(text)) {
    if (partition.name != name) continue;
    return StagePartitionFacts{partition.name, partition.gres, partition.nodes};
  }
  FAIL("no partition " << name << " in the captured sinfo output");
  return {};
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("stage target: the GPU element of a GRES list", "[stage]") {
  auto gpu = GpuOfGres("gpu:2");
  REQUIRE(gpu);
  CHECK(gpu->type.empty());
  CHECK(gpu->per_node == 2);
  gpu = GpuOfGres("gpu:b200:8(S:0-1)");
  REQUIRE(gpu);
  CHECK(gpu->type == "b200");
  CHECK(gpu->per_node == 8);
  // AutoDetect=nvml types, behind another element, a socket list with a comma.
  gpu = GpuOfGres("nic:1,gpu:nvidia_h100_80gb_hbm3:4(S:0,1)");
  REQUIRE(gpu);
  CHECK(gpu->type == "nvidia_h100_80gb_hbm3");
  CHECK(gpu->per_node == 4);
  CHECK_FALSE(GpuOfGres("(null)"));
  CHECK_FALSE(GpuOfGres("nic:1"));
  CHECK_FALSE(GpuOfGres("gpu:b200:x"));
  CHECK_FALSE(GpuOfGres("gpu:"));
  CHECK_FALSE(GpuOfGres("gpus:4"));
}

TEST_CASE("stage target: keys from the captured test cluster's partitions", "[stage]") {
  // batch: gpu:2 on 1 node, no type. A 1-GPU stage sees 1 GPU; gpu stays the name's.
  StageTargetKeys keys = StageKeysFromPartition(Captured("batch"), 1, 1);
  CHECK_FALSE(keys.gpu);
  REQUIRE(keys.system_gpu_count);
  CHECK(*keys.system_gpu_count == 1);
  CHECK(keys.system_gpu_count_origin ==
        "the stage's 1 GPU, which GRES gpu:2 x 1 node of partition batch holds");
  CHECK(AnyContains(keys.warnings, "partition batch's GRES gpu:2 names no GPU type"));

  // A 4-GPU stage on 2 GPUs per node: what the partition holds, and a warning.
  keys = StageKeysFromPartition(Captured("batch"), 4, 1);
  CHECK(*keys.system_gpu_count == 2);
  CHECK(AnyContains(keys.warnings,
                    "partition batch offers 2 GPUs per node on 1 node (GRES gpu:2), the stage "
                    "asks for 4 GPUs on 1 node: rendered with system_gpu_count=2"));

  // multi: 2 nodes of gpu:2 hold a 4-GPU 2-node stage.
  keys = StageKeysFromPartition(Captured("multi"), 4, 2);
  CHECK(*keys.system_gpu_count == 4);
  CHECK(keys.system_gpu_count_origin ==
        "the stage's 4 GPUs, which GRES gpu:2 x 2 nodes of partition multi holds");
  CHECK_FALSE(AnyContains(keys.warnings, "will not fit"));

  // No stage table count (--test-db): a whole node.
  keys = StageKeysFromPartition(Captured("multi"), 0, 1);
  CHECK(*keys.system_gpu_count == 2);

  // cpu: no GPU GRES, nothing from the partition.
  keys = StageKeysFromPartition(Captured("cpu"), 1, 1);
  CHECK_FALSE(keys.gpu);
  CHECK_FALSE(keys.system_gpu_count);
  CHECK(AnyContains(keys.warnings, "partition cpu has no GPU GRES (sinfo %G: (null))"));
}

TEST_CASE("stage target: typed GRES gives gpu, lower-cased", "[stage]") {
  // Lines in sinfo -h -o '%P|%a|%l|%D|%G' format of a typed cluster.
  std::vector<SinfoPartition> partitions =
      ParseSinfoPartitions("b200x8*|up|4:00:00|12|gpu:B200:8(S:0-1)\n");
  REQUIRE(partitions.size() == 1);
  StageTargetKeys keys =
      StageKeysFromPartition({partitions[0].name, partitions[0].gres, partitions[0].nodes}, 4, 1);
  REQUIRE(keys.gpu);
  CHECK(*keys.gpu == "b200");
  CHECK(keys.gpu_origin == "GRES gpu:B200:8(S:0-1) of partition b200x8");
  CHECK(*keys.system_gpu_count == 4);
  CHECK(keys.warnings.empty());
}

TEST_CASE("plan stage: a Slurm partition is the target, --match still wins", "[stage]") {
  StageRequest request;
  request.repo_root = (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "stage").string();
  request.stage = "DGX_B200-4_GPUs-PyTorch-1";
  request.target_partition = StagePartitionFacts{"b200x8", "gpu:b200:8", 2};
  Result<StagePlan> plan = PlanStage(request);
  REQUIRE(plan.ok());
  CHECK(plan->match_keys["gpu"] == "b200");
  CHECK(plan->match_keys["system_gpu_count"] == "4");
  CHECK(plan->key_origins["gpu"] == "GRES gpu:b200:8 of partition b200x8");
  CHECK(plan->key_origins["system_gpu_count"] ==
        "the stage's 4 GPUs, which GRES gpu:b200:8 x 1 node of partition b200x8 holds");
  CHECK_FALSE(AnyContains(plan->warnings, "not probed"));

  // A partition of H100s: the B200-only blocks do not render there.
  request.target_partition = StagePartitionFacts{"h100", "gpu:h100:8", 4};
  Result<StagePlan> h100 = PlanStage(request);
  REQUIRE(h100.ok());
  CHECK(h100->match_keys["gpu"] == "h100");
  CHECK(AnyContains(h100->matched_blocks_explained,
                    "block 1 (l0_dgx_b200.yml:4, 8 tests): not matched: gpu=h100 matches none"));

  // --match overrides the partition.
  request.match = {{"gpu", "b200"}};
  plan = PlanStage(request);
  REQUIRE(plan.ok());
  CHECK(plan->match_keys["gpu"] == "b200");
  CHECK(plan->key_origins["gpu"] == "--match");

  // No GPU GRES: the stage's own numbers, with the warning.
  request.match.clear();
  request.target_partition = StagePartitionFacts{"cpu", "(null)", 1};
  plan = PlanStage(request);
  REQUIRE(plan.ok());
  CHECK(plan->match_keys["gpu"] == "dgx_b200");
  CHECK(plan->match_keys["system_gpu_count"] == "4");
  CHECK(plan->key_origins["system_gpu_count"] == "stage name");  // 4_GPUs
  CHECK(AnyContains(plan->warnings, "partition cpu has no GPU GRES"));
}

}  // namespace
}  // namespace trtllm_run
