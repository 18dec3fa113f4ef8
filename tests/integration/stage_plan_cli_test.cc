// `trtllm-run plan --stage` through the binary over tests/fixtures/stage (a checkout in
// TensorRT-LLM's shapes written for these tests): the text plan, --json, and the exit-2
// cases (an unknown stage with near names, an empty render naming its keys, bad flags).
#include <rapidjson/document.h>

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "cli_harness.h"
#include "slurm_test_util.h"

using namespace trtllm_run_test;

namespace {

std::string Fixture() { return std::string(TRTLLM_RUN_SOURCE_DIR) + "/tests/fixtures/stage"; }

CliRun Plan(std::vector<std::string> args) {
  args.insert(args.begin(), {"plan", "--repo-root", Fixture()});
  return RunCli(args);
}

}  // namespace

TEST_CASE("plan --stage: keys, blocks, shards and waives, in text and JSON", "[stage][cli]") {
  CliRun run = Plan({"--stage", "DGX_B200-4_GPUs-PyTorch-3"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string& out = run.stdout_text;
  CHECK_THAT(out, Catch::StartsWith("stage DGX_B200-4_GPUs-PyTorch-3: test-db l0_dgx_b200, "
                                    "split 3 of 3, 4 GPUs on 1 node\n"));
  CHECK_THAT(out, Catch::Contains("keys: auto_trigger=others, backend=pytorch, gpu=dgx_b200, "
                                  "orchestrator=mpi, stage=pre_merge, system_gpu_count=4\n"));
  CHECK_THAT(out, Catch::Contains("  block 4 (l0_dgx_b200.yml:52, 1 test): not matched: "
                                  "orchestrator=mpi, not ray\n"));
  CHECK_THAT(out,
             Catch::Contains("shard 3/3: 3 tests, 820 s expected\n"
                             "  disaggregated/test_disaggregated.py::test_ctx_gen[tiny]  300 s\n"
                             "  unittest/_torch/modules/test_moe.py -k \"TRTLLM\"  260 s\n"
                             "  test_e2e.py::test_openai_multi_gpu  260 s\n"));
  CHECK_THAT(out, Catch::Contains("waived (1, SKIPPED, not submitted):\n"
                                  "  accuracy/test_llm_api_pytorch.py::TestB::test_auto_dtype  "
                                  "(https://nvbugs/5000001)\n"));
  CHECK(out.find("shard 1/3") == std::string::npos);

  // --json: the plan on stdout, the text on stderr; --match changes the render.
  run = Plan({"--stage", "DGX_B200-4_GPUs-PyTorch", "--match", "system_gpu_count=2", "--json"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["match_keys"]["system_gpu_count"].GetString()) == "2");
  CHECK(doc["split_count"].GetInt() == 3);
  REQUIRE(doc["shards"].Size() == 3);
  CHECK(std::string(doc["shards"][0]["tests"][0]["id"].GetString()) ==
        "accuracy/test_llm_api_pytorch.py::TestD::test_two_gpus");
  CHECK(doc["shards"][1]["tests"].Size() == 0);
  CHECK(doc["waived"].Size() == 0);
  CHECK_THAT(run.stderr_text, Catch::Contains("split 3 of 3 gets no test to run"));
}

TEST_CASE("plan --stage on a local scenario: this host's GPUs (nvidia-smi) give the keys",
          "[stage][cli]") {
  // A stand-in nvidia-smi printing an HGX B200's 8 GPUs (tests/fixtures/nvidia-smi).
  TempDir bin("trtllm_run_stage_smi");
  const std::string smi = bin.path() + "/nvidia-smi";
  WriteTextFile(smi, "#!/bin/sh\ncat '" + std::string(TRTLLM_RUN_SOURCE_DIR) +
                         "/tests/fixtures/nvidia-smi/b200_8gpu.txt'\n");
  REQUIRE(::chmod(smi.c_str(), 0755) == 0);
  CliOptions options;
  options.args = {"plan",       "--repo-root",  Fixture(), "--stage", "DGX_B200-4_GPUs-PyTorch-1",
                  "--scenario", "local_direct", "--json"};
  options.env = {{"PATH", bin.path() + ":" + std::getenv("PATH")}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["match_keys"]["gpu"].GetString()) == "B200");
  CHECK(std::string(doc["match_keys"]["system_gpu_count"].GetString()) == "8");
  CHECK(run.stderr_text.find("come from the stage") == std::string::npos);
  // 8 GPUs: only the block with `gte: 4` and no upper bound matches.
  CHECK_THAT(run.stderr_text, Catch::Contains("block 1 (l0_dgx_b200.yml:4, 8 tests): not matched: "
                                              "system_gpu_count=8 not in [4, 4]"));
  CHECK_THAT(run.stderr_text, Catch::Contains("block 2 (l0_dgx_b200.yml:27, 3 tests): matched"));

  // Without nvidia-smi the plan says where the keys came from.
  options.env = {{"PATH", "/usr/bin:/bin"}};
  run = RunCli(options);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.stderr_text, Catch::Contains("--scenario local_direct: nvidia-smi finds no GPU"));
  CHECK_THAT(run.stderr_text, Catch::Contains("come from the stage's name"));
}

