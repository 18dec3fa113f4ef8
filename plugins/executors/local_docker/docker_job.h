// One run of a job the local_docker executor prepared: the build pre-step and the
// command, each a supervised `docker run` client (supervisor.h) whose container is
// inspected for its exit code and OOM kill and then removed; and the verdict.
#ifndef TRTLLM_RUN_PLUGINS_LOCAL_DOCKER_DOCKER_JOB_H_
#define TRTLLM_RUN_PLUGINS_LOCAL_DOCKER_DOCKER_JOB_H_

#include <string>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run {
namespace local_docker {

constexpr const char* kName = "local_docker";
// Where each executor-specific input lands in job_spec.json's `extra`.
constexpr const char* kPullKey = "docker_pull";
constexpr const char* kMemoryKey = "docker_memory";
constexpr const char* kHostKey = "docker_host";
constexpr const char* kBuildScriptKey = "build_script_path";
// The budget of one docker info/inspect/rm call.
constexpr double kDockerCallSeconds = 60;

// spec.extra[key], or "" when it is not there.
inline std::string Extra(const JobSpec& spec, const char* key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? std::string() : it->second;
}

// Runs the prepared job (Executor::Execute's contract: a verdict, no container left).
RunResult RunDockerJob(const JobSpec& spec, const ExecContext& context);

}  // namespace local_docker
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLUGINS_LOCAL_DOCKER_DOCKER_JOB_H_
