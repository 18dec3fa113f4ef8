// The run state file a running trtllm-run leaves in its work dir, read by `status`,
// `attach` and `cancel` from other processes (workdir.h): ReadRunState and
// InspectWorkDir on a work dir whose state file holds the input.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_check.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/workdir.h"

namespace {

char g_work_dir[64];  // for the exit handler: outlives every static std::string

const std::string& WorkDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/trtllm_run_fuzz_run_state.XXXXXX";
    FUZZ_CHECK(::mkdtemp(tmpl) != nullptr);
    // A work dir: InspectWorkDir reads run_state.json only where job_spec.json is.
    trtllm_run::JobSpec spec;
    spec.scenario = "local_direct";
    spec.work_dir = tmpl;
    spec.log_file = spec.work_dir + "/output.log";
    FUZZ_CHECK(trtllm_run::WriteJobSpec(spec).ok());
    std::snprintf(g_work_dir, sizeof(g_work_dir), "%s", tmpl);
    std::atexit([] { std::filesystem::remove_all(g_work_dir); });
    return std::string(tmpl);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& dir = WorkDir();
  const std::string path = trtllm_run::RunStatePath(dir);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  FUZZ_CHECK(file != nullptr);
  FUZZ_CHECK(std::fwrite(data, 1, size, file) == size);
  FUZZ_CHECK(std::fclose(file) == 0);
  trtllm_run::Result<trtllm_run::RunState> state = trtllm_run::ReadRunState(dir);
  if (!state.ok()) FUZZ_CHECK(state.status().message().find(dir) != std::string::npos);
  (void)trtllm_run::InspectWorkDir(dir);
  ::unlink(path.c_str());
  return 0;
}
