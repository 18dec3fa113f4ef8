// `trtllm-run plan` through the real CLI: it writes the work dir (job_spec.json,
// slurm_env.json, the script) and prints the summary without running anything; bad
// input exits 2 with a message naming the value and what is allowed, leaving no work dir.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / name)
      .lexically_normal()
      .string();
}

// A writable copy of the fake TensorRT-LLM tree.
struct Repo {
  Repo() : dir("trtllm_run_plan_cli") {
    path = dir.path() + "/TensorRT-LLM";
    fs::copy(Fixture("trtllm"), path, fs::copy_options::recursive);
  }
  TempDir dir;
  std::string path;
};

CliRun Plan(const Repo& repo, std::vector<std::string> args) {
  std::vector<std::string> full = {"plan", "--repo-root", repo.path};
  full.insert(full.end(), args.begin(), args.end());
  CliOptions options;
  options.args = full;
  options.timeout_seconds = 60;
  return RunCli(options);
}

bool NoWorkDir(const Repo& repo) {
  std::error_code error;
  fs::path dir = fs::path(repo.path) / "work_dirs";
  return !fs::exists(dir, error) || fs::is_empty(dir, error);
}

rapidjson::Document JobSpec(const std::string& work_dir) {
  rapidjson::Document doc;
  doc.Parse(ReadTextFile(work_dir + "/job_spec.json").c_str());
  return doc;
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

int BashN(const std::string& path) {
  return std::system(("bash -n '" + path + "' 2>/dev/null").c_str());
}

const std::string kAcc = "tests/integration/defs/accuracy/test_llm_api_pytorch.py";
const std::string kSlurm = "--slurm-env-file";

}  // namespace

