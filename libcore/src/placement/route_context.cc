#include "placement/route_context.h"

namespace trtllm_run {

std::string RouteExplanation(const Placement& placement) {
  if (placement.scenario.empty()) return "";
  const std::string prefix = "scenario " + placement.scenario;
  for (const std::string& note : placement.notes) {
    if (note.compare(0, prefix.size(), prefix) != 0) continue;
    std::size_t colon = note.find(": ");
    if (colon == std::string::npos) break;
    return "routing chose " + note.substr(9, colon - 9) + ": " + note.substr(colon + 2);
  }
  return "routing chose " + placement.scenario;
}

bool NoScenarioFixes(const Status& error) {
  static const char* const kCaseOwnProblems[] = {
      "MaxTime",     "models mount", "llm_models_root", "--llm-models-root", "not used by scenario",
      "config file", "request file"};
  const std::string text = error.message() + "\n" + error.hint();
  for (const char* problem : kCaseOwnProblems) {
    if (text.find(problem) != std::string::npos) return true;
  }
  return false;
}

Status WithRoute(const Status& error, const CaseRequest& request, const Placement& placement,
                 const std::vector<std::string>& executors) {
  std::string route = RouteExplanation(placement);
  if (error.ok() || route.empty()) return error;
  std::string others;
  for (const std::string& name : executors) {
    if (name == placement.scenario) continue;
    others += (others.empty() ? "--scenario " : ", --scenario ") + name;
  }
  std::string hint = error.hint();
  if (!others.empty() && !NoScenarioFixes(error)) {
    hint += std::string(hint.empty() ? "" : "; or ") +
            (request.scenario ? "pick another scenario: " : "to run it elsewhere: ") + others;
  }
  std::string message = error.message() + "\n  route: " + route;
  switch (error.code()) {
    case StatusCode::kNotFound:
      return Status::NotFound(message, hint);
    case StatusCode::kInvalidInput:
      return Status::InvalidInput(message, hint);
    case StatusCode::kPluginError:
      return Status::PluginError(message, hint);
    case StatusCode::kIoError:
      return Status::IoError(message, hint);
    case StatusCode::kExecutionError:
      return Status::ExecutionError(message, hint);
    default:
      return Status::Internal(message);
  }
}

}  // namespace trtllm_run
