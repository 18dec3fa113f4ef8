// A minimal workflow plugin for the registry tests: claims custom commands that start
// with "test_workflow:" and plans the rest of the command.
#include "trtllm_run/sdk/plugin_api.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test_workflow"
#endif

namespace {

constexpr char kPrefix[] = "test_workflow:";

class TestWorkflow : public trtllm_run::Workflow {
 public:
  std::string Name() const override { return TEST_PLUGIN_NAME; }
  int ClaimOrder() const override { return 5; }

  bool Claims(const trtllm_run::CaseRequest& request) const override {
    return request.custom_cmd && request.custom_cmd->rfind(kPrefix, 0) == 0;
  }

  trtllm_run::Result<trtllm_run::JobPlan> Plan(
      const trtllm_run::CaseRequest& request) const override {
    trtllm_run::JobPlan plan;
    plan.workflow_type = TEST_PLUGIN_NAME;
    plan.model_name = "test_model";
    plan.command = request.custom_cmd->substr(sizeof(kPrefix) - 1);
    return plan;
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(TestWorkflow, TEST_PLUGIN_NAME, "0.1",
                                   "test workflow for the registry tests");
