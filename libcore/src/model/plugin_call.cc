#include "model/plugin_call.h"

#include <exception>

namespace trtllm_run {

std::string CurrentExceptionText() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

Status PluginThrew(std::string_view plugin, std::string_view method, std::string_view what) {
  return Status::PluginError(
      std::string(plugin) + " threw from " + std::string(method) + ": " + std::string(what),
      "no exception may cross the plugin API; report this to the plugin's authors");
}

RunResult ErrorRunResult(const Status& status) {
  RunResult result;
  result.status = RunStatus::kError;
  result.reason = status.ToString();
  result.errors.push_back(result.reason);
  return result;
}

}  // namespace trtllm_run
