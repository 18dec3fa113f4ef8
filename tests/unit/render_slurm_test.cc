// The Slurm batch scripts of Categories 2, 3, 5 and 6 and the job_spec.json beside them,
// as local_slurm and remote_slurm prepare them: the scripts are parsed back (#SBATCH
// directives, each step's srun options and payload), checked with bash -n, and run with
// a stand-in srun where behaviour matters.
#include <rapidjson/document.h>

#include "plan_test_support.h"
#include "trtllm_run/sdk/slurm/records.h"

using namespace plan_test;

namespace {

struct Prepared {
  Status status;
  JobSpec spec;
  JobPlan plan;
  std::string script;
  rapidjson::Document job_spec;
};

// Plans `request` with the built-in workflows and prepares it as `executor` into a fresh
// work dir under `root`.
Prepared PrepareJob(const TempDir& root, CaseRequest request, Placement placement,
                    const std::string& executor = "local_slurm") {
  Prepared out;
  if (!request.repo_root) request.repo_root = FakeRepo();
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  out.plan = plan.value();
  out.plan.repo_root = *request.repo_root;
  std::string work_dir = root / ("work_dirs/" + out.plan.model_name + "_20260101_000000");
  fs::create_directories(work_dir);
  out.spec.scenario = executor;
  out.spec.work_dir = work_dir;
  SlurmJobOptions options;
  options.executor = executor;
  options.remote = executor == "remote_slurm";
  Status validated = ValidateSlurmJob(request, out.plan, placement, options);
  out.status = PrepareSlurmJob(request, out.plan, placement, options, &out.spec);
  CHECK(validated.ok() == out.status.ok());
  if (out.status.ok()) {
    out.script = ReadText(out.spec.script_path);
    out.job_spec.Parse(ReadText(work_dir + "/job_spec.json").c_str());
    REQUIRE_FALSE(out.job_spec.HasParseError());
  }
  return out;
}

Placement ClusterA(const std::string& partition = "batch") {
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

const std::string kAcc = "tests/integration/defs/accuracy/test_llm_api_pytorch.py";

}  // namespace

TEST_CASE("Category 2: the pytest script", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.test_cmd = "pytest -v \"" + kAcc + "::TestDeepSeekV3Lite::test_bfloat16\"";
  Prepared job = PrepareJob(root, request, ClusterA());
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  const std::string wd = job.spec.work_dir;
  CHECK(job.spec.script_path == wd + "/deepseekv3lite_auto_test.slurm");

  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--job-name") == "team_a.deepseekv3lite_auto_test");
  CHECK(One(sbatch, "--output") == wd + "/deepseekv3lite_auto_test_%j.out");
  CHECK(One(sbatch, "--error") == wd + "/deepseekv3lite_auto_test_%j.err");
  CHECK(One(sbatch, "--nodes") == "1");
  CHECK(One(sbatch, "--ntasks") == "1");
  CHECK(One(sbatch, "--ntasks-per-node") == "1");
  CHECK(One(sbatch, "--gres") == "gpu:4");  // the test's 4 GPUs, not the partition's 8
  CHECK(One(sbatch, "--time") == "02:00:00");
  CHECK(One(sbatch, "--partition") == "batch");
  CHECK(One(sbatch, "--account") == "team_a");
  CHECK_THAT(job.script, Catch::Contains("set -uo pipefail"));
  CHECK_THAT(job.script, !Catch::Contains("set -e"));

  std::vector<StepCall> steps = Steps(job.script);
  REQUIRE(steps.size() == 2);
  const StepCall& install = steps[0];
  CHECK(install.name == "install");
  CHECK(install.Get("--ntasks") == "1");
  CHECK(install.Get("--ntasks-per-node") == "1");
  CHECK_FALSE(install.Has("--mpi"));
  const StepCall& run = steps[1];
  CHECK(run.name == "run");
  CHECK(run.Has("-l"));
  CHECK(run.Get("--ntasks") == "1");
  CHECK_FALSE(run.Has("--mpi"));  // pytest: no MPI plugin, MPI variables cleared
  CHECK(run.Get("--container-image") ==
        "urm.nvidia.com#sw-tensorrt-docker/tensorrt-llm-staging/tritondevel:"
        "x86_64-tritondevel-torch_skip-cca75fa-github-pr-9225-1249");
  CHECK(run.Get("--container-name") == "deepseekv3lite_auto_test");
  CHECK(install.Get("--container-name") == run.Get("--container-name"));
  CHECK(run.Get("--container-workdir") == FakeRepo());
  CHECK(run.Get("--kill-on-bad-exit") == "1");
  CHECK_THAT(run.Get("--container-mounts"),
             Catch::Contains(FakeRepo() + ":" + FakeRepo() + ",/data/models:/llm-models"));
  REQUIRE(run.command.size() == 3);
  CHECK(run.command[0] == "bash");
  CHECK(run.command[1] == "-c");
  const std::string& payload = run.command[2];
  CHECK_THAT(payload, Catch::Contains("nvidia-smi"));
  CHECK_THAT(payload, Catch::Contains("SLURM_PROCID) ;;"));
  CHECK_THAT(payload, Catch::Contains("PMI*|PMIX*|MPI*|OMPI*|SLURM*) unset"));
  CHECK_THAT(payload, Catch::Contains("export LLM_MODELS_ROOT=/llm-models\n"));
  CHECK_THAT(payload, Catch::EndsWith("\n" + *request.test_cmd));

  const rapidjson::Document& spec = job.job_spec;
  CHECK(Str(spec, "workflow_type") == "pytest");
  CHECK(Str(spec, "script_name") == "deepseekv3lite_auto_test.slurm");
  CHECK(Str(spec, "log_file_pattern") == "deepseekv3lite_auto_test_%j.out");
  CHECK(Str(spec, "job_name") == "team_a.deepseekv3lite_auto_test");
  CHECK(Str(spec, "container_image").find('#') == std::string::npos);  // canonical form
  CHECK(Str(spec, "docker_image") == Str(spec, "container_image"));
  CHECK(Str(spec, "execution_scenario") == "local_slurm");
  CHECK(Str(spec, "container_name") == "deepseekv3lite_auto_test");
  CHECK(Str(spec, "container_mounts") == run.Get("--container-mounts"));
  CHECK(spec["persistent_mode"].GetBool());
  CHECK(spec["node_count"].GetInt() == 1);
  CHECK(spec["required_devices"].GetInt() == 4);
  CHECK(spec["success_patterns"][0].GetString() == std::string("passed"));
  CHECK(spec["failure_patterns"].Size() == 2);
  const rapidjson::Value& params = spec["slurm_params"];
  CHECK(Str(params, "partition") == "batch");
  CHECK(Str(params, "account") == "team_a");
  CHECK(Str(params, "time_limit") == "02:00:00");
  CHECK(params["nodes"].GetInt() == 1);
  CHECK(params["ntasks"].GetInt() == 1);
  CHECK(params["gpus_per_node"].GetInt() == 4);
  CHECK(Str(params, "gres") == "gpu:4");
  CHECK(Str(params, "mpi_plugin") == "pmix_v5");
  REQUIRE(spec["slurm_env"].IsObject());
  CHECK(spec["slurm_env"]["partitions"].Size() == 5);
  CHECK(Str(spec["slurm_env"]["pmix"], "preferred") == "pmix_v5");
  CHECK(fs::exists(job.spec.work_dir + "/slurm_env.json"));
  CHECK(Str(spec, "slurm_env_file") == job.spec.work_dir + "/slurm_env.json");
}

TEST_CASE("Category 6: the bench script", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.bench_cmd =
      "trtllm-bench --model /m/Llama-3.1-8B prepare-dataset --output d.json && "
      "trtllm-bench --model /m/Llama-3.1-8B throughput --dataset d.json --tp 4";
  Prepared job = PrepareJob(root, request, ClusterA());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--nodes") == "1");
  CHECK(One(sbatch, "--ntasks") == "4");
  CHECK(One(sbatch, "--ntasks-per-node") == "4");
  CHECK(One(sbatch, "--gres") == "gpu:4");
  std::vector<StepCall> steps = Steps(job.script);
  REQUIRE(steps.size() == 3);
  const StepCall& prepare = steps[1];
  CHECK(prepare.name == "prepare");
  CHECK(prepare.Get("--nodes") == "1");
  CHECK(prepare.Get("--ntasks") == "1");
  CHECK_FALSE(prepare.Has("--mpi"));
  CHECK_THAT(prepare.command[2], Catch::Contains("SLURM_PROCID|SLURM_LOCALID) ;;"));
  CHECK_THAT(prepare.command[2],
             Catch::EndsWith("\ntrtllm-bench --model /m/Llama-3.1-8B prepare-dataset --output "
                             "d.json"));
  const StepCall& run = steps[2];
  CHECK(run.Get("--ntasks") == "4");
  CHECK(run.Get("--ntasks-per-node") == "4");
  CHECK(run.Get("--mpi") == "pmix_v5");  // the cluster's preferred plugin, not a bare pmix
  CHECK_THAT(run.command[2], !Catch::Contains("unset"));
  CHECK_THAT(run.command[2],
             Catch::EndsWith("\ntrtllm-llmapi-launch trtllm-bench --model /m/Llama-3.1-8B "
                             "throughput --dataset d.json --tp 4"));
  CHECK(Str(job.job_spec, "log_file_pattern") == "llama_3_1_8b_bench_%j.out");

  SECTION("world size above the partition's GPUs per node is refused") {
    request.bench_cmd = "trtllm-bench --model /m/Llama-3.1-8B throughput --tp 4 --pp 2";
    Prepared small = PrepareJob(root, request, ClusterA("small"));
    REQUIRE_FALSE(small.status.ok());
    CHECK(small.status.code() == StatusCode::kInvalidInput);
    CHECK_THAT(small.status.ToString(),
               Catch::Contains("multi-node trtllm-bench is not supported"));
    CHECK_THAT(small.status.ToString(), Catch::Contains("gpus_per_node = 4"));
  }
}

TEST_CASE("Category 5: the eval script", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.eval_cmd = "trtllm-eval --model /m/Qwen3-8B --tp_size 2 gsm8k";
  Prepared job = PrepareJob(root, request, ClusterA());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  std::vector<StepCall> steps = Steps(job.script);
  REQUIRE(steps.size() == 2);
  CHECK_THAT(steps[0].command[2], Catch::Contains("examples/trtllm-eval/requirements.txt"));
  const StepCall& run = steps[1];
  CHECK(run.Get("--ntasks") == "2");
  CHECK(run.Get("--mpi") == "pmix_v5");
  CHECK_THAT(run.command[2], Catch::Contains("nvidia-smi"));
  CHECK_THAT(run.command[2],
             Catch::EndsWith("\ntrtllm-llmapi-launch trtllm-eval --model /m/Qwen3-8B --tp_size 2 "
                             "gsm8k"));
  CHECK(Str(job.job_spec, "script_name") == "qwen3_8b_eval.slurm");

  SECTION("one task: no MPI and the variable cleanup, as for bench; no launcher") {
    request.eval_cmd = "trtllm-eval --model /m/Qwen3-8B gsm8k";
    Prepared one = PrepareJob(root, request, ClusterA());
    REQUIRE(one.status.ok());
    std::vector<StepCall> one_steps = Steps(one.script);
    const StepCall* eval = FindStep(one_steps, "run");
    REQUIRE(eval);
    CHECK_FALSE(eval->Has("--mpi"));
    CHECK_THAT(eval->command[2], Catch::Contains("SLURM_PROCID|SLURM_LOCALID) ;;"));
    CHECK_THAT(eval->command[2], Catch::EndsWith("\ntrtllm-eval --model /m/Qwen3-8B gsm8k"));
  }
}

TEST_CASE("Category 3: the custom script and its run script", "[render][slurm]") {
  TempDir root;
  WriteText(root / "scripts/my job.sh", "echo from script\n");
  CaseRequest request;
  request.custom_script = root / "scripts/my job.sh";
  request.custom_env = "BATCH=32 MSG='two words'";
  request.required_devices = 2;
  Prepared job = PrepareJob(root, request, ClusterA());
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  const std::string run_script = job.spec.work_dir + "/slurm_run_custom.sh";
  REQUIRE(fs::exists(run_script));
  CHECK((fs::status(run_script).permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(BashSyntaxError(run_script).empty());
  CHECK_THAT(job.script, Catch::Contains("export CUSTOM_COMMAND='bash '\\''" + root.path() +
                                         "/scripts/my job.sh'\\'''\n"));
  CHECK_THAT(job.script, Catch::Contains("export CUSTOM_ENV='BATCH=32 MSG='\\''two words'\\'''\n"));
  CHECK_THAT(job.script, Catch::Contains("export llmSrcNode=" + FakeRepo() + "\n"));
  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--ntasks") == "2");
  CHECK(One(sbatch, "--gres") == "gpu:2");
  std::vector<StepCall> steps = Steps(job.script);
  const StepCall* run = FindStep(steps, "run");
  REQUIRE(run);
  CHECK(run->command == std::vector<std::string>{"bash", run_script});
  CHECK(run->Get("--ntasks") == "2");
  CHECK_FALSE(run->Has("--mpi"));  // single node
  CHECK_THAT(run->Get("--container-mounts"),
             Catch::EndsWith("," + root.path() + "/scripts:" + root.path() + "/scripts"));
  CHECK(Str(job.job_spec, "log_file_pattern") == "custom_custom_%j.out");
  CHECK(job.job_spec["success_patterns"].Size() == 0);

  SECTION("more GPUs than one node of the partition is refused with the spec's text") {
    request.required_devices = 8;
    Prepared small = PrepareJob(root, request, ClusterA("small"));
    REQUIRE_FALSE(small.status.ok());
    CHECK(small.status.message() ==
          "required_devices = 8 requires 2 nodes (gpus_per_node = 4), but custom commands are "
          "limited to 1 node.");
    CHECK_THAT(small.status.hint(), Catch::StartsWith("Reduce required_devices to at most 4."));
  }
}

TEST_CASE("pytest needing more GPUs than a node of the partition spans nodes as CI runs it",
          "[render][slurm]") {
  // Before: refused ("pytest does not support multi-node execution").
  TempDir root;
  CaseRequest request;
  request.test_cmd = "pytest " + kAcc + "::TestQwen3_235B::test_fp8";
  Prepared job = PrepareJob(root, request, ClusterA("small"));
  INFO(job.status.ToString() << "\n" << job.script);
  REQUIRE(job.status.ok());
  CHECK(One(Sbatch(job.script), "--nodes") == "2");
  CHECK(One(Sbatch(job.script), "--ntasks") == "8");
  CHECK(One(Sbatch(job.script), "--ntasks-per-node") == "4");
  CHECK(One(Sbatch(job.script), "--gres") == "gpu:4");
  const std::vector<StepCall> steps = Steps(job.script);
  const StepCall* run = FindStep(steps, "run");
  REQUIRE(run != nullptr);
  CHECK(run->Get("--nodes") == "2");
  CHECK(run->Get("--ntasks") == "8");
  CHECK(run->Get("--mpi") == "pmix_v5");
  CHECK_THAT(run->command[2], Catch::EndsWith("\ntrtllm-llmapi-launch pytest " + kAcc +
                                              "::TestQwen3_235B::test_fp8"));
  CHECK_THAT(run->command[2], !Catch::Contains("compgen -e"));
}

TEST_CASE("partition without GPU gres, unknown pmix: no --gres line, bare pmix",
          "[render][slurm]") {
  TempDir root;
  CaseRequest bench;
  bench.bench_cmd = "trtllm-bench --model m throughput --tp 2";
  Placement placement = ClusterA();
  placement.slurm_env->pmix_preferred.reset();
  Prepared mpi = PrepareJob(root, bench, placement);
  REQUIRE(mpi.status.ok());
  CHECK(FindStep(Steps(mpi.script), "run")->Get("--mpi") == "pmix");
  CHECK_THAT(Str(mpi.job_spec, "resolution_notes"), Catch::Contains("no pmix.preferred"));

  // No GPU count asked for: the default runs without --gres (tp x pp there is refused).
  CaseRequest request;
  request.custom_cmd = "./cpu_app";
  Prepared job = PrepareJob(root, request, ClusterA("cpu"));
  REQUIRE(job.status.ok());
  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--gres") == "<absent>");
  CHECK(job.script.find("--gres") == std::string::npos);
  CHECK(Str(job.job_spec["slurm_params"], "gres").empty());
  CHECK_THAT(Str(job.job_spec, "resolution_notes"),
             Catch::Contains("partition cpu has no GPU GRES (gres (null)): the job runs without "
                             "--gres"));
}

TEST_CASE("container_runtime none, skip_install, time_limit", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.test_cmd = "pytest " + kAcc + "::TestLlama3_1_8BInstruct::test_fp8_tp2";
  request.container_runtime = "none";
  request.skip_install = true;
  request.time_limit = "0-07:30:00";  // within batch's MaxTime 08:00:00
  Placement placement = ClusterA();
  placement.llm_models_root.clear();
  Prepared job = PrepareJob(root, request, placement);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  CHECK(One(Sbatch(job.script), "--time") == "0-07:30:00");
  std::vector<StepCall> steps = Steps(job.script);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].name == "run");
  CHECK(steps[0].Get("--chdir") == FakeRepo());
  for (const auto& [option, value] : steps[0].options) {
    CHECK(option.rfind("--container", 0) == std::string::npos);
  }
  // No container: the models are where they are on the host.
  CHECK_THAT(steps[0].command[2], Catch::Contains("export LLM_MODELS_ROOT=/data/models\n"));
  CHECK(Str(job.job_spec, "container_runtime") == "none");
  CHECK_FALSE(job.job_spec["skip_install"].IsNull());
  CHECK(job.job_spec["skip_install"].GetBool());

  SECTION("an unknown runtime or time limit is refused") {
    request.container_runtime = "docker";
    Prepared bad = PrepareJob(root, request, ClusterA());
    REQUIRE_FALSE(bad.status.ok());
    CHECK_THAT(bad.status.ToString(), Catch::Contains("container_runtime 'docker'"));
    request.container_runtime = "pyxis";
    request.time_limit = "two hours";
    bad = PrepareJob(root, request, ClusterA());
    REQUIRE_FALSE(bad.status.ok());
    CHECK_THAT(bad.status.ToString(), Catch::Contains("time_limit 'two hours'"));
  }
}

TEST_CASE("partition, account and slurm_env are validated", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.custom_cmd = "true";
  Placement placement = ClusterA("");
  request.partition = "gpu-huge";
  Prepared job = PrepareJob(root, request, placement);
  REQUIRE_FALSE(job.status.ok());
  CHECK(job.status.message() == "partition 'gpu-huge' does not exist on this cluster");
  CHECK(job.status.hint() == "valid partitions: batch, small, grace, cpu, maint");

  request.partition.reset();  // the default partition
  request.account = "team_z";
  job = PrepareJob(root, request, placement);
  REQUIRE_FALSE(job.status.ok());
  CHECK_THAT(job.status.message(), Catch::Contains("account 'team_z'"));
  CHECK(job.status.hint() == "valid accounts: team_a, team_b");

  request.account = "team_b";
  job = PrepareJob(root, request, placement);
  REQUIRE(job.status.ok());
  CHECK(Str(job.job_spec, "partition") == "batch");
  CHECK(Str(job.job_spec, "account") == "team_b");
  CHECK(Str(job.job_spec, "job_name") == "team_b.custom_custom");

  job = PrepareJob(root, request, Placement());
  REQUIRE_FALSE(job.status.ok());
  CHECK_THAT(job.status.hint(), Catch::Contains("--slurm-env FILE"));

  request.slurm_env_file = FixturePath("slurm_env/cluster_a.json");  // the fallback
  Placement bare;
  bare.llm_models_root = "/llm-models";
  request.models_path = "/data/models";
  job = PrepareJob(root, request, bare);
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(Str(job.job_spec["slurm_params"], "partition") == "batch");
}

TEST_CASE("remote_slurm: remote paths, cluster mounts, no persistent-mode fields",
          "[render][slurm][remote]") {
  TempDir root;
  WriteText(root / "job.sh", "echo remote\n");
  CaseRequest request;
  request.custom_script = root / "job.sh";
  request.slurm_env_file = FixturePath("slurm_env/remote_b.json");
  request.repo_url = "https://github.com/NVIDIA/TensorRT-LLM.git";
  request.repo_branch = "main";
  request.slurm_cluster = "remote_b";
  Placement placement;
  placement.llm_models_root = "/models";
  Prepared job = PrepareJob(root, request, placement, "remote_slurm");
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  CHECK(BashSyntaxError(job.spec.script_path).empty());
  const std::string remote_repo = "/lustre/users/bob/work/TensorRT-LLM";
  const std::string remote_wd =
      remote_repo + "/work_dirs/" + fs::path(job.spec.work_dir).filename().string();
  CHECK(job.spec.remote_repo_path == remote_repo);
  CHECK(job.spec.remote_work_dir == remote_wd);
  CHECK(job.spec.script_path == job.spec.work_dir + "/custom_custom.slurm");  // local path

  auto sbatch = Sbatch(job.script);
  CHECK(One(sbatch, "--output") == remote_wd + "/custom_custom_%j.out");
  CHECK(One(sbatch, "--partition") == "gb200");
  CHECK(One(sbatch, "--account") == "acct_remote");
  CHECK_THAT(job.script, Catch::Contains("export llmSrcNode=" + remote_repo + "\n"));
  CHECK_THAT(job.script,
             Catch::Contains("export CUSTOM_COMMAND='bash " + remote_wd + "/scripts/job.sh'\n"));
  CHECK(job.script.find(root.path()) == std::string::npos);  // no local path in the script
  std::vector<StepCall> steps = Steps(job.script);
  const StepCall* run = FindStep(steps, "run");
  REQUIRE(run);
  CHECK(run->command == std::vector<std::string>{"bash", remote_wd + "/slurm_run_custom.sh"});
  CHECK(run->Get("--container-workdir") == remote_repo);
  CHECK(run->Get("--container-mounts") == "/lustre/users/bob:/lustre/users/bob," + remote_repo +
                                              ":" + remote_repo +
                                              ",/lustre/models:/models,/lustre/datasets:/datasets");
  CHECK_THAT(run->Get("--container-image"), Catch::Contains(":sbsa-"));  // aarch64 partition

  const rapidjson::Document& spec = job.job_spec;
  CHECK_FALSE(spec["persistent_mode"].GetBool());
  CHECK(Str(spec, "container_name").empty());
  CHECK(Str(spec, "container_mounts").empty());
  CHECK(Str(spec, "ssh_host") == "bob@login-remote-b.example.com");
  CHECK(Str(spec, "slurm_user") == "bob");
  CHECK(Str(spec, "remote_cwd") == "/lustre/users/bob/work");
  CHECK(Str(spec, "repo_url") == "https://github.com/NVIDIA/TensorRT-LLM.git");
  CHECK(Str(spec, "repo_branch") == "main");
  CHECK(Str(spec, "slurm_cluster") == "remote_b");
  CHECK(Str(spec, "execution_scenario") == "remote_slurm");
  std::vector<std::string> extra;
  for (const auto& file : spec["extra_files"].GetArray()) extra.push_back(file.GetString());
  CHECK(extra == std::vector<std::string>{job.spec.work_dir + "/slurm_run_custom.sh",
                                          job.spec.work_dir + "/scripts/job.sh"});
  CHECK(ReadText(job.spec.work_dir + "/scripts/job.sh") == "echo remote\n");

  SECTION("without remote_repo_path or remote_cwd there is nothing to run in") {
    Placement none;
    none.slurm_env = LoadEnv("remote_b");
    none.slurm_env->remote_cwd.reset();
    none.llm_models_root = "/models";
    Prepared bad = PrepareJob(root, request, none, "remote_slurm");
    REQUIRE_FALSE(bad.status.ok());
    CHECK_THAT(bad.status.hint(), Catch::Contains("--remote-repo-path"));
  }
}

TEST_CASE("the cluster's enroot policy decides the --container-image form", "[render][slurm]") {
  TempDir root;
  CaseRequest request;
  request.custom_cmd = "true";
  request.container_image = "registry.example.com/team/image:1";
  Placement placement = ClusterA();
  Prepared job = PrepareJob(root, request, placement);
  REQUIRE(job.status.ok());
  CHECK(FindStep(Steps(job.script), "run")->Get("--container-image") ==
        "registry.example.com#team/image:1");
  placement.cluster = ClusterEntry();
  placement.cluster->enroot_registry_rewrite = "";  // this cluster's pyxis takes host/path
  job = PrepareJob(root, request, placement);
  REQUIRE(job.status.ok());
  CHECK(FindStep(Steps(job.script), "run")->Get("--container-image") ==
        "registry.example.com/team/image:1");
  CHECK(Str(job.job_spec, "container_image") == "registry.example.com/team/image:1");
}

TEST_CASE("a failed step ends the job with its real exit code", "[render][slurm][run]") {
  TempDir root;
  WriteShims(root / "shims");
  CaseRequest request;
  request.repo_root = root / "repo";
  CopyFakeRepo(root / "repo");
  request.bench_cmd =
      "echo preparing; exit 3 && trtllm-bench --model m throughput --tp 1; echo ran-anyway";
  request.skip_install = true;
  Prepared job = PrepareJob(root, request, ClusterA());
  REQUIRE(job.status.ok());
  CommandOutput out = RunScript(root / "shims", {"bash", job.spec.script_path});
  INFO(out.stdout_text << out.stderr_text);
  CHECK(out.exit_code == 3);
  CHECK(StepOutput(out.stdout_text, "prepare") == "preparing\n");
  CHECK_THAT(out.stdout_text, Catch::Contains("[trtllm-run] step run: skipped"));
  CHECK(out.stdout_text.find("ran-anyway") == std::string::npos);
  const std::string token = EndMarkerTokenOfScript(ReadText(job.spec.script_path));
  REQUIRE(token.size() == 32);
  CHECK_THAT(out.stdout_text,
             Catch::EndsWith("[trtllm-run] job finished with exit code 3 (token " + token + ")\n"));

  SECTION("the end marker's token is new per script and in no step's environment or argv") {
    // Every process's argv and the step's environment, as the payload can see them.
    request.bench_cmd =
        "env && for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <\"$f\"; echo; done 2>/dev/null; "
        "echo run trtllm-bench --tp 1";
    Prepared seen = PrepareJob(root, request, ClusterA());
    REQUIRE(seen.status.ok());
    const std::string script = ReadText(seen.spec.script_path);
    const std::string own = EndMarkerTokenOfScript(script);
    REQUIRE(own.size() == 32);
    CHECK(own != token);
    CommandOutput ran = RunScript(root / "shims", {"bash", seen.spec.script_path});
    INFO(ran.stdout_text);
    CHECK(ran.exit_code == 0);
    CHECK_THAT(ran.stdout_text, Catch::Contains("PATH="));  // it did print its environment
    // Only the end line shows the token.
    CHECK(ran.stdout_text.find(own) == ran.stdout_text.rfind(own));
    CHECK_THAT(ran.stdout_text,
               Catch::EndsWith("[trtllm-run] job finished with exit code 0 (token " + own + ")\n"));
    // The token is on the script's echo line only.
    CHECK(script.find(own) == script.rfind(own));
  }

  SECTION("and a passing job ends with 0") {
    request.bench_cmd = "echo prep && echo run trtllm-bench --tp 1";
    Prepared ok = PrepareJob(root, request, ClusterA());
    REQUIRE(ok.status.ok());
    CommandOutput passed = RunScript(root / "shims", {"bash", ok.spec.script_path});
    CHECK(passed.exit_code == 0);
    CHECK(StepOutput(passed.stdout_text, "run") == "run trtllm-bench --tp 1\n");
  }
}
