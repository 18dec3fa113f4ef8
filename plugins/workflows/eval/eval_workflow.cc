// The `eval` workflow: a pre-built trtllm-eval command (spec 000 "Eval", spec 001 Step 3
// "Eval"). Devices are --tp_size x --pp_size; --gpus_per_node caps the devices per node.
// As for bench (spec-notes, "eval (Category 5)"): with more than one task the eval step
// gets the cluster's MPI plugin and trtllm-llmapi-launch; with one task neither, and the
// Slurm step unsets srun's MPI/Slurm variables (keeping SLURM_PROCID and SLURM_LOCALID)
// so that mpi4py, which trtllm-eval imports, does not initialise MPI against them and
// fail with MPI_ERR_SPAWN. A job that needs more than one node goes to the Slurm
// executors' perf-sanity fallback, which they refuse unless the request opts in.
#include "eval_fallback.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

class EvalWorkflow : public Workflow {
 public:
  std::string Name() const override { return "eval"; }
  int ClaimOrder() const override { return 30; }
  bool Claims(const CaseRequest& request) const override { return request.eval_cmd.has_value(); }

  Result<JobPlan> Plan(const CaseRequest& request) const override {
    JobPlan plan;
    plan.workflow_type = "eval";
    const std::string& original = *request.eval_cmd;
    Result<EvalArgs> args = ParseEvalCommand(original);
    if (!args.ok()) return args.status();
    const int world_size = args->world_size();
    int required = world_size;
    if (request.required_devices == 0) {
      return Status::InvalidInput(
          "trtllm-eval needs GPUs; required_devices 0 (CPU only) cannot run it",
          "leave --required-devices out (tp_size x pp_size sizes the job), or use --custom-cmd "
          "for CPU-only work");
    }
    if (request.required_devices) {
      required = *request.required_devices;
      plan.notes.push_back("required_devices " + std::to_string(required) +
                           ": given (trtllm-eval says tp_size " + std::to_string(args->tp_size) +
                           " x pp_size " + std::to_string(args->pp_size) + ")");
    } else {
      plan.notes.push_back("required_devices " + std::to_string(required) + ": tp_size " +
                           std::to_string(args->tp_size) + " x pp_size " +
                           std::to_string(args->pp_size) + " of trtllm-eval");
    }

    Result<std::string> model = DeriveModelName(request, original, "eval", &plan);
    if (!model.ok()) return model.status();
    plan.model_name = model.value();

    std::string command = original;
    if (args->model && IsHuggingFaceId(*args->model)) {
      ModelResolution resolved = ResolveHuggingFaceModel(
          *args->model, request.llm_models_root.value_or(""), request.models_path.value_or(""));
      plan.notes.push_back(resolved.note);
      if (!resolved.path.empty()) {
        command =
            ReplaceOptionValue(command, {"--model", "--model_path"}, *args->model, resolved.path);
      }
    }
    plan.command = command;

    // --gpus_per_node overrides the cluster's per-node count (spec 001 Step 3).
    CaseRequest sizing = request;
    if (args->gpus_per_node && !request.required_devices_per_node &&
        !request.total_required_devices && required > *args->gpus_per_node) {
      sizing.required_devices_per_node = *args->gpus_per_node;
      plan.notes.push_back("required_devices_per_node " + std::to_string(*args->gpus_per_node) +
                           ": --gpus_per_node of trtllm-eval");
    }
    TRTLLM_RUN_RETURN_IF_ERROR(ApplyDeviceCounts(sizing, required, &plan));
    plan.devices_requested = true;  // tp_size x pp_size, 1 x 1 when not given
    if (plan.node_count > 1) {
      plan.notes.push_back(
          "eval: " + std::to_string(plan.node_count) +
          " nodes; trtllm-eval is single-node, so Slurm could run it only on the perf-sanity "
          "path (submit.py), where the accuracy run is not guaranteed: refused unless "
          "--eval-perf-fallback true");
    }

    std::string run = command;
    if (required > 1) {
      std::string launched = PrefixInvocation(run, "trtllm-eval", "trtllm-llmapi-launch");
      plan.notes.push_back(launched == run ? "eval step: already launched by trtllm-llmapi-launch"
                                           : "eval step: prefixed with trtllm-llmapi-launch");
      run = launched;
    }
    if (!request.skip_install.value_or(false)) {
      plan.steps.push_back(PlanStep{"install", InstallCommand(true), plan.node_count, false});
    }
    plan.steps.push_back(PlanStep{"run", run, required, required > 1});

    plan.success_patterns = {"accuracy:", "score:"};
    plan.failure_patterns = {"AssertionError", "Error"};
    LaunchFacts& launch = plan.launch;
    launch.task_layout = TaskLayout::kTaskPerDevice;
    launch.run_shows_gpus = true;
    launch.gpu_count_source = "tp x pp of the eval command";
    launch.fewer_gpus_hint =
        "use --tp_size x --pp_size of at most {gpus} in --eval-cmd (or its --gpus_per_node "
        "{gpus})";
    launch.after_placement =
        EvalFallbackHook(args.value(), original, request.eval_perf_fallback.value_or(false));
    return plan;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(trtllm_run::EvalWorkflow, "eval", "0.1.0",
                                   "trtllm-eval accuracy runs (eval_cmd)")
