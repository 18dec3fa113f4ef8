// The `local_slurm` executor (spec 000 Step 5 "For local_slurm"): Slurm on this host.
// Prepare renders the job into the work dir (render_slurm.h: the batch script of Categories
// 2, 3, 5, 6 or submit.py's launch script for perf-sanity, job_spec.json with the
// persistent-mode fields, slurm_env.json). Execute and Cancel are the Slurm run
// library's (slurm_run.h): sbatch, watch, scancel, verdict; persistent mode runs the
// script's steps in a held allocation.
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/slurm/describe.h"
#include "trtllm_run/sdk/slurm/held.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/sdk/slurm/session.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace trtllm_run {
namespace {

class LocalSlurmExecutor : public Executor {
 public:
  std::string Name() const override { return "local_slurm"; }

  ExecutorTraits Traits() const override {
    ExecutorTraits traits;
    traits.slurm = true;
    traits.container = true;
    return traits;
  }

  Status Validate(const CaseRequest& request, const JobPlan& plan,
                  const Placement& placement) const override {
    return ValidateSlurmJob(request, plan, placement, Options());
  }

  Status Prepare(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                 JobSpec* spec) override {
    // The run inputs the job spec carries for Execute and Cancel.
    TRTLLM_RUN_RETURN_IF_ERROR(PrepareSlurmJob(request, plan, placement, Options(), spec));
    return AddSlurmRunFields(request, /*remote=*/false, spec);
  }

  // Submit, watch, cancel and judge (sdk/slurm/submit.h): the one Slurm run, through the
  // scenario the job spec names: this host.
  RunResult Execute(const JobSpec& spec, const ExecContext& context) override {
    return ExecuteSlurmJob(spec, context);
  }
  Status Cancel(const JobSpec& spec, const ExecContext& context) override {
    return CancelSlurmJob(spec, context);
  }
  // `trtllm-run status`, MCP case state: the controller's record, asked on this host.
  JobDescription DescribeJob(const JobSpec& spec, const RunState* state) const override {
    return DescribeSlurmJob(spec, state);
  }
  // `trtllm-run release`: the allocations persistent mode holds on this host.
  std::vector<HeldResource> ListHeld() const override {
    return HeldSlurmAllocations(/*remote=*/false);
  }
  Status ReleaseHeld(const std::string& id) override {
    return ReleaseHeldSlurmAllocation(id, /*remote=*/false);
  }
  // `run --cases`: every job of the session followed by one shared SlurmWatcher.
  std::unique_ptr<ExecutorSession> NewSession(const SessionOptions& options) override {
    return NewSlurmSession(options, Name());
  }

 private:
  static SlurmJobOptions Options() {
    SlurmJobOptions options;
    options.executor = "local_slurm";
    options.remote = false;
    return options;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(trtllm_run::LocalSlurmExecutor, "local_slurm", "0.1.0",
                                   "Submits the job to the Slurm cluster of this host")
