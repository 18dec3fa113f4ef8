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
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/docker_cli.h"
#include "trtllm_run/log_follower.h"
#include "trtllm_run/plugin_api.h"
#include "trtllm_run/process.h"
#include "trtllm_run/progress.h"
#include "trtllm_run/render.h"
#include "trtllm_run/render_docker.h"
#include "trtllm_run/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kName = "local_docker";
constexpr const char* kScriptName = "docker_cmd.sh";
constexpr const char* kBuildScriptName = "docker_build.sh";

// Patterns the executor itself watches for, ahead of the workflow's.
constexpr std::size_t kHangPattern = 0;
constexpr std::size_t kFirstOomPattern = 1;
const char* const kBuiltinPatterns[] = {
    "hang detected",       // hang watchdogs (spec 000 Step 5)
    "CUDA out of memory",  // torch
    "OutOfMemoryError",    // torch.OutOfMemoryError, torch.cuda.OutOfMemoryError
    "out of memory",       // CUDA runtime, NCCL, kernel OOM killer
};
constexpr std::size_t kBuiltinCount = sizeof(kBuiltinPatterns) / sizeof(kBuiltinPatterns[0]);

constexpr std::size_t kTailLines = 20;
constexpr std::size_t kMaxQuotedLine = 300;
constexpr double kDockerCallSeconds = 60;  // info, inspect, rm
// After `docker stop -t grace`, how long the client may take to exit before it and the
// container are killed outright.
constexpr double kStopSlackSeconds = 15;
constexpr double kRetryStopSeconds = 1.0;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Quoted(const std::string& line) {
  std::string text = line.size() > kMaxQuotedLine ? line.substr(0, kMaxQuotedLine) + "..." : line;
  return "\"" + text + "\"";
}

bool IsBlank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

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

bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
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

std::string FormatSeconds(double seconds) {
  std::ostringstream out;
  out.precision(seconds < 10 ? 2 : 0);
  out << std::fixed << seconds << "s";
  return out.str();
}

std::string ImageOf(const CaseRequest& request, const Placement& placement) {
  if (!placement.container_image.empty()) return placement.container_image;
  return request.container_image.value_or("");
}

// Where each executor-specific input lands in job_spec.json's `extra`.
constexpr const char* kPullKey = "docker_pull";
constexpr const char* kMemoryKey = "docker_memory";
constexpr const char* kHostKey = "docker_host";
constexpr const char* kBuildScriptKey = "build_script_path";

std::string Extra(const JobSpec& spec, const char* key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? std::string() : it->second;
}

enum class StopReason { kNone, kTimeout, kHang, kCancel };

// What one supervised `docker run` ended with.
struct PhaseOutcome {
  bool spawned = false;
  std::string spawn_error;
  StopReason stop = StopReason::kNone;
  int cancel_signal = 0;
  bool killed = false;  // docker kill (or SIGKILL of the client) was needed
  std::optional<ProcessExit> client_exit;
  // From docker inspect, before the container was removed.
  bool inspected = false;
  bool container_found = false;
  bool oom_killed = false;
  std::optional<int> container_exit_code;
  std::string container_error;  // State.Error
  bool engine_unreachable = false;
  std::string engine_message;  // docker's words when it could not reach the engine
  bool removed = false;
  std::vector<std::string> errors;
  std::vector<std::string> notes;
};

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
  spec->workflow_type = plan.workflow_type;
  spec->model_name = plan.model_name;
  spec->repo_root = plan.repo_root;
  spec->direct_cmd = plan.command;
  spec->working_dir = plan.working_dir;
  spec->shell_options = plan.launch.shell_options;
  spec->custom_env = plan.env;
  spec->monitor_timeout_seconds = plan.monitor_timeout_seconds;
  spec->success_patterns = plan.success_patterns;
  spec->failure_patterns = plan.failure_patterns;
  spec->required_devices = plan.required_devices;
  spec->total_required_devices = plan.total_required_devices;
  spec->required_devices_per_node = plan.required_devices_per_node;
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

