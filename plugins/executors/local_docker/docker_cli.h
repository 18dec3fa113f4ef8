// Short `docker` CLI calls (info, inspect, stop, kill, rm) with a time limit, shared by
// the local_docker executor and the work dir commands (status, cancel).
#ifndef TRTLLM_RUN_DOCKER_DOCKER_CLI_H_
#define TRTLLM_RUN_DOCKER_DOCKER_CLI_H_

#include <string>
#include <vector>

#include "trtllm_run/export.h"

namespace trtllm_run {

struct TRTLLM_RUN_API DockerCliResult {
  bool started = false;    // false: docker could not be executed (output says why)
  bool timed_out = false;  // killed after the time limit
  int exit_code = -1;      // -1 when it did not exit normally
  std::string output;      // stdout and stderr, merged

  bool ok() const { return started && !timed_out && exit_code == 0; }
  // The last non-empty line of output, trimmed ("" when none).
  std::string LastLine() const;
};

// Runs `docker <args...>` with DOCKER_HOST=`docker_host` when it is not empty (else the
// inherited environment decides). Stdin is /dev/null. After `timeout_seconds` the command
// is killed and timed_out is set. Never throws.
TRTLLM_RUN_API DockerCliResult RunDockerCli(const std::vector<std::string>& args,
                                            const std::string& docker_host,
                                            double timeout_seconds = 30);

// The engine a docker call talks to, for messages: `docker_host`, else $DOCKER_HOST, else
// "unix:///var/run/docker.sock (the default; `docker context` may change it)".
TRTLLM_RUN_API std::string DockerEndpoint(const std::string& docker_host);

// True when docker's output says the engine could not be reached (socket missing,
// connection refused, daemon not running).
TRTLLM_RUN_API bool DockerEngineUnreachable(const std::string& output);

// True when docker's output says the named container or object does not exist.
TRTLLM_RUN_API bool DockerNoSuchObject(const std::string& output);

// The State.Status of a container ("running", "exited", "created", ...), "absent" when
// it does not exist, "unknown: <why>" when the engine cannot be asked.
TRTLLM_RUN_API std::string DockerContainerState(const std::string& name,
                                                const std::string& docker_host);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_DOCKER_DOCKER_CLI_H_
