// The `bench` workflow: a pre-built trtllm-bench command, optionally a dataset step and a
// run step joined by one top-level `&&` (spec 000 "Bench", spec 001 Step 3 "Bench").
// Devices are tp x pp of the LAST trtllm-bench invocation (--ep adds none); the job is
// single-node; with more than one task the run step is MPI-launched through
// trtllm-llmapi-launch.
#include "trtllm_run/command_parse.h"
#include "trtllm_run/derive.h"
#include "trtllm_run/plugin_api.h"
#include "trtllm_run/render.h"
#include "trtllm_run/text.h"

namespace trtllm_run {
namespace {

Result<int> SizeOption(const Invocation& invocation, std::string_view name, int fallback,
                       bool allow_zero) {
  std::optional<std::string> value = invocation.Option({name});
  if (!value) return fallback;
  bool digits = !value->empty() && value->size() <= 9;
  for (char c : *value) digits = digits && c >= '0' && c <= '9';
  int n = digits ? std::stoi(*value) : -1;
  if (n < 0 || (n == 0 && !allow_zero)) {
    return Status::InvalidInput("bench_cmd: " + std::string(name) + " must be a " +
                                    (allow_zero ? "non-negative" : "positive") + " integer, got '" +
                                    *value + "'",
                                "e.g. " + std::string(name) + " 4");
  }
  return n;
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
    std::optional<Invocation> last = LastInvocation(original, "trtllm-bench");
    if (!last) {
      return Status::InvalidInput("bench_cmd does not run trtllm-bench",
                                  "give a trtllm-bench command; other commands go in --custom-cmd");
    }
    Result<int> tp = SizeOption(*last, "--tp", 1, false);
    if (!tp.ok()) return tp.status();
    Result<int> pp = SizeOption(*last, "--pp", 1, false);
    if (!pp.ok()) return pp.status();
    Result<int> ep = SizeOption(*last, "--ep", 0, true);
    if (!ep.ok()) return ep.status();
    const int world_size = tp.value() * pp.value();
    int required = world_size;
    if (request.required_devices) {
      required = *request.required_devices;
      plan.notes.push_back("required_devices " + std::to_string(required) +
                           ": given (the last trtllm-bench says tp " + std::to_string(tp.value()) +
                           " x pp " + std::to_string(pp.value()) + ")");
    } else {
      plan.notes.push_back("required_devices " + std::to_string(required) + ": tp " +
                           std::to_string(tp.value()) + " x pp " + std::to_string(pp.value()) +
                           " of the last trtllm-bench invocation (ep " +
                           std::to_string(ep.value()) + " adds no GPUs)");
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

    WorkflowPatterns patterns = PatternsFor("bench", plan.model_name);
    plan.success_patterns = patterns.success;
    plan.failure_patterns = patterns.failure;
    return plan;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(trtllm_run::BenchWorkflow, "bench", "0.1.0",
                                   "trtllm-bench command chains (bench_cmd)")
