// A one-task trtllm-eval step runs without MPI, as the one-task bench step does: no
// --mpi, and the payload unsets srun's PMI/MPI/Slurm variables except SLURM_PROCID and
// SLURM_LOCALID (so mpi4py does not initialise MPI against them). More than one task:
// the cluster's pmix plugin and trtllm-llmapi-launch. The rendered script is run with a
// stand-in srun and a stand-in trtllm-eval that prints what it sees.
#include <rapidjson/document.h>

#include "plan_test_support.h"

using namespace plan_test;

namespace {

struct Prepared {
  Status status;
  JobSpec spec;
  std::string script;
};

Prepared PrepareEval(const TempDir& root, const std::string& eval_cmd) {
  CaseRequest request;
  request.repo_root = FakeRepo();
  request.eval_cmd = eval_cmd;
  request.skip_install = true;
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  Prepared out;
  out.spec.scenario = "local_slurm";
  out.spec.work_dir = root / ("work_dirs/" + plan->model_name + "_20260101_000000");
  fs::create_directories(out.spec.work_dir);
  Placement placement;
  placement.slurm_env = LoadEnv("cluster_a");
  placement.partition = "batch";
  placement.llm_models_root = "/llm-models";
  placement.models_host_path = "/data/models";
  SlurmJobOptions options;
  options.executor = "local_slurm";
  out.status = PrepareSlurmJob(request, plan.value(), placement, options, &out.spec);
  if (out.status.ok()) out.script = ReadText(out.spec.script_path);
  return out;
}

const char kPrintEnv[] =
    "#!/bin/bash\n"
    "# Stand-in trtllm-eval: the MPI/Slurm variables it was started with.\n"
    "for v in PMIX_RANK PMI_RANK OMPI_COMM_WORLD_SIZE MPI_LOCALRANKID SLURM_JOB_ID "
    "SLURM_STEP_ID SLURM_PROCID SLURM_LOCALID; do echo \"$v=${!v-unset}\"; done\n"
    "echo 'accuracy: 0.5'\n";

}  // namespace

TEST_CASE("one-task eval: no --mpi, the MPI/Slurm variables unset but the ranks",
          "[render][slurm][eval]") {
  TempDir root;
  Prepared job = PrepareEval(root, "trtllm-eval --model /m/Qwen3-8B gsm8k");
  INFO(job.status.ToString());
  REQUIRE(job.status.ok());
  std::vector<StepCall> steps = Steps(job.script);
  const StepCall* run = FindStep(steps, "run");
  REQUIRE(run);
  CHECK(run->Get("--ntasks") == "1");
  CHECK_FALSE(run->Has("--mpi"));
  CHECK_THAT(run->command[2], Catch::EndsWith("\ntrtllm-eval --model /m/Qwen3-8B gsm8k"));

  WriteShims(root / "shims");
  WriteText(root / "shims/trtllm-eval", kPrintEnv, true);
  CommandOutput out = RunScript(
      root / "shims", {"env", "PMIX_RANK=3", "PMI_RANK=3", "OMPI_COMM_WORLD_SIZE=4",
                       "MPI_LOCALRANKID=3", "SLURM_JOB_ID=77", "SLURM_STEP_ID=1", "SLURM_PROCID=0",
                       "SLURM_LOCALID=0", "bash", job.spec.script_path});
  INFO(out.stdout_text << out.stderr_text);
  CHECK(out.exit_code == 0);
  CHECK(StepOutput(out.stdout_text, "run") ==
        "PMIX_RANK=unset\nPMI_RANK=unset\nOMPI_COMM_WORLD_SIZE=unset\nMPI_LOCALRANKID=unset\n"
        "SLURM_JOB_ID=unset\nSLURM_STEP_ID=unset\nSLURM_PROCID=0\nSLURM_LOCALID=0\n"
        "accuracy: 0.5\n");
}

TEST_CASE("multi-task eval: the cluster's pmix plugin and trtllm-llmapi-launch, no cleanup",
          "[render][slurm][eval]") {
  TempDir root;
  Prepared job = PrepareEval(root, "trtllm-eval --model /m/Qwen3-8B --tp_size 2 gsm8k");
  REQUIRE(job.status.ok());
  std::vector<StepCall> steps = Steps(job.script);
  const StepCall* run = FindStep(steps, "run");
  REQUIRE(run);
  CHECK(run->Get("--ntasks") == "2");
  CHECK(run->Get("--mpi") == "pmix_v5");
  CHECK_THAT(run->command[2], !Catch::Contains("unset"));
  CHECK_THAT(run->command[2],
             Catch::EndsWith("\ntrtllm-llmapi-launch trtllm-eval --model /m/Qwen3-8B --tp_size 2 "
                             "gsm8k"));
}
