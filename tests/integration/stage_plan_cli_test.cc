// `trtllm-run plan --stage` through the binary over tests/fixtures/stage (a checkout in
// TensorRT-LLM's shapes written for these tests): the text plan, --json, and the exit-2
// cases (an unknown stage with near names, an empty render naming its keys, bad flags).
#include <rapidjson/document.h>

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "cli_harness.h"

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