TEST_CASE("plan: a pytest case on local_slurm", "[plan][cli]") {
  Repo repo;
  CliRun run = Plan(
      repo, {"--test-cmd", "pytest " + kAcc + "::TestDeepSeekV3Lite::test_bfloat16", "--scenario",
             "local_slurm", kSlurm, Fixture("slurm_env/cluster_a.json"), "--llm-models-root",
             "/models", "--models-path", "/data/models", "--partition", "small"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  std::string wd = FindSingleWorkDir(repo.path);
  REQUIRE_FALSE(wd.empty());
  CHECK(fs::path(wd).filename().string().rfind("deepseekv3lite_", 0) == 0);
  const std::string script = wd + "/deepseekv3lite_auto_test.slurm";
  CHECK_THAT(run.stdout_text, Catch::Contains("Generated: " + wd + "/job_spec.json\n"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Script: " + script + "\n"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Workflow: pytest\n"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Model: deepseekv3lite\n"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Docker image: urm.nvidia.com/sw-tensorrt-docker/"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Devices: 4 GPUs across 1 node"));
  CHECK_THAT(run.stdout_text, Catch::Contains("skip_less_device(4) on class TestDeepSeekV3Lite"));
  CHECK(BashN(script) == 0);
  CHECK(fs::exists(wd + "/slurm_env.json"));
  rapidjson::Document spec = JobSpec(wd);
  REQUIRE(spec.IsObject());
  CHECK(Str(spec, "scenario") == "local_slurm");
  CHECK(Str(spec, "script_path") == script);
  CHECK(Str(spec["slurm_params"], "partition") == "small");
  CHECK(Str(spec["slurm_params"], "gres") == "gpu:4");
  CHECK(spec["slurm_env"].IsObject());
  CHECK_FALSE(fs::exists(wd + "/result.json"));  // nothing ran
}

TEST_CASE("plan: a test-list line's TIMEOUT (N) on local_slurm sizes the job's limits",
          "[plan][cli][list]") {
  Repo repo;
  // 180 min for the test: pytest-timeout --timeout=10800; the job 3h + 30m install + 5m.
  CliRun run = Plan(repo, {"--test-cmd",
                           "accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_bfloat16 "
                           "TIMEOUT (180) ISOLATION",
                           "--scenario", "local_slurm", kSlurm, Fixture("slurm_env/cluster_a.json"),
                           "--partition", "batch", "--llm-models-root", "/models", "--models-path",
                           "/data/models"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document spec = JobSpec(FindSingleWorkDir(repo.path));
  REQUIRE(spec.IsObject());
  CHECK(spec["monitor_timeout_seconds"].GetInt() == 12900);
  CHECK(Str(spec["slurm_params"], "time_limit") == "03:35:00");
  CHECK_THAT(run.stdout_text, Catch::Contains("time_limit 03:35:00: the job's monitor_timeout"));
  CHECK_THAT(
      ReadTextFile(Str(spec, "script_path")),
      Catch::Contains("pytest --timeout=10800 "
                      "accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_bfloat16"));
  CHECK_THAT(run.stdout_text, Catch::Contains("Devices: 4 GPUs across 1 node"));

  // Above the partition's MaxTime (small: 4h), the MaxTime caps it, with a note.
  Repo small;
  CliRun capped =
      Plan(small,
           {"--test-cmd",
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_bfloat16 "
            "TIMEOUT (300)",
            "--scenario", "local_slurm", kSlurm, Fixture("slurm_env/cluster_a.json"), "--partition",
            "small", "--llm-models-root", "/models", "--models-path", "/data/models"});
  INFO(capped.Describe());
  REQUIRE(capped.exit_code == 0);
  rapidjson::Document capped_spec = JobSpec(FindSingleWorkDir(small.path));
  CHECK(Str(capped_spec["slurm_params"], "time_limit") == "04:00:00");
}

TEST_CASE("plan: remote_slurm, bench and perf-sanity", "[plan][cli]") {
  Repo repo;
  SECTION("remote_slurm bench") {
    CliRun run = Plan(
        repo, {"--bench-cmd", "trtllm-bench --model /m/Llama-3.1-8B throughput --tp 2",
               "--scenario", "remote_slurm", kSlurm, Fixture("slurm_env/remote_b.json"),
               "--llm-models-root", "/models", "--remote-repo-path",
               "/lustre/users/bob/TensorRT-LLM", "--ssh-host", "bob@login-remote-b.example.com"});
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    std::string wd = FindSingleWorkDir(repo.path);
    REQUIRE_FALSE(wd.empty());
    rapidjson::Document spec = JobSpec(wd);
    CHECK(Str(spec, "remote_work_dir") ==
          "/lustre/users/bob/TensorRT-LLM/work_dirs/" + fs::path(wd).filename().string());
    CHECK(Str(spec, "ssh_host") == "bob@login-remote-b.example.com");
    CHECK_FALSE(spec["persistent_mode"].GetBool());
    std::string script = ReadTextFile(wd + "/llama_3_1_8b_bench.slurm");
    CHECK_THAT(script, Catch::Contains("--container-workdir=/lustre/users/bob/TensorRT-LLM"));
    CHECK_THAT(script, Catch::Contains("--mpi=pmix "));
    CHECK(BashN(wd + "/llama_3_1_8b_bench.slurm") == 0);
  }
  SECTION("perf-sanity keeps submit.py's launch script") {
    CliRun run = Plan(
        repo, {"--test-cmd",
               "pytest perf/test_perf_sanity.py -v "
               "'test_e2e[disagg-e2e-gb200_deepseek-r1-fp4_1k1k_con1_ctx1_dep4_gen1_tep8_eplb0_"
               "mtp3_ccb-UCX]'",
               "--scenario", "local_slurm", kSlurm, Fixture("slurm_env/cluster_a.json"),
               "--partition", "grace", "--llm-models-root", "/models", "--models-path", "/data"});
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    std::string wd = FindSingleWorkDir(repo.path);
    REQUIRE_FALSE(wd.empty());
    CHECK_THAT(run.stdout_text, Catch::Contains("Workflow: perf_sanity\n"));
    CHECK_THAT(run.stdout_text, Catch::Contains("Devices: 12 GPUs across 3 nodes"));
    CHECK_THAT(run.stdout_text, Catch::Contains("Script: " + wd + "/slurm_launch.sh\n"));
    CHECK(BashN(wd + "/slurm_launch.sh") == 0);
    CHECK_THAT(ReadTextFile(wd + "/slurm_launch.sh"), Catch::Contains("#SBATCH --nodes=3\n"));
  }
  SECTION("local_direct: a job spec, no script") {
    CliRun run = Plan(repo, {"--custom-cmd", "echo hi", "--scenario", "local_direct"});
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    std::string wd = FindSingleWorkDir(repo.path);
    REQUIRE_FALSE(wd.empty());
    CHECK_THAT(run.stdout_text, Catch::Contains("Script: (none: local_direct runs the command"));
    CHECK(Str(JobSpec(wd), "direct_cmd") == "echo hi");
    CHECK_FALSE(fs::exists(wd + "/result.json"));
  }
}

TEST_CASE("plan: bad input exits 2, names the value and what is allowed, leaves no work dir",
          "[plan][cli]") {
  Repo repo;
  const std::string env_a = Fixture("slurm_env/cluster_a.json");
  const std::string perf =
      "pytest perf/test_perf_sanity.py 'test_e2e[aggr-gpt_oss_120b_fp4_blackwell-";
  struct Bad {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> messages;
  };
  const std::vector<Bad> cases = {
      {"conflicting workflow flags",
       {"--bench-cmd", "trtllm-bench --model m throughput", "--eval-cmd",
        "trtllm-eval --model m gsm8k"},
       {"bench_cmd", "eval_cmd"}},
      {"unreadable perf YAML",
       {"--test-cmd", perf + "x]'", "--perf-config-yaml", repo.path + "/missing.yaml"},
       {"cannot read perf config '" + repo.path + "/missing.yaml'"}},
      {"no matching server config",
       {"--test-cmd", perf + "gpt_oss_fp4_tp9]'"},
       {"no server config named 'gpt_oss_fp4_tp9'", "gpt_oss_fp4_tp2_mtp0_1k1k"}},
      {"multi-node bench from the request",
       {"--bench-cmd", "trtllm-bench --model m throughput --tp 8", "--required-devices-per-node",
        "4"},
       {"multi-node trtllm-bench is not supported"}},
      {"multi-node bench on the partition",
       {"--bench-cmd", "trtllm-bench --model m throughput --tp 8", "--scenario", "local_slurm",
        kSlurm, env_a, "--partition", "small", "--llm-models-root", "/m", "--models-path", "/d"},
       {"multi-node trtllm-bench is not supported", "gpus_per_node = 4"}},
      {"unknown partition",
       {"--custom-cmd", "true", "--scenario", "local_slurm", kSlurm, env_a, "--partition", "gpu9"},
       {"partition 'gpu9' (--partition) does not exist", "batch, small, grace, cpu, maint"}},
      {"an unreadable saved slurm_env",
       {"--custom-cmd", "true", "--scenario", "local_slurm", kSlurm, repo.path + "/nope.json"},
       {repo.path + "/nope.json"}},
      {"submit.py failing after the work dir exists",
       {"--test-cmd", perf + "gpt_oss_fp4_tp2_mtp0_1k1k]'", "--scenario", "local_slurm", kSlurm,
        env_a, "--llm-models-root", "/m", "--models-path", "/d"},
       {"submit.py failed (exit 1)", "stand-in refuses"}},
  };
  // The last case's submit.py fails only once Prepare runs it.
  WriteTextFile(repo.path + "/jenkins/scripts/perf/local/submit.py",
                "import sys\nprint('stand-in refuses', file=sys.stderr)\nsys.exit(1)\n");
  for (const Bad& bad : cases) {
    SECTION(bad.name) {
      CliRun run = Plan(repo, bad.args);
      INFO(run.Describe());
      CHECK(run.exit_code == 2);
      for (const std::string& message : bad.messages) {
        CHECK_THAT(run.stderr_text, Catch::Contains(message));
      }
      CHECK(NoWorkDir(repo));
    }
  }
}

}  // namespace trtllm_run_test
