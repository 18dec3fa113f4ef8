// How jobs are launched, through the real trtllm-run binary: custom commands run under
// nounset, pipefail and the original run script's ERR trap on every executor (the real Slurm
// cluster, this host, Docker); one-task trtllm-eval steps run without MPI and without srun's
// MPI/Slurm variables; a trtllm-bench sized with --tp_size gets its GPUs; and the multi-node
// eval fallback is sized per node of the partition and refused unless the request opts in.
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

rapidjson::Document ReadJobSpec(const std::string& work_dir) {
  rapidjson::Document doc;
  doc.Parse(ReadTextFile(work_dir + "/job_spec.json").c_str());
  return doc;
}

std::string Fixture(const std::string& name) {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / name)
      .lexically_normal()
      .string();
}

// `run` (or `plan`) on the test cluster's batch partition without containers.
std::vector<std::string> SlurmArgs(const std::string& subcommand, const std::string& repo,
                                   std::vector<std::string> command) {
  std::vector<std::string> args = {
      subcommand, "--scenario",          "local_slurm", "--repo-root",
      repo,       "--partition",         "batch",       "--skip-install",
      "true",     "--container-runtime", "none",        "--container-image",
      "none"};
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

struct Verdict {
  CliRun run;
  std::string status;
  std::string work_dir;
};

Verdict RunCustom(const std::vector<std::string>& scenario_args, const std::string& repo,
                  const std::string& command, double timeout_seconds,
                  const std::vector<std::pair<std::string, std::string>>& env) {
  CliOptions options;
  options.env = env;
  options.args = {"run", "--repo-root", repo, "--custom-cmd", command};
  options.args.insert(options.args.end(), scenario_args.begin(), scenario_args.end());
  options.unset_env = {"TRTLLM_RUN_SURELY_UNSET"};
  options.timeout_seconds = timeout_seconds;
  Verdict verdict;
  verdict.run = RunCli(options);
  verdict.work_dir = FindSingleWorkDir(repo);
  rapidjson::Document result = ReadResultJson(verdict.work_dir);
  verdict.status = Str(result, "status");
  return verdict;
}

// The two ways a custom command must fail that plain `bash -c` lets pass.
const char kFailingPipeline[] = "echo first-stage-fails; false | cat";
const char kUnsetVariable[] = "echo \"value=${TRTLLM_RUN_SURELY_UNSET}\"; echo still-ran";

void CheckCustomSemantics(const std::vector<std::string>& scenario_args, double timeout_seconds,
                          const std::vector<std::pair<std::string, std::string>>& env = {}) {
  SECTION("a pipeline whose first stage fails is FAILED (pipefail)") {
    TempDir repo("trtllm_launch_pipefail");
    Verdict v = RunCustom(scenario_args, repo.path(), kFailingPipeline, timeout_seconds, env);
    INFO(v.run.Describe());
    CHECK(v.run.exit_code == 1);
    CHECK(v.status == "FAILED");
    CHECK_THAT(v.run.stdout_text, Catch::Contains("first-stage-fails"));
  }
  SECTION("an unset variable is FAILED (nounset)") {
    TempDir repo("trtllm_launch_nounset");
    Verdict v = RunCustom(scenario_args, repo.path(), kUnsetVariable, timeout_seconds, env);
    INFO(v.run.Describe());
    CHECK(v.run.exit_code == 1);
    CHECK(v.status == "FAILED");
    CHECK(v.run.stdout_text.find("value=") == std::string::npos);
    CHECK(v.run.stdout_text.find("still-ran") == std::string::npos);
  }
  SECTION("a failing line ends the command with its exit code (the original's ERR trap)") {
    TempDir repo("trtllm_launch_errtrap");
    Verdict v =
        RunCustom(scenario_args, repo.path(), "false; echo kept-going | cat", timeout_seconds, env);
    INFO(v.run.Describe());
    CHECK(v.run.exit_code == 1);
    CHECK(v.status == "FAILED");
    CHECK(v.run.stdout_text.find("kept-going") == std::string::npos);
  }
}

}  // namespace

