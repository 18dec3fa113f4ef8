// Short docker CLI calls with a time limit (docker_cli.h).
#include "docker_cli.h"

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {}  // namespace

std::string DockerCliResult::LastLine() const {
  std::string text(Trim(output));
  std::size_t newline = text.rfind('\n');
  return std::string(Trim(newline == std::string::npos ? text : text.substr(newline + 1)));
}

DockerCliResult RunDockerCli(const std::vector<std::string>& args, const std::string& docker_host,
                             double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  DockerCliResult result;
  ProcessOptions options;
  options.argv.push_back("docker");
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  if (!docker_host.empty()) options.env.push_back({"DOCKER_HOST", docker_host});
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
  if (!spawned.ok()) {
    result.output = spawned.status().ToString();
    return result;
  }
  result.started = true;
  ChildProcess& child = *spawned.value();
  Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000));
  std::optional<ProcessExit> exit;
  while (true) {
    if (child.output_fd() >= 0) {
      pollfd fd = {child.output_fd(), POLLIN, 0};
      ::poll(&fd, 1, 50);
      while (true) {
        Result<ReadState> state = child.ReadOutput(&result.output);
        if (!state.ok() || state.value() != ReadState::kData) break;
      }
    } else {
      ::poll(nullptr, 0, 20);
    }
    if (!exit) exit = child.TryWait();
    if (exit && child.output_fd() < 0) break;
    if (exit && !child.GroupAlive()) {
      child.CloseOutput();  // a descendant that left the group holds the pipe: stop reading
      break;
    }
    if (Clock::now() >= deadline) {
      result.timed_out = true;
      exit = child.Terminate(1.0);
      break;
    }
  }
  if (exit && exit->exit_code) result.exit_code = *exit->exit_code;
  return result;
}

std::string DockerEndpoint(const std::string& docker_host) {
  if (!docker_host.empty()) return docker_host;
  const char* env = std::getenv("DOCKER_HOST");
  if (env != nullptr && *env != '\0') return env;
  return "unix:///var/run/docker.sock (the default; `docker context` may change it)";
}

bool DockerEngineUnreachable(const std::string& output) {
  std::string text = AsciiLower(output);
  return text.find("cannot connect to the docker daemon") != std::string::npos ||
         text.find("error during connect") != std::string::npos ||
         text.find("is the docker daemon running") != std::string::npos ||
         (text.find("dial unix") != std::string::npos &&
          (text.find("no such file") != std::string::npos ||
           text.find("connection refused") != std::string::npos));
}

bool DockerNoSuchObject(const std::string& output) {
  std::string text = AsciiLower(output);
  return text.find("no such container") != std::string::npos ||
         text.find("no such object") != std::string::npos ||
         text.find("no such image") != std::string::npos;
}

std::string DockerContainerState(const std::string& name, const std::string& docker_host) {
  DockerCliResult inspect =
      RunDockerCli({"inspect", "--type", "container", "--format", "{{.State.Status}}", "--", name},
                   docker_host, 15);
  if (inspect.ok()) return inspect.LastLine();
  if (DockerNoSuchObject(inspect.output)) return "absent";
  if (!inspect.started) return "unknown: docker could not be run: " + inspect.output;
  if (inspect.timed_out) return "unknown: docker inspect did not answer within 15s";
  return "unknown: " + inspect.LastLine();
}

}  // namespace trtllm_run
