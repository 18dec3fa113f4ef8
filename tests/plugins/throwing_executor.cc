// An executor plugin that throws on demand, for the tests that no exception crosses the
// plugin API. For a plan command "throw:<Method>" (or "throw-int:<Method>": an int, not a
// std::exception) it throws from <Method>: Validate, Prepare or Execute. Otherwise
// Execute() runs nothing and reports PASSED.
#include <stdexcept>
#include <string>

#include "trtllm_run/sdk/plugin_api.h"

namespace {

void ThrowIf(const std::string& command, const std::string& method) {
  if (command == "throw-int:" + method) throw 42;
  if (command == "throw:" + method) {
    throw std::runtime_error("throwing_executor: " + method + " failed on purpose");
  }
}

class ThrowingExecutor : public trtllm_run::Executor {
 public:
  std::string Name() const override { return "throwing_executor"; }

  trtllm_run::Status Validate(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan& plan,
                              const trtllm_run::Placement&) const override {
    ThrowIf(plan.command, "Validate");
    return trtllm_run::Status::Ok();
  }

  trtllm_run::Status Prepare(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan& plan,
                             const trtllm_run::Placement&, trtllm_run::JobSpec* spec) override {
    ThrowIf(plan.command, "Prepare");
    spec->direct_cmd = plan.command;
    spec->workflow_type = plan.workflow_type;  // the workflow judges what it planned
    return trtllm_run::Status::Ok();
  }

  trtllm_run::RunResult Execute(const trtllm_run::JobSpec& spec,
                                const trtllm_run::ExecContext&) override {
    ThrowIf(spec.direct_cmd, "Execute");
    trtllm_run::RunResult result;
    result.status = trtllm_run::RunStatus::kPassed;
    result.reason = "throwing_executor ran nothing";
    return result;
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(ThrowingExecutor, "throwing_executor", "0.1",
                                   "executor that throws on demand (tests)");
