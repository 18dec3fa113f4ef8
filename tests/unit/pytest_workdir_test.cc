// Where a pytest job runs: an integration test id that resolves under
// tests/integration/defs gets that directory as the run step's working directory in the
// rendered Slurm script, locally and on a remote cluster (where the repo's path differs,
// so the directory is relative to it).
#include "plan_test_support.h"

using namespace plan_test;

namespace {

std::string RenderPytest(const TempDir& root, const std::string& test_cmd, bool remote) {
  CaseRequest request;
  request.repo_root = FakeRepo();
  request.test_cmd = test_cmd;
  request.skip_install = true;
  if (remote) request.remote_repo_path = "/lustre/u/TensorRT-LLM";
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  CHECK(plan->working_dir == "tests/integration/defs");
  JobSpec spec;
  spec.scenario = remote ? "remote_slurm" : "local_slurm";
  spec.work_dir = root / ("work_dirs/" + plan->model_name + "_20260101_000000");
  fs::create_directories(spec.work_dir);
  Placement placement;
  placement.slurm_env = LoadEnv(remote ? "remote_b" : "cluster_a");
  placement.partition = remote ? "gb200" : "batch";
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  SlurmJobOptions options;
  options.executor = spec.scenario;
  options.remote = remote;
  Status status = PrepareSlurmJob(request, plan.value(), placement, options, &spec);
  INFO(status.ToString());
  REQUIRE(status.ok());
  CHECK(spec.working_dir == "tests/integration/defs");
  return ReadText(spec.script_path);
}

}  // namespace

TEST_CASE("Slurm scripts run integration test ids from tests/integration/defs", "[render]") {
  TempDir root;
  const std::string id = "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_bfloat16";
  for (bool remote : {false, true}) {
    INFO((remote ? "remote_slurm" : "local_slurm"));
    std::string script = RenderPytest(root, "pytest " + id, remote);
    const std::string project = remote ? "/lustre/u/TensorRT-LLM" : FakeRepo();
    // The run step: into the project, then into defs, then pytest with the id as given.
    std::size_t cd_project = script.find("cd " + project + " || exit 1");
    std::size_t cd_defs = script.find("cd tests/integration/defs || exit 1", cd_project);
    std::size_t run = script.find("pytest " + id, cd_defs);
    CHECK(cd_project != std::string::npos);
    CHECK(cd_defs != std::string::npos);
    CHECK(run != std::string::npos);
  }
}
