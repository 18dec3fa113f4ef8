// PlanStage over tests/fixtures/stage, a checkout in TensorRT-LLM's shapes (a small
// jenkins/L0_Test.groovy, test-db YAMLs, waives.txt, .test_durations) written for these
// tests. The shards are checked against least_duration groups computed by hand.
#include "stage/stage_plan.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

std::string FixtureRoot() {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "stage").string();
}

StagePlan Plan(StageRequest request) {
  if (request.repo_root.empty()) request.repo_root = FixtureRoot();
  Result<StagePlan> plan = PlanStage(request);
  INFO((plan.ok() ? std::string() : plan.status().ToString()));
  REQUIRE(plan.ok());
  return plan.value();
}

std::string PlanError(StageRequest request) {
  if (request.repo_root.empty()) request.repo_root = FixtureRoot();
  Result<StagePlan> plan = PlanStage(request);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == StatusCode::kInvalidInput);
  return plan.status().ToString();
}

std::vector<std::string> Ids(const std::vector<StageTest>& tests) {
  std::vector<std::string> ids;
  for (const StageTest& test : tests) ids.push_back(test.id);
  return ids;
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

const char kFp8[] = "accuracy/test_llm_api_pytorch.py::TestA::test_fp8[tp4]";
const char kBf16[] = "accuracy/test_llm_api_pytorch.py::TestA::test_bf16[tp4]";
const char kCtxGen[] = "disaggregated/test_disaggregated.py::test_ctx_gen[tiny]";
const char kCutlass[] = "unittest/_torch/modules/test_moe.py -k \"CUTLASS and NVFP4\"";
const char kTrtllm[] = "unittest/_torch/modules/test_moe.py -k \"TRTLLM\"";
const char kLlama[] = "examples/test_llama.py::test_llm_llama_4gpu[llama-3.1-8b]";
const char kE2e[] = "test_e2e.py::test_openai_multi_gpu";
const char kAutoDtype[] = "accuracy/test_llm_api_pytorch.py::TestB::test_auto_dtype";
const char kNixl[] = "accuracy/test_disaggregated_serving.py::TestC::test_nixl";
const char kMisc[] = "unittest/_torch/test_misc.py";

TEST_CASE("plan stage: a family covers every split, least_duration as computed by hand",
          "[stage]") {
  StageRequest request;
  request.stage = "DGX_B200-4_GPUs-PyTorch";
  StagePlan plan = Plan(request);
  CHECK(plan.test_db_context == "l0_dgx_b200");
  CHECK(plan.split_count == 3);
  CHECK(plan.splits == std::vector<int>{1, 2, 3});
  CHECK(plan.gpu_count == 4);
  CHECK(plan.node_count == 1);
  CHECK(plan.match_keys == std::map<std::string, std::string>{{"auto_trigger", "others"},
                                                              {"backend", "pytorch"},
                                                              {"gpu", "dgx_b200"},
                                                              {"orchestrator", "mpi"},
                                                              {"stage", "pre_merge"},
                                                              {"system_gpu_count", "4"}});
  REQUIRE(plan.matched_blocks_explained.size() == 5);
  CHECK_THAT(plan.matched_blocks_explained[0],
             Catch::StartsWith("block 1 (l0_dgx_b200.yml:4, 8 tests): matched: "));
  CHECK_THAT(plan.matched_blocks_explained[0],
             Catch::EndsWith("assumed to match: linux_distribution_name"));
  CHECK_THAT(plan.matched_blocks_explained[2],
             Catch::Contains("not matched: system_gpu_count=4 not in [-inf, 2]"));
  CHECK_THAT(plan.matched_blocks_explained[3],
             Catch::Contains("not matched: orchestrator=mpi, not ray"));
  // Durations: fp8 600, bf16 300, ctx_gen 300, CUTLASS 200 (by its test_unittests_v2 id),
  // llama 100, auto_dtype 50, nixl 270; TRTLLM, e2e and misc at the mean of those seven
  // (1820 / 7 = 260; the unlisted 9999 s test does not count). Sorted: fp8 600, bf16 300,
  // ctx_gen 300 (bf16 first by id), nixl 270, e2e, TRTLLM, misc 260 (by node id:
  // test_e2e < test_unittests...modules < test_unittests..test_misc), CUTLASS 200,
  // llama 100, auto_dtype 50. Groups: fp8->1 (600); bf16->2 (300); ctx_gen->3 (300);
  // nixl->2 (570); e2e->3 (560); TRTLLM->3 (820); misc->2 (830); CUTLASS->1 (800);
  // llama->1 (900); auto_dtype->3 (870).
  REQUIRE(plan.shards.size() == 3);
  CHECK(plan.shards[0].split_id == 1);
  CHECK(Ids(plan.shards[0].tests) == std::vector<std::string>{kFp8, kCutlass, kLlama});
  CHECK(plan.shards[0].expected_seconds == Approx(900));
  CHECK(Ids(plan.shards[1].tests) == std::vector<std::string>{kBf16, kNixl});  // misc waived
  CHECK(plan.shards[1].expected_seconds == Approx(570));
  CHECK(Ids(plan.shards[2].tests) == std::vector<std::string>{kCtxGen, kTrtllm, kE2e});
  CHECK(plan.shards[2].expected_seconds == Approx(820));
  CHECK(plan.shards[2].tests[1].expected_seconds == Approx(260));
  // Markers: TIMEOUT (60) minutes, ISOLATION.
  CHECK(plan.shards[1].tests[0].timeout_seconds == 3600);
  CHECK(plan.shards[0].tests[2].isolation);
  CHECK_FALSE(plan.shards[0].tests[0].isolation);
  // Waived: full:DGX_B200/ applies to this stage, full:GB200/ does not; XFAIL runs; a
  // class-level id does not waive its tests (exact ids, as test_list_parser matches).
  REQUIRE(plan.waived.size() == 2);
  CHECK(plan.waived[0].id == kMisc);
  CHECK(plan.waived[0].waived_reason == std::string("https://nvbugs/5000003"));
  CHECK(plan.waived[1].id == kAutoDtype);
  CHECK(plan.waived[1].waived_reason == std::string("https://nvbugs/5000001"));
  CHECK(AnyContains(plan.warnings, "is listed again by a matched block"));
  CHECK(AnyContains(plan.warnings, "gpu=dgx_b200, system_gpu_count=4 come from the stage's name"));
}

TEST_CASE("plan stage: one split of the family, and --splits", "[stage]") {
  StageRequest request;
  request.stage = "DGX_B200-4_GPUs-PyTorch-2";
  StagePlan plan = Plan(request);
  CHECK(plan.splits == std::vector<int>{2});
  CHECK(plan.split_count == 3);
  REQUIRE(plan.shards.size() == 1);
  CHECK(Ids(plan.shards[0].tests) == std::vector<std::string>{kBf16, kNixl});
  CHECK(Ids(plan.waived) == std::vector<std::string>{kMisc});

  request.stage = "DGX_B200-4_GPUs-PyTorch";
  request.splits = 1;
  plan = Plan(request);
  REQUIRE(plan.shards.size() == 1);
  CHECK(plan.shards[0].tests.size() == 8);
  CHECK(plan.shards[0].expected_seconds == Approx(600 + 300 + 300 + 200 + 260 + 100 + 260 + 270));

  // 10 tests in 12 splits: one each in duration order, splits 11 and 12 get none, and
  // splits 7 (misc) and 10 (auto_dtype) only a waived test: nothing to run either.
  request.splits = 12;
  plan = Plan(request);
  CHECK(plan.shards.size() == 12);
  CHECK(plan.shards[11].tests.empty());
  CHECK(Ids(plan.shards[8].tests) == std::vector<std::string>{kLlama});
  for (int split : {7, 10, 11, 12}) {
    CHECK(AnyContains(plan.warnings,
                      "split " + std::to_string(split) + " of 12 gets no test to run"));
  }
  CHECK_FALSE(AnyContains(plan.warnings, "split 9 of 12 gets no test"));
  CHECK_FALSE(AnyContains(plan.warnings, "split 1 of 12 gets no test"));

  request.stage = "DGX_B200-4_GPUs-PyTorch-3";
  request.splits = 2;
  CHECK_THAT(PlanError(request), Catch::Contains("--splits 2 has no such split"));
  request.splits = 0;
  CHECK_THAT(PlanError(request), Catch::Contains("--splits 0 is out of range"));
}

TEST_CASE("plan stage: multi-node stage, buildStageConfigs family, full:<GPU>/ waives", "[stage]") {
  StageRequest request;
  request.stage = "GB200-8_GPUs-2_Nodes-PyTorch-Post-Merge-1";
  StagePlan plan = Plan(request);
  CHECK(plan.gpu_count == 8);
  CHECK(plan.node_count == 2);
  CHECK(plan.match_keys["gpu"] == "gb200");
  CHECK(plan.match_keys["system_gpu_count"] == "8");
  CHECK(plan.match_keys["stage"] == "post_merge");
  // tp8, ep8 unknown at the mean of ctx_gen's 300: by id ep8 -> 1, tp8 -> 2, ctx_gen -> 1.
  REQUIRE(plan.shards.size() == 1);
  CHECK(Ids(plan.shards[0].tests) ==
        std::vector<std::string>{"accuracy/test_llm_api_pytorch.py::TestG::test_two_nodes[ep8]"});
  CHECK(Ids(plan.waived) == std::vector<std::string>{kCtxGen});

  request.stage = "GB200-8_GPUs-2_Nodes-PyTorch-PerfSanity-Post-Merge";
  plan = Plan(request);
  CHECK(plan.splits == std::vector<int>{1, 2, 3});
  CHECK(plan.node_count == 2);
  CHECK(AnyContains(plan.warnings, "split 3 of 3 gets no test to run"));
}

TEST_CASE("plan stage: keys from the target and --match, --test-db skips the table", "[stage]") {
  StageRequest request;
  request.stage = "A10-PyTorch-Post-Merge-2";
  StagePlan plan = Plan(request);
  CHECK(plan.match_keys["gpu"] == "a10");             // from the name's GPU segment
  CHECK(plan.match_keys["system_gpu_count"] == "1");  // the table's GPU count
  CHECK(AnyContains(plan.warnings, "come from the stage's name"));
  REQUIRE(plan.shards.size() == 1);
  CHECK(plan.shards[0].split_id == 2);
  CHECK(plan.shards[0].tests.empty());  // one post-merge test, in split 1
  CHECK(AnyContains(plan.warnings, "split 2 of 2 gets no test to run"));

  request.stage = "A10-PyTorch-Post-Merge-1";
  request.target_gpu = "A10";
  request.target_system_gpu_count = 1;
  plan = Plan(request);
  CHECK(plan.match_keys["gpu"] == "A10");
  CHECK_FALSE(AnyContains(plan.warnings, "come from the stage's name"));
  CHECK(Ids(plan.shards[0].tests) ==
        std::vector<std::string>{"accuracy/test_llm_api_pytorch.py::TestF::test_a10_post_merge"});

  // --match wins over the target: on an H100 nothing of l0_a10 renders.
  request.match = {{"gpu", "h100"}};
  std::string error = PlanError(request);
  CHECK_THAT(error, Catch::Contains("test-db context l0_a10 renders no tests with keys {"));
  CHECK_THAT(error, Catch::Contains("gpu=h100"));
  CHECK_THAT(error, Catch::Contains("stage=post_merge"));
  CHECK_THAT(error, Catch::Contains("not matched: gpu=h100 matches none of '*a10*'"));

  // --test-db with a stage name: the name's keys, no table (no GPU count, one split).
  StageRequest named;
  named.stage = "DGX_B200-4_GPUs-PyTorch-2";
  named.test_db_context = "l0_dgx_b200";
  plan = Plan(named);
  CHECK(plan.gpu_count == 0);
  CHECK(plan.split_count == 1);
  CHECK(plan.match_keys["backend"] == "pytorch");
  CHECK(plan.shards[0].tests.size() == 8);

  StageRequest db;
  db.test_db_context = "l0_dgx_b200";
  db.match = {{"gpu", "B200"}, {"system_gpu_count", "2"}, {"stage", "pre_merge"}};
  plan = Plan(db);
  CHECK(plan.gpu_count == 0);
  CHECK(plan.splits == std::vector<int>{1});
  REQUIRE(plan.shards.size() == 1);
  CHECK(Ids(plan.shards[0].tests) ==
        std::vector<std::string>{"accuracy/test_llm_api_pytorch.py::TestD::test_two_gpus"});
}

// A stage table can hold names of any length (a checkout is anyone's): the error for an
// unknown stage names its near names escaped and cut, never a whole hostile name.
TEST_CASE("plan stage: an unknown stage's hint cuts and escapes the table's names", "[stage]") {
  const fs::path root =
      fs::temp_directory_path() / ("trtllm_stage_hint_" + std::to_string(::getpid()));
  fs::create_directories(root / "jenkins");
  const std::string long_name = "A10-PyTorch-" + std::string(200000, 'x') + "-1";
  {
    std::ofstream groovy(root / "jenkins" / "L0_Test.groovy");
    groovy << "def launchTestJobs(pipeline, testFilter)\n{\n    x86TestConfigs = [\n"
           << "        \"" << long_name << "\": [\"a10\", \"l0_a10\", 1, 1],\n"
           << "        \"A10-Evil\u001b[31m-1\": [\"a10\", \"l0_a10\", 1, 1],\n"
           << "    ]\n}\n";
  }
  StageRequest request;
  request.repo_root = root.string();
  request.stage = "PyTorch";
  std::string error = PlanError(request);
  CHECK_THAT(error, Catch::Contains("did you mean: A10-PyTorch-xxx"));
  CHECK_THAT(error, Catch::Contains("... (200014 bytes)"));
  CHECK(error.size() < 2000);
  request.stage = "Evil";
  error = PlanError(request);
  CHECK(error.find('\x1b') == std::string::npos);
  request.stage = std::string(5000, 'y') + "\x1b";  // the name asked for is cut too
  error = PlanError(request);
  CHECK(error.size() < 2000);
  CHECK(error.find('\x1b') == std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("plan stage: bad input is exit 2 naming what and the near names", "[stage]") {
  StageRequest request;
  request.stage = "DGX_B200-4_GPU-PyTorch-1";
  std::string error = PlanError(request);
  CHECK_THAT(error, Catch::Contains("unknown stage 'DGX_B200-4_GPU-PyTorch-1'"));
  CHECK_THAT(error, Catch::Contains("did you mean: DGX_B200-4_GPUs-PyTorch-1"));
  request.stage = "PyTorch-Ray";
  CHECK_THAT(PlanError(request), Catch::Contains("DGX_B200-4_GPUs-PyTorch-Ray-1"));
  // Commented-out stages are not stages.
  request.stage = "A10-CPP-1";
  CHECK_THAT(PlanError(request), Catch::Contains("unknown stage 'A10-CPP-1'"));

  request.stage = "DGX_B200-8_GPUs-TensorRT-1";
  error = PlanError(request);
  CHECK_THAT(error, Catch::Contains("renders no tests with keys {auto_trigger=others, "
                                    "backend=tensorrt, gpu=dgx_b200, orchestrator=mpi, "
                                    "stage=pre_merge, system_gpu_count=8}"));
  CHECK_THAT(error, Catch::Contains("--match key=value"));

  request.stage = "DGX_B200-4_GPUs-PyTorch-Sparse-1";
  error = PlanError(request);
  CHECK_THAT(error, Catch::Contains("test-db context 'l0_dgx_b200_sparse' has no file"));
  CHECK_THAT(error, Catch::Contains("did you mean: l0_dgx_b200"));

  StageRequest none;
  CHECK_THAT(PlanError(none), Catch::Contains("give --stage NAME"));
  StageRequest escape;
  escape.test_db_context = "../../etc/passwd";
  CHECK_THAT(PlanError(escape), Catch::Contains("is not a file name"));

  request.stage = "DGX_B200-4_GPUs-PyTorch-1";
  request.waives_file = FixtureRoot() + "/no-such-waives.txt";
  CHECK_THAT(PlanError(request), Catch::Contains("waives file '"));

  const fs::path bad = fs::temp_directory_path() / "trtllm_run_stage_plan_bad_waives.txt";
  std::ofstream(bad) << "accuracy/x.py::t SKIP https://nvbugs/1\n";
  request.waives_file = bad.string();
  CHECK_THAT(PlanError(request), Catch::Contains(bad.string() + ":1: test-list line"));
  fs::remove(bad);

  StageRequest nowhere;
  nowhere.repo_root = fs::temp_directory_path().string();
  nowhere.stage = "A10-PyTorch-1";
  CHECK_THAT(PlanError(nowhere), Catch::Contains("jenkins/L0_Test.groovy' does not exist"));
}

}  // namespace
}  // namespace trtllm_run
