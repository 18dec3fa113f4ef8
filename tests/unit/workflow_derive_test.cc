// Derivation tables of the four workflows (spec 000 "Device Count Auto-Parsing" and
// Step 1, spec 001 Step 3), through the real plugins in claim order: model_name, the
// device counts, node_count, the workflow type, and the limit errors.
#include <functional>

#include "plan_test_support.h"

using namespace plan_test;

namespace {

const std::string kDefs = "tests/integration/defs/";
const std::string kAcc = kDefs + "accuracy/test_llm_api_pytorch.py";
const std::string kUnit = "tests/unittest/_torch/multi_gpu/test_allreduce.py";
const std::string kDisagg =
    "gb200_deepseek-r1-fp4_1k1k_con1_ctx1_dep4_gen1_tep8_eplb0_mtp3_ccb-UCX";

struct Case {
  Case(std::string name_, std::function<void(CaseRequest&)> make_, std::string workflow_type_,
       std::string model_, int required_ = 0, int total_ = 0, int per_node_ = 0, int nodes_ = 0,
       std::string note_ = "", std::string error_ = "")
      : name(std::move(name_)),
        make(std::move(make_)),
        workflow_type(std::move(workflow_type_)),
        model(std::move(model_)),
        required(required_),
        total(total_),
        per_node(per_node_),
        nodes(nodes_),
        note(std::move(note_)),
        error(std::move(error_)) {}
  std::string name;
  std::function<void(CaseRequest&)> make;
  std::string workflow_type;  // expected; "" with an error
  std::string model;
  int required, total, per_node, nodes;
  std::string note;   // a note that must appear
  std::string error;  // non-empty: planning fails with kInvalidInput containing it
};

std::function<void(CaseRequest&)> Custom(std::string cmd,
                                         std::function<void(CaseRequest&)> more = {}) {
  return [=](CaseRequest& r) {
    r.custom_cmd = cmd;
    if (more) more(r);
  };
}
std::function<void(CaseRequest&)> Bench(std::string cmd,
                                        std::function<void(CaseRequest&)> more = {}) {
  return [=](CaseRequest& r) {
    r.bench_cmd = cmd;
    if (more) more(r);
  };
}
std::function<void(CaseRequest&)> Eval(std::string cmd,
                                       std::function<void(CaseRequest&)> more = {}) {
  return [=](CaseRequest& r) {
    r.eval_cmd = cmd;
    if (more) more(r);
  };
}
std::function<void(CaseRequest&)> Test(std::string cmd,
                                       std::function<void(CaseRequest&)> more = {}) {
  return [=](CaseRequest& r) {
    r.test_cmd = cmd;
    if (more) more(r);
  };
}
std::string Pytest(const std::string& node) { return "pytest -v \"" + node + "\""; }
std::string Perf(const std::string& id) {
  return "pytest " + kDefs + "perf/test_perf_sanity.py -v \"test_e2e[" + id + "]\"";
}

std::vector<Case> Cases() {
  const std::string models = "/models/Llama-3.1-8B-Instruct";
  return {
      // ---- custom ----
      {"custom: model from --model", Custom("python3 run.py --model " + models), "custom",
       "llama_3_1_8b_instruct", 1, 1, 1, 1},
      {"custom: --model=X form", Custom("python3 run.py --model=Qwen/Qwen2-7B"), "custom",
       "qwen2_7b", 1, 1, 1, 1},
      {"custom: required_devices input",
       Custom("nvidia-smi", [](CaseRequest& r) { r.required_devices = 4; }), "custom", "custom", 4,
       4, 4, 1},
      {"custom: more than 8 GPUs", Custom("true", [](CaseRequest& r) { r.required_devices = 9; }),
       "", "", 0, 0, 0, 0, "", "required_devices = 9 exceeds the maximum of 8 GPUs for custom"},
      {"custom: two nodes",
       Custom("true",
              [](CaseRequest& r) {
                r.total_required_devices = 8;
                r.required_devices_per_node = 4;
              }),
       "", "", 0, 0, 0, 0, "", "custom commands are limited to 1 node"},
      // ---- bench ----
      {"bench: throughput --tp 4",
       Bench("trtllm-bench --model /models/Llama-3.1-8B throughput --dataset d.json --tp 4"),
       "bench", "llama_3_1_8b", 4, 4, 4, 1, "tp 4 x pp 1"},
      {"bench: chain, tp x pp of the last invocation",
       Bench("trtllm-bench --model m1 prepare-dataset --output d.json --tp 8 && "
             "trtllm-bench --model m1 throughput --dataset d.json --tp 2 --pp 2"),
       "bench", "m1", 4, 4, 4, 1, "split on its top-level '&&'"},
      {"bench: --tp=4 form", Bench("trtllm-bench --model=org/Model-X throughput --tp=4 --pp=1"),
       "bench", "model_x", 4, 4, 4, 1},
      {"bench: --ep adds no GPUs", Bench("trtllm-bench --model m throughput --tp 4 --ep 8"),
       "bench", "m", 4, 4, 4, 1, "ep 8 adds no GPUs"},
      {"bench: model from --model_path",
       Bench("trtllm-bench --model_path /ckpt/Mixtral-8x7B-v0.1 latency --tp 2"), "bench",
       "mixtral_8x7b_v0_1", 2, 2, 2, 1},
      {"bench: '&&' inside quotes is not a separator",
       Bench("trtllm-bench --model m throughput --extra \"a && b\" --tp 1"), "bench", "m", 1, 1, 1,
       1},
      {"bench: mpirun in front", Bench("mpirun -n 2 trtllm-bench --model m throughput --tp 2"),
       "bench", "m", 2, 2, 2, 1, "prefixed with trtllm-llmapi-launch"},
      {"bench: backslash continuations",
       Bench("trtllm-bench \\\n  --model m \\\n  throughput \\\n  --tp 2 \\\n  --pp 2"), "bench",
       "m", 4, 4, 4, 1},
      {"bench: required_devices input wins",
       Bench("trtllm-bench --model m throughput --tp 2",
             [](CaseRequest& r) { r.required_devices = 1; }),
       "bench", "m", 1, 1, 1, 1, "given"},
      {"bench: two top-level && is an error",
       Bench("trtllm-bench --model m prepare-dataset && trtllm-bench --model m throughput && "
             "echo done"),
       "", "", 0, 0, 0, 0, "", "2 top-level '&&'; at most one is allowed"},
      {"bench: multi-node is an error",
       Bench("trtllm-bench --model m throughput --tp 8",
             [](CaseRequest& r) { r.required_devices_per_node = 4; }),
       "", "", 0, 0, 0, 0, "", "multi-node trtllm-bench is not supported"},
      {"bench: --tp must be a number", Bench("trtllm-bench --model m throughput --tp four"), "", "",
       0, 0, 0, 0, "", "--tp must be a positive integer, got 'four'"},
      {"bench: no trtllm-bench", Bench("python3 bench.py --tp 2"), "", "", 0, 0, 0, 0, "",
       "bench_cmd does not run trtllm-bench"},
      // ---- eval ----
      {"eval: --tp_size 4", Eval("trtllm-eval --model " + models + " --tp_size 4 gsm8k"), "eval",
       "llama_3_1_8b_instruct", 4, 4, 4, 1},
      {"eval: --tp_size=2 --pp_size=2", Eval("trtllm-eval --model=m --tp_size=2 --pp_size=2 mmlu"),
       "eval", "m", 4, 4, 4, 1},
      {"eval: --gpus_per_node splits nodes",
       Eval("trtllm-eval --model m --tp_size 8 --gpus_per_node 4 gsm8k"), "eval", "m", 8, 8, 4, 2,
       "perf-sanity path"},
      {"eval: model_name input",
       Eval("trtllm-eval --model m gsm8k", [](CaseRequest& r) { r.model_name = "My-Model.v2"; }),
       "eval", "my_model_v2", 1, 1, 1, 1},
      {"eval: no trtllm-eval", Eval("python3 eval.py gsm8k"), "", "", 0, 0, 0, 0, "",
       "eval_cmd does not run trtllm-eval"},
      // ---- pytest ----
      {"pytest: no marker", Test(Pytest(kAcc + "::TestLlama3_1_8BInstruct::test_bfloat16")),
       "pytest", "llama3_1_8binstruct", 1, 1, 1, 1, "no GPU-count marker"},
      {"pytest: function marker, memory marker ignored",
       Test(Pytest(kAcc + "::TestLlama3_1_8BInstruct::test_fp8_tp2")), "pytest",
       "llama3_1_8binstruct", 2, 2, 2, 1, "skip_less_device(2) on test_fp8_tp2"},
      {"pytest: pytest.param id marks",
       Test(Pytest(kAcc + "::TestLlama3_1_8BInstruct::test_nvfp4[tp2pp2]")), "pytest",
       "llama3_1_8binstruct", 4, 4, 4, 1, "pytest.param 'tp2pp2'"},
      {"pytest: pytest.param values, marks list",
       Test(Pytest(kAcc + "::TestLlama3_1_8BInstruct::test_nvfp4[4-2]")), "pytest",
       "llama3_1_8binstruct", 8, 8, 8, 1},
      {"pytest: pytest.param without marks",
       Test(Pytest(kAcc + "::TestLlama3_1_8BInstruct::test_nvfp4[tp1]")), "pytest",
       "llama3_1_8binstruct", 1, 1, 1, 1},
      {"pytest: class marker", Test(Pytest(kAcc + "::TestDeepSeekV3Lite::test_bfloat16")), "pytest",
       "deepseekv3lite", 4, 4, 4, 1, "on class TestDeepSeekV3Lite"},
      {"pytest: method marker overrides the class",
       Test(Pytest(kAcc + "::TestDeepSeekV3Lite::test_fp8_block_scales_4gpus[eagle]")), "pytest",
       "deepseekv3lite", 8, 8, 8, 1},
      {"pytest: markers in docstrings are not markers",
       Test(Pytest(kAcc + "::TestDeepSeekV3Lite::test_nvfp4_single")), "pytest", "deepseekv3lite",
       4, 4, 4, 1},
      // The method's skip_less_mpi_world_size(2) does not hide the outer class's
      // skip_less_device(4): the conftest reads each kind with get_closest_marker.
      {"pytest: nested class, skip_less_mpi_world_size beside an outer skip_less_device",
       Test(Pytest(kAcc + "::TestDeepSeekV3Lite::TestNested::test_inner")), "pytest", "nested", 4,
       4, 4, 1, "skip_less_device(4) on class TestDeepSeekV3Lite"},
      {"pytest: an inner class's marker before its outer class's",
       Test(Pytest(kAcc + "::TestOuterFour::TestInnerTwo::test_inner_default")), "pytest",
       "innertwo", 2, 2, 2, 1, "skip_less_device(2) on class TestInnerTwo"},
      {"pytest: a marker only on the inner class",
       Test(Pytest(kAcc + "::TestOuterPlain::TestInnerOnly::test_inner_only")), "pytest",
       "inneronly", 2, 2, 2, 1, "on class TestInnerOnly"},
      {"pytest: an inner class as the node id",
       Test(Pytest(kAcc + "::TestOuterFour::TestInnerTwo")), "pytest", "innertwo", 2, 2, 2, 1,
       "on class TestInnerTwo"},
      {"pytest: class pytestmark", Test(Pytest(kAcc + "::TestQwen3_235B::test_fp8")), "pytest",
       "qwen3_235b", 8, 8, 8, 1},
      {"pytest: more than 8 GPUs: one node until the partition says how many a node has",
       Test(Pytest(kAcc + "::TestQwen3_235B::test_too_big")), "pytest", "qwen3_235b", 16, 16, 16, 1,
       "on Slurm it spans nodes"},
      {"pytest: module-level function", Test(Pytest(kAcc + "::test_multi_world")), "pytest",
       "multi_world", 4, 4, 4, 1},
      {"pytest: stacked parametrize, first param",
       Test(Pytest(kAcc + "::test_llm_parametrized[CUTLASS-llama-7b]")), "pytest",
       "llm_parametrized", 2, 2, 2, 1},
      {"pytest: stacked parametrize, second param",
       Test(Pytest(kAcc + "::test_llm_parametrized[TRTLLM-mixtral-8x7b]")), "pytest",
       "llm_parametrized", 4, 4, 4, 1},
      {"pytest: stacked parametrize, no marked param",
       Test(Pytest(kAcc + "::test_llm_parametrized[TRTLLM-llama-7b]")), "pytest",
       "llm_parametrized", 1, 1, 1, 1},
      {"pytest: module pytestmark", Test(Pytest(kDefs + "test_e2e.py::test_openai_chat_example")),
       "pytest", "openai_chat_example", 2, 2, 2, 1, "module's pytestmark"},
      {"pytest: function marker beats module pytestmark",
       Test(Pytest(kDefs + "test_e2e.py::test_trtllm_serve_multi_gpu")), "pytest",
       "trtllm_serve_multi_gpu", 4, 4, 4, 1},
      {"pytest: relative to tests/integration/defs",
       Test("cd tests/integration/defs && pytest "
            "accuracy/test_llm_api_pytorch.py::TestDeepSeekV3Lite::test_bfloat16"),
       "pytest", "deepseekv3lite", 4, 4, 4, 1},
      {"pytest: gpu2", Test("python -m pytest " + kUnit + "::test_allreduce_2gpu"), "pytest",
       "allreduce_2gpu", 2, 2, 2, 1},
      {"pytest: gpu4 with params", Test("pytest " + kUnit + "::test_allreduce_4gpu[float16]"),
       "pytest", "allreduce_4gpu", 4, 4, 4, 1},
      {"pytest: skip_single_gpu", Test("pytest " + kUnit + "::test_needs_two"), "pytest",
       "needs_two", 2, 2, 2, 1},
      {"pytest: skip_single_gpu in pytest.param marks",
       Test("pytest " + kUnit + "::test_with_pool[2]"), "pytest", "with_pool", 2, 2, 2, 1},
      {"pytest: required_devices input wins",
       Test(Pytest(kAcc + "::TestDeepSeekV3Lite::test_bfloat16"),
            [](CaseRequest& r) { r.required_devices = 2; }),
       "pytest", "deepseekv3lite", 2, 2, 2, 1, "marker says 4"},
      // Two ids in one pytest run on one node: the larger GPU marker sizes it, whichever
      // id comes first.
      {"pytest: two ids needing 2 then 4 GPUs plan 4",
       Test("pytest -v \"" + kAcc + "::TestLlama3_1_8BInstruct::test_fp8_tp2\" \"" + kAcc +
            "::TestDeepSeekV3Lite::test_bfloat16\""),
       "pytest", "llama3_1_8binstruct", 4, 4, 4, 1, "on class TestDeepSeekV3Lite"},
      {"pytest: two ids needing 4 then 2 GPUs plan 4",
       Test("pytest -v \"" + kAcc + "::TestDeepSeekV3Lite::test_bfloat16\" \"" + kAcc +
            "::TestLlama3_1_8BInstruct::test_fp8_tp2\""),
       "pytest", "deepseekv3lite", 4, 4, 4, 1, "on class TestDeepSeekV3Lite"},
      {"pytest: missing test file", Test("pytest tests/nope/test_missing.py::test_x"), "", "", 0, 0,
       0, 0, "", "test file 'tests/nope/test_missing.py' of test_cmd was not found"},
      {"pytest: two nodes as asked: multi-node pytest",
       Test(Pytest(kAcc + "::TestQwen3_235B::test_fp8"),
            [](CaseRequest& r) {
              r.total_required_devices = 8;
              r.required_devices_per_node = 4;
            }),
       "pytest", "qwen3_235b", 8, 8, 4, 2, "multi-node pytest: 2 nodes of 4 GPUs"},
      {"test_cmd: not pytest", Test("python3 examples/run.py --model /m/Phi-3-mini"), "pytest",
       "phi_3_mini", 1, 1, 1, 1, "not a pytest command"},
      // ---- perf-sanity ----
      {"perf-sanity: aggregated id, fixture config",
       Test(Perf("aggr-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp2_mtp0_1k1k")), "perf_sanity",
       "gpt_oss_120b_fp4", 2, 2, 8, 1, "server config gpt_oss_fp4_tp2_mtp0_1k1k"},
      {"perf-sanity: aggr_upload, TIMEOUT suffix",
       Test(Perf("aggr_upload-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp1_mtp0_8k1k") +
            " TIMEOUT (120)"),
       "perf_sanity", "gpt_oss_120b_fp4", 1, 1, 8, 1},
      {"perf-sanity: no server name, the largest entry",
       Test(Perf("aggr-gpt_oss_120b_fp4_blackwell")), "perf_sanity", "gpt_oss_120b_fp4", 2, 2, 8, 1,
       "the largest"},
      {"perf-sanity: perf_config_yaml given",
       Test(Perf("aggr-anything-gpt_oss_fp4_tp2_mtp0_1k1k"),
            [](CaseRequest& r) {
              r.perf_config_yaml = FakeRepo() +
                                   "/tests/scripts/perf-sanity/aggregated/"
                                   "gpt_oss_120b_fp4_blackwell.yaml";
            }),
       "perf_sanity", "gpt_oss_120b_fp4", 2, 2, 8, 1, "given (perf_config_yaml)"},
      {"perf-sanity: disaggregated e2e", Test(Perf("disagg-e2e-" + kDisagg)), "perf_sanity",
       "deepseek_r1_0528_fp4_v2", 12, 12, 4, 3, "1 context server(s) of 4 GPUs + 1 generation"},
      {"perf-sanity: disaggregated gen_only", Test(Perf("disagg_upload-gen_only-" + kDisagg)),
       "perf_sanity", "deepseek_r1_0528_fp4_v2", 12, 12, 4, 3},
      {"perf-sanity: ctx_only", Test(Perf("aggr-ctx_only-" + kDisagg)), "perf_sanity",
       "deepseek_r1_0528_fp4_v2", 4, 4, 4, 1, "one context server"},
      {"perf-sanity: context parallelism sizes as submit.py",
       Test(Perf("aggr-cp_sizing_test-tp2_cp2")), "perf_sanity", "cp_test_model", 2, 4, 4, 1,
       "sizing differs"},
      {"perf-sanity: multi-node aggregated", Test(Perf("aggr-cp_sizing_test-tp8_pp2")),
       "perf_sanity", "cp_test_model", 16, 16, 4, 4},
      {"perf-sanity: no id, no yaml",
       Test("pytest " + kDefs + "perf/test_perf_sanity.py -k gpt_oss"), "perf_sanity",
       "perf_sanity", 1, 1, 1, 1, "spec default"},
      {"perf-sanity: no matching server config",
       Test(Perf("aggr-gpt_oss_120b_fp4_blackwell-gpt_oss_fp4_tp16")), "", "", 0, 0, 0, 0, "",
       "no server config named 'gpt_oss_fp4_tp16'"},
      {"perf-sanity: unreadable perf yaml",
       Test(Perf("aggr-x-y"), [](CaseRequest& r) { r.perf_config_yaml = "/nonexistent/p.yaml"; }),
       "", "", 0, 0, 0, 0, "", "cannot read perf config '/nonexistent/p.yaml'"},
      {"perf-sanity: config of the id not found", Test(Perf("aggr-no_such_config-x")), "", "", 0, 0,
       0, 0, "", "'no_such_config.yaml' of test id 'aggr-no_such_config-x' was not found"},
      {"perf-sanity: bad id prefix", Test(Perf("benchmark-gpt_oss-x")), "", "", 0, 0, 0, 0, "",
       "starts with 'benchmark'; allowed: aggr, aggr_upload, disagg, disagg_upload"},
      {"perf-sanity: bad disagg mode", Test(Perf("disagg-ctx-" + kDisagg)), "", "", 0, 0, 0, 0, "",
       "needs a mode e2e or gen_only"},
  };
}

}  // namespace

