// Multi-node pytest as TensorRT-LLM's CI runs it (jenkins/scripts/slurm_run.sh): a test
// that needs more GPUs than a node of the partition has is planned over ceil(gpus / per
// node) nodes, one task per GPU, through the cluster's MPI plugin, with
// `trtllm-llmapi-launch pytest ...` on every rank from tests/integration/defs; rank 0's
// pytest gives the verdict.
//   - plan (saved slurm_env of cluster_a: batch 8 GPUs per node, small 4): ids sized by
//     markers, by ids=[...] and by the id's own tp16; a test-db block's count from a YAML
//     case; a partition that does not say its GPUs per node is a warning;
//   - run on the real test cluster's partition `multi` (localhost + gpunode2, 2 fake GPUs
//     each): a 4-GPU test spans both nodes. The real trtllm-llmapi-launch (of the
//     tensorrt_llm package) is not installed here: the checkout has a stand-in that execs its
//     arguments, so every rank runs pytest itself. The test cluster's pmix plugin cannot
//     load its PMIx library, so the run plans against the probed slurm_env with pmi2, which
//     works here, as its preferred plugin.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
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

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

int Int(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsInt() ? doc[key].GetInt() : -1;
}

const std::string kForms = "accuracy/test_marker_forms.py";

// A writable copy of the fake TensorRT-LLM tree.
struct Repo {
  Repo() : dir("trtllm_pytest_multinode") {
    path = dir.path() + "/TensorRT-LLM";
    fs::copy(Fixture("trtllm"), path, fs::copy_options::recursive);
  }
  TempDir dir;
  std::string path;
};

struct Planned {
  CliRun run;
  std::string work_dir;
  rapidjson::Document spec;
  std::string script;
};

Planned PlanOn(const Repo& repo, const std::string& env_file, const std::string& partition,
               const std::string& test_cmd, std::vector<std::string> extra = {}) {
  CliOptions options;
  options.args = {"plan",        "--repo-root",       repo.path, "--scenario",
                  "local_slurm", "--slurm-env-file",  env_file,  "--partition",
                  partition,     "--llm-models-root", "/models", "--models-path",
                  "/data/models"};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  if (!test_cmd.empty()) options.args.insert(options.args.end(), {"--test-cmd", test_cmd});
  options.timeout_seconds = 60;
  Planned out;
  out.run = RunCli(options);
  out.work_dir = FindSingleWorkDir(repo.path);
  if (!out.work_dir.empty()) {
    out.spec.Parse(ReadTextFile(out.work_dir + "/job_spec.json").c_str());
    if (out.spec.IsObject()) out.script = ReadTextFile(Str(out.spec, "script_path"));
  }
  return out;
}

// An id of a test list, as CI runs it: relative to tests/integration/defs.
std::string DefsCmd(const std::string& id) { return "pytest -v \"" + kForms + "::" + id + "\""; }

}  // namespace

TEST_CASE("multi-node pytest plan: nodes, tasks, MPI plugin and trtllm-llmapi-launch",
          "[plan][cli][multinode]") {
  const std::string env_a = Fixture("slurm_env/cluster_a.json");
  struct Want {
    std::string id;
    std::string partition;
    int nodes;
    int tasks;
    int per_node;
  };
  const std::vector<Want> wants = {
      {"TestMultiNode::test_serve[tp16]", "small", 4, 16, 4},             // the id's tp16
      {"TestMultiNode::test_serve[tp8pp2]", "batch", 2, 16, 8},           // tp x pp
      {"TestIdsList::test_nvfp4_multi_gpus[latency]", "small", 2, 8, 4},  // ids=[...] + marks
      {"TestMultiNode::test_world_16", "batch", 2, 16, 8},                // marker
  };
  for (const Want& want : wants) {
    Repo repo;
    Planned p = PlanOn(repo, env_a, want.partition, DefsCmd(want.id));
    INFO(want.id << " on " << want.partition << "\n" << p.run.Describe() << "\n" << p.script);
    REQUIRE(p.run.exit_code == 0);
    REQUIRE(p.spec.IsObject());
    const rapidjson::Value& params = p.spec["slurm_params"];
    CHECK(Int(params, "nodes") == want.nodes);
    CHECK(Int(params, "ntasks") == want.tasks);
    CHECK(Int(params, "ntasks_per_node") == want.per_node);
    CHECK(Str(params, "gres") == "gpu:" + std::to_string(want.per_node));
    const std::string run_step =
        p.script.substr(std::min(p.script.size(), p.script.find("run_step run srun")));
    CHECK_THAT(run_step, Catch::Contains("    --mpi=pmix_v5 \\\n"));  // the cluster's preferred
    CHECK_THAT(run_step, Catch::StartsWith(
                             "run_step run srun -l \\\n    --nodes=" + std::to_string(want.nodes) +
                             " \\\n    --ntasks=" + std::to_string(want.tasks) + " \\\n"));
    CHECK_THAT(run_step, Catch::Contains("cd tests/integration/defs || exit 1\n"
                                         "trtllm-llmapi-launch pytest -v \"" +
                                         kForms + "::" + want.id + "\"'"));
    CHECK_THAT(run_step, !Catch::Contains("compgen -e"));  // srun's MPI variables are kept
    CHECK_THAT(p.run.stdout_text,
               Catch::Contains("multi-node pytest: " + std::to_string(want.nodes) + " nodes of " +
                               std::to_string(want.per_node) + " GPUs"));
    CHECK_THAT(p.run.stdout_text, Catch::Contains("the verdict is rank 0's pytest"));
  }
}

