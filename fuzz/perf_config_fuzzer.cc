// perf-sanity config YAML (tests/scripts/perf-sanity/*/*.yaml, or --perf-config-yaml),
// read by the pytest workflow plugin when it plans a perf-sanity case: the plugin is
// loaded from the build's plugin directory and plans a case whose perf_config_yaml is a
// file holding the input, once without a test id and once with an id selecting a server
// config.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/workflow.h"

namespace {

struct Fixture {
  trtllm_run::Registry registry;
  std::shared_ptr<trtllm_run::Workflow> pytest;
  std::string dir;
  std::string path;
};

Fixture& Get() {
  static Fixture* fixture = [] {
    auto* f = new Fixture;
    trtllm_run::Status loaded =
        f->registry.LoadPlugin(trtllm_run::BuiltinPluginDirectory() + "/workflow_pytest.so");
    if (!loaded.ok()) std::fprintf(stderr, "%s\n", loaded.ToString().c_str());
    FUZZ_CHECK(loaded.ok());
    for (const std::shared_ptr<trtllm_run::Workflow>& workflow : f->registry.CreateWorkflows()) {
      if (workflow->Name() == "pytest") f->pytest = workflow;
    }
    FUZZ_CHECK(f->pytest != nullptr);
    char tmpl[] = "/tmp/trtllm_run_fuzz_perf_config.XXXXXX";
    FUZZ_CHECK(::mkdtemp(tmpl) != nullptr);
    f->dir = tmpl;
    f->path = f->dir + "/perf.yaml";
    std::atexit([] { std::filesystem::remove_all(Get().dir); });
    return f;
  }();
  return *fixture;
}

void PlanWith(Fixture& f, const std::string& test_cmd) {
  trtllm_run::CaseRequest request;
  request.test_cmd = test_cmd;
  request.perf_config_yaml = f.path;
  request.repo_root = f.dir;
  FUZZ_CHECK(f.pytest->Claims(request));
  trtllm_run::Result<trtllm_run::JobPlan> plan = f.pytest->Plan(request);
  if (!plan.ok()) FUZZ_CHECK(!plan.status().message().empty());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Get();  // load the plugin before fuzzing starts, so that its coverage counts
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Fixture& f = Get();
  std::FILE* file = std::fopen(f.path.c_str(), "wb");
  FUZZ_CHECK(file != nullptr);
  FUZZ_CHECK(std::fwrite(data, 1, size, file) == size);
  FUZZ_CHECK(std::fclose(file) == 0);
  PlanWith(f, "pytest -v perf/test_perf_sanity.py");
  PlanWith(f,
           "pytest 'perf/test_perf_sanity.py::test_e2e[aggr_upload-gpt_oss_120b_fp4_blackwell-"
           "gpt_oss_fp4_tp1_eagle3_startup]'");
  PlanWith(f, "pytest 'perf/test_perf_sanity.py::test_e2e[disagg_upload-e2e-gb200_deepseek]'");
  PlanWith(f, "pytest 'perf/test_perf_sanity.py::test_e2e[aggr-ctx_only-gb200_deepseek]'");
  return 0;
}