TEST_CASE("workflow derivation table", "[workflow][derive]") {
  std::vector<Case> cases = Cases();
  REQUIRE(cases.size() >= 40);
  for (const Case& c : cases) {
    SECTION(c.name) {
      CaseRequest request;
      c.make(request);
      Result<JobPlan> plan = PlanCase(request);
      if (!c.error.empty()) {
        REQUIRE_FALSE(plan.ok());
        CHECK(plan.status().code() == StatusCode::kInvalidInput);
        CHECK_THAT(plan.status().ToString(), Catch::Contains(c.error));
        continue;
      }
      INFO((plan.ok() ? Notes(plan.value()) : plan.status().ToString()));
      REQUIRE(plan.ok());
      CHECK(plan->workflow_type == c.workflow_type);
      CHECK(plan->model_name == c.model);
      CHECK(plan->required_devices == c.required);
      CHECK(plan->total_required_devices == c.total);
      CHECK(plan->required_devices_per_node == c.per_node);
      CHECK(plan->node_count == c.nodes);
      if (!c.note.empty()) CHECK(HasNote(plan.value(), c.note));
    }
  }
}

TEST_CASE("workflows claim in spec order: custom, bench, eval, test_cmd", "[workflow]") {
  std::vector<std::string> order;
  for (const auto& workflow : Builtins().CreateWorkflows()) order.push_back(workflow->Name());
  std::vector<std::string> expected = {"custom", "bench", "eval", "pytest"};
  std::vector<std::string> ours;
  for (const std::string& name : order) {
    if (std::find(expected.begin(), expected.end(), name) != expected.end()) ours.push_back(name);
  }
  CHECK(ours == expected);

  CaseRequest both;
  both.bench_cmd = "trtllm-bench --model m throughput";
  both.eval_cmd = "trtllm-eval --model m gsm8k";
  Result<JobPlan> plan = PlanCase(both);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.status().ToString(), Catch::Contains("bench_cmd"));
  CHECK_THAT(plan.status().ToString(), Catch::Contains("eval_cmd"));
}