// One run of a prepared job.
class DockerJob {
 public:
  DockerJob(const JobSpec& spec, const ExecContext& context)
      : spec_(spec),
        context_(context),
        docker_host_(Extra(spec, kHostKey)),
        progress_(context.progress, IsTerminalStream(context.progress), kName) {}
  RunResult Go();

 private:
  // Runs `script` (a docker_cmd.sh) to its end, its output to `log_path` (and the
  // terminal when `echo`), watching the deadline, cancellation and (when `watch`) the
  // log patterns; then inspects and removes `container`.
  PhaseOutcome RunPhase(const std::string& script, const std::string& container,
                        const std::string& log_path, bool watch, const std::string& state_name);
  void Inspect(const std::string& container, PhaseOutcome* outcome);
  void Remove(const std::string& container, PhaseOutcome* outcome);
  void Judge(const PhaseOutcome& outcome);
  RunResult Finish();
  void SaveState(const std::string& state);

  const JobSpec& spec_;
  const ExecContext& context_;
  std::string docker_host_;
  ProgressReporter progress_;
  RunResult result_;
  RunState run_state_;
  std::unique_ptr<LogFollower> follower_;
  Clock::time_point start_;
  std::optional<Clock::time_point> deadline_;
  std::uint64_t log_bytes_written_ = 0;
};

void DockerJob::SaveState(const std::string& state) {
  run_state_.state = state;
  Status saved = WriteRunState(spec_.work_dir, run_state_);
  if (!saved.ok()) result_.errors.push_back(saved.ToString());
}

RunResult DockerJob::Go() {
  result_.scenario = spec_.scenario.empty() ? kName : spec_.scenario;
  result_.workflow_type = spec_.workflow_type;
  result_.model_name = spec_.model_name;
  result_.command = spec_.direct_cmd;
  result_.work_dir = spec_.work_dir;
  result_.log_file = spec_.log_file;
  result_.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  result_.started_at = NowIso8601();
  result_.details["container_name"] = spec_.container_name;
  result_.details["container_image"] = spec_.container_image;
  if (!docker_host_.empty()) result_.details["docker_host"] = docker_host_;
  std::string memory = Extra(spec_, kMemoryKey);
  if (!memory.empty()) result_.details["memory_limit"] = memory;
  start_ = Clock::now();
  if (spec_.monitor_timeout_seconds > 0) {
    deadline_ = start_ + std::chrono::seconds(spec_.monitor_timeout_seconds);
  }

  run_state_ = NewRunState(result_.scenario);
  run_state_.container_name = spec_.container_name;
  run_state_.container_engine = docker_host_;
  run_state_.log_file = spec_.log_file;
  run_state_.extra["kill_grace_seconds"] = std::to_string(std::max(0, context_.kill_grace_seconds));
  SaveState("starting");

  auto error = [this](const std::string& why, const std::string& diagnosis) {
    result_.status = RunStatus::kError;
    result_.reason = why;
    result_.errors.push_back(why);
    result_.diagnosis = diagnosis;
    return Finish();
  };

  if (spec_.container_name.empty() || spec_.script_path.empty()) {
    return error("job_spec.json of " + spec_.work_dir +
                     " has no container_name or script_path: it was not prepared by local_docker",
                 "prepare the case again with --scenario local_docker");
  }

  if (spec_.build_project) {
    std::string build_script = Extra(spec_, kBuildScriptKey);
    std::string build_log = spec_.work_dir + "/" + spec_.model_name + "_build.log";
    result_.details["build_log"] = build_log;
    progress_.Message("build_project: building the repo in a container first (log " + build_log +
                      ")");
    PhaseOutcome build = RunPhase(build_script, spec_.container_name + "_build", build_log,
                                  /*watch=*/false, "building");
    bool build_ok = build.spawned && build.stop == StopReason::kNone && !build.engine_unreachable &&
                    build.container_exit_code == 0;
    if (!build_ok) {
      if (build.stop != StopReason::kNone) {
        Judge(build);  // cancelled or timed out while building
        result_.reason = "during the build pre-step: " + result_.reason;
        return Finish();
      }
      std::string how =
          !build.spawned ? build.spawn_error
          : build.engine_unreachable
              ? "the Docker engine became unreachable: " + build.engine_message
          : build.container_exit_code
              ? "the build container exited with code " + std::to_string(*build.container_exit_code)
              : "the build container did not run (see " + build_log + ")";
      result_.errors.insert(result_.errors.end(), build.errors.begin(), build.errors.end());
      result_.notes.insert(result_.notes.end(), build.notes.begin(), build.notes.end());
      result_.exit_code = build.container_exit_code;
      return error("BUILD_FAILED: " + how + "; the case was not run",
                   "The build pre-step failed: see " + build_log +
                       ". Fix the build, or run with --build-project false when the image "
                       "already has a current build.");
    }
  }

  PhaseOutcome main = RunPhase(spec_.script_path, spec_.container_name, spec_.log_file,
                               /*watch=*/true, "running");
  result_.errors.insert(result_.errors.end(), main.errors.begin(), main.errors.end());
  result_.notes.insert(result_.notes.end(), main.notes.begin(), main.notes.end());
  if (!main.spawned) {
    return error(main.spawn_error, "docker_cmd.sh could not be started; nothing ran");
  }
  Judge(main);
  return Finish();
}

