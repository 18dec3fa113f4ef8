// A plugin whose descriptor is written by hand, to build the malformed ones the loader
// must reject: RAW_API_VERSION, RAW_KIND, RAW_NAME and RAW_FACTORY override the fields.
#include "trtllm_run/sdk/plugin_api.h"

#ifndef RAW_API_VERSION
#define RAW_API_VERSION TRTLLM_RUN_PLUGIN_API_VERSION
#endif
#ifndef RAW_KIND
#define RAW_KIND 2  // executor
#endif
#ifndef RAW_NAME
#define RAW_NAME "raw_executor"
#endif
#ifndef RAW_FACTORY
#define RAW_FACTORY &CreateRawExecutor
#endif

namespace {

class RawExecutor : public trtllm_run::Executor {
 public:
  std::string Name() const override { return "raw_executor"; }
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

[[maybe_unused]] trtllm_run::Executor* CreateRawExecutor() { return new RawExecutor(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const TrtllmRunPluginDescriptor*
trtllm_run_plugin_descriptor() {
  static const TrtllmRunPluginDescriptor descriptor = {
      RAW_API_VERSION, RAW_NAME, RAW_KIND, "0.0", "hand-written descriptor", nullptr, RAW_FACTORY};
  return &descriptor;
}