TEST_CASE("bench plan: steps, the run step's launcher and MPI", "[workflow][bench]") {
  CaseRequest request;
  request.bench_cmd =
      "trtllm-bench --model m prepare-dataset --output d.json && "
      "FOO=1 trtllm-bench --model m throughput --dataset d.json --tp 2";
  Result<JobPlan> plan = PlanCase(request);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps.size() == 3);
  CHECK(plan->steps[0].name == "install");
  CHECK(plan->steps[1].name == "prepare");
  CHECK(plan->steps[1].command == "trtllm-bench --model m prepare-dataset --output d.json");
  CHECK(plan->steps[1].tasks == 1);
  CHECK_FALSE(plan->steps[1].use_mpi);
  CHECK(plan->steps[2].command ==
        "FOO=1 trtllm-llmapi-launch trtllm-bench --model m throughput --dataset d.json --tp 2");
  CHECK(plan->steps[2].tasks == 2);
  CHECK(plan->steps[2].use_mpi);
  CHECK(plan->command == *request.bench_cmd);  // a direct run executes it as given
  CHECK(plan->success_patterns == std::vector<std::string>{"token/s", "throughput"});
  CHECK(plan->failure_patterns == std::vector<std::string>{"Error", "Traceback"});

  SECTION("already launched: not prefixed twice") {
    request.bench_cmd = "trtllm-llmapi-launch trtllm-bench --model m throughput --tp 2";
    plan = PlanCase(request);
    REQUIRE(plan.ok());
    CHECK(plan->steps.back().command == *request.bench_cmd);
  }
  SECTION("one task: no launcher, no MPI; skip_install drops the install step") {
    request.bench_cmd = "trtllm-bench --model m throughput --tp 1";
    request.skip_install = true;
    plan = PlanCase(request);
    REQUIRE(plan.ok());
    REQUIRE(plan->steps.size() == 1);
    CHECK(plan->steps[0].command == *request.bench_cmd);
    CHECK_FALSE(plan->steps[0].use_mpi);
  }
}

