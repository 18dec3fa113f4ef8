// The `remote_slurm` executor (spec 000 Step 5 "For remote_slurm"): Slurm over SSH.
// Prepare renders the job into the work dir (render_slurm.h: the batch script of Categories
// 2, 3, 5, 6 or submit.py's launch script for perf-sanity, job_spec.json with the
// remote paths and fields, slurm_env.json). Execute and Cancel are the Slurm run
// library's (slurm_run.h): one SSH master connection, preflight, repo setup, build job,
// transfer, sbatch, watch, scancel, verdict, logs copied back. `run --cases` shares
// all but the transfer and sbatch per destination (sdk/slurm/session.h).
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/slurm/describe.h"
#include "trtllm_run/sdk/slurm/held.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/sdk/slurm/session.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace trtllm_run {
namespace {

class RemoteSlurmExecutor : public Executor {
 public:
  std::string Name() const override { return "remote_slurm"; }

  ExecutorTraits Traits() const override {
    ExecutorTraits traits;
    traits.slurm = true;
    traits.container = true;
    traits.remote = true;
    return traits;
  }

  // `session`: shared (default) | per-case (sdk/slurm/session.h).
  Status CheckExecutorOptions(const std::map<std::string, std::string>& options) const override {
    return CheckSlurmSessionOptions(options, Name());
  }

  Status Validate(const CaseRequest& request, const JobPlan& plan,
                  const Placement& placement) const override {
    return ValidateSlurmJob(request, plan, placement, Options());
  }

  Status Prepare(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                 JobSpec* spec) override {
    // The run inputs the job spec carries for Execute and Cancel.
    TRTLLM_RUN_RETURN_IF_ERROR(PrepareSlurmJob(request, plan, placement, Options(), spec));
    return AddSlurmRunFields(request, /*remote=*/true, spec);
  }

  // Submit, watch, cancel and judge (sdk/slurm/submit.h): the one Slurm run, through the
  // scenario the job spec names: its login node, over one SSH master connection.
  RunResult Execute(const JobSpec& spec, const ExecContext& context) override {
    return ExecuteSlurmJob(spec, context);
  }
  Status Cancel(const JobSpec& spec, const ExecContext& context) override {
    return CancelSlurmJob(spec, context);
  }
  // `trtllm-run status`, MCP case state: the controller's record, asked on the login node, over the
  // spec's SSH connection.
  JobDescription DescribeJob(const JobSpec& spec, const RunState* state) const override {
    return DescribeSlurmJob(spec, state);
  }
  // `run --cases`: one shared session per SSH destination, unless session=per-case.
  std::unique_ptr<ExecutorSession> NewSession(const SessionOptions& options) override {
    return NewSlurmSession(options, Name());
  }
  // `trtllm-run release`: the allocations persistent mode holds on SSH destinations.
  std::vector<HeldResource> ListHeld() const override {
    return HeldSlurmAllocations(/*remote=*/true);
  }
  Status ReleaseHeld(const std::string& id) override {
    return ReleaseHeldSlurmAllocation(id, /*remote=*/true);
  }

 private:
  static SlurmJobOptions Options() {
    SlurmJobOptions options;
    options.executor = "remote_slurm";
    options.remote = true;
    return options;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(trtllm_run::RemoteSlurmExecutor, "remote_slurm", "0.1.0",
                                   "Submits the job to a remote Slurm cluster over SSH")
