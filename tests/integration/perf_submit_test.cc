// perf-sanity plans through the real CLI and the fake repo's submit.py, which (like the
// real one) asks the Slurm tools of the machine it runs on for the partition's GPU gres:
// the plan must be the target cluster's wherever it is made (no Slurm here, this host's
// trtllm-test cluster, a remote cluster), bounded in time, and the launch script
// submit.py writes must agree with the plan or the plan fails with exit 2.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

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
  Repo() : dir("trtllm_run_perf_submit") {
    path = dir.path() + "/TensorRT-LLM";
    fs::copy(Fixture("trtllm"), path, fs::copy_options::recursive);
  }
  std::string SubmitPy() const { return path + "/jenkins/scripts/perf/local/submit.py"; }
  // Replaces `from` (which must occur) in the stand-in submit.py.
  void EditSubmitPy(const std::string& from, const std::string& to) const {
    std::string text = ReadTextFile(SubmitPy());
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    WriteTextFile(SubmitPy(), text.replace(at, from.size(), to));
  }
  TempDir dir;
  std::string path;
};

const std::string kAggr = "pytest perf/test_perf_sanity.py 'test_e2e[aggr-cp_sizing_test-tp2_cp2]'";
const std::string kDisagg =
    "pytest perf/test_perf_sanity.py "
    "'test_e2e[disagg-e2e-gb200_deepseek-r1-fp4_1k1k_con1_ctx1_dep4_gen1_tep8_eplb0_mtp3_ccb-"
    "UCX]'";

std::vector<std::string> LocalPlan(const Repo& repo, const std::string& test_cmd,
                                   const std::string& slurm_env, const std::string& partition) {
  return {"plan",          repo.path,     "--test-cmd",        test_cmd,
          "--scenario",    "local_slurm", "--slurm-env-file",  slurm_env,
          "--partition",   partition,     "--llm-models-root", "/models",
          "--models-path", "/data/models"};
}

CliRun Plan(std::vector<std::string> args,
            std::vector<std::pair<std::string, std::string>> env = {}, double timeout = 45) {
  args.insert(args.begin() + 1, "--repo-root");
  CliOptions options;
  options.args = args;
  options.env = std::move(env);
  options.timeout_seconds = timeout;
  return RunCli(options);
}

std::string LaunchScript(const Repo& repo) {
  std::string wd = FindSingleWorkDir(repo.path);
  REQUIRE_FALSE(wd.empty());
  return ReadTextFile(wd + "/slurm_launch.sh");
}

std::string ResolutionNotes(const Repo& repo) {
  rapidjson::Document spec;
  spec.Parse(ReadTextFile(FindSingleWorkDir(repo.path) + "/job_spec.json").c_str());
  return spec.IsObject() && spec.HasMember("resolution_notes")
             ? spec["resolution_notes"].GetString()
             : "";
}

bool NoWorkDir(const Repo& repo) {
  std::error_code error;
  fs::path dir = fs::path(repo.path) / "work_dirs";
  return !fs::exists(dir, error) || fs::is_empty(dir, error);
}

// A slurm_env of cluster_a's shape whose `cpu` partition has 4 GPUs as gres (this host's
// trtllm-test `cpu` has none).
std::string WriteGpuCpuEnv(const std::string& dir) {
  std::string text = ReadTextFile(Fixture("slurm_env/cluster_a.json"));
  const std::string from =
      "\"gres\": \"(null)\", \"gpus_per_node\": null, \"requires_gres\": false},\n"
      "    {\"name\": \"maint\"";
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(),
               "\"gres\": \"gpu:4\", \"gpus_per_node\": 4, \"requires_gres\": true},\n"
               "    {\"name\": \"maint\"");
  const std::string path = dir + "/gpu_cpu_slurm_env.json";
  WriteTextFile(path, text);
  return path;
}

}  // namespace

TEST_CASE("perf-sanity plan on a host without Slurm tools: fast, with the target's --gres",
          "[perf][plan][cli]") {
  Repo repo;
  // A PATH with python3 and nothing of Slurm.
  TempDir bin("trtllm_run_no_slurm_bin");
  fs::create_symlink("/usr/bin/python3", bin.path() + "/python3");
  CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"),
                    {{"PATH", bin.path()}});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK(run.seconds < 15);
  const std::string script = LaunchScript(repo);
  CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:4\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --gpus-per-node=4\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --nodes=1\n#SBATCH --ntasks=4\n"));
  CHECK_THAT(ResolutionNotes(repo),
             Catch::Contains("submit.py: its Slurm queries were answered from slurm_env "
                             "(cluster cluster_a), not from this host's Slurm: sinfo -p small"));
}