TEST_CASE("custom commands on local_slurm: nounset and pipefail, as the original run script",
          "[slurm][cli]") {
  EnsureSlurm();
  CheckCustomSemantics({"--scenario", "local_slurm", "--partition", "batch", "--skip-install",
                        "true", "--container-runtime", "none", "--container-image", "none"},
                       180);
}

TEST_CASE("custom commands on local_direct: the same nounset and pipefail", "[local_direct][cli]") {
  CheckCustomSemantics({"--scenario", "local_direct"}, 60);
}

TEST_CASE("custom commands on local_docker: the same nounset and pipefail", "[docker]") {
  TempDir home("trtllm_launch_home");
  CheckCustomSemantics({"--scenario", "local_docker", "--container-image",
                        "trtllm-run-test:busybox", "--docker-pull", "never", "--build-project",
                        "false", "--skip-install", "true", "--kill-grace", "2"},
                       180, {{"HOME", home.path()}});  // home is bind-mounted: keep it small
}

TEST_CASE("a one-task trtllm-eval job runs without MPI and without srun's MPI/Slurm variables",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_launch_eval");
  TempDir bin("trtllm_launch_eval_bin");
  // A stand-in trtllm-eval: prints the variables it was started with, then a score.
  WriteTextFile(bin.path() + "/trtllm-eval",
                "#!/bin/bash\n"
                "for v in SLURM_JOB_ID SLURM_STEP_ID SLURM_NTASKS PMIX_RANK PMIX_MCA_marker "
                "OMPI_MCA_marker MPI_MARKER PMI_MARKER SLURM_PROCID SLURM_LOCALID; do\n"
                "  echo \"eval-env $v=${!v-unset}\"\n"
                "done\n"
                "echo 'accuracy: 0.75'\n");
  ::chmod((bin.path() + "/trtllm-eval").c_str(), 0755);
  CliOptions options;
  options.args = SlurmArgs("run", repo.path(), {"--eval-cmd", "trtllm-eval --model /m/x gsm8k"});
  // Reach the job through sbatch's environment export, as a user's shell's would.
  options.env = {{"PATH", bin.path() + ":" + std::string(::getenv("PATH"))},
                 {"PMIX_MCA_marker", "1"},
                 {"OMPI_MCA_marker", "1"},
                 {"MPI_MARKER", "1"},
                 {"PMI_MARKER", "1"}};
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE_FALSE(work_dir.empty());
  CHECK(Str(ReadResultJson(work_dir), "status") == "PASSED");
  const std::string script = ReadTextFile(work_dir + "/x_eval.slurm");
  REQUIRE_FALSE(script.empty());
  CHECK(script.find("--mpi") == std::string::npos);
  const std::string& out = run.stdout_text;
  for (const char* gone : {"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_NTASKS", "PMIX_RANK",
                           "PMIX_MCA_marker", "OMPI_MCA_marker", "MPI_MARKER", "PMI_MARKER"}) {
    CHECK_THAT(out, Catch::Contains("eval-env " + std::string(gone) + "=unset"));
  }
  CHECK_THAT(out, Catch::Contains("eval-env SLURM_PROCID=0"));
  CHECK_THAT(out, Catch::Contains("eval-env SLURM_LOCALID=0"));
  CHECK_THAT(out, Catch::Contains("accuracy: 0.75"));
}

