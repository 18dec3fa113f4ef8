// Exceptions stop at the plugin API: every call core makes into a Workflow, Executor or
// ExecutorSession goes through GuardPluginCall, and every thread core starts catches
// what its body throws, so an exception becomes an error value (a Status, or a RunResult
// with status ERROR) that names who threw and what.
#ifndef TRTLLM_RUN_MODEL_PLUGIN_CALL_H_
#define TRTLLM_RUN_MODEL_PLUGIN_CALL_H_

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "trtllm_run/result.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// Inside a catch block: what the exception being handled says (std::exception::what(), or
// "an exception that is not a std::exception").
std::string CurrentExceptionText();

// kPluginError "<plugin> threw from <method>: <what>", e.g. "executor 'my_cluster' threw
// from Execute(): bad_alloc", with a hint to report it to the plugin's authors.
Status PluginThrew(std::string_view plugin, std::string_view method, std::string_view what);

// A RunResult with status ERROR whose reason (and one error) is `status`'s text.
RunResult ErrorRunResult(const Status& status);

// What GuardPluginCall returns for a call returning R: Status for Status and void,
// Result<T> for Result<T>, Result<R> otherwise.
template <typename R>
struct GuardedReturn {
  using type = Result<R>;
};
template <>
struct GuardedReturn<Status> {
  using type = Status;
};
template <>
struct GuardedReturn<void> {
  using type = Status;
};
template <typename T>
struct GuardedReturn<Result<T>> {
  using type = Result<T>;
};

// Runs `call`, a call into the plugin `plugin` ("workflow 'pytest'"), and returns what it
// returned; an exception it throws is returned as PluginThrew(plugin, method, ...).
template <typename Call>
typename GuardedReturn<std::invoke_result_t<Call>>::type GuardPluginCall(std::string_view plugin,
                                                                         std::string_view method,
                                                                         Call&& call) {
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Call>>) {
      std::forward<Call>(call)();
      return Status::Ok();
    } else {
      return std::forward<Call>(call)();
    }
  } catch (...) {
    return PluginThrew(plugin, method, CurrentExceptionText());
  }
}

// "executor 'name'" / "workflow 'name'": how errors name a plugin.
inline std::string ExecutorLabel(std::string_view name) {
  return "executor '" + std::string(name) + "'";
}
inline std::string WorkflowLabel(std::string_view name) {
  return "workflow '" + std::string(name) + "'";
}

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_PLUGIN_CALL_H_