RunResult DockerJob::Finish() {
  if (follower_) {
    result_.log_tail = follower_->Tail();
    result_.log_bytes_read = follower_->bytes_read();
  }
  result_.log_bytes_written = log_bytes_written_;
  result_.finished_at = NowIso8601();
  result_.duration_seconds = Seconds(Clock::now() - start_);
  progress_.Message(std::string(RunStatusName(result_.status)) + ": " + result_.reason);
  progress_.Clear();
  SaveState("finished");
  return result_;
}

PhaseOutcome DockerJob::RunPhase(const std::string& script, const std::string& container,
                                 const std::string& log_path, bool watch,
                                 const std::string& state_name) {
  PhaseOutcome outcome;
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    outcome.spawn_error = "cannot create the log file " + log_path + ": " + ::strerror(errno);
    return outcome;
  }
  ProcessOptions options;
  options.argv = {"bash", script};
  options.working_dir = spec_.work_dir;
  options.env.push_back({"TRTLLM_RUN_KEEP_CONTAINER", "1"});
  if (!docker_host_.empty()) options.env.push_back({"DOCKER_HOST", docker_host_});
  options.env.push_back(WorkDirMarker(spec_.work_dir));  // what `trtllm-run cancel` checks
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
  if (!spawned.ok()) {
    ::close(log_fd);
    outcome.spawn_error = spawned.status().ToString();
    return outcome;
  }
  outcome.spawned = true;
  std::unique_ptr<ChildProcess> child = std::move(spawned.value());

  std::vector<std::string> patterns(kBuiltinPatterns, kBuiltinPatterns + kBuiltinCount);
  if (watch) {
    patterns.insert(patterns.end(), spec_.failure_patterns.begin(), spec_.failure_patterns.end());
    patterns.insert(patterns.end(), spec_.success_patterns.begin(), spec_.success_patterns.end());
  }
  follower_ = std::make_unique<LogFollower>(log_path, patterns, kTailLines);

  run_state_.pid = child->pid();
  run_state_.pgid = child->pgid();
  run_state_.pid_start_time = ProcessStartTime(child->pid());
  run_state_.container_name = container;
  run_state_.log_file = log_path;
  SaveState(state_name);
  progress_.Message(
      "container " + container + " (image " + spec_.container_image + ") started by " + script +
      "; log " + log_path +
      (deadline_ ? "; monitor timeout " + std::to_string(spec_.monitor_timeout_seconds) + "s"
                 : ""));

  const double grace = std::max(0, context_.kill_grace_seconds);
  std::optional<Clock::time_point> stop_began;
  std::unique_ptr<ChildProcess> stopper;  // the running docker stop / docker kill
  bool kill_sent = false;
  bool client_killed = false;
  std::optional<Clock::time_point> last_stop_end;
  std::string buffer;
  bool log_write_failed = false;
  bool follow_error_reported = false;

  auto copy_output = [&]() {
    for (int round = 0; round < 64 && child->output_fd() >= 0; ++round) {
      buffer.clear();
      Result<ReadState> state = child->ReadOutput(&buffer);
      if (!state.ok()) {
        outcome.errors.push_back(state.status().ToString());
        child->CloseOutput();
        return;
      }
      if (!buffer.empty()) {
        if (!log_write_failed && !WriteAll(log_fd, buffer.data(), buffer.size())) {
          log_write_failed = true;
          outcome.errors.push_back("writing the log file " + log_path + " failed: " +
                                   ::strerror(errno) + "; later output is missing from it");
        }
        if (!log_write_failed && watch) log_bytes_written_ += buffer.size();
        if (context_.terminal) {
          progress_.Clear();
          context_.terminal->write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
          context_.terminal->flush();
        }
      }
      if (state.value() != ReadState::kData) return;
    }
  };
  auto start_stopper = [&](std::vector<std::string> args) {
    ProcessOptions stop_options;
    stop_options.argv = {"docker"};
    stop_options.argv.insert(stop_options.argv.end(), args.begin(), args.end());
    if (!docker_host_.empty()) stop_options.env.push_back({"DOCKER_HOST", docker_host_});
    Result<std::unique_ptr<ChildProcess>> started = ChildProcess::Spawn(stop_options);
    if (started.ok()) {
      stopper = std::move(started.value());
    } else {
      outcome.errors.push_back("could not run docker " + args[0] + ": " +
                               started.status().ToString());
    }
  };
  auto begin_stop = [&](StopReason reason, const std::string& why) {
    outcome.stop = reason;
    stop_began = Clock::now();
    run_state_.state = "stopping";
    SaveState("stopping");
    progress_.Message(why + "; docker stop -t " + std::to_string(static_cast<int>(grace)) + " " +
                      container);
    start_stopper({"stop", "-t", std::to_string(static_cast<int>(grace)), container});
  };

  std::optional<ProcessExit> exit;
  while (true) {
    Clock::time_point now = Clock::now();
    if (!exit && outcome.stop == StopReason::kNone) {
      bool hang_seen = watch && follower_->scanner().FindMatch(kHangPattern) != nullptr;
      if (context_.cancel && context_.cancel->cancelled()) {
        outcome.cancel_signal = context_.cancel->signal();
        begin_stop(StopReason::kCancel,
                   "cancelled by " + (outcome.cancel_signal ? SignalName(outcome.cancel_signal)
                                                            : std::string("request")));
      } else if (hang_seen) {  // a line already read counts before a deadline just passed
        begin_stop(StopReason::kHang, "\"hang detected\" in the log");
      } else if (deadline_ && now >= *deadline_) {
        begin_stop(
            StopReason::kTimeout,
            "monitor timeout of " + std::to_string(spec_.monitor_timeout_seconds) + "s reached");
      }
    }
    // The stop sequence: docker stop (retried while the container may not exist yet),
    // docker kill once the grace period is over, the client itself at last.
    if (stop_began && !exit) {
      if (stopper) {
        if (std::optional<ProcessExit> done = stopper->TryWait()) {
          stopper.reset();
          last_stop_end = now;
        }
      }
      double since = Seconds(now - *stop_began);
      if (!stopper && last_stop_end && Seconds(now - *last_stop_end) >= kRetryStopSeconds) {
        if (since >= grace) {
          if (!kill_sent) {
            progress_.Message("still running " + FormatSeconds(grace) +
                              " after docker stop; docker kill " + container);
          }
          kill_sent = true;
          outcome.killed = true;
          start_stopper({"kill", container});
        } else {
          int left = std::max(0, static_cast<int>(grace - since));
          start_stopper({"stop", "-t", std::to_string(left), container});
        }
      }
      if (!client_killed && since >= grace + kStopSlackSeconds) {
        client_killed = true;
        outcome.killed = true;
        outcome.errors.push_back("the docker client did not exit " +
                                 FormatSeconds(grace + kStopSlackSeconds) +
                                 " after docker stop; it was killed (SIGKILL)");
        child->SignalGroup(SIGKILL);
      }
    }
    if (exit && child->output_fd() < 0) break;
    if (exit && !child->GroupAlive()) break;

    std::vector<pollfd> fds;
    if (child->output_fd() >= 0) fds.push_back({child->output_fd(), POLLIN, 0});
    if (context_.cancel && outcome.stop == StopReason::kNone) {
      fds.push_back({context_.cancel->wait_fd(), POLLIN, 0});
    }
    double wait = context_.poll_interval_seconds > 0 ? context_.poll_interval_seconds : 0.5;
    if (stop_began || exit) wait = std::min(wait, 0.1);
    if (deadline_ && outcome.stop == StopReason::kNone) {
      wait = std::min(wait, Seconds(*deadline_ - now));
    }
    ::poll(fds.data(), fds.size(), std::max(1, static_cast<int>(wait * 1000)));

    copy_output();
    Result<LogPoll> polled = follower_->Poll();
    if (!polled.ok() && !follow_error_reported) {
      follow_error_reported = true;
      outcome.errors.push_back(polled.status().ToString());
    }
    if (polled.ok() && polled->restarted) outcome.notes.push_back(polled->note);
    if (!exit) exit = child->TryWait();
    if (!exit) {
      std::vector<std::string> tail = follower_->Tail();
      progress_.Update({outcome.stop == StopReason::kNone ? state_name : "stopping",
                        Seconds(Clock::now() - start_), spec_.monitor_timeout_seconds,
                        tail.empty() ? std::string() : tail.back()});
    }
  }
  copy_output();
  child->CloseOutput();
  ::close(log_fd);
  Result<LogPoll> polled = follower_->Poll();
  if (!polled.ok() && !follow_error_reported) outcome.errors.push_back(polled.status().ToString());
  if (stopper) stopper->Terminate(1.0);
  outcome.client_exit = exit;
  child.reset();  // anything left of the client's group is SIGKILLed and reaped

  Inspect(container, &outcome);
  Remove(container, &outcome);
  return outcome;
}