TEST_CASE("trtllm-bench --tp_size 2 plans 2 GPUs and 2 tasks on the test cluster", "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_launch_bench");
  CliOptions options;
  options.args = SlurmArgs(
      "plan", repo.path(),
      {"--bench-cmd", "trtllm-bench --model /m/Llama-3.1-8B throughput --tp_size 2 --pp_size 1"});
  options.timeout_seconds = 120;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE_FALSE(work_dir.empty());
  rapidjson::Document spec = ReadJobSpec(work_dir);
  REQUIRE(spec.IsObject());
  CHECK(spec["required_devices"].GetInt() == 2);
  CHECK(spec["slurm_params"]["ntasks"].GetInt() == 2);
  CHECK(Str(spec["slurm_params"], "gres") == "gpu:2");  // the cluster's batch partition has GRES
  const std::string script = ReadTextFile(work_dir + "/llama_3_1_8b_bench.slurm");
  CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:2\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --ntasks=2\n"));
  CHECK_THAT(script, Catch::Contains("\n    --ntasks=2 \\\n"));  // the run step's srun
  CHECK_THAT(script, Catch::Contains("trtllm-llmapi-launch trtllm-bench"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Devices: 2 GPUs across 1 node"));
}

TEST_CASE("multi-node eval fallback: 8 GPUs per node on 2 nodes, refused unless opted in",
          "[plan][cli]") {
  TempDir dir("trtllm_launch_fallback");
  const std::string repo = dir.path() + "/TensorRT-LLM";
  fs::copy(Fixture("trtllm"), repo, fs::copy_options::recursive);
  // Partition batch of cluster_a: 8 GPUs per node.
  std::vector<std::string> args = {
      "plan",
      "--repo-root",
      repo,
      "--scenario",
      "local_slurm",
      "--slurm-env-file",
      Fixture("slurm_env/cluster_a.json"),
      "--partition",
      "batch",
      "--llm-models-root",
      "/models",
      "--models-path",
      "/data/models",
      "--eval-cmd",
      "trtllm-eval --model /m/DeepSeek-R1 --tp_size 8 --pp_size 2 gsm8k"};
  CliOptions options;
  options.timeout_seconds = 60;

  SECTION("by default: exit 2, the sizes, why and the alternatives; no work dir") {
    options.args = args;
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text,
               Catch::Contains("world_size 16 (tp_size 8 x pp_size 2) needs 2 nodes of 8 GPUs"));
    CHECK_THAT(run.stderr_text,
               Catch::Contains("forwards accuracy settings only for disaggregated configs"));
    CHECK_THAT(run.stderr_text, Catch::Contains("tp_size x pp_size <= 8"));
    CHECK_THAT(run.stderr_text, Catch::Contains("--perf-config-yaml"));
    CHECK_THAT(run.stderr_text, Catch::Contains("--eval-perf-fallback true"));
    std::error_code error;
    CHECK((!fs::exists(repo + "/work_dirs", error) || fs::is_empty(repo + "/work_dirs", error)));
  }
  SECTION("--eval-perf-fallback true: 2 nodes of 8 in job_spec and the summary; it says so") {
    args.insert(args.end(), {"--eval-perf-fallback", "true"});
    options.args = args;
    CliRun run = RunCli(options);
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    CHECK_THAT(run.stdout_text,
               Catch::Contains("Devices: 16 GPUs across 2 nodes (8 per node, 16 in total)"));
    CHECK_THAT(run.stdout_text, Catch::Contains("The accuracy run is NOT guaranteed"));
    std::string work_dir = FindSingleWorkDir(repo);
    REQUIRE_FALSE(work_dir.empty());
    rapidjson::Document spec = ReadJobSpec(work_dir);
    REQUIRE(spec.IsObject());
    CHECK(spec["required_devices_per_node"].GetInt() == 8);
    CHECK(spec["total_required_devices"].GetInt() == 16);
    CHECK(spec["node_count"].GetInt() == 2);
    CHECK(spec["slurm_params"]["ntasks_per_node"].GetInt() == 8);
    CHECK_THAT(Str(spec, "eval_accuracy_run"), Catch::StartsWith("not guaranteed"));
    const std::string launch = ReadTextFile(work_dir + "/slurm_launch.sh");
    CHECK_THAT(launch, Catch::Contains("#SBATCH --nodes=2\n"));
    CHECK_THAT(launch, Catch::Contains("#SBATCH --ntasks-per-node=8\n"));
  }
}

}  // namespace trtllm_run_test
