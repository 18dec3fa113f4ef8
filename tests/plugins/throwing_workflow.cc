// A workflow plugin that throws on demand, for the tests that no exception crosses the
// plugin API. It claims custom commands "throw:<Method>" (and "throw-int:<Method>", which
// throws an int instead of a std::exception) and throws from <Method>: Claims, Plan or
// Judge. Any other method name plans the command as it is.
#include <stdexcept>
#include <string>

#include "trtllm_run/sdk/plugin_api.h"

namespace {

// The method named by "throw:<Method>" / "throw-int:<Method>"; "" for other commands.
std::string MethodToThrowFrom(const std::string& command) {
  for (const std::string prefix : {"throw:", "throw-int:"}) {
    if (command.rfind(prefix, 0) == 0) return command.substr(prefix.size());
  }
  return "";
}

void ThrowIf(const std::string& command, const std::string& method) {
  if (MethodToThrowFrom(command) != method) return;
  if (command.rfind("throw-int:", 0) == 0) throw 42;
  throw std::runtime_error("throwing_workflow: " + method + " failed on purpose");
}

class ThrowingWorkflow : public trtllm_run::Workflow {
 public:
  std::string Name() const override { return "throwing_workflow"; }
  int ClaimOrder() const override { return 1; }

  bool Claims(const trtllm_run::CaseRequest& request) const override {
    if (!request.custom_cmd || MethodToThrowFrom(*request.custom_cmd).empty()) return false;
    ThrowIf(*request.custom_cmd, "Claims");
    return true;
  }

  trtllm_run::Result<trtllm_run::JobPlan> Plan(
      const trtllm_run::CaseRequest& request) const override {
    ThrowIf(*request.custom_cmd, "Plan");
    trtllm_run::JobPlan plan;
    plan.workflow_type = Name();
    plan.model_name = "throwing_model";
    plan.command = *request.custom_cmd;
    return plan;
  }

  void Judge(const trtllm_run::JobSpec& spec, const std::string& /*log_tail*/,
             trtllm_run::RunResult* result) const override {
    ThrowIf(spec.direct_cmd, "Judge");
    result->reason = "throwing_workflow judged " + result->reason;
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(ThrowingWorkflow, "throwing_workflow", "0.1",
                                   "workflow that throws on demand (tests)");
