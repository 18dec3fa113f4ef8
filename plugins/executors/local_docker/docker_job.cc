// One run of a prepared local_docker job (docker_job.h).
#include "docker_job.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "docker_cli.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/supervise/local_run_verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/supervise/output_pump.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/supervise/supervisor.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace local_docker {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kTailLines = 20;
// After `docker stop -t grace`, how long the client may take to exit before it and the
// container are killed outright.
constexpr double kStopSlackSeconds = 15;
constexpr double kRetryStopSeconds = 1.0;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string FormatSeconds(double seconds) {
  std::ostringstream out;
  out.precision(seconds < 10 ? 2 : 0);
  out << std::fixed << seconds << "s";
  return out.str();
}

// What one supervised `docker run` ended with.
struct PhaseOutcome {
  bool spawned = false;
  std::string spawn_error;
  StopReason stop = StopReason::kNone;
  int cancel_signal = 0;
  std::string last_output_line;  // stop kSilence: the log's last line then
  bool killed = false;           // docker kill (or SIGKILL of the client) was needed
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
  std::uint64_t log_bytes_written = 0;
  std::vector<std::string> errors;
  std::vector<std::string> notes;
};

// One `docker run` client (a docker_cmd.sh) as the supervisor drives it. Its stop is
// `docker stop -t <grace>` (retried while the container may not exist yet), `docker
// kill` once the grace is over, and the client itself killed at last.
class DockerPhase : public SupervisedJob {
 public:
  DockerPhase(std::unique_ptr<ChildProcess> client, std::string container, std::string docker_host,
              double grace, ProgressReporter* progress, PhaseOutcome* outcome)
      : client_(std::move(client)),
        container_(std::move(container)),
        docker_host_(std::move(docker_host)),
        grace_(grace),
        progress_(progress),
        outcome_(outcome) {}
  ~DockerPhase() override {
    if (stopper_) stopper_->Terminate(1.0);
  }

  OutputPump* pump = nullptr;  // set before Supervise()
  std::function<void()> on_stop;

  ChildProcess* client() { return client_.get(); }
  int OutputFd() const override { return client_->output_fd(); }
  int ExitFd() const override { return client_->exit_fd(); }
  void PumpOutput() override { pump->Drain(client_.get()); }
  std::optional<ProcessExit> PollExit() override { return client_->TryWait(); }
  AfterExit CheckAfterExit(double /*seconds_since_exit*/) override {
    return Gone() ? AfterExit::kDone : AfterExit::kWait;
  }
  bool Gone() override { return client_->output_fd() < 0 || !client_->GroupAlive(); }
  void BeginStop(StopReason /*reason*/, const std::string& why) override {
    if (on_stop) on_stop();
    progress_->Message(why + "; docker stop -t " + std::to_string(static_cast<int>(grace_)) + " " +
                       container_);
    StartStopper({"stop", "-t", std::to_string(static_cast<int>(grace_)), container_});
  }
  void WhileStopping(double since) override;
  bool Escalate() override { return true; }  // docker kill comes from WhileStopping
  bool GiveUp() override {
    outcome_->killed = true;
    outcome_->errors.push_back("the docker client did not exit " +
                               FormatSeconds(grace_ + kStopSlackSeconds) +
                               " after docker stop; it was killed (SIGKILL)");
    client_->SignalGroup(SIGKILL);
    return false;  // its end is still awaited
  }

 private:
  void StartStopper(const std::vector<std::string>& args);

  std::unique_ptr<ChildProcess> client_;
  std::string container_;
  std::string docker_host_;
  double grace_;
  ProgressReporter* progress_;
  PhaseOutcome* outcome_;
  std::unique_ptr<ChildProcess> stopper_;  // the running docker stop / docker kill
  std::optional<Clock::time_point> last_stop_end_;
  bool kill_sent_ = false;
};

