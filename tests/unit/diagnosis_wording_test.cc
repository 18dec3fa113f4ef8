// Diagnoses worded for the target that ran the job: no Slurm flags or scheduler files in the
// advice for a command on this host or in a local container.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/text.h"

using namespace trtllm_run;

namespace {

// A job spec and an empty log in a fresh directory, as a local run leaves them.
struct EmptyLogRun {
  std::string dir;
  JobSpec spec;
  explicit EmptyLogRun(const std::string& runtime) {
    char tmpl[] = "/tmp/trtllm_diag_wording_XXXXXX";
    dir = ::mkdtemp(tmpl);
    spec.work_dir = dir;
    spec.log_file = dir + "/job.log";
    spec.container_runtime = runtime;
    REQUIRE(WriteFileAtomic(spec.log_file, "").ok());
  }
  ~EmptyLogRun() {
    std::error_code error;
    std::filesystem::remove_all(dir, error);
  }
};

}  // namespace

TEST_CASE("diagnosis: a local command's advice names no Slurm flag or scheduler file",
          "[diagnosis]") {
  EmptyLogRun run("");
  RunResult result;
  result.status = RunStatus::kFailed;
  result.exit_code = 1;
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::StartsWith("Empty output file: the command printed nothing"));
  CHECK_THAT(result.diagnosis, !Catch::Contains("scheduler") && !Catch::Contains(".err"));

  result = RunResult();
  result.status = RunStatus::kTimeout;
  run.spec.monitor_timeout_seconds = 60;
  WriteFileAtomic(run.spec.log_file, "step 1\n").IgnoreError();
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::Contains("increase --monitor-timeout"));
  CHECK_THAT(result.diagnosis, !Catch::Contains("--time-limit") && !Catch::Contains("Slurm"));

  result = RunResult();
  result.status = RunStatus::kOutOfMemory;
  WriteFileAtomic(run.spec.log_file, "torch.OutOfMemoryError: CUDA out of memory\n").IgnoreError();
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::Contains("use more GPUs"));
  CHECK_THAT(result.diagnosis, !Catch::Contains("nodes"));
}

TEST_CASE("diagnosis: a local container's empty log points at the image, not the scheduler",
          "[diagnosis]") {
  EmptyLogRun run("docker");
  RunResult result;
  result.status = RunStatus::kError;
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::StartsWith("Empty output file: the container failed"));
  CHECK_THAT(result.diagnosis, !Catch::Contains("scheduler"));
}

TEST_CASE("diagnosis: a Slurm job keeps the batch wording", "[diagnosis]") {
  EmptyLogRun run("pyxis");
  run.spec.slurm_params = SlurmParams();
  run.spec.slurm_params->time_limit = "01:00:00";
  RunResult result;
  result.status = RunStatus::kTimeout;
  WriteFileAtomic(run.spec.log_file, "step 1\n").IgnoreError();
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::Contains("increase --time-limit"));
  result = RunResult();
  result.status = RunStatus::kFailed;
  WriteFileAtomic(run.spec.log_file, "").IgnoreError();
  Diagnose(&result, run.spec);
  CHECK_THAT(result.diagnosis, Catch::Contains("scheduler's .err file"));
}