void DockerJob::Inspect(const std::string& container, PhaseOutcome* outcome) {
  DockerCliResult inspect =
      RunDockerCli({"inspect", "--type", "container", "--format",
                    "{{.State.OOMKilled}}|{{.State.ExitCode}}|{{.State.Status}}|{{.State.Error}}",
                    "--", container},
                   docker_host_, kDockerCallSeconds);
  outcome->inspected = inspect.started && !inspect.timed_out;
  if (inspect.ok()) {
    outcome->container_found = true;
    std::string line = inspect.LastLine();
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (int i = 0; i < 3; ++i) {
      std::size_t bar = line.find('|', start);
      if (bar == std::string::npos) break;
      parts.push_back(line.substr(start, bar - start));
      start = bar + 1;
    }
    parts.push_back(line.substr(start));
    if (parts.size() == 4) {
      outcome->oom_killed = parts[0] == "true";
      char* end = nullptr;
      long code = std::strtol(parts[1].c_str(), &end, 10);
      if (end != parts[1].c_str()) outcome->container_exit_code = static_cast<int>(code);
      outcome->container_error = parts[3];
    } else {
      outcome->errors.push_back("unexpected docker inspect output for " + container + ": " + line);
    }
  } else if (DockerEngineUnreachable(inspect.output)) {
    outcome->engine_unreachable = true;
    outcome->engine_message = inspect.LastLine();
  } else if (!DockerNoSuchObject(inspect.output)) {
    outcome->errors.push_back("docker inspect " + container + " failed: " +
                              (inspect.timed_out ? std::string("no answer") : inspect.LastLine()));
  }
}