TEST_CASE("multi-node pytest plan: a test that fits one node stays one task, no launcher",
          "[plan][cli][multinode]") {
  Repo repo;
  Planned p = PlanOn(repo, Fixture("slurm_env/cluster_a.json"), "small",
                     DefsCmd("TestMultiNode::test_serve[tp4]"));
  INFO(p.run.Describe() << "\n" << p.script);
  REQUIRE(p.run.exit_code == 0);
  const rapidjson::Value& params = p.spec["slurm_params"];
  CHECK(Int(params, "nodes") == 1);
  CHECK(Int(params, "ntasks") == 1);
  CHECK(Str(params, "gres") == "gpu:4");
  CHECK_THAT(p.script, !Catch::Contains("trtllm-llmapi-launch"));
  CHECK_THAT(p.script, !Catch::Contains("--mpi="));
  CHECK_THAT(p.script, Catch::Contains("run_step run srun -l \\\n    --nodes=1 \\\n"
                                       "    --ntasks=1 \\\n"));
}

TEST_CASE("multi-node pytest plan: unknown GPUs per node is a warning, not silence",
          "[plan][cli][multinode]") {
  Repo repo;
  // A GPU partition whose gres does not say how many GPUs a node has.
  std::string env = ReadTextFile(Fixture("slurm_env/cluster_a.json"));
  const std::string from = "\"gres\": \"gpu:4(IDX:0-3)\", \"gpus_per_node\": 4";
  const size_t at = env.find(from);
  REQUIRE(at != std::string::npos);
  env.replace(at, from.size(), "\"gres\": \"gpu\", \"gpus_per_node\": null");
  const std::string env_file = repo.dir.path() + "/slurm_env.json";
  WriteTextFile(env_file, env);
  Planned p = PlanOn(repo, env_file, "small", DefsCmd("TestMultiNode::test_serve[tp16]"));
  INFO(p.run.Describe());
  CHECK_THAT(p.run.stdout_text + p.run.stderr_text,
             Catch::Contains("warning: the test needs 16 GPUs and partition small does not say "
                             "how many a node has"));
}

TEST_CASE("multi-node pytest plan: a YAML case's test-db GPU count sizes an unmarked test",
          "[plan][cli][multinode]") {
  Repo repo;
  // The field a test-db reader sets for a line of a block with system_gpu_count 8.
  const std::string request = repo.dir.path() + "/case.yaml";
  WriteTextFile(request, "test_cmd: '" + DefsCmd("test_module_only") + "'\ntest_db_gpu_count: 8\n");
  Planned p =
      PlanOn(repo, Fixture("slurm_env/cluster_a.json"), "small", "", {"--request", request});
  INFO(p.run.Describe());
  REQUIRE(p.run.exit_code == 0);
  REQUIRE(p.spec.IsObject());
  CHECK(Int(p.spec["slurm_params"], "nodes") == 2);
  CHECK(Int(p.spec["slurm_params"], "ntasks") == 8);
  CHECK_THAT(p.run.stdout_text, Catch::Contains("the system_gpu_count of the test-db block"));
}

TEST_CASE("multi-node pytest plan: the ids planned are the ids real pytest collects",
          "[plan][pytest][multinode]") {
  // The marker tests plan these ids; pytest itself (Debian's python3-pytest) must collect
  // them from the fixture, or those tests check ids no run could select.
  CliOptions options;
  options.program = "/usr/bin/python3";
  options.args = {"-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", kForms};
  options.cwd = Fixture("trtllm/tests/integration/defs");
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  for (const char* id :
       {"TestIdsList::test_nvfp4_multi_gpus[latency]",
        "TestIdsList::test_nvfp4_multi_gpus[throughput_tp4]",
        "TestIdsList::test_nvfp4_multi_gpus[single]",
        "TestIdsList::test_nvfp4_multi_gpus[own_id_tp2]", "TestIdsList::test_stacked[tp4-True]",
        "TestIdsList::test_stacked[tp2-False]", "TestClassWorldSize::test_method_device",
        "TestClassPytestmark::test_plain", "TestMultiNode::test_serve[tp16]",
        "TestMultiNode::test_serve[tp8pp2]", "TestMultiNode::test_world_16", "test_module_only"}) {
    CHECK_THAT(run.stdout_text, Catch::Contains(kForms + "::" + id + "\n"));
  }
  CHECK_THAT(run.stdout_text, !Catch::Contains("overridden_by_own_id"));
}

