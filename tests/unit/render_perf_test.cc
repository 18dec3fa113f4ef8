// Category 4: perf-sanity jobs (and multi-node trtllm-eval) run the repo's
// jenkins/scripts/perf/local/submit.py with the spec's flags and keep the launch script
// it writes. The fake repo's submit.py is a stand-in with the same command line.
#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include "plan_test_support.h"

using namespace plan_test;

namespace {

const std::string kDisagg =
    "gb200_deepseek-r1-fp4_1k1k_con1_ctx1_dep4_gen1_tep8_eplb0_mtp3_ccb-UCX";

std::string Perf(const std::string& id) {
  return "pytest tests/integration/defs/perf/test_perf_sanity.py -v \"test_e2e[" + id + "]\"";
}

struct Prepared {
  Status status;
  JobSpec spec;
  std::string script;
  rapidjson::Document job_spec;
};

Prepared PrepareJob(const TempDir& root, CaseRequest request, Placement placement,
                    const std::string& executor = "local_slurm") {
  Prepared out;
  if (!request.repo_root) request.repo_root = FakeRepo();
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  std::string work_dir = root / ("work_dirs/" + plan->model_name + "_20260101_000000");
  fs::create_directories(work_dir);
  out.spec.scenario = executor;
  out.spec.work_dir = work_dir;
  SlurmJobOptions options;
  options.executor = executor;
  options.remote = executor == "remote_slurm";
  out.status = PrepareSlurmJob(request, plan.value(), placement, options, &out.spec);
  if (out.status.ok()) {
    out.script = ReadText(out.spec.script_path);
    out.job_spec.Parse(ReadText(work_dir + "/job_spec.json").c_str());
    REQUIRE_FALSE(out.job_spec.HasParseError());
  }
  return out;
}

Placement ClusterA(const std::string& partition) {
  Placement placement;
  placement.slurm_env = LoadEnv("cluster_a");
  placement.partition = partition;
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  return placement;
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

}  // namespace

TEST_CASE("perf-sanity from a test id: submit.py --test-list writes the launch script",
          "[render][perf]") {
  TempDir root;
  CaseRequest request;
  request.test_cmd = Perf("aggr-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp2_mtp0_1k1k");
  Prepared job = PrepareJob(root, request, ClusterA("batch"));
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  const std::string wd = job.spec.work_dir;
  CHECK(job.spec.script_path == wd + "/slurm_launch.sh");
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--nodes") == "1");
  CHECK(One(sbatch, "--ntasks") == "8");  // whole nodes, as submit.py requests them
  CHECK(One(sbatch, "--ntasks-per-node") == "8");
  CHECK(One(sbatch, "--partition") == "batch");
  CHECK(One(sbatch, "--account") == "team_a");
  CHECK(One(sbatch, "--time") == "02:00:00");
  CHECK(One(sbatch, "-J") == "team_a.gpt_oss_120b_fp4_perf");
  CHECK(One(sbatch, "-o") == wd + "/slurm-%j.out");
  CHECK_THAT(job.script, Catch::Contains("--container-image=urm.nvidia.com#sw-tensorrt-docker"));
  CHECK_THAT(job.script, Catch::Contains("export LLM_MODELS_ROOT=/llm-models"));

  const rapidjson::Document& spec = job.job_spec;
  CHECK(Str(spec, "workflow_type") == "perf_sanity");
  CHECK(Str(spec, "script_name") == "slurm_launch.sh");
  CHECK(Str(spec, "log_file_pattern") == "slurm-%j.out");
  CHECK(spec["success_patterns"][0].GetString() == std::string("8_done_"));
  CHECK(spec["failure_patterns"].Size() == 2);
  CHECK(spec["node_count"].GetInt() == 1);
  CHECK(spec["slurm_params"]["ntasks"].GetInt() == 8);
  CHECK(Str(spec["slurm_params"], "gres") == "gpu:8");
  const std::string submit = Str(spec, "submit_command");
  CHECK_THAT(submit, Catch::StartsWith("python3 " + FakeRepo() +
                                       "/jenkins/scripts/perf/local/submit.py --test-list "));
  CHECK_THAT(submit, Catch::Contains("test_e2e[aggr-gpt_oss_120b_fp4_blackwell-"));
  CHECK_THAT(submit, Catch::Contains("--launch-sh " + wd + "/slurm_launch.sh"));
  CHECK_THAT(submit, Catch::Contains("--llm-src " + FakeRepo()));
  CHECK_THAT(submit, Catch::Contains("--work-dir " + wd));
}

TEST_CASE("perf-sanity with perf_config_yaml: --config-file and the id's mode or server",
          "[render][perf]") {
  TempDir root;
  const std::string folder = FakeRepo() + "/tests/scripts/perf-sanity/";
  SECTION("disaggregated") {
    CaseRequest request;
    request.test_cmd = Perf("disagg-e2e-" + kDisagg);
    request.perf_config_yaml = folder + "disaggregated/" + kDisagg + ".yaml";
    Prepared job = PrepareJob(root, request, ClusterA("grace"));
    INFO(job.status.ToString());
    REQUIRE(job.status.ok());
    auto sbatch = Sbatch(job.script);
    CHECK(One(sbatch, "--nodes") == "3");
    CHECK(One(sbatch, "--ntasks") == "12");
    CHECK(job.job_spec["node_count"].GetInt() == 3);
    CHECK_THAT(job.script, Catch::Contains(":sbsa-"));  // grace is aarch64
    const std::string submit = Str(job.job_spec, "submit_command");
    CHECK_THAT(submit, Catch::Contains("--config-file " + *request.perf_config_yaml));
    CHECK_THAT(submit, Catch::Contains("--benchmark-mode e2e"));
    CHECK(submit.find("--test-list") == std::string::npos);
    CHECK(Str(job.job_spec, "perf_config_yaml") == *request.perf_config_yaml);
  }
  SECTION("aggregated") {
    CaseRequest request;
    request.test_cmd = Perf("aggr-cp_sizing_test-tp8_pp2");
    request.perf_config_yaml = folder + "aggregated/cp_sizing_test.yaml";
    Prepared job = PrepareJob(root, request, ClusterA("small"));
    INFO(job.status.ToString());
    REQUIRE(job.status.ok());
    CHECK(One(Sbatch(job.script), "--nodes") == "4");
    CHECK_THAT(Str(job.job_spec, "submit_command"), Catch::Contains("--test-name tp8_pp2"));
  }
}

TEST_CASE("multi-node trtllm-eval falls back to the perf-sanity path", "[render][perf][eval]") {
  TempDir root;
  CaseRequest request;
  request.eval_cmd = "trtllm-eval --model /m/DeepSeek-R1 --tp_size 8 gsm8k";
  request.eval_perf_fallback = true;  // refused without (the accuracy run is not guaranteed)
  Prepared job = PrepareJob(root, request, ClusterA("small"));
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  const std::string wd = job.spec.work_dir;
  CHECK(job.spec.script_name == "slurm_launch.sh");
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--nodes") == "2");
  CHECK(One(sbatch, "--ntasks") == "8");
  CHECK(One(sbatch, "--ntasks-per-node") == "4");

  const std::string config_path = wd + "/deepseek_r1_eval_perf_config.yaml";
  CHECK(Str(job.job_spec, "perf_config_yaml") == config_path);
  YAML::Node config = YAML::LoadFile(config_path);
  CHECK(config["accuracy"]["enable_accuracy_test"].as<bool>());
  CHECK(config["accuracy"]["tasks"].as<std::string>() == "gsm8k");
  CHECK(config["hardware"]["gpus_per_node"].as<int>() == 4);
  CHECK(config["server_configs"][0]["tensor_parallel_size"].as<int>() == 8);
  CHECK(config["server_configs"][0]["name"].as<std::string>() == "deepseek_r1_tp8_pp1");
  CHECK(config["metadata"]["source_eval_cmd"].as<std::string>() == *request.eval_cmd);
  CHECK(Str(job.job_spec, "workflow_type") == "eval");
  CHECK(Str(job.job_spec, "log_file_pattern") == "slurm-%j.out");
  CHECK_THAT(Str(job.job_spec, "submit_command"),
             Catch::Contains("--test-name deepseek_r1_tp8_pp1"));
  CHECK_THAT(Str(job.job_spec, "resolution_notes"), Catch::Contains("perf-sanity path"));

  SECTION("on a partition with enough GPUs per node it stays Category 5") {
    Prepared single = PrepareJob(root, request, ClusterA("batch"));
    REQUIRE(single.status.ok());
    CHECK(single.spec.script_name == "deepseek_r1_eval.slurm");
  }
}

TEST_CASE("submit.py missing or failing: the error says so and names the script",
          "[render][perf]") {
  TempDir root;
  CopyFakeRepo(root / "repo");
  CaseRequest request;
  request.repo_root = root / "repo";
  request.test_cmd = Perf("aggr-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp1_mtp0_1k1k");
  const std::string submit = root / "repo/jenkins/scripts/perf/local/submit.py";

  WriteText(submit,
            "import sys\nprint('loading config', flush=True)\n"
            "print('boom: bad hardware section', file=sys.stderr)\nsys.exit(4)\n");
  Prepared failed = PrepareJob(root, request, ClusterA("batch"));
  REQUIRE_FALSE(failed.status.ok());
  CHECK_THAT(failed.status.message(), Catch::Contains(submit + " failed (exit 4)"));
  CHECK_THAT(failed.status.message(), Catch::Contains("boom: bad hardware section"));

  fs::remove(submit);
  Prepared missing = PrepareJob(root, request, ClusterA("batch"));
  REQUIRE_FALSE(missing.status.ok());
  CHECK_THAT(missing.status.message(), Catch::Contains("needs the repo's submit.py"));
  CHECK_THAT(missing.status.message(), Catch::Contains(submit));
}

TEST_CASE("remote perf-sanity: remote paths for the job, a local launch script",
          "[render][perf][remote]") {
  TempDir root;
  CaseRequest request;
  request.test_cmd = Perf("aggr-ctx_only-" + kDisagg);
  request.slurm_env_file = FixturePath("slurm_env/remote_b.json");
  request.remote_repo_path = "/lustre/users/bob/TensorRT-LLM";
  Placement placement;
  placement.llm_models_root = "/models";
  Prepared job = PrepareJob(root, request, placement, "remote_slurm");
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  const std::string remote_wd =
      "/lustre/users/bob/TensorRT-LLM/work_dirs/" + fs::path(job.spec.work_dir).filename().string();
  CHECK(job.spec.script_path == job.spec.work_dir + "/slurm_launch.sh");
  CHECK(One(Sbatch(job.script), "-o") == remote_wd + "/slurm-%j.out");
  CHECK_THAT(job.script, Catch::Contains("export llmSrcNode=/lustre/users/bob/TensorRT-LLM\n"));
  CHECK_THAT(job.script, Catch::Contains("--container-mounts=/lustre/users/bob:/lustre/users/bob,"
                                         "/lustre/users/bob/TensorRT-LLM:/lustre/users/bob/"
                                         "TensorRT-LLM,/lustre/models:/models"));
  CHECK(Str(job.job_spec, "remote_work_dir") == remote_wd);
  CHECK(Str(job.job_spec, "remote_repo_path") == "/lustre/users/bob/TensorRT-LLM");
}
