// The `custom` workflow: any command (custom_cmd) or host script (custom_script, run as
// `bash <script>`), with custom_env exported before it. Spec 000: claimed first.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// Run in the command's shell before it (LaunchFacts::command_prelude), on the executors that
// run it with bash -c: the ERR trap of the original run script (slurm_run_custom.sh has the
// same one), which names the failing command on stderr and exits with its code. The Rank
// line stays the Slurm run script's, where the original prints it: a passing command's
// output is unchanged elsewhere. Line numbers count the command's lines.
constexpr char kFirstFailureEndsCommand[] =
    "trtllm_run_line0=$LINENO; trap 'trtllm_run_rc=$?; echo \"custom command: error at line "
    "$((LINENO - trtllm_run_line0)): ${BASH_COMMAND} (exit code ${trtllm_run_rc})\" >&2; "
    "exit \"${trtllm_run_rc}\"' ERR";

constexpr int kMaxCustomDevices = 8;

// The absolute path of a readable regular file, or an error naming the problem.
Result<std::string> ResolveScript(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  struct stat info {};
  if (error || ::stat(absolute.c_str(), &info) != 0) {
    return Status::InvalidInput("custom_script '" + path + "' does not exist",
                                "give the path of a bash script on this host");
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidInput("custom_script '" + path + "' is not a regular file",
                                "give the path of a bash script, not a directory or device");
  }
  if (::access(absolute.c_str(), R_OK) != 0) {
    return Status::InvalidInput("custom_script '" + path +
                                "' is not readable: " + std::strerror(errno));
  }
  return absolute.lexically_normal().string();
}

// Spec 001 Step 3 "Custom" on a partition: the devices must fit one of its nodes.
Status FitsOneNode(const PlacementFacts& facts, JobPlan* plan) {
  if (!facts.gpus_per_node) return Status::Ok();
  const int required = plan->required_devices;
  const std::string gpn = std::to_string(*facts.gpus_per_node);
  const int nodes = (required + *facts.gpus_per_node - 1) / *facts.gpus_per_node;
  if (nodes <= 1) return Status::Ok();
  return Status::InvalidInput(
      "required_devices = " + std::to_string(required) + " requires " + std::to_string(nodes) +
          " nodes (gpus_per_node = " + gpn + "), but custom commands are limited to 1 node.",
      "Reduce required_devices to at most " + gpn + ". (--required-devices " + gpn +
          ", or a --partition with at least " + std::to_string(required) + " GPUs per node)");
}

class CustomWorkflow : public Workflow {
 public:
  std::string Name() const override { return "custom"; }
  int ClaimOrder() const override { return 10; }

  bool Claims(const CaseRequest& request) const override {
    return request.custom_cmd.has_value() || request.custom_script.has_value();
  }

  Result<JobPlan> Plan(const CaseRequest& request) const override {
    JobPlan plan;
    plan.workflow_type = "custom";
    if (request.custom_script) {
      Result<std::string> script = ResolveScript(*request.custom_script);
      if (!script.ok()) return script.status();
      plan.command = "bash " + ShellQuote(script.value());
      plan.launch.host_script = script.value();
      plan.notes.push_back(
          "command: bash " + script.value() + " (custom_script" +
          std::string(request.custom_cmd ? " takes precedence over custom_cmd" : "") + ")");
    } else {
      plan.command = *request.custom_cmd;
    }
    if (request.custom_env) {
      Result<std::vector<EnvVar>> env = ParseEnvAssignments(*request.custom_env, "custom_env");
      if (!env.ok()) return env.status();
      plan.env = std::move(env.value());
    }
    Result<std::string> model = DeriveModelName(request, plan.command, "custom", &plan);
    if (!model.ok()) return model.status();
    plan.model_name = model.value();
    TRTLLM_RUN_RETURN_IF_ERROR(
        ApplyDeviceCounts(request, request.required_devices.value_or(1), &plan));
    plan.devices_requested = request.required_devices || request.total_required_devices ||
                             request.required_devices_per_node;
    // Spec 001 Step 3 "Custom": at most 8 GPUs, one node.
    if (plan.required_devices > kMaxCustomDevices) {
      return Status::InvalidInput("required_devices = " + std::to_string(plan.required_devices) +
                                      " exceeds the maximum of 8 GPUs for custom commands.",
                                  "give --required-devices 8 or fewer");
    }
    if (plan.node_count > 1) {
      return Status::InvalidInput(
          "required_devices = " + std::to_string(plan.total_required_devices) + " requires " +
              std::to_string(plan.node_count) +
              " nodes (gpus_per_node = " + std::to_string(plan.required_devices_per_node) +
              "), but custom commands are limited to 1 node.",
          "Reduce required_devices to at most " + std::to_string(plan.required_devices_per_node) +
              ".");
    }
    // A custom command runs the checkout as it is: the repo is installed (and built,
    // where the executor builds) only when asked (--skip-install false, --build-project).
    if (request.skip_install == false) {
      plan.steps.push_back(PlanStep{"install", InstallCommand(false), plan.node_count, false});
      plan.notes.push_back("install step: pip install -e . first (--skip-install false)");
    }
    plan.launch.build_project = false;
    plan.steps.push_back(PlanStep{"run", plan.command, plan.total_required_devices, false});
    plan.failure_patterns = {"Error", "Traceback"};
    // The original run script's mode: an unset variable or a failing stage of a pipeline
    // fails the command, and (set -E with an ERR trap that exits) the first failing command
    // ends it with its exit code; the Slurm run script prints the Rank line itself.
    plan.launch.shell_options = {"-E", "-u", "-o", "pipefail"};
    plan.launch.command_prelude = kFirstFailureEndsCommand;
    plan.launch.run_script = kCustomRunScriptName;
    plan.launch.runs_without_gpus = true;
    plan.launch.uses_models_root = false;  // an arbitrary command: LLM_MODELS_ROOT only when given
    plan.launch.after_placement = FitsOneNode;
    return plan;
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(trtllm_run::CustomWorkflow, "custom", "0.1.0",
                                   "Any command or host script (custom_cmd, custom_script)")