TEST_CASE("plan --stage: bad input is exit 2 with what, where and what is valid", "[stage][cli]") {
  CliRun run = Plan({"--stage", "DGX_B200-4_GPUs-Pytorch-1"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("unknown stage 'DGX_B200-4_GPUs-Pytorch-1'"));
  CHECK_THAT(run.stderr_text, Catch::Contains("did you mean: DGX_B200-4_GPUs-PyTorch-1"));
  CHECK(run.stdout_text.empty());

  run = Plan({"--stage", "DGX_B200-8_GPUs-TensorRT-1"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text,
             Catch::Contains("test-db context l0_dgx_b200 renders no tests with keys {"
                             "auto_trigger=others, backend=tensorrt, gpu=dgx_b200, "
                             "orchestrator=mpi, stage=pre_merge, system_gpu_count=8}"));
  CHECK_THAT(run.stderr_text, Catch::Contains("block 1 (l0_dgx_b200.yml:4, 8 tests): not matched"));

  run = Plan({"--stage", "A10-PyTorch-1", "--match", "gpu"});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("--match 'gpu' is not key=value"));

  run = Plan({"--stage", "A10-PyTorch-1", "--splits", "0"});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("--splits 0 is out of range"));

  run = Plan({"--stage", "A10-PyTorch-1", "--waives", "/nonexistent/waives.txt"});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("/nonexistent/waives.txt"));

  run = Plan({"--splits", "2"});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("--splits goes with --stage or --test-db"));

  run = Plan({"--test-db", "l0_nope", "--json"});
  CHECK(run.exit_code == 2);
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK_THAT(std::string(doc["error"]["message"].GetString()),
             Catch::Contains("test-db context 'l0_nope' has no file"));
}

