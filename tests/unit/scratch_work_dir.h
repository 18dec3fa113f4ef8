// A temporary local_direct work dir with its job_spec.json written, removed with the
// object: the unit tests of run_state.json and InspectWorkDir share it.
#ifndef TRTLLM_RUN_TESTS_UNIT_SCRATCH_WORK_DIR_H_
#define TRTLLM_RUN_TESTS_UNIT_SCRATCH_WORK_DIR_H_

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run {

class ScratchWorkDir {
 public:
  ScratchWorkDir() {
    char pattern[] = "/tmp/workdir_state_test_XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
    JobSpec spec;
    spec.scenario = "local_direct";
    spec.work_dir = path_;
    spec.log_file = path_ + "/m_local.log";
    REQUIRE(WriteJobSpec(spec).ok());
  }
  ~ScratchWorkDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchWorkDir(const ScratchWorkDir&) = delete;
  ScratchWorkDir& operator=(const ScratchWorkDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_TESTS_UNIT_SCRATCH_WORK_DIR_H_
