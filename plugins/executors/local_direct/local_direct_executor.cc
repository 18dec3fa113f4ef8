// The `local_direct` executor (spec 000 Steps 4-5, "For local_direct"): runs the plan's
// command with `bash -c` (custom commands: `bash -u -o pipefail -c`, as on every
// executor) on this host, in the repo root, with custom_env exported, no container. Its
// merged output goes to the terminal and to <work_dir>/<model>_local.log as it arrives.
// Enforces monitor_timeout_seconds (TIMEOUT), hang detection ("hang
// detected" in the log -> HANG_DETECTED) and silence_timeout_seconds (no output for that
// long -> HANG_DETECTED), and on every ending (verdict, cancel) leaves no
// process of the command running: its process group, and the children that left it
// (setsid) or lost their parent (double forks), found through this process being a child
// subreaper and the TRTLLM_RUN_WORK_DIR marker every job process inherits (workdir.h).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/supervise/local_run_verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/supervise/output_pump.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/supervise/supervisor.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kTailLines = 20;
// After the command exits, output still arriving from its descendants is collected for
// this long before the remaining members of its process group are terminated.
constexpr double kDrainSeconds = 0.5;
// After SIGKILL, how long to wait for the group to disappear before giving up.
constexpr double kKillWaitSeconds = 3.0;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string FormatSeconds(double seconds) {
  std::ostringstream out;
  out.precision(seconds < 10 ? 2 : 0);
  out << std::fixed << seconds << "s";
  return out.str();
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

class LocalDirectExecutor : public Executor {
 public:
  std::string Name() const override { return "local_direct"; }

  // Runs here, on this host's GPUs.
  ExecutorTraits Traits() const override {
    ExecutorTraits traits;
    traits.host_bound = true;
    return traits;
  }

  Status Validate(const CaseRequest& /*request*/, const JobPlan& plan,
                  const Placement& /*placement*/) const override {
    if (IsBlank(plan.command)) {
      return Status::InvalidInput(
          "local_direct: there is no command to run (the " + plan.workflow_type +
              " workflow produced an empty command)",
          "give a non-empty --custom-cmd, --custom-script, --test-cmd, --bench-cmd or --eval-cmd");
    }
    if (!plan.repo_root.empty()) {
      struct stat st;
      if (::stat(plan.repo_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Status::InvalidInput("local_direct: repo_root '" + plan.repo_root +
                                        "' is not a directory (the command runs there)",
                                    "give an existing directory with --repo-root");
      }
    }
    if (!FindInPath("bash")) {
      return Status::InvalidInput("local_direct: bash was not found in $PATH",
                                  "install bash or add its directory to PATH; the command runs "
                                  "with `bash -c`");
    }
    return Status::Ok();
  }

  Status Prepare(const CaseRequest& /*request*/, const JobPlan& plan,
                 const Placement& /*placement*/, JobSpec* spec) override {
    if (spec->scenario.empty()) spec->scenario = Name();
    CopyPlanToSpec(plan, spec);
    spec->direct_cmd = plan.command;
    spec->node_count = plan.node_count;
    spec->build_project = false;  // runs the checkout as it is; nothing is built
    if (spec->log_file.empty()) {
      spec->log_file = spec->work_dir + "/" + plan.model_name + "_local.log";
    }
    return WriteJobSpec(*spec);
  }

  RunResult Execute(const JobSpec& spec, const ExecContext& context) override;

  // Stops the job recorded in run_state.json (another process's run): only processes
  // proven to be this work dir's run (StopRecordedJob).
  Status Cancel(const JobSpec& spec, const ExecContext& context) override {
    Result<RunState> state = ReadRunState(spec.work_dir);
    if (!state.ok()) {
      if (state.status().code() == StatusCode::kNotFound) return Status::Ok();  // never ran
      return state.status();
    }
    if (!state->host.empty() && state->host != HostName()) {
      return Status::ExecutionError(
          "local_direct: the job runs on host " + state->host + ", not here; cancel it there",
          "run `trtllm-run cancel " + spec.work_dir + "` on " + state->host);
    }
    return StopRecordedJob(state.value(), spec.work_dir, std::max(0, context.kill_grace_seconds))
        .WithContext("local_direct");
  }
};

// One run of a prepared job, as the supervision loop (supervisor.h) drives it.
class Run : public SupervisedJob {
 public:
  Run(const JobSpec& spec, const ExecContext& context)
      : spec_(spec),
        context_(context),
        progress_(context.progress, IsTerminalStream(context.progress), "local_direct"),
        pump_(spec.log_file, context.terminal) {}
  RunResult Go();

  int OutputFd() const override { return child_->output_fd(); }
  int ExitFd() const override { return child_->exit_fd(); }
  void PumpOutput() override { pump_.Drain(child_.get()); }
  std::optional<ProcessExit> PollExit() override { return child_->TryWait(); }
  AfterExit CheckAfterExit(double seconds_since_exit) override;
  void BeginStop(StopReason reason, const std::string& why) override;
  bool Escalate() override;
  bool Gone() override {
    tracker_->Reap();
    return !JobAlive();
  }
  bool GiveUp() override;
  std::string Label() const override { return "pid " + std::to_string(child_->pid()); }

 private:
  RunResult Fail(const std::string& why, const std::string& diagnosis);
  Status Start(ProcessOptions* options);
  // The command's processes other than its (reaped or not) leader: its process group and
  // the processes the tracker finds.
  std::vector<int> JobProcesses();
  bool JobAlive() { return child_->GroupAlive() || !JobProcesses().empty(); }
  void Judge(const SupervisionOutcome& outcome);

  const JobSpec& spec_;
  const ExecContext& context_;
  ProgressReporter progress_;
  OutputPump pump_;
  RunResult result_;
  RunState state_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<JobProcessTracker> tracker_;
  std::unique_ptr<LogFollower> follower_;
  Clock::time_point start_;
  bool kill_sent_ = false;
};

RunResult LocalDirectExecutor::Execute(const JobSpec& spec, const ExecContext& context) {
  Run run(spec, context);
  return run.Go();
}

RunResult Run::Fail(const std::string& why, const std::string& diagnosis) {
  result_.status = RunStatus::kError;
  result_.reason = why;
  result_.errors.push_back(why);
  result_.diagnosis = diagnosis;
  result_.finished_at = NowIso8601();
  result_.duration_seconds = Seconds(Clock::now() - start_);
  return result_;
}

// Spawns the command and records it in run_state.json.
Status Run::Start(ProcessOptions* options) {
  // bash [the workflow's options] -c COMMAND; the command is one argv element, never
  // re-parsed.
  options->argv = {"bash"};
  for (const std::string& option : spec_.shell_options) options->argv.push_back(option);
  options->argv.insert(
      options->argv.end(),
      {"-c", spec_.command_prelude.empty() ? spec_.direct_cmd
                                           : spec_.command_prelude + "\n" + spec_.direct_cmd});
  options->working_dir = spec_.working_dir.empty() || spec_.repo_root.empty()
                             ? spec_.repo_root
                             : spec_.repo_root + "/" + spec_.working_dir;
  options->env = spec_.custom_env;
  // Last, so that custom_env cannot replace it: every process of the job inherits it.
  options->env.push_back(WorkDirMarker(spec_.work_dir));
  if (!BecomeChildSubreaper()) {
    result_.notes.push_back(
        "this process could not become a child subreaper: children of the command whose "
        "parent ends are found by their TRTLLM_RUN_WORK_DIR marker only");
  }
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(*options);
  if (!spawned.ok()) return spawned.status();
  child_ = std::move(spawned.value());
  tracker_ = std::make_unique<JobProcessTracker>(child_->pid(), child_->pgid(),
                                                 WorkDirMarkerEntry(spec_.work_dir));
  // For `trtllm-run status/attach/cancel` from another process (workdir.h).
  state_ = NewRunState(result_.scenario);
  state_.pid = child_->pid();
  state_.pgid = child_->pgid();
  state_.pid_start_time = ProcessStartTime(child_->pid());
  state_.log_file = spec_.log_file;
  state_.extra["kill_grace_seconds"] = std::to_string(std::max(0, context_.kill_grace_seconds));
  Status saved = WriteRunState(spec_.work_dir, state_);
  if (!saved.ok()) result_.errors.push_back(saved.ToString());
  return Status::Ok();
}

RunResult Run::Go() {
  result_.scenario = spec_.scenario.empty() ? "local_direct" : spec_.scenario;
  result_.workflow_type = spec_.workflow_type;
  result_.model_name = spec_.model_name;
  result_.command = spec_.direct_cmd;
  result_.work_dir = spec_.work_dir;
  result_.log_file = spec_.log_file;
  result_.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  result_.started_at = NowIso8601();
  start_ = Clock::now();

  Status opened = pump_.Open();
  if (!opened.ok()) return Fail(opened.message(), opened.hint());
  pump_.set_before_terminal_write([this] { progress_.Clear(); });
  ProcessOptions options;
  Status started = Start(&options);
  if (!started.ok()) {
    pump_.Close();
    return Fail(started.ToString(), "the command could not be started; nothing ran");
  }
  follower_ = std::make_unique<LogFollower>(
      spec_.log_file, LocalRunPatterns(spec_.failure_patterns, spec_.success_patterns), kTailLines);
  progress_.Message(
      "started pid " + std::to_string(child_->pid()) + " (own process group) in " +
      (options.working_dir.empty() ? std::string("the current directory") : options.working_dir) +
      "; log " + spec_.log_file +
      (spec_.monitor_timeout_seconds > 0
           ? "; monitor timeout " + std::to_string(spec_.monitor_timeout_seconds) + "s"
           : "") +
      (spec_.silence_timeout_seconds > 0
           ? "; silence timeout " + std::to_string(spec_.silence_timeout_seconds) + "s"
           : ""));

  SupervisorOptions supervision;
  supervision.cancel = context_.cancel;
  supervision.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  supervision.silence_timeout_seconds = spec_.silence_timeout_seconds;
  supervision.kill_grace_seconds = std::max(0, context_.kill_grace_seconds);
  supervision.give_up_seconds = kKillWaitSeconds;
  supervision.poll_interval_seconds = context_.poll_interval_seconds;
  supervision.follower = follower_.get();
  supervision.hang_pattern = kLocalHangPattern;
  supervision.progress = &progress_;
  supervision.started = start_;
  SupervisionOutcome outcome = Supervise(this, supervision);

  if (child_->output_fd() >= 0 && outcome.stop == StopReason::kNone) {
    result_.notes.push_back(
        "a process that is not one of the command's (it left the process group and dropped "
        "the TRTLLM_RUN_WORK_DIR marker from its environment) still holds the command's "
        "output open; it was not stopped");
  }
  child_->CloseOutput();
  pump_.Close();
  result_.errors.insert(result_.errors.end(), outcome.errors.begin(), outcome.errors.end());
  result_.errors.insert(result_.errors.end(), pump_.errors().begin(), pump_.errors().end());
  result_.notes.insert(result_.notes.end(), outcome.notes.begin(), outcome.notes.end());
  Judge(outcome);
  result_.log_tail = follower_->Tail();
  result_.log_bytes_written = pump_.log_bytes_written();
  result_.log_bytes_read = follower_->bytes_read();
  result_.finished_at = NowIso8601();
  result_.duration_seconds = Seconds(Clock::now() - start_);
  result_.details["pid"] = std::to_string(child_->pid());
  progress_.Message(std::string(RunStatusName(result_.status)) + ": " + result_.reason);
  child_.reset();  // SIGKILLs anything left of the group (nothing, normally) and reaps
  tracker_->Reap();
  // run_state.json is not rewritten as "finished": result.json, written next by the caller,
  // ends the story (workdir.h), and replacing the file on ext4 cost a run ~0.8 ms of CPU
  // (the old inode's eviction with a synchronous discard, the flush a rename-over forces).
  return result_;
}

// Output still arriving from its descendants is collected for kDrainSeconds; then what
// is left of the command is stopped.
AfterExit Run::CheckAfterExit(double seconds_since_exit) {
  if (child_->output_fd() >= 0 && seconds_since_exit < kDrainSeconds) return AfterExit::kWait;
  std::vector<int> members =
      child_->GroupAlive() ? ProcessGroupMembers(child_->pgid()) : std::vector<int>();
  std::vector<int> escaped = JobProcesses();
  if (members.empty() && escaped.empty()) return AfterExit::kDone;
  std::size_t outside = 0;
  for (int pid : escaped) {
    if (std::find(members.begin(), members.end(), pid) == members.end()) ++outside;
  }
  const double grace = std::max(0, context_.kill_grace_seconds);
  result_.notes.push_back(
      std::to_string(members.size() + outside) +
      " process(es) the command started were still running after it exited (background "
      "jobs" +
      (outside > 0 ? ", " + std::to_string(outside) +
                         " of them outside its process group: setsid or double fork"
                   : std::string()) +
      "); they were sent SIGTERM" +
      (grace > 0 ? ", and SIGKILL if still running after " + FormatSeconds(grace) : ""));
  return AfterExit::kStopLeftovers;
}

bool Run::Escalate() {
  if (!JobAlive()) return false;
  const double grace = std::max(0, context_.kill_grace_seconds);
  child_->SignalGroup(SIGKILL);
  tracker_->Signal(SIGKILL);
  kill_sent_ = true;
  result_.notes.push_back("the command's processes were still running " + FormatSeconds(grace) +
                          " after SIGTERM; sent SIGKILL");
  progress_.Message("still running after " + FormatSeconds(grace) + "; sent SIGKILL");
  return true;
}

bool Run::GiveUp() {
  std::vector<int> left = JobProcesses();
  std::string pids;
  for (int pid : left) pids += (pids.empty() ? "" : " ") + std::to_string(pid);
  std::string error = std::to_string(left.size()) +
                      " process(es) of the command survived SIGKILL (uninterruptible "
                      "sleep?): pid " +
                      pids;
  result_.errors.push_back(error);
  result_.notes.push_back("not everything the command started could be ended: " + error +
                          "; check them with `ps -o pid,stat,wchan,args -p " + pids + "`");
  return true;
}

std::vector<int> Run::JobProcesses() {
  std::vector<int> all = tracker_->Scan();
  if (child_->GroupAlive()) {
    for (int pid : ProcessGroupMembers(child_->pgid())) {
      if (pid != child_->pid() && std::find(all.begin(), all.end(), pid) == all.end()) {
        all.push_back(pid);
      }
    }
  }
  return all;
}

void Run::BeginStop(StopReason reason, const std::string& why) {
  // Found before the group is signalled: a child that cleared its environment is still
  // below a process of the group now.
  tracker_->Scan();
  child_->SignalGroup(SIGTERM);
  tracker_->Signal(SIGTERM);
  child_->SignalGroup(SIGCONT);  // a stopped process acts on SIGTERM only once continued
  tracker_->Signal(SIGCONT);
  if (reason != StopReason::kLeftovers) {
    progress_.Message(why + "; sent SIGTERM to process group " + std::to_string(child_->pgid()) +
                      " and to the command's processes outside it");
  }
}

void Run::Judge(const SupervisionOutcome& outcome) {
  if (outcome.exit) {
    result_.exit_code = outcome.exit->exit_code;
    result_.signal = outcome.exit->signal;
  }
  LocalRunEvidence evidence;
  evidence.stop = outcome.stop;
  evidence.cancel_signal = outcome.cancel_signal;
  std::string killed_how =
      kill_sent_ ? "SIGTERM, then SIGKILL after " + FormatSeconds(context_.kill_grace_seconds)
                 : std::string("SIGTERM");
  evidence.stopped_how = "stopped with " + killed_how;
  evidence.cancel_stopped_how = "the command's process group was stopped with " + killed_how;
  evidence.nothing_left_running = true;
  evidence.monitor_timeout_seconds = spec_.monitor_timeout_seconds;
  evidence.silence_timeout_seconds = spec_.silence_timeout_seconds;
  evidence.last_output_line = outcome.last_output_line;
  evidence.findings = FindLocalLogFindings(follower_->scanner(), spec_.failure_patterns.size());
  if (outcome.exit) {
    evidence.exit_code = outcome.exit->exit_code;
    evidence.signal = outcome.exit->signal;
  }
  bool stopped = outcome.stop != StopReason::kNone && outcome.stop != StopReason::kLeftovers;
  if (!stopped && (!outcome.exit || (!outcome.exit->exit_code && !outcome.exit->signal))) {
    result_.status = RunStatus::kError;
    result_.reason = "the command's exit status was lost (reaped elsewhere)";
    result_.diagnosis =
        "Another part of this process reaps children (SIGCHLD ignored?); the verdict is unknown.";
    return;
  }
  JudgeLocalRun(evidence, &result_);
}

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(trtllm_run::LocalDirectExecutor, "local_direct", "0.1.0",
                                   "Runs the command on this host, no container")