TEST_CASE("HF model ids resolve under llm_models_root or models_path", "[workflow][model]") {
  TempDir root;
  fs::create_directories(root / "models/llm/meta-llama/LLAMA-3.1-8B-Instruct");
  fs::create_directories(root / "models/deep/a/b/c/Phi-3");  // 4 levels down: too deep

  SECTION("eval: --model rewritten to the directory found, case-insensitively") {
    CaseRequest request;
    request.eval_cmd = "trtllm-eval --model meta-llama/Llama-3.1-8B-Instruct --tp_size 2 gsm8k";
    request.llm_models_root = root / "models";
    Result<JobPlan> plan = PlanCase(request);
    REQUIRE(plan.ok());
    std::string found = root / "models/llm/meta-llama/LLAMA-3.1-8B-Instruct";
    CHECK(plan->command == "trtllm-eval --model " + found + " --tp_size 2 gsm8k");
    CHECK(plan->steps.back().command ==
          "trtllm-llmapi-launch trtllm-eval --model " + found + " --tp_size 2 gsm8k");
    CHECK(plan->model_name == "llama_3_1_8b_instruct");
    CHECK(HasNote(plan.value(), "HuggingFace id resolved to " + found));
  }
  SECTION("models_path on the host maps to llm_models_root in the container") {
    CaseRequest request;
    request.bench_cmd =
        "trtllm-bench --model meta-llama/Llama-3.1-8B-Instruct prepare-dataset && "
        "trtllm-bench --model=meta-llama/Llama-3.1-8B-Instruct throughput";
    request.models_path = root / "models";
    request.llm_models_root = "/container/models";
    Result<JobPlan> plan = PlanCase(request);
    REQUIRE(plan.ok());
    const std::string mapped = "/container/models/llm/meta-llama/LLAMA-3.1-8B-Instruct";
    CHECK(plan->command == "trtllm-bench --model " + mapped + " prepare-dataset && " +
                               "trtllm-bench --model=" + mapped + " throughput");
  }
  SECTION("not found within depth 3: kept, with the download warning") {
    CaseRequest request;
    request.eval_cmd = "trtllm-eval --model microsoft/Phi-3 gsm8k";
    request.llm_models_root = root / "models";
    Result<JobPlan> plan = PlanCase(request);
    REQUIRE(plan.ok());
    CHECK(plan->command == *request.eval_cmd);
    CHECK(HasNote(plan.value(), "warning: model microsoft/Phi-3 is a HuggingFace id"));
    CHECK(HasNote(plan.value(), "download it from HuggingFace"));
  }
  SECTION("both directories given but absent here: named, not asked for again") {
    CaseRequest request;
    request.eval_cmd = "trtllm-eval --model microsoft/Phi-3 gsm8k";
    request.llm_models_root = "/container/models";
    request.models_path = root / "no_such_dir";
    Result<JobPlan> plan = PlanCase(request);
    REQUIRE(plan.ok());
    INFO(Notes(plan.value()));
    CHECK(HasNote(plan.value(),
                  "no models directory exists here to search (--llm-models-root "
                  "/container/models, --models-path " +
                      (root / "no_such_dir") + ": not a directory on this host)"));
    CHECK_FALSE(HasNote(plan.value(), "give --llm-models-root"));
    CHECK_FALSE(HasNote(plan.value(), "give --models-path"));
  }
  SECTION("one given and absent: the other is asked for") {
    CaseRequest request;
    request.eval_cmd = "trtllm-eval --model microsoft/Phi-3 gsm8k";
    request.llm_models_root = "/container/models";
    Result<JobPlan> plan = PlanCase(request);
    REQUIRE(plan.ok());
    CHECK(HasNote(plan.value(), "(give --models-path)"));
    CHECK_FALSE(HasNote(plan.value(), "give --llm-models-root"));
  }
}

TEST_CASE("eval plan: MPI and the launcher only for > 1 task, as for bench", "[workflow][eval]") {
  CaseRequest request;
  request.eval_cmd = "trtllm-eval --model /m/x gsm8k";
  Result<JobPlan> plan = PlanCase(request);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps.size() == 2);
  CHECK(plan->steps[0].name == "install");
  CHECK_THAT(plan->steps[0].command, Catch::Contains("examples/trtllm-eval/requirements.txt"));
  CHECK_FALSE(plan->steps[1].use_mpi);
  CHECK(plan->steps[1].command == *request.eval_cmd);
  CHECK(plan->success_patterns == std::vector<std::string>{"accuracy:", "score:"});
}
