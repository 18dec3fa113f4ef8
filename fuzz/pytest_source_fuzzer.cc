// Python test sources, read by the pytest workflow plugin for GPU-count markers
// (decorators, pytestmark, pytest.param marks matched to a node's [params]): the plugin is
// loaded from the build's plugin directory and plans pytest cases whose test file holds
// the input, for a function, a class method and a parametrized id.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

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
    char tmpl[] = "/tmp/trtllm_run_fuzz_pytest_source.XXXXXX";
    FUZZ_CHECK(::mkdtemp(tmpl) != nullptr);
    f->dir = tmpl;
    std::filesystem::create_directories(f->dir + "/tests");
    f->path = f->dir + "/tests/test_fuzz.py";
    std::atexit([] { std::filesystem::remove_all(Get().dir); });
    return f;
  }();
  return *fixture;
}

void PlanWith(Fixture& f, const std::string& test_cmd) {
  trtllm_run::CaseRequest request;
  request.test_cmd = test_cmd;
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
  PlanWith(f, "pytest tests/test_fuzz.py::test_x");
  PlanWith(f, "pytest tests/test_fuzz.py::TestX::test_y");
  PlanWith(f, "pytest 'tests/test_fuzz.py::test_p[fp8-tp2-4]'");
  PlanWith(f, "pytest 'tests/test_fuzz.py::TestX::test_p[" + std::string(4096, 'a') + "]'");
  return 0;
}