TEST_CASE("perf-sanity plan on the trtllm-test cluster for another cluster: its GRES",
          "[perf][plan][cli][slurm]") {
  EnsureSlurm();
  // This host's Slurm answers for trtllm-test: no partition `small`, a GPU-less `cpu`.
  CHECK(Shell("sinfo -p small -h -o %G").empty());
  CHECK(Shell("sinfo -p cpu -h -o %G") == "(null)\n");
  CHECK_THAT(Shell("scontrol show config"), Catch::Contains("trtllm-test"));
  Repo repo;
  SECTION("a partition this host's cluster does not have") {
    CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"));
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    CHECK_THAT(LaunchScript(repo), Catch::Contains("#SBATCH --gres=gpu:4\n"));
  }
  SECTION("a partition with GPUs there that has none here") {
    CliRun run = Plan(LocalPlan(repo, kAggr, WriteGpuCpuEnv(repo.dir.path()), "cpu"));
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    const std::string script = LaunchScript(repo);
    CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:4\n"));
    CHECK_THAT(script, Catch::Contains("#SBATCH --partition=cpu\n"));
  }
  SECTION("disaggregated: the target's cluster name, not this host's") {
    CliRun run = Plan(LocalPlan(repo, kDisagg, Fixture("slurm_env/cluster_a.json"), "grace"));
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    const std::string script = LaunchScript(repo);
    CHECK_THAT(script, Catch::Contains("#SBATCH --nodes=3\n"));
    CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:4\n"));
    CHECK_THAT(script, Catch::Contains("export clusterName=cluster_a\n"));
  }
  SECTION("remote_slurm: the remote cluster's slurm_env") {
    CliRun run = Plan({"plan", repo.path, "--test-cmd", kDisagg, "--scenario", "remote_slurm",
                       "--slurm-env-file", Fixture("slurm_env/remote_b.json"), "--llm-models-root",
                       "/models", "--remote-repo-path", "/lustre/users/bob/TensorRT-LLM",
                       "--ssh-host", "bob@login-remote-b.example.com"});
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    const std::string script = LaunchScript(repo);
    CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:4\n"));
    CHECK_THAT(script, Catch::Contains("#SBATCH --partition=gb200\n"));
    CHECK_THAT(script, Catch::Contains("export clusterName=remote_b\n"));
  }
}

TEST_CASE("a launch script whose sizing disagrees with slurm_env: exit 2 naming both values",
          "[perf][plan][cli]") {
  Repo repo;
  struct Variant {
    std::string name, from, to;
    std::vector<std::string> named;
  };
  const std::vector<Variant> variants = {
      {"one node too many",
       "f\"#SBATCH --nodes={hw['total_nodes']}\"",
       "f\"#SBATCH --nodes={hw['total_nodes'] + 1}\"",
       {"#SBATCH --nodes = 2", "has --nodes = 1"}},
      {"tasks per node not the partition's GPUs",
       "f\"#SBATCH --ntasks-per-node={hw['gpus_per_node']}\"",
       "f\"#SBATCH --ntasks-per-node={hw['gpus_per_node'] * 2}\"",
       {"#SBATCH --ntasks-per-node = 8", "has --ntasks-per-node = 4"}},
      {"the GRES left out",
       "] + gpu_request_lines(args.partition, hw[\"gpus_per_node\"]) + [",
       "] + [",
       {"#SBATCH --gres = (no such line)",
        "has --gres = gpu:4 (the partition's gres is gpu:4(IDX:0-3))"}},
  };
  for (const Variant& variant : variants) {
    SECTION(variant.name) {
      repo.EditSubmitPy(variant.from, variant.to);
      CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"));
      INFO(run.Describe());
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.stderr_text, Catch::Contains("slurm_launch.sh (written by submit.py)"));
      CHECK_THAT(run.stderr_text, Catch::Contains("partition small of cluster cluster_a"));
      for (const std::string& text : variant.named) {
        CHECK_THAT(run.stderr_text, Catch::Contains(text));
      }
      CHECK(NoWorkDir(repo));
    }
  }
}

