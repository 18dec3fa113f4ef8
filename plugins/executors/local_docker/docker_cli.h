// Short `docker` CLI calls (info, inspect, stop, kill, rm) with a time limit, for the
// local_docker executor (its Execute, Cancel and DescribeJob).
#ifndef TRTLLM_RUN_LOCAL_DOCKER_DOCKER_CLI_H_
#define TRTLLM_RUN_LOCAL_DOCKER_DOCKER_CLI_H_

#include <string>
#include <vector>

namespace trtllm_run {

struct DockerCliResult {
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
DockerCliResult RunDockerCli(const std::vector<std::string>& args, const std::string& docker_host,
                             double timeout_seconds = 30);

// The engine a docker call talks to, for messages: `docker_host`, else $DOCKER_HOST, else
// "unix:///var/run/docker.sock (the default; `docker context` may change it)".
std::string DockerEndpoint(const std::string& docker_host);

// True when docker's output says the engine could not be reached (socket missing,
// connection refused, daemon not running).
bool DockerEngineUnreachable(const std::string& output);

// True when docker's output says the named container or object does not exist.
bool DockerNoSuchObject(const std::string& output);

// The State.Status of a container ("running", "exited", "created", ...), "absent" when
// it does not exist, "unknown: <why>" when the engine cannot be asked.
std::string DockerContainerState(const std::string& name, const std::string& docker_host);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_LOCAL_DOCKER_DOCKER_CLI_H_
