// The `local_docker` executor (spec 000 Step 5 "For local_docker", spec 001 Category 1):
// runs the plan's command in a new container of the Docker engine on this host.
//
// Prepare writes docker_cmd.sh (render_docker.h) and job_spec.json. Execute optionally
// runs the build pre-step (build_project; a non-zero exit is "BUILD_FAILED" -> ERROR),
// then runs docker_cmd.sh as a supervised child: the output goes to
// <work_dir>/<model>_local.log and the terminal as it arrives; monitor_timeout_seconds
// (TIMEOUT), "hang detected" in the log (HANG_DETECTED) and cancellation stop the
// container with `docker stop -t <grace>`, then `docker kill`. The container is kept
// until its State.OOMKilled is read (OUT_OF_MEMORY) and then removed: no container of the
// run is left, whatever the verdict. run_state.json (workdir.h) names the container, so
// `trtllm-run status/cancel` work from another process.
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "docker_cli.h"
#include "docker_job.h"
#include "render_docker.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

using local_docker::Extra;
using local_docker::kBuildScriptKey;
using local_docker::kDockerCallSeconds;
using local_docker::kHostKey;
using local_docker::kMemoryKey;
using local_docker::kName;
using local_docker::kPullKey;

constexpr const char* kScriptName = "docker_cmd.sh";
constexpr const char* kBuildScriptName = "docker_build.sh";

