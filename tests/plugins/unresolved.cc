// A plugin that needs a symbol nothing defines: dlopen with RTLD_NOW must fail with
// "undefined symbol: trtllm_run_test_symbol_that_does_not_exist" instead of crashing later.
#include "trtllm_run/sdk/plugin_api.h"

extern "C" int trtllm_run_test_symbol_that_does_not_exist();

namespace {

class UnresolvedExecutor : public trtllm_run::Executor {
 public:
  std::string Name() const override {
    return "unresolved_" + std::to_string(trtllm_run_test_symbol_that_does_not_exist());
  }
  trtllm_run::Status Validate(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan&,
                              const trtllm_run::Placement& /*placement*/) const override {
    return trtllm_run::Status::Ok();
  }
  trtllm_run::Status Prepare(const trtllm_run::CaseRequest&, const trtllm_run::JobPlan&,
                             const trtllm_run::Placement& /*placement*/,
                             trtllm_run::JobSpec*) override {
    return trtllm_run::Status::Ok();
  }
  trtllm_run::RunResult Execute(const trtllm_run::JobSpec&,
                                const trtllm_run::ExecContext&) override {
    return trtllm_run::RunResult();
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(UnresolvedExecutor, "unresolved_executor", "1.0",
                                   "needs a symbol that does not exist");
