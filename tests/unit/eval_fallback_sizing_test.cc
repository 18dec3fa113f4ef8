// A trtllm-eval too big for one node of the partition: the perf-sanity fallback spreads
// it over nodes of the partition's size, and is refused unless the request opts in,
// because the repo's submit.py may not run the accuracy test for the aggregated config
// the fallback writes (TensorRT-LLM's forwards accuracy settings only for disaggregated
// configs). The fake repo's submit.py is a stand-in with the real one's sizing.
#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "plan_test_support.h"

using namespace plan_test;

namespace {

struct Prepared {
  Status status;
  Status validated;
  JobSpec spec;
  std::string script;
  rapidjson::Document job_spec;
};

Prepared PrepareEval(const TempDir& root, CaseRequest request) {
  request.repo_root = FakeRepo();
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  Prepared out;
  out.spec.scenario = "local_slurm";
  out.spec.work_dir = root / ("work_dirs/" + plan->model_name + "_20260101_000000");
  fs::create_directories(out.spec.work_dir);
  Placement placement;
  placement.slurm_env = LoadEnv("cluster_a");  // partition batch: 8 GPUs per node
  placement.partition = "batch";
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  SlurmJobOptions options;
  options.executor = "local_slurm";
  out.validated = ValidateSlurmJob(request, plan.value(), placement, options);
  out.status = PrepareSlurmJob(request, plan.value(), placement, options, &out.spec);
  if (out.status.ok()) {
    out.script = ReadText(out.spec.script_path);
    out.job_spec.Parse(ReadText(out.spec.work_dir + "/job_spec.json").c_str());
    REQUIRE_FALSE(out.job_spec.HasParseError());
  }
  return out;
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

const char kEval16[] = "trtllm-eval --model /m/DeepSeek-R1 --tp_size 8 --pp_size 2 gsm8k";

}  // namespace

TEST_CASE("multi-node eval fallback: refused by default, naming the sizes and alternatives",
          "[render][perf][eval]") {
  TempDir root;
  CaseRequest request;
  request.eval_cmd = kEval16;
  Prepared job = PrepareEval(root, request);
  REQUIRE_FALSE(job.status.ok());
  CHECK(job.status.code() == StatusCode::kInvalidInput);
  CHECK(job.validated.message() == job.status.message());  // refused before any work dir
  const std::string message = job.status.message();
  CHECK_THAT(message, Catch::StartsWith("eval_cmd: world_size 16 (tp_size 8 x pp_size 2) needs 2 "
                                        "nodes of 8 GPUs (partition batch)"));
  CHECK_THAT(message, Catch::Contains("forwards accuracy settings only for disaggregated configs"));
  CHECK_THAT(message, Catch::Contains("could pass without evaluating anything"));
  const std::string hint = job.status.hint();
  CHECK_THAT(hint, Catch::Contains("tp_size x pp_size <= 8 on partition batch"));
  CHECK_THAT(hint, Catch::Contains("a partition with at least 16 GPUs per node"));
  CHECK_THAT(hint, Catch::Contains("--perf-config-yaml FILE"));
  CHECK_THAT(hint, Catch::Contains("--eval-perf-fallback true"));
  CHECK_FALSE(fs::exists(job.spec.work_dir + "/job_spec.json"));
}

TEST_CASE("multi-node eval fallback, opted in: 8 GPUs per node on 2 nodes, accuracy not promised",
          "[render][perf][eval]") {
  TempDir root;
  CaseRequest request;
  request.eval_cmd = kEval16;
  request.eval_perf_fallback = true;
  Prepared job = PrepareEval(root, request);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(job.spec.required_devices == 16);
  CHECK(job.spec.total_required_devices == 16);
  CHECK(job.spec.required_devices_per_node == 8);
  CHECK(job.spec.node_count == 2);
  CHECK(job.job_spec["required_devices_per_node"].GetInt() == 8);
  CHECK(job.job_spec["node_count"].GetInt() == 2);
  CHECK(job.job_spec["slurm_params"]["ntasks_per_node"].GetInt() == 8);
  CHECK(Str(job.job_spec["slurm_params"], "gres") == "gpu:8");
  auto sbatch = Sbatch(job.script);  // written by submit.py from the generated config
  CHECK(One(sbatch, "--nodes") == "2");
  CHECK(One(sbatch, "--ntasks") == "16");
  CHECK(One(sbatch, "--ntasks-per-node") == "8");
  YAML::Node config = YAML::LoadFile(Str(job.job_spec, "perf_config_yaml"));
  CHECK(config["hardware"]["gpus_per_node"].as<int>() == 8);
  CHECK(config["server_configs"][0]["pipeline_parallel_size"].as<int>() == 2);
  CHECK_THAT(Str(job.job_spec, "eval_accuracy_run"), Catch::StartsWith("not guaranteed: "));
  const std::string notes = Str(job.job_spec, "resolution_notes");
  CHECK_THAT(notes, Catch::Contains("eval: world_size 16 needs 2 nodes of 8 GPUs"));
  CHECK_THAT(notes, Catch::Contains("The accuracy run is NOT guaranteed"));
}

TEST_CASE("multi-node eval fallback: fewer GPUs per node when the request asks for fewer",
          "[render][perf][eval]") {
  TempDir root;
  CaseRequest request;
  request.eval_cmd = "trtllm-eval --model /m/DeepSeek-R1 --tp_size 8 gsm8k";
  request.required_devices_per_node = 4;
  request.eval_perf_fallback = true;
  Prepared job = PrepareEval(root, request);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(job.spec.required_devices_per_node == 4);
  CHECK(job.spec.node_count == 2);
  CHECK(One(Sbatch(job.script), "--ntasks-per-node") == "4");
}
