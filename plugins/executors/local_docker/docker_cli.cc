// Short docker CLI calls with a time limit (docker_cli.h).
#include "docker_cli.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>

#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

std::string DockerCliResult::LastLine() const {
  std::string text(Trim(output));
  std::size_t newline = text.rfind('\n');
  return std::string(Trim(newline == std::string::npos ? text : text.substr(newline + 1)));
}

DockerCliResult RunDockerCli(const std::vector<std::string>& args, const std::string& docker_host,
                             double timeout_seconds) {
  DockerCliResult result;
  Command command;
  command.argv.push_back("docker");
  command.argv.insert(command.argv.end(), args.begin(), args.end());
  if (!docker_host.empty()) command.env.push_back({"DOCKER_HOST", docker_host});
  command.merge_stderr = true;
  Result<CommandOutput> out = MakeLocalScenario()->Run(command, DeadlineIn(timeout_seconds));
  if (!out.ok()) {
    result.output = out.status().ToString();
    return result;
  }
  result.started = true;
  result.timed_out = out->timed_out;
  result.output = std::move(out->stdout_text);
  if (!out->timed_out && out->signal == 0) result.exit_code = out->exit_code;
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
