// A minimal executor plugin for the registry tests. Execute() runs nothing and reports
// PASSED with the command it was given, so tests can call it through the plugin's code.
#include "trtllm_run/sdk/plugin_api.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test_executor"
#endif
#ifndef TEST_PLUGIN_VERSION
#define TEST_PLUGIN_VERSION "1.2.3"
#endif

namespace {

class TestExecutor : public trtllm_run::Executor {
 public:
  std::string Name() const override { return TEST_PLUGIN_NAME; }

  trtllm_run::Status Validate(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan&,
                              const trtllm_run::Placement& /*placement*/) const override {
    return trtllm_run::Status::Ok();
  }

  trtllm_run::Status Prepare(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan& plan,
                             const trtllm_run::Placement& /*placement*/,
                             trtllm_run::JobSpec* spec) override {
    spec->direct_cmd = plan.command;
    return trtllm_run::Status::Ok();
  }

  trtllm_run::RunResult Execute(const trtllm_run::JobSpec& spec,
                                const trtllm_run::ExecContext&) override {
    trtllm_run::RunResult result;
    result.status = trtllm_run::RunStatus::kPassed;
    result.reason = "test executor " TEST_PLUGIN_NAME " ran nothing";
    result.command = spec.direct_cmd;
    result.scenario = TEST_PLUGIN_NAME;
    return result;
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(TestExecutor, TEST_PLUGIN_NAME, TEST_PLUGIN_VERSION,
                                   "test executor for the registry tests");