void DockerPhase::StartStopper(const std::vector<std::string>& args) {
  ProcessOptions options;
  options.argv = {"docker"};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  if (!docker_host_.empty()) options.env.push_back({"DOCKER_HOST", docker_host_});
  Result<std::unique_ptr<ChildProcess>> started = ChildProcess::Spawn(options);
  if (started.ok()) {
    stopper_ = std::move(started.value());
  } else {
    outcome_->errors.push_back("could not run docker " + args[0] + ": " +
                               started.status().ToString());
  }
}

void DockerPhase::WhileStopping(double since) {
  Clock::time_point now = Clock::now();
  if (stopper_ && stopper_->TryWait()) {
    stopper_.reset();
    last_stop_end_ = now;
  }
  if (stopper_ || !last_stop_end_ || Seconds(now - *last_stop_end_) < kRetryStopSeconds) return;
  if (since >= grace_) {
    if (!kill_sent_) {
      progress_->Message("still running " + FormatSeconds(grace_) +
                         " after docker stop; docker kill " + container_);
    }
    kill_sent_ = true;
    outcome_->killed = true;
    StartStopper({"kill", container_});
  } else {
    int left = std::max(0, static_cast<int>(grace_ - since));
    StartStopper({"stop", "-t", std::to_string(left), container_});
  }
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
  // terminal), watching the deadline, cancellation and (when `watch`) the log patterns;
  // then inspects and removes `container`.
  PhaseOutcome RunPhase(const std::string& script, const std::string& container,
                        const std::string& log_path, bool watch, const std::string& state_name);
  Result<std::unique_ptr<ChildProcess>> StartClient(const std::string& script);
  RunResult BuildFailed(const PhaseOutcome& build, const std::string& build_log);
  void Inspect(const std::string& container, PhaseOutcome* outcome);
  void Remove(const std::string& container, PhaseOutcome* outcome);
  // What only a container tells (OOM kill, vanished engine, no container); false when
  // none of it decides the verdict.
  bool JudgeContainer(const PhaseOutcome& outcome, const LocalLogFindings& found);
  void Judge(const PhaseOutcome& outcome);
  RunResult Error(const std::string& why, const std::string& diagnosis);
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

  run_state_ = NewRunState(result_.scenario);
  run_state_.container_name = spec_.container_name;
  run_state_.container_engine = docker_host_;
  run_state_.log_file = spec_.log_file;
  run_state_.extra["kill_grace_seconds"] = std::to_string(std::max(0, context_.kill_grace_seconds));
  SaveState("starting");

  if (spec_.container_name.empty() || spec_.script_path.empty()) {
    return Error("job_spec.json of " + spec_.work_dir +
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
    if (!build_ok) return BuildFailed(build, build_log);
  }

  PhaseOutcome main = RunPhase(spec_.script_path, spec_.container_name, spec_.log_file,
                               /*watch=*/true, "running");
  result_.errors.insert(result_.errors.end(), main.errors.begin(), main.errors.end());
  result_.notes.insert(result_.notes.end(), main.notes.begin(), main.notes.end());
  if (!main.spawned) {
    return Error(main.spawn_error, "docker_cmd.sh could not be started; nothing ran");
  }
  log_bytes_written_ = main.log_bytes_written;
  Judge(main);
  return Finish();
}

RunResult DockerJob::BuildFailed(const PhaseOutcome& build, const std::string& build_log) {
  if (build.stop != StopReason::kNone) {
    Judge(build);  // cancelled or timed out while building
    result_.reason = "during the build pre-step: " + result_.reason;
    return Finish();
  }
  std::string how =
      !build.spawned             ? build.spawn_error
      : build.engine_unreachable ? "the Docker engine became unreachable: " + build.engine_message
      : build.container_exit_code
          ? "the build container exited with code " + std::to_string(*build.container_exit_code)
          : "the build container did not run (see " + build_log + ")";
  result_.errors.insert(result_.errors.end(), build.errors.begin(), build.errors.end());
  result_.notes.insert(result_.notes.end(), build.notes.begin(), build.notes.end());
  result_.exit_code = build.container_exit_code;
  return Error("BUILD_FAILED: " + how + "; the case was not run",
               "The build pre-step failed: see " + build_log +
                   ". Fix the build, or run with --build-project false when the image "
                   "already has a current build.");
}

RunResult DockerJob::Error(const std::string& why, const std::string& diagnosis) {
  result_.status = RunStatus::kError;
  result_.reason = why;
  result_.errors.push_back(why);
  result_.diagnosis = diagnosis;
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

Result<std::unique_ptr<ChildProcess>> DockerJob::StartClient(const std::string& script) {
  ProcessOptions options;
  options.argv = {"bash", script};
  options.working_dir = spec_.work_dir;
  options.env.push_back({"TRTLLM_RUN_KEEP_CONTAINER", "1"});
  if (!docker_host_.empty()) options.env.push_back({"DOCKER_HOST", docker_host_});
  options.env.push_back(WorkDirMarker(spec_.work_dir));  // what `trtllm-run cancel` checks
  return ChildProcess::Spawn(options);
}

PhaseOutcome DockerJob::RunPhase(const std::string& script, const std::string& container,
                                 const std::string& log_path, bool watch,
                                 const std::string& state_name) {
  PhaseOutcome outcome;
  OutputPump pump(log_path, context_.terminal);
  Status opened = pump.Open();
  if (!opened.ok()) {
    outcome.spawn_error = opened.message();
    return outcome;
  }
  pump.set_before_terminal_write([this] { progress_.Clear(); });
  Result<std::unique_ptr<ChildProcess>> spawned = StartClient(script);
  if (!spawned.ok()) {
    outcome.spawn_error = spawned.status().ToString();
    return outcome;
  }
  outcome.spawned = true;
  ChildProcess* child = spawned.value().get();
  follower_ = std::make_unique<LogFollower>(
      log_path,
      watch ? LocalRunPatterns(spec_.failure_patterns, spec_.success_patterns)
            : LocalRunPatterns({}, {}),
      kTailLines);

  run_state_.pid = child->pid();
  run_state_.pgid = child->pgid();
  run_state_.pid_start_time = ProcessStartTime(child->pid());
  run_state_.container_name = container;
  run_state_.log_file = log_path;
  SaveState(state_name);
  progress_.Message(
      "container " + container + " (image " + spec_.container_image + ") started by " + script +
      "; log " + log_path +
      (spec_.monitor_timeout_seconds > 0
           ? "; monitor timeout " + std::to_string(spec_.monitor_timeout_seconds) + "s"
           : "") +
      (spec_.silence_timeout_seconds > 0
           ? "; silence timeout " + std::to_string(spec_.silence_timeout_seconds) + "s"
           : ""));

  const double grace = std::max(0, context_.kill_grace_seconds);
  DockerPhase phase(std::move(spawned.value()), container, docker_host_, grace, &progress_,
                    &outcome);
  phase.pump = &pump;
  phase.on_stop = [this] { SaveState("stopping"); };
  SupervisorOptions supervision;
  supervision.cancel = context_.cancel;
  supervision.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  supervision.silence_timeout_seconds = spec_.silence_timeout_seconds;
  supervision.kill_grace_seconds = grace;
  supervision.give_up_seconds = kStopSlackSeconds;
  supervision.poll_interval_seconds = context_.poll_interval_seconds;
  supervision.settle_seconds = 0.1;
  supervision.follower = follower_.get();
  supervision.hang_pattern = kLocalHangPattern;
  supervision.stop_on_hang = watch;
  supervision.progress = &progress_;
  supervision.state = state_name;
  supervision.started = start_;
  SupervisionOutcome supervised = Supervise(&phase, supervision);

  phase.client()->CloseOutput();
  pump.Close();
  outcome.stop = supervised.stop;
  outcome.cancel_signal = supervised.cancel_signal;
  outcome.last_output_line = supervised.last_output_line;
  outcome.client_exit = supervised.exit;
  outcome.log_bytes_written = pump.log_bytes_written();
  outcome.errors.insert(outcome.errors.end(), supervised.errors.begin(), supervised.errors.end());
  outcome.errors.insert(outcome.errors.end(), pump.errors().begin(), pump.errors().end());
  outcome.notes.insert(outcome.notes.end(), supervised.notes.begin(), supervised.notes.end());
  // A stopped container's verdict is its stop (hang, timeout, cancel): what docker inspect
  // tells (OOM kill, exit code) decides nothing then, and skipping it saves a docker call
  // (~1 s on a loaded host) between the decision and the verdict. The exit code is the
  // client's: docker run exits with the container's.
  if (outcome.stop == StopReason::kNone) Inspect(container, &outcome);
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

bool DockerJob::JudgeContainer(const PhaseOutcome& outcome, const LocalLogFindings& found) {
  const std::string& name = result_.details["container_name"];
  std::optional<int> code = result_.exit_code;
  std::string limit = Extra(spec_, kMemoryKey);
  std::string oom_killed = "the kernel OOM killer stopped container " + name +
                           (limit.empty() ? std::string() : " (memory limit " + limit + ")") +
                           (code ? "; exit code " + std::to_string(*code) : std::string());
  if (outcome.oom_killed && found.hang) {
    // The hang detector's line came first: the OOM kill followed the hang (its process
    // kept allocating, or a worker died), it does not explain it.
    result_.status = RunStatus::kHangDetected;
    result_.reason = "log line " + QuotedLogLine(found.hang->line) + ", then " + oom_killed;
    result_.diagnosis =
        "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";
    return true;
  }
  if (outcome.oom_killed) {
    result_.status = RunStatus::kOutOfMemory;
    result_.reason = oom_killed;
    result_.diagnosis =
        "Out of memory: raise --docker-memory, reduce the batch size or use more "
        "GPUs.";
    return true;
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
    return true;
  }
  if (!outcome.container_found) {
    // The client ran but no container exists: docker run failed before creating it
    // (missing image with --pull never, bad option, registry error), or someone removed
    // it. Docker's own message is the last line of the log.
    std::string last;
    std::vector<std::string> tail = follower_->Tail();
    for (auto it = tail.rbegin(); it != tail.rend() && last.empty(); ++it) {
      if (!IsBlank(*it)) last = *it;
    }
    result_.status = RunStatus::kError;
    result_.reason = "docker run did not create container " + name +
                     (code ? " (exit code " + std::to_string(*code) + ")" : std::string()) +
                     (last.empty() ? std::string() : ": " + QuotedLogLine(last));
    result_.errors.push_back(result_.reason);
    result_.diagnosis = "The container failed to start: check the image (" + spec_.container_image +
                        "), --docker-pull and the mounts in " + spec_.script_path + ".";
    return true;
  }
  if (!code) {
    result_.status = RunStatus::kError;
    result_.reason =
        "the exit status of container " + name + " is unknown" +
        (outcome.client_exit ? " (docker client: " + outcome.client_exit->ToString() + ")"
                             : std::string());
    result_.errors.push_back(result_.reason);
    return true;
  }
  return false;
}

void DockerJob::Judge(const PhaseOutcome& outcome) {
  LocalLogFindings found =
      FindLocalLogFindings(follower_->scanner(), spec_.failure_patterns.size());
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

  LocalRunEvidence evidence;
  evidence.stop = outcome.stop;
  evidence.cancel_signal = outcome.cancel_signal;
  evidence.stopped_how = "docker stop -t " + std::to_string(context_.kill_grace_seconds) +
                         (outcome.killed ? ", then docker kill" : "") + "; container " +
                         (outcome.removed ? "removed" : "NOT removed");
  evidence.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  evidence.silence_timeout_seconds = spec_.silence_timeout_seconds;
  evidence.last_output_line = outcome.last_output_line;
  evidence.exit_code = code;
  evidence.where = " in container " + name;
  evidence.findings = found;
  if (outcome.stop == StopReason::kNone && JudgeContainer(outcome, found)) return;
  JudgeLocalRun(evidence, &result_);
  if (result_.status == RunStatus::kFailed && code && *code == 125 &&
      !outcome.container_error.empty()) {
    result_.reason += "; docker: " + outcome.container_error;
  }
}

}  // namespace

RunResult RunDockerJob(const JobSpec& spec, const ExecContext& context) {
  DockerJob job(spec, context);
  return job.Go();
}

}  // namespace local_docker
}  // namespace trtllm_run
