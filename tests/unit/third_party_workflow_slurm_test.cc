// A workflow core does not know by name, prepared for Slurm: its own patterns, its job
// kind and its task layout reach job_spec.json and the batch script, and its
// after_placement hook sees the partition and may refuse the job.
#include <rapidjson/document.h>

#include "plan_test_support.h"

using namespace plan_test;

namespace {

// A plan as a third-party workflow would make it: one run step on 2 GPUs.
JobPlan ThirdPartyPlan() {
  JobPlan plan;
  plan.workflow_type = "my_flow";
  plan.model_name = "m";
  plan.command = "echo run";
  plan.repo_root = FakeRepo();
  plan.required_devices = plan.total_required_devices = plan.required_devices_per_node = 2;
  plan.devices_requested = true;
  plan.steps.push_back(PlanStep{"run", plan.command, 2, false});
  plan.success_patterns = {"ALL GOOD"};
  plan.failure_patterns = {"my_flow broke"};
  return plan;
}

Placement BatchPlacement() {
  Placement placement;
  placement.slurm_env = LoadEnv("cluster_a");  // partition batch: 8 GPUs per node
  placement.partition = "batch";
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  return placement;
}

struct Prepared {
  Status status;
  JobSpec spec;
  rapidjson::Document job_spec;
};

Prepared Prepare(const TempDir& root, const JobPlan& plan) {
  Prepared out;
  out.spec.scenario = "local_slurm";
  out.spec.work_dir = root / "work_dirs/m_20260101_000000";
  fs::create_directories(out.spec.work_dir);
  CaseRequest request;
  request.repo_root = FakeRepo();
  SlurmJobOptions options;
  options.executor = "local_slurm";
  Status validated = ValidateSlurmJob(request, plan, BatchPlacement(), options);
  out.status = PrepareSlurmJob(request, plan, BatchPlacement(), options, &out.spec);
  CHECK(validated.ok() == out.status.ok());
  if (out.status.ok()) {
    out.job_spec.Parse(ReadText(out.spec.work_dir + "/job_spec.json").c_str());
    REQUIRE_FALSE(out.job_spec.HasParseError());
  }
  return out;
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const rapidjson::Value& item : array.GetArray()) out.push_back(item.GetString());
  return out;
}

}  // namespace

TEST_CASE("a third-party workflow keeps its own patterns on Slurm", "[render][slurm]") {
  TempDir root;
  Prepared job = Prepare(root, ThirdPartyPlan());
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(Strings(job.job_spec["success_patterns"]) == std::vector<std::string>{"ALL GOOD"});
  CHECK(Strings(job.job_spec["failure_patterns"]) == std::vector<std::string>{"my_flow broke"});
  CHECK(job.spec.script_name == "m_my_flow.slurm");
  CHECK(job.spec.log_file_pattern == "m_my_flow_%j.out");
}

TEST_CASE("launch facts: kind, layout and the after_placement hook", "[render][slurm]") {
  TempDir root;
  JobPlan plan = ThirdPartyPlan();
  plan.launch.job_kind = "flow";
  plan.launch.task_layout = TaskLayout::kOneTask;
  plan.launch.run_shows_gpus = true;
  std::optional<int> seen_gpus;
  std::string seen_partition;
  plan.launch.after_placement = [&](const PlacementFacts& facts, JobPlan* placed) {
    seen_gpus = facts.gpus_per_node;
    seen_partition = facts.partition;
    placed->notes.push_back("my_flow: placed on " + facts.partition);
    return Status::Ok();
  };
  Prepared job = Prepare(root, plan);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(seen_partition == "batch");
  CHECK(seen_gpus == 8);
  CHECK(job.spec.script_name == "m_flow.slurm");
  const std::string script = ReadText(job.spec.script_path);
  CHECK_THAT(script, Catch::Contains("#SBATCH --ntasks=1\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:2\n"));
  CHECK_THAT(script, Catch::Contains("nvidia-smi"));
  CHECK_THAT(job.spec.extra["resolution_notes"], Catch::Contains("my_flow: placed on batch"));

  plan.launch.after_placement = [](const PlacementFacts& facts, JobPlan*) {
    return Status::InvalidInput("my_flow cannot run on " + facts.partition, "use another");
  };
  TempDir other;
  Prepared refused = Prepare(other, plan);
  CHECK(refused.status.code() == StatusCode::kInvalidInput);
  CHECK(refused.status.message() == "my_flow cannot run on batch");
}