TEST_CASE("a submit.py that hangs is stopped with its children: exit 2 naming the limit",
          "[perf][plan][cli]") {
  Repo repo;
  // The marker (the repo's unique path) is on both processes' command lines.
  WriteTextFile(repo.SubmitPy(),
                "import subprocess, sys, time\n"
                "print('waiting for the Slurm controller', flush=True)\n"
                "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', "
                "__file__])\n"
                "time.sleep(300)\n");
  const std::string marker = repo.SubmitPy();
  CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"),
                    {{"TRTLLM_RUN_SUBMIT_TIMEOUT", "3"}}, 40);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.seconds < 20);
  CHECK_THAT(run.stderr_text, Catch::Contains(marker + " did not finish within 3 s"));
  CHECK_THAT(run.stderr_text, Catch::Contains("waiting for the Slurm controller"));
  CHECK_THAT(run.stderr_text, Catch::Contains("TRTLLM_RUN_SUBMIT_TIMEOUT"));
  CHECK(WaitNoProcessWithMarker(marker, 10));
  CHECK(NoWorkDir(repo));
  KillProcessesWithMarker(marker);
}

TEST_CASE("a bad TRTLLM_RUN_SUBMIT_TIMEOUT is named: exit 2, no work dir", "[perf][plan][cli]") {
  Repo repo;
  CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"),
                    {{"TRTLLM_RUN_SUBMIT_TIMEOUT", "soon"}});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("TRTLLM_RUN_SUBMIT_TIMEOUT='soon'"));
  CHECK(NoWorkDir(repo));
}

}  // namespace trtllm_run_test

namespace trtllm_run_test {

TEST_CASE("remote_slurm perf-sanity plans with no remote path on this host",
          "[perf][plan][cli][remote]") {
  // submit.py (the real one, and the stand-in like it) opens its config and launch draft
  // under --llm-src and writes its test list into --work-dir: before, both were the remote
  // paths (FileNotFoundError, exit 2, an empty work_dirs/ left behind).
  const std::string remote_repo = "/lustre/users/bob/TensorRT-LLM";
  REQUIRE_FALSE(fs::exists(remote_repo));
  for (const std::string& test_cmd : {kAggr, kDisagg}) {
    Repo repo;
    CliRun run = Plan({"plan", repo.path, "--test-cmd", test_cmd, "--scenario", "remote_slurm",
                       "--slurm-env-file", Fixture("slurm_env/remote_b.json"), "--partition",
                       "gb200", "--llm-models-root", "/models", "--remote-repo-path", remote_repo,
                       "--ssh-host", "bob@login-remote-b.example.com"});
    INFO(test_cmd << "\n" << run.Describe());
    REQUIRE(run.exit_code == 0);
    const std::string wd = FindSingleWorkDir(repo.path);
    const std::string remote_wd = remote_repo + "/work_dirs/" + fs::path(wd).filename().string();
    const std::string script = LaunchScript(repo);
    INFO(script);
    CHECK_THAT(script, Catch::Contains("export llmSrcNode=" + remote_repo + "\n"));
    CHECK_THAT(script, Catch::Contains("export configYamlPath=" + remote_repo +
                                       "/tests/scripts/perf-sanity/"));
    CHECK_THAT(script, Catch::Contains("export testListPath=" + remote_wd +
                                       "/perf_sanity_test_list.txt\n"));
    CHECK_THAT(script, Catch::Contains("export runScript=" + remote_repo +
                                       "/jenkins/scripts/perf/local/slurm_run.sh\n"));
    CHECK_THAT(script, Catch::Contains("# echo \"draft: "));  // the draft was read
    CHECK(script.find(repo.path) == std::string::npos);       // no path of this host
    // The test list it wrote is copied with the launch script.
    rapidjson::Document spec;
    spec.Parse(ReadTextFile(wd + "/job_spec.json").c_str());
    REQUIRE(spec.IsObject());
    bool listed = false;
    for (const auto& file : spec["extra_files"].GetArray()) {
      listed |= std::string(file.GetString()) == wd + "/perf_sanity_test_list.txt";
    }
    CHECK(listed);
    CHECK_THAT(run.stdout_text + ResolutionNotes(repo),
               Catch::Contains("submit.py ran on this host against this checkout"));
  }
}

TEST_CASE("a perf plan that fails leaves no work_dirs/ behind", "[perf][plan][cli]") {
  Repo repo;
  repo.EditSubmitPy("    args = parser.parse_args()\n",
                    "    args = parser.parse_args()\n    sys.exit('stand-in refuses')\n");
  REQUIRE_FALSE(fs::exists(repo.path + "/work_dirs"));
  CliRun run = Plan(LocalPlan(repo, kAggr, Fixture("slurm_env/cluster_a.json"), "small"));
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("stand-in refuses"));
  CHECK_FALSE(fs::exists(repo.path + "/work_dirs"));  // before: an empty work_dirs/
}

}  // namespace trtllm_run_test
