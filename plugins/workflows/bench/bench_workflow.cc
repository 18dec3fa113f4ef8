// The `bench` workflow: a pre-built trtllm-bench command, optionally a dataset step and a
// run step joined by one top-level `&&` (spec 000 "Bench", spec 001 Step 3 "Bench").
// Devices are tp x pp of the LAST trtllm-bench invocation (--tp or --tp_size, --pp or
// --pp_size: ParseBenchCommand; --ep adds none); the job is single-node; with more than
// one task the run step is MPI-launched through trtllm-llmapi-launch.
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// trtllm-bench runs on one node: tp x pp must fit the partition's nodes.
Status FitsOneNode(const PlacementFacts& facts, JobPlan* plan) {
  const int required = plan->required_devices;
  if (!facts.gpus_per_node || required <= *facts.gpus_per_node) return Status::Ok();
  const std::string gpn = std::to_string(*facts.gpus_per_node);
  return Status::InvalidInput("bench_cmd: world_size = " + std::to_string(required) +
                                  " (tp x pp) needs more than one " + "node of partition " +
                                  facts.partition + " (gpus_per_node = " + gpn + ")",
                              "multi-node trtllm-bench is not supported: use tp x pp <= " + gpn +
                                  " or a partition with more GPUs per node (--partition)");
}

class BenchWorkflow : public Workflow {
 public:
  std::string Name() const override { return "bench"; }
  int ClaimOrder() const override { return 20; }
  bool Claims(const CaseRequest& request) const override { return request.bench_cmd.has_value(); }

  Result<JobPlan> Plan(const CaseRequest& request) const override {
    JobPlan plan;
    plan.workflow_type = "bench";
    const std::string& original = *request.bench_cmd;

    Result<std::vector<std::string>> parts = SplitTopLevelAnd(original);
    if (!parts.ok()) return parts.status().WithContext("bench_cmd");
    if (parts->size() > 2) {
      return Status::InvalidInput(
          "bench_cmd has " + std::to_string(parts->size() - 1) +
              " top-level '&&'; at most one is allowed (<prepare-dataset> && <throughput or "
              "latency>)",
          "join further commands with ';' inside one step, quote an '&&' that belongs to an "
          "argument, or use --custom-cmd for other chains");
    }
    Result<BenchArgs> sizes = ParseBenchCommand(original);
    if (!sizes.ok()) return sizes.status();
    const BenchArgs& bench = sizes.value();
    std::optional<Invocation> last = LastInvocation(original, "trtllm-bench");
    if (!last) return Status::Internal("bench_cmd: trtllm-bench parsed but not found");
    // "tp 2", or "tp 2 (--tp_size)" when given in the long spelling.
    auto size_text = [](const std::string& name, int value, const std::string& option) {
      bool long_spelling = !option.empty() && option != "--" + name;
      return name + " " + std::to_string(value) + (long_spelling ? " (" + option + ")" : "");
    };
    const std::string tp_text = size_text("tp", bench.tp, bench.tp_option);
    const std::string pp_text = size_text("pp", bench.pp, bench.pp_option);
    int required = bench.world_size();
    if (request.required_devices == 0) {
      return Status::InvalidInput(
          "trtllm-bench needs GPUs; required_devices 0 (CPU only) cannot run it",
          "leave --required-devices out (tp x pp sizes the job), or use --custom-cmd for CPU-only "
          "work");
    }
    if (request.required_devices) {
      required = *request.required_devices;
      plan.notes.push_back("required_devices " + std::to_string(required) +
                           ": given (the last trtllm-bench says " + tp_text + " x " + pp_text +
                           ")");
    } else {
      plan.notes.push_back("required_devices " + std::to_string(required) + ": " + tp_text + " x " +
                           pp_text + " of the last trtllm-bench invocation (ep " +
                           std::to_string(bench.ep) + " adds no GPUs)");
    }

    Result<std::string> model = DeriveModelName(request, original, "bench", &plan);
    if (!model.ok()) return model.status();
    plan.model_name = model.value();

    // HF ids resolve to a local checkpoint when one is found (the dataset step too).
    std::string command = original;
    std::optional<std::string> model_arg = last->Option({"--model"});
    if (model_arg && IsHuggingFaceId(*model_arg)) {
      if (last->Option({"--model_path"})) {
        plan.notes.push_back("model " + *model_arg + ": HuggingFace id kept (--model_path given)");
      } else {
        ModelResolution resolved = ResolveHuggingFaceModel(
            *model_arg, request.llm_models_root.value_or(""), request.models_path.value_or(""));
        plan.notes.push_back(resolved.note);
        if (!resolved.path.empty()) {
          command = ReplaceOptionValue(command, {"--model"}, *model_arg, resolved.path);
          parts = SplitTopLevelAnd(command);
          if (!parts.ok()) return parts.status().WithContext("bench_cmd");
        }
      }
    }
    plan.command = command;

    TRTLLM_RUN_RETURN_IF_ERROR(ApplyDeviceCounts(request, required, &plan));
    plan.devices_requested = true;  // tp x pp, 1 x 1 when not given
    if (plan.node_count > 1) {
      return Status::InvalidInput(
          "bench_cmd: world_size " + std::to_string(plan.total_required_devices) + " with " +
              std::to_string(plan.required_devices_per_node) + " GPUs per node needs " +
              std::to_string(plan.node_count) + " nodes; multi-node trtllm-bench is not supported",
          "run trtllm-bench on one node: tp x pp <= the GPUs of one node, and no "
          "--node-count or --required-devices-per-node below the total");
    }

    std::string run = parts->back();
    if (required > 1) {
      std::string launched = PrefixInvocation(run, "trtllm-bench", "trtllm-llmapi-launch");
      plan.notes.push_back(launched == run ? "run step: already launched by trtllm-llmapi-launch"
                                           : "run step: prefixed with trtllm-llmapi-launch (" +
                                                 std::to_string(required) + " MPI tasks)");
      run = launched;
    }
    if (!request.skip_install.value_or(false)) {
      plan.steps.push_back(PlanStep{"install", InstallCommand(false), plan.node_count, false});
    }
    if (parts->size() == 2) {
      plan.steps.push_back(PlanStep{"prepare", parts->front(), 1, false});
      plan.notes.push_back("bench_cmd: split on its top-level '&&' into a prepare and a run step");
    }
    plan.steps.push_back(PlanStep{"run", run, required, required > 1});

    plan.success_patterns = {"token/s", "throughput"};
    plan.failure_patterns = {"Error", "Traceback"};
    plan.launch.task_layout = TaskLayout::kTaskPerDevice;
    plan.launch.gpu_count_source = "tp x pp of the bench command";
    plan.launch.fewer_gpus_hint = "use --tp x --pp of at most {gpus} in --bench-cmd";
    plan.launch.after_placement = FitsOneNode;
    return plan;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(trtllm_run::BenchWorkflow, "bench", "0.1.0",
                                   "trtllm-bench command chains (bench_cmd)")
