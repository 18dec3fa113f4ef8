// dry_run: an example third-party executor. It writes what it would run into the work
// dir and runs nothing, which makes it a template for a new executor and a safe way to
// check what a request turns into:
//
//   trtllm-run run --scenario dry_run --custom-cmd 'echo hi'
//
// An executor implements the four methods of trtllm_run::Executor and declares itself
// with TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN; the registry does the rest.
#include <sys/stat.h>

#include <string>

#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

namespace {

using trtllm_run::Status;

class DryRunExecutor : public trtllm_run::Executor {
 public:
  // The scenario name users pass to --scenario.
  std::string Name() const override { return "dry_run"; }

  // Check inputs and tools here, before anything is written. A dry run needs nothing.
  Status Validate(const trtllm_run::CaseRequest& /*request*/, const trtllm_run::JobPlan& /*plan*/,
                  const trtllm_run::Placement& /*placement*/) const override {
    return Status::Ok();
  }

  // Record everything Execute() needs in the job spec, then write job_spec.json and a
  // script into the (empty) work dir. The caller has set work_dir, log_file, scenario.
  Status Prepare(const trtllm_run::CaseRequest& /*request*/, const trtllm_run::JobPlan& plan,
                 const trtllm_run::Placement& /*placement*/, trtllm_run::JobSpec* spec) override {
    // What every executor copies from the plan as it is (workflow, model, repo, env,
    // timeouts, patterns, device counts); the rest is this executor's.
    trtllm_run::CopyPlanToSpec(plan, spec);
    spec->direct_cmd = plan.command;
    spec->script_path = spec->work_dir + "/dry_run.sh";

    // The script a real run would execute: environment, then the command through bash.
    std::string script = "#!/bin/bash\n# Written by the dry_run executor; nothing ran.\n";
    for (const trtllm_run::EnvVar& var : plan.env) {
      script += "export " + var.name + "=" + trtllm_run::ShellQuote(var.value) + "\n";
    }
    script += "cd " + trtllm_run::ShellQuote(plan.repo_root) + "\n";
    script += "exec bash -c " + trtllm_run::ShellQuote(plan.command) + "\n";
    TRTLLM_RUN_RETURN_IF_ERROR(trtllm_run::WriteFileAtomic(spec->script_path, script));
    ::chmod(spec->script_path.c_str(), 0755);

    return trtllm_run::WriteJobSpec(*spec);
  }

  // Run the prepared job to a verdict. A real executor starts, watches and judges the
  // job here, and stops it when context.cancel fires.
  trtllm_run::RunResult Execute(const trtllm_run::JobSpec& spec,
                                const trtllm_run::ExecContext& context) override {
    if (context.progress != nullptr) *context.progress << "would run: " << spec.direct_cmd << "\n";

    trtllm_run::RunResult result;
    result.status = trtllm_run::RunStatus::kPassed;
    result.reason = "dry run: nothing executed";
    result.scenario = spec.scenario;
    result.workflow_type = spec.workflow_type;
    result.model_name = spec.model_name;
    result.command = spec.direct_cmd;
    result.work_dir = spec.work_dir;
    result.log_file = spec.log_file;
    result.monitor_timeout_seconds = spec.monitor_timeout_seconds;
    result.started_at = result.finished_at = trtllm_run::NowIso8601();
    result.details["script"] = spec.script_path;
    return result;
  }
};

}  // namespace

// The plugin's entry point: name, version, one-line description.
TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(DryRunExecutor, "dry_run", "1.0",
                                   "writes the job script and runs nothing");
