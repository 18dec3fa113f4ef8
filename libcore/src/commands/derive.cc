#include "trtllm_run/sdk/commands/derive.h"

#include <vector>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

std::optional<std::string> FindModelArgument(std::string_view command) {
  Result<std::vector<std::string>> words = SplitShellWords(command);
  if (!words.ok()) return std::nullopt;
  static const char* const kFlags[] = {"--model", "--model_path", "-m"};
  const std::vector<std::string>& w = words.value();
  for (size_t i = 0; i < w.size(); ++i) {
    for (const char* flag : kFlags) {
      const std::string name(flag);
      if (w[i] == name && i + 1 < w.size()) return w[i + 1];
      if (name.size() > 2 && w[i].rfind(name + "=", 0) == 0) return w[i].substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

Result<std::string> DeriveModelName(const CaseRequest& request, std::string_view command,
                                    std::string_view fallback, JobPlan* plan) {
  if (request.model_name) {
    std::string name = SanitizeModelName(*request.model_name);
    if (name.empty()) {
      return Status::InvalidInput(
          "model_name '" + *request.model_name + "' has no letters or digits",
          "use a short name such as llama_3_1_8b");
    }
    plan->notes.push_back("model_name " + name + ": given");
    return name;
  }
  if (std::optional<std::string> model = FindModelArgument(command)) {
    std::string name = SanitizeModelName(*model);
    if (!name.empty()) {
      plan->notes.push_back("model_name " + name + ": from the command's model argument '" +
                            *model + "'");
      return name;
    }
  }
  plan->notes.push_back("model_name " + std::string(fallback) +
                        ": default (no --model-name and no model argument in the command)");
  return std::string(fallback);
}

Status ApplyDeviceCounts(const CaseRequest& request, int required_devices, JobPlan* plan) {
  plan->required_devices = required_devices;
  if (required_devices == 0) {
    if (request.total_required_devices || request.required_devices_per_node) {
      return Status::InvalidInput(
          "required_devices 0 (CPU only) contradicts " +
              std::string(request.total_required_devices ? "total_required_devices "
                                                         : "required_devices_per_node ") +
              std::to_string(request.total_required_devices ? *request.total_required_devices
                                                            : *request.required_devices_per_node),
          "leave --total-required-devices and --required-devices-per-node out for CPU-only "
          "work, or give --required-devices N");
    }
    plan->total_required_devices = 0;
    plan->required_devices_per_node = 0;
    plan->node_count = request.node_count.value_or(1);
    return Status::Ok();
  }
  plan->total_required_devices = request.total_required_devices.value_or(required_devices);
  plan->required_devices_per_node = request.required_devices_per_node.value_or(required_devices);
  if (plan->required_devices_per_node > plan->total_required_devices) {
    return Status::InvalidInput(
        "required_devices_per_node (" + std::to_string(plan->required_devices_per_node) +
            ") exceeds total_required_devices (" + std::to_string(plan->total_required_devices) +
            ")",
        "give at most " + std::to_string(plan->total_required_devices) + " devices per node");
  }
  int computed = (plan->total_required_devices + plan->required_devices_per_node - 1) /
                 plan->required_devices_per_node;
  plan->node_count = request.node_count.value_or(computed < 1 ? 1 : computed);
  return Status::Ok();
}

}  // namespace trtllm_run