// The test cluster's partitions (tests/services/slurm.sh): batch and multi hold untyped
// fake GPUs (gpu:2) on 1 and 2 nodes, cpu none.
TEST_CASE("plan --stage on local_slurm: the partition's GRES and node count give the keys",
          "[stage][cli][slurm]") {
  trtllm_run_test::EnsureSlurm();
  auto plan_json = [](const std::string& stage, std::vector<std::string> more) {
    std::vector<std::string> args = {"--stage", stage, "--scenario", "local_slurm", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return Plan(args);
  };
  CliRun run = plan_json("A10-PyTorch-Post-Merge-1", {"--partition", "batch"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["match_keys"]["system_gpu_count"].GetString()) == "1");
  CHECK(std::string(doc["key_origins"]["system_gpu_count"].GetString()) ==
        "the stage's 1 GPU, which GRES gpu:2 x 1 node of partition batch holds");
  CHECK(std::string(doc["match_keys"]["gpu"].GetString()) == "a10");
  CHECK(std::string(doc["key_origins"]["gpu"].GetString()) == "stage name's GPU segment");
  CHECK_THAT(run.stderr_text, Catch::Contains("partition batch's GRES gpu:2 names no GPU type"));
  CHECK_THAT(run.stderr_text, Catch::Contains("  system_gpu_count=1 from the stage's 1 GPU, which "
                                              "GRES gpu:2 x 1 node of partition batch holds\n"));
  CHECK(run.stderr_text.find("not probed") == std::string::npos);

  // The default partition (batch) when none is given; a 4-GPU stage gets the 2 it holds.
  run = plan_json("DGX_B200-4_GPUs-PyTorch-1", {"--match", "gpu=b200"});
  INFO(run.Describe());
  doc.Parse(run.stdout_text.c_str());
  if (run.exit_code == 0) {
    REQUIRE_FALSE(doc.HasParseError());
    CHECK(std::string(doc["match_keys"]["system_gpu_count"].GetString()) == "2");
    CHECK(std::string(doc["key_origins"]["gpu"].GetString()) == "--match");
  }
  CHECK_THAT(run.stderr_text,
             Catch::Contains("partition batch offers 2 GPUs per node on 1 node (GRES gpu:2), the "
                             "stage asks for 4 GPUs on 1 node: rendered with system_gpu_count=2"));

  // multi: 2 nodes of 2 GPUs hold the 8-GPU 2-node stage's 2 nodes only in part.
  run = plan_json("GB200-8_GPUs-2_Nodes-PyTorch-Post-Merge-1",
                  {"--partition", "multi", "--match", "system_gpu_count=8"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  doc.Parse(run.stdout_text.c_str());
  CHECK(std::string(doc["match_keys"]["system_gpu_count"].GetString()) == "8");
  CHECK(std::string(doc["key_origins"]["system_gpu_count"].GetString()) == "--match");
  CHECK_THAT(run.stderr_text, Catch::Contains("partition multi offers 2 GPUs per node on 2 nodes"));

  // No GPU GRES: the stage's own numbers, with the warning.
  run = plan_json("A10-PyTorch-Post-Merge-1", {"--partition", "cpu"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  doc.Parse(run.stdout_text.c_str());
  CHECK(std::string(doc["key_origins"]["system_gpu_count"].GetString()) ==
        "stage table's GPU count");
  CHECK_THAT(run.stderr_text,
             Catch::Contains("partition cpu has no GPU GRES (sinfo %G: (null)): gpu and "
                             "system_gpu_count come from the stage's name and table"));

  // A partition the cluster does not have is bad input.
  run = plan_json("A10-PyTorch-Post-Merge-1", {"--partition", "no_such_partition"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("no_such_partition"));
}

TEST_CASE("plan --stage on remote_slurm: the partition is probed over ssh",
          "[stage][cli][slurm][sshd]") {
  trtllm_run_test::EnsureSshd();
  TempDir dir("trtllm_stage_remote_plan");
  const std::string ssh_config = dir.path() + "/ssh_config";
  WriteTextFile(ssh_config,
                "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                "  UserKnownHostsFile /run/trtllm-test-sshd/known_hosts\n"
                "  IdentityFile /run/trtllm-test-sshd/id_ed25519\n  IdentitiesOnly yes\n");
  CliRun run =
      Plan({"--stage", "A10-PyTorch-Post-Merge-1", "--scenario", "remote_slurm", "--ssh-host",
            "trtllm-test-login", "--slurm-user", "sshtest", "--ssh-config-file", ssh_config,
            "--remote-repo-path", "/home/sshtest/trtllm_stage_plan_never/TensorRT-LLM",
            "--repo-url", "/nonexistent", "--partition", "multi", "--json"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["key_origins"]["system_gpu_count"].GetString()) ==
        "the stage's 1 GPU, which GRES gpu:2 x 1 node of partition multi holds");
}