bool FindInPath(const std::string& name) {
  const char* path = ::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::string HomeDir() {
  const char* home = ::getenv("HOME");
  if (home != nullptr && *home != '\0') return home;
  if (struct passwd* pw = ::getpwuid(::getuid())) return pw->pw_dir;
  return "/root";
}

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = ::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

std::string ParentDir(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string ImageOf(const CaseRequest& request, const Placement& placement) {
  if (!placement.container_image.empty()) return placement.container_image;
  return request.container_image.value_or("");
}

class LocalDockerExecutor : public Executor {
 public:
  std::string Name() const override { return kName; }

  Status Validate(const CaseRequest& request, const JobPlan& plan,
                  const Placement& placement) const override;
  Status Prepare(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                 JobSpec* spec) override;
  RunResult Execute(const JobSpec& spec, const ExecContext& context) override;
  Status Cancel(const JobSpec& spec, const ExecContext& context) override;

  // Runs here, on this host's GPUs, in a container; its checks need the env check's
  // Docker facts.
  ExecutorTraits Traits() const override {
    ExecutorTraits traits;
    traits.host_bound = true;
    traits.needs_env_check = true;
    traits.container = true;
    return traits;
  }

  // `trtllm-run status`: what the engine says about the run's container. Only a name of
  // this run's form is asked about, and only on the engine the run was prepared for.
  JobDescription DescribeJob(const JobSpec& spec, const RunState* state) const override {
    JobDescription description;
    if (state == nullptr) return description;  // never started: no container to ask about
    std::string name =
        state && !state->container_name.empty() ? state->container_name : spec.container_name;
    if (name.empty()) return description;
    if (!IsDockerContainerNameFor(name, spec.model_name, spec.work_dir)) {
      description.container_state = "not asked: the name is not one this run created";
      return description;
    }
    auto host = spec.extra.find(kHostKey);
    std::string engine = host == spec.extra.end() ? "" : host->second;
    if (state && state->container_engine != engine) {
      description.container_state =
          "not asked: run_state.json names another engine than the run was prepared for";
      return description;
    }
    description.container_state = DockerContainerState(name, engine);
    return description;
  }
};

Status LocalDockerExecutor::Validate(const CaseRequest& request, const JobPlan& plan,
                                     const Placement& placement) const {
  if (IsBlank(plan.command)) {
    return Status::InvalidInput(
        "local_docker: there is no command to run (the " + plan.workflow_type +
            " workflow produced an empty command)",
        "give a non-empty --custom-cmd, --custom-script, --test-cmd, --bench-cmd or --eval-cmd");
  }
  struct stat st;
  if (plan.repo_root.empty() || ::stat(plan.repo_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidInput("local_docker: repo_root '" + plan.repo_root +
                                    "' is not a directory (it is mounted into the container)",
                                "give the TensorRT-LLM checkout with --repo-root DIR");
  }
  std::string image = ImageOf(request, placement);
  if (image.empty()) {
    return Status::InvalidInput("local_docker: no container image",
                                "give --container-image IMAGE (or add "
                                "jenkins/current_image_tags.properties to the repo)");
  }
  if (image[0] == '-' || image.find_first_of(" \t\r\n") != std::string::npos) {
    return Status::InvalidInput("local_docker: container image '" + EscapeControl(image) +
                                    "' starts with '-' or holds blanks; docker would read it as "
                                    "options",
                                "give an image reference such as registry/name:tag");
  }
  // docker run -v HOST:TARGET splits on ':': a directory with one cannot be mounted.
  const char* home = ::getenv("HOME");
  for (const auto& [what, dir] : {std::pair<std::string, std::string>{"repo_root", plan.repo_root},
                                  {"HOME", home ? home : ""},
                                  {"models_path", request.models_path.value_or("")},
                                  {"checkpoint_path", request.checkpoint_path.value_or("")},
                                  {"llm_models_root", request.llm_models_root.value_or("")}}) {
    if (dir.find(':') != std::string::npos) {
      return Status::InvalidInput(
          "local_docker: " + what + " '" + EscapeControl(dir) +
              "' holds ':', which docker run -v reads as the end of the host path",
          "use a directory without ':' (a symlink to it works)");
    }
  }
  std::string pull = request.docker_pull.value_or("missing");
  TRTLLM_RUN_RETURN_IF_ERROR(ValidateDockerPull(pull, "--docker-pull"));
  if (request.docker_memory) {
    TRTLLM_RUN_RETURN_IF_ERROR(ValidateDockerMemory(*request.docker_memory, "--docker-memory"));
  }
  if (!FindInPath("docker")) {
    return Status::InvalidInput("local_docker: the docker CLI was not found in $PATH",
                                "install Docker (Debian: apt-get install docker.io) or choose "
                                "another --scenario, e.g. local_direct");
  }
  DockerCliResult info = RunDockerCli({"info", "--format", "{{.ServerVersion}}"}, "", 30);
  if (!info.ok()) {
    std::string why = info.timed_out ? "did not answer within 30s" : info.LastLine();
    return Status::InvalidInput(
        "local_docker: the Docker engine at " + DockerEndpoint("") +
            " is not reachable: `docker info` " + (info.timed_out ? why : "said: " + why),
        "start the Docker daemon (dockerd), fix DOCKER_HOST, or choose --scenario local_direct");
  }
  if (pull == "never") {
    DockerCliResult inspect =
        RunDockerCli({"image", "inspect", "--format", "{{.Id}}", image}, "", 30);
    if (!inspect.ok()) {
      return Status::InvalidInput(
          "local_docker: image '" + image + "' is not present in the Docker engine at " +
              DockerEndpoint("") + " and --docker-pull is never, so no registry is contacted" +
              (inspect.LastLine().empty() ? "" : " (docker: " + inspect.LastLine() + ")"),
          "load the image first (docker load / docker import / docker pull), or allow pulling "
          "with --docker-pull missing");
    }
  }
  return Status::Ok();
}

Status LocalDockerExecutor::Prepare(const CaseRequest& request, const JobPlan& plan,
                                    const Placement& placement, JobSpec* spec) {
  if (spec->scenario.empty()) spec->scenario = Name();
  CopyPlanToSpec(plan, spec);
  spec->direct_cmd = plan.command;
  spec->node_count = plan.node_count;
  spec->build_project = request.build_project.value_or(plan.launch.build_project);
  // The payload installs the repo when the plan has an install step (workflows add it
  // unless skip_install).
  spec->skip_install = !plan.HasStep("install");
  spec->container_image = ImageOf(request, placement);
  spec->container_runtime = "docker";
  spec->device_type = placement.env.device_type;
  spec->llm_models_root = !placement.llm_models_root.empty()
                              ? placement.llm_models_root
                              : request.llm_models_root.value_or(std::string());
  if (spec->log_file.empty()) {
    spec->log_file = spec->work_dir + "/" + plan.model_name + "_local.log";
  }

  DockerRunInput in;
  in.image = spec->container_image;
  in.container_name = DockerContainerName(plan.model_name, spec->work_dir);
  in.repo_root = plan.repo_root;
  in.home_dir = HomeDir();
  in.work_dir = spec->work_dir;
  in.llm_models_root = spec->llm_models_root;
  in.models_host_path = !placement.models_host_path.empty()
                            ? placement.models_host_path
                            : request.models_path.value_or(std::string());
  if (request.custom_script) {
    // The custom workflow runs `bash <script>`: its directory must exist in the container.
    std::string script = *request.custom_script;
    if (!script.empty() && script[0] != '/') script = plan.repo_root + "/" + script;
    std::string dir = ParentDir(script);
    if (!dir.empty()) in.extra_dirs.push_back(dir);
  }
  in.env = plan.env;
  in.gpu_count = placement.env.gpu_count;
  in.nvidia_runtime = placement.env.nvidia_runtime;
  in.pull = request.docker_pull.value_or("missing");
  in.memory = request.docker_memory.value_or("");
  in.skip_install = spec->skip_install;
  in.command = plan.command;
  in.working_dir = plan.working_dir;
  in.shell_options = plan.launch.shell_options;
  in.command_prelude = plan.launch.command_prelude;
  DockerRun run = RenderDockerRun(in);

  spec->container_name = in.container_name;
  spec->docker_cmd = run.command_line;
  spec->script_name = kScriptName;
  spec->script_path = spec->work_dir + "/" + kScriptName;
  std::string mounts;
  for (std::size_t i = 0; i + 1 < run.options.size(); ++i) {
    if (run.options[i] == "-v") mounts += (mounts.empty() ? "" : ",") + run.options[i + 1];
  }
  spec->container_mounts = mounts;
  spec->extra[kPullKey] = in.pull;
  if (!in.memory.empty()) spec->extra[kMemoryKey] = in.memory;
  std::string docker_host = EnvOr("DOCKER_HOST", "");
  if (!docker_host.empty()) spec->extra[kHostKey] = docker_host;

  TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(spec->script_path, run.script));
  ::chmod(spec->script_path.c_str(), 0755);
  if (spec->build_project) {
    DockerRun build = RenderDockerBuild(in);
    std::string build_path = spec->work_dir + "/" + kBuildScriptName;
    TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(build_path, build.script));
    ::chmod(build_path.c_str(), 0755);
    spec->extra[kBuildScriptKey] = build_path;
  }
  return WriteJobSpec(*spec);
}

RunResult LocalDockerExecutor::Execute(const JobSpec& spec, const ExecContext& context) {
  return local_docker::RunDockerJob(spec, context);
}

Status LocalDockerExecutor::Cancel(const JobSpec& spec, const ExecContext& context) {
  Result<RunState> state = ReadRunState(spec.work_dir);
  if (!state.ok() && state.status().code() != StatusCode::kNotFound) return state.status();
  auto refuse = [&](const std::string& why) {
    return Status::InvalidInput("local_docker: " + why + "; nothing was stopped",
                                "trtllm-run stops only containers it created for the run of " +
                                    spec.work_dir + "; remove others yourself");
  };
  // The engine the run used, as job_spec.json recorded it when the case was prepared.
  std::string docker_host = Extra(spec, kHostKey);
  if (state.ok() && state->container_engine != docker_host) {
    return refuse(
        "run_state.json names the Docker engine '" + state->container_engine +
        "', but the run was prepared for " +
        (docker_host.empty() ? std::string("the default engine") : "'" + docker_host + "'") +
        ": not the engine the run used");
  }
  std::vector<std::string> containers;
  auto add = [&](const std::string& name) {
    if (!name.empty() &&
        std::find(containers.begin(), containers.end(), name) == containers.end()) {
      containers.push_back(name);
    }
  };
  if (state.ok()) add(state->container_name);
  add(spec.container_name);
  if (!spec.container_name.empty()) add(spec.container_name + "_build");
  // Every container is checked before any is touched: its name has this run's form and
  // its label names this work dir (set at `docker run`).
  std::vector<std::pair<std::string, std::string>> present;  // name, state
  std::vector<std::string> problems;
  for (const std::string& name : containers) {
    if (!IsDockerContainerNameFor(name, spec.model_name, spec.work_dir)) {
      return refuse("container name '" + name +
                    "' is not one this run created (its containers are named like " +
                    DockerContainerName(spec.model_name, spec.work_dir) +
                    ", the last 6 hex digits random)");
    }
    DockerCliResult inspect = RunDockerCli(
        {"inspect", "--type", "container", "--format",
         std::string("{{.State.Status}}|{{index .Config.Labels \"") + kDockerWorkDirLabel + "\"}}",
         "--", name},
        docker_host, kDockerCallSeconds);
    if (!inspect.ok()) {
      if (DockerNoSuchObject(inspect.output)) continue;
      problems.push_back(
          "container " + name + ": " +
          (inspect.timed_out ? std::string("docker inspect did not answer") : inspect.LastLine()));
      continue;
    }
    std::string line = inspect.LastLine();
    std::size_t bar = line.find('|');
    std::string status = line.substr(0, bar);
    std::string label = bar == std::string::npos ? "" : line.substr(bar + 1);
    if (label != spec.work_dir) {
      return refuse("container " + name + " does not carry the label " + kDockerWorkDirLabel + "=" +
                    spec.work_dir + " (it has '" + label + "'): it is not this run's");
    }
    present.push_back({name, status});
  }
  const int grace = std::max(0, context.kill_grace_seconds);
  for (const auto& [name, before] : present) {
    if (before == "running" || before == "restarting" || before == "paused") {
      DockerCliResult stop = RunDockerCli({"stop", "-t", std::to_string(grace), "--", name},
                                          docker_host, grace + kDockerCallSeconds);
      if (!stop.ok() && !DockerNoSuchObject(stop.output)) {
        RunDockerCli({"kill", "--", name}, docker_host, kDockerCallSeconds);
      }
    }
    DockerCliResult rm = RunDockerCli({"rm", "-f", "--", name}, docker_host, kDockerCallSeconds);
    if (!rm.ok() && !DockerNoSuchObject(rm.output)) {
      problems.push_back("docker rm -f " + name + ": " + rm.LastLine());
    }
  }
  // The docker client of the run, if its supervisor is gone and it still runs.
  if (state.ok() && (state->host.empty() || state->host == HostName())) {
    Status stopped = StopRecordedJob(state.value(), spec.work_dir, 1.0);
    if (stopped.code() == StatusCode::kInvalidInput) return stopped.WithContext("local_docker");
    if (!stopped.ok()) problems.push_back(stopped.message());
  }
  if (!problems.empty()) {
    std::string text;
    for (const std::string& problem : problems) text += (text.empty() ? "" : "; ") + problem;
    return Status::ExecutionError(
        "local_docker: could not stop everything of " + spec.work_dir + ": " + text,
        "check the Docker engine at " + DockerEndpoint(docker_host));
  }
  return Status::Ok();
}

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(trtllm_run::LocalDockerExecutor, "local_docker", "0.1.0",
                                   "Runs the command in a new container of the local Docker "
                                   "engine (docker_cmd.sh)")
