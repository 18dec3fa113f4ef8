// GPU counts from every marker form TensorRT-LLM's tests use, through the real pytest
// workflow plugin on the fixture tree (tests/fixtures/trtllm/.../accuracy/test_marker_forms.py,
// whose ids real pytest collects: see the integration test "pytest collects the ids the
// marker tests plan"): pytest.param marks matched by id=, by the parametrize's ids=[...]
// list and by pytest's generated id; class and module pytestmark; stacked markers read kind
// by kind as the repo's conftest reads them; skip_less_device_memory as a note; the GPU
// count an id names (tp16, tp8pp2); a test-db block's system_gpu_count.
#include "plan_test_support.h"

using namespace plan_test;

namespace {

const std::string kForms = "tests/integration/defs/accuracy/test_marker_forms.py";

Result<JobPlan> PlanId(const std::string& id, std::optional<int> test_db_gpus = std::nullopt) {
  CaseRequest request;
  request.test_cmd = "pytest -v \"" + kForms + "::" + id + "\"";
  request.test_db_gpu_count = test_db_gpus;
  return PlanCase(request);
}

struct Want {
  std::string id;
  int gpus;
  std::string note;  // a note that must appear
};

}  // namespace

TEST_CASE("marker forms: pytest.param marks by id=, ids=[...] position and generated id",
          "[plan][pytest][markers]") {
  const std::vector<Want> wants = {
      // ids=[...] gives the i-th pytest.param its id (planned as 1 GPU before).
      {"TestIdsList::test_nvfp4_multi_gpus[latency]", 8,
       "skip_less_mpi_world_size(8) in the pytest.param 'latency' of test_nvfp4_multi_gpus"},
      {"TestIdsList::test_nvfp4_multi_gpus[throughput_tp4]", 4,
       "skip_less_mpi_world_size(4) in the pytest.param 'throughput_tp4'"},
      // A plain tuple in the list: no marks; its list id is not another entry's.
      {"TestIdsList::test_nvfp4_multi_gpus[single]", 1, "required_devices 1: default"},
      // An own id= wins over the list's; the list's name for it selects nothing.
      {"TestIdsList::test_nvfp4_multi_gpus[own_id_tp2]", 2,
       "skip_less_device(2) in the pytest.param 'own_id_tp2'"},
      {"TestIdsList::test_nvfp4_multi_gpus[overridden_by_own_id]", 1, "required_devices 1"},
      // Stacked parametrize: one by its ids list, the other by pytest's generated id.
      {"TestIdsList::test_stacked[tp4-True]", 4, "pytest.param 'tp4'"},
      {"TestIdsList::test_stacked[tp2-False]", 2, "pytest.param 'tp2'"},
      // Kind by kind: the method's skip_less_device(2) does not hide the class's world size.
      {"TestClassWorldSize::test_method_device", 8,
       "skip_less_mpi_world_size(8) on class TestClassWorldSize"},
      {"TestClassPytestmark::test_plain", 4, "skip_less_device(4) on class TestClassPytestmark"},
      {"TestClassPytestmark::test_fewer", 2, "skip_less_device(2) on test_fewer"},
      {"TestMultiNode::test_world_16", 16, "skip_less_mpi_world_size(16) on test_world_16"},
      {"test_module_only", 1, "required_devices 1: default"},
  };
  for (const Want& want : wants) {
    Result<JobPlan> plan = PlanId(want.id);
    INFO(want.id << ": " << (plan.ok() ? Notes(plan.value()) : plan.status().ToString()));
    REQUIRE(plan.ok());
    CHECK(plan->required_devices == want.gpus);
    CHECK(HasNote(plan.value(), want.note));
  }
}

TEST_CASE("marker forms: skip_less_device_memory is a note, the largest of every level",
          "[plan][pytest][markers]") {
  Result<JobPlan> method = PlanId("TestIdsList::test_nvfp4_multi_gpus[single]");
  REQUIRE(method.ok());
  CHECK(HasNote(method.value(),
                "GPU memory: the test asks for at least 80000 MiB per GPU "
                "(skip_less_device_memory(80000) on test_nvfp4_multi_gpus"));
  Result<JobPlan> module = PlanId("test_module_only");
  REQUIRE(module.ok());
  CHECK(HasNote(module.value(),
                "at least 20000 MiB per GPU (skip_less_device_memory(20000) "
                "in the module's pytestmark"));
  CHECK(module->required_devices == 1);  // memory is not a GPU count
}

TEST_CASE("marker forms: an id that names its parallelism (tp16, tp8pp2) sizes the test",
          "[plan][pytest][markers]") {
  Result<JobPlan> tp16 = PlanId("TestMultiNode::test_serve[tp16]");
  REQUIRE(tp16.ok());
  CHECK(tp16->required_devices == 16);
  CHECK(HasNote(tp16.value(), "the parallelism the test id names (tp16"));
  CHECK(HasNote(tp16.value(), "no GPU-count marker was found for it"));
  Result<JobPlan> tp8pp2 = PlanId("TestMultiNode::test_serve[tp8pp2]");
  REQUIRE(tp8pp2.ok());
  CHECK(tp8pp2->required_devices == 16);
  Result<JobPlan> tp4 = PlanId("TestMultiNode::test_serve[tp4]");
  REQUIRE(tp4.ok());
  CHECK(tp4->required_devices == 4);
  // Before placement the job is one node; Slurm placement spreads it (multinode tests).
  CHECK(tp16->node_count == 1);
  CHECK(HasNote(tp16.value(), "on Slurm it spans nodes"));
}

TEST_CASE("marker forms: a test-db block's system_gpu_count when the test has no marker",
          "[plan][pytest][markers]") {
  Result<JobPlan> block = PlanId("test_module_only", 4);
  REQUIRE(block.ok());
  CHECK(block->required_devices == 4);
  CHECK(HasNote(block.value(), "the system_gpu_count of the test-db block"));
  // A marker wins; the block's larger count is a note.
  Result<JobPlan> marked = PlanId("TestClassPytestmark::test_fewer", 8);
  REQUIRE(marked.ok());
  CHECK(marked->required_devices == 2);
  CHECK(HasNote(marked.value(), "the test-db block the test came from runs on 8 GPUs"));
}

TEST_CASE("marker forms: the request's per-node count makes a multi-node pytest at once",
          "[plan][pytest][multinode]") {
  CaseRequest request;
  request.test_cmd =
      "cd tests/integration/defs && pytest -v \"accuracy/test_marker_forms.py"
      "::TestMultiNode::test_world_16\"";
  request.required_devices_per_node = 8;
  Result<JobPlan> plan = PlanCase(request);
  INFO((plan.ok() ? Notes(plan.value()) : plan.status().ToString()));
  REQUIRE(plan.ok());
  CHECK(plan->node_count == 2);
  CHECK(plan->total_required_devices == 16);
  CHECK(plan->launch.task_layout == TaskLayout::kAsPlanned);
  const PlanStep& run = plan->steps.back();
  CHECK(run.tasks == 16);
  CHECK(run.use_mpi);
  CHECK(run.command ==
        "cd tests/integration/defs && trtllm-llmapi-launch pytest -v \"accuracy/"
        "test_marker_forms.py::TestMultiNode::test_world_16\"");
  CHECK(HasNote(plan.value(), "multi-node pytest: 2 nodes of 8 GPUs"));
}