TEST_CASE("multi-node pytest run: a 4-GPU test across localhost and gpunode2",
          "[slurm][cli][multinode]") {
  EnsureSlurm();
  Repo repo;
  const std::string defs = repo.path + "/tests/integration/defs";
  WriteTextFile(defs + "/pytest.ini", "[pytest]\naddopts = -s -p no:cacheprovider\n");
  WriteTextFile(defs + "/accuracy/test_two_nodes.py",
                "import os\n"
                "import pytest\n\n\n"
                "@pytest.mark.skip_less_device(4)\n"
                "def test_four_gpus():\n"
                "    rank = os.environ.get('SLURM_PROCID', '?')\n"
                "    node = os.environ.get('SLURMD_NODENAME', '?')\n"
                "    print(f'\\npytest rank {rank} on node {node}', flush=True)\n"
                "    assert os.environ.get('TRTLLM_RUN_FAIL_RANK') != rank\n");
  // The stand-in launcher: the real one is part of the tensorrt_llm package.
  const std::string bin = repo.path + "/stand-in-bin";
  fs::create_directories(bin);
  WriteTextFile(
      bin + "/trtllm-llmapi-launch",
      "#!/bin/bash\n# Stand-in for tensorrt_llm's trtllm-llmapi-launch: runs its "
      "arguments on this rank.\necho \"launcher rank ${SLURM_PROCID:-?}\"\nexec \"$@\"\n");
  ::chmod((bin + "/trtllm-llmapi-launch").c_str(), 0755);

  // The probed slurm_env of this cluster, with pmi2 as the MPI plugin (see the top).
  CliOptions probe;
  probe.args = {"env", "--json"};
  probe.timeout_seconds = 120;
  CliRun probed = RunCli(probe);
  INFO(probed.Describe());
  rapidjson::Document env;
  env.Parse(probed.stdout_text.c_str());
  REQUIRE(env.IsObject());
  REQUIRE(env.HasMember("pmix"));
  env["pmix"]["preferred"].SetString("pmi2", env.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  env.Accept(writer);
  const std::string env_file = repo.dir.path() + "/slurm_env.json";
  WriteTextFile(env_file, buffer.GetString());

  auto run_case = [&](const std::string& fail_rank) {
    CliOptions options;
    options.args = {"run",
                    "--repo-root",
                    repo.path,
                    "--scenario",
                    "local_slurm",
                    "--slurm-env-file",
                    env_file,
                    "--partition",
                    "multi",
                    "--skip-install",
                    "true",
                    "--container-runtime",
                    "none",
                    "--container-image",
                    "none",
                    "--monitor-timeout",
                    "3m",
                    "--test-cmd",
                    "pytest -v accuracy/test_two_nodes.py::test_four_gpus"};
    options.cwd = repo.path;
    options.env = {{"PATH", bin + ":" + std::string(::getenv("PATH"))},
                   {"TRTLLM_RUN_FAIL_RANK", fail_rank}};
    options.timeout_seconds = 240;
    return RunCli(options);
  };

  SECTION("every rank passes: PASSED, both nodes ran pytest, rank 0's counts") {
    CliRun run = run_case("none");
    const std::string work_dir = FindSingleWorkDir(repo.path);
    REQUIRE_FALSE(work_dir.empty());
    rapidjson::Document result = ReadResultJson(work_dir);
    const std::string log = ReadTextFile(Str(result, "log_file"));
    INFO(run.Describe() << "\n--- log\n" << log);
    CHECK(run.exit_code == 0);
    CHECK(Str(result, "status") == "PASSED");
    int localhost = 0, gpunode2 = 0;
    for (int rank = 0; rank < 4; ++rank) {
      const std::string line =
          std::to_string(rank) + ": pytest rank " + std::to_string(rank) + " on node ";
      const size_t at = log.find(line);
      REQUIRE(at != std::string::npos);
      const std::string node = log.substr(at + line.size(), log.find('\n', at) - at - line.size());
      localhost += node == "localhost";
      gpunode2 += node == "gpunode2";
      CHECK_THAT(log,
                 Catch::Contains(std::to_string(rank) + ": launcher rank " + std::to_string(rank)));
    }
    CHECK(localhost == 2);
    CHECK(gpunode2 == 2);
    // Four pytest runs passed one test each; the result counts rank 0's.
    REQUIRE(result.HasMember("tests"));
    CHECK(Int(result["tests"], "passed") == 1);
  }
  SECTION("rank 0's pytest fails: FAILED naming the test") {
    CliRun run = run_case("0");
    const std::string work_dir = FindSingleWorkDir(repo.path);
    REQUIRE_FALSE(work_dir.empty());
    rapidjson::Document result = ReadResultJson(work_dir);
    INFO(run.Describe() << "\n--- log\n" << ReadTextFile(Str(result, "log_file")));
    CHECK(run.exit_code == 1);
    CHECK(Str(result, "status") == "FAILED");
    CHECK_THAT(Str(result, "reason") + Str(result, "diagnosis"), Catch::Contains("test_four_gpus"));
  }
}

}  // namespace trtllm_run_test