void DockerJob::Remove(const std::string& container, PhaseOutcome* outcome) {
  if (outcome->engine_unreachable) {
    outcome->errors.push_back(
        "container " + container + " could not be removed: the Docker engine at " +
        DockerEndpoint(docker_host_) + " is unreachable; remove it with `docker rm -f " +
        container + "` once the engine is back");
    return;
  }
  DockerCliResult rm =
      RunDockerCli({"rm", "-f", "--", container}, docker_host_, kDockerCallSeconds);
  if (rm.ok() || DockerNoSuchObject(rm.output)) {
    outcome->removed = true;
    return;
  }
  if (DockerEngineUnreachable(rm.output)) {
    outcome->engine_unreachable = true;
    outcome->engine_message = rm.LastLine();
  }
  outcome->errors.push_back("docker rm -f " + container + " failed: " +
                            (rm.timed_out ? std::string("no answer") : rm.LastLine()));
}

void DockerJob::Judge(const PhaseOutcome& outcome) {
  const PatternScanner& scanner = follower_->scanner();
  const PatternMatch* hang = scanner.FindMatch(kHangPattern);
  const PatternMatch* oom = nullptr;
  const PatternMatch* failure = nullptr;
  for (const PatternMatch& match : scanner.matches()) {
    std::size_t i = match.pattern_index;
    if (!oom && i >= kFirstOomPattern && i < kBuiltinCount) oom = &match;
    if (!failure && i >= kBuiltinCount && i < kBuiltinCount + spec_.failure_patterns.size()) {
      failure = &match;
    }
  }
  const std::string& name = result_.details["container_name"];
  result_.details["oom_killed"] = outcome.oom_killed ? "true" : "false";
  result_.details["container_removed"] = outcome.removed ? "true" : "false";
  if (outcome.container_exit_code) {
    result_.details["container_exit_code"] = std::to_string(*outcome.container_exit_code);
  }
  if (outcome.client_exit && outcome.client_exit->exit_code) {
    result_.details["docker_client_exit_code"] = std::to_string(*outcome.client_exit->exit_code);
  }
  // The command's exit code is the container's; the client's when the container is gone.
  std::optional<int> code = outcome.container_exit_code;
  if (!code && outcome.client_exit) code = outcome.client_exit->exit_code;
  result_.exit_code = code;
  if (!code && outcome.client_exit) result_.signal = outcome.client_exit->signal;

  std::string stopped_how = "docker stop -t " + std::to_string(context_.kill_grace_seconds) +
                            (outcome.killed ? ", then docker kill" : "") + "; container " +
                            (outcome.removed ? "removed" : "NOT removed");
  switch (outcome.stop) {
    case StopReason::kCancel:
      result_.status = RunStatus::kCancelled;
      result_.cancelled_by = outcome.cancel_signal ? SignalName(outcome.cancel_signal) : "request";
      result_.user_interrupt = outcome.cancel_signal == SIGINT;
      result_.reason = "cancelled by " + result_.cancelled_by + "; " + stopped_how;
      result_.diagnosis = "The run was cancelled before the command finished.";
      return;
    case StopReason::kTimeout:
      result_.status = RunStatus::kTimeout;
      result_.reason = "still running after monitor_timeout_seconds=" +
                       std::to_string(spec_.monitor_timeout_seconds) + "; " + stopped_how;
      result_.diagnosis =
          "The command exceeded its wall-clock limit: raise --monitor-timeout if it needs "
          "longer, or check the log tail for where it stalled.";
      return;
    case StopReason::kHang:
      result_.status = RunStatus::kHangDetected;
      result_.reason = "log line " + Quoted(hang ? hang->line : std::string("hang detected")) +
                       "; " + stopped_how;
      result_.diagnosis =
          "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";
      return;
    case StopReason::kNone:
      break;
  }

  if (outcome.oom_killed && hang) {
    // The hang detector's line came first: the OOM kill followed the hang (its process
    // kept allocating, or a worker died), it does not explain it.
    std::string limit = Extra(spec_, kMemoryKey);
    result_.status = RunStatus::kHangDetected;
    result_.reason = "log line " + Quoted(hang->line) +
                     ", then the kernel OOM killer stopped container " + name +
                     (limit.empty() ? std::string() : " (memory limit " + limit + ")") +
                     (code ? "; exit code " + std::to_string(*code) : std::string());
    result_.diagnosis =
        "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";
    return;
  }
  if (outcome.oom_killed) {
    std::string limit = Extra(spec_, kMemoryKey);
    result_.status = RunStatus::kOutOfMemory;
    result_.reason = "the kernel OOM killer stopped container " + name +
                     (limit.empty() ? std::string() : " (memory limit " + limit + ")") +
                     (code ? "; exit code " + std::to_string(*code) : std::string());
    result_.diagnosis =
        "Out of memory: raise --docker-memory, reduce the batch size or use more "
        "GPUs.";
    return;
  }
  if (outcome.engine_unreachable && !outcome.container_found) {
    result_.status = RunStatus::kError;
    result_.reason = "the Docker engine at " + DockerEndpoint(docker_host_) +
                     " became unreachable during the run (docker: " + outcome.engine_message +
                     "); the command's outcome is unknown";
    result_.errors.push_back(result_.reason);
    result_.diagnosis =
        "The Docker daemon stopped or its socket went away while the case ran: check dockerd "
        "(systemctl status docker, its log) and run the case again.";
    return;
  }
  if (!outcome.container_found) {
    // The client ran but no container exists: docker run failed before creating it
    // (missing image with --pull never, bad option, registry error), or someone removed
    // it. Docker's own message is the last line of the log.
    std::string last;
    std::vector<std::string> tail = follower_->Tail();
    for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
      if (!IsBlank(*it)) {
        last = *it;
        break;
      }
    }
    result_.status = RunStatus::kError;
    result_.reason = "docker run did not create container " + name +
                     (code ? " (exit code " + std::to_string(*code) + ")" : std::string()) +
                     (last.empty() ? std::string() : ": " + Quoted(last));
    result_.errors.push_back(result_.reason);
    result_.diagnosis = "The container failed to start: check the image (" + spec_.container_image +
                        "), --docker-pull and the mounts in " + spec_.script_path + ".";
    return;
  }
  if (code && *code == 0) {
    result_.status = RunStatus::kPassed;
    result_.reason = "the command exited with code 0 in container " + name;
    if (hang)
      result_.notes.push_back("the log reports a hang, but the command exited 0: " +
                              Quoted(hang->line));
    if (failure) {
      result_.notes.push_back(
          "failure pattern '" + failure->pattern +
          "' appears in the log, but the command exited 0: " + Quoted(failure->line));
    }
    return;
  }
  if (!code) {
    result_.status = RunStatus::kError;
    result_.reason =
        "the exit status of container " + name + " is unknown" +
        (outcome.client_exit ? " (docker client: " + outcome.client_exit->ToString() + ")"
                             : std::string());
    result_.errors.push_back(result_.reason);
    return;
  }
  std::string how = "the command exited with code " + std::to_string(*code);
  if (hang) {
    result_.status = RunStatus::kHangDetected;
    result_.reason = how + " after logging " + Quoted(hang->line);
    result_.diagnosis =
        "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";
  } else if (oom) {
    result_.status = RunStatus::kOutOfMemory;
    result_.reason = how + "; log line " + Quoted(oom->line);
    result_.diagnosis = "Out of memory: reduce batch size or use more GPUs.";
  } else {
    result_.status = RunStatus::kFailed;
    result_.reason = how;
    if (failure) {
      result_.reason +=
          "; first failure pattern '" + failure->pattern + "': " + Quoted(failure->line);
    }
    if (*code == 125 && !outcome.container_error.empty()) {
      result_.reason += "; docker: " + outcome.container_error;
    }
    result_.diagnosis =
        "The command failed; see the log tail" +
        std::string(failure ? " and the line matching '" + failure->pattern + "'" : "") + ".";
  }
}

RunResult LocalDockerExecutor::Execute(const JobSpec& spec, const ExecContext& context) {
  DockerJob job(spec, context);
  return job.Go();
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
