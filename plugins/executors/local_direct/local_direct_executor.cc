// The `local_direct` executor (spec 000 Steps 4-5, "For local_direct"): runs the plan's
// command with `bash -c` (custom commands: `bash -u -o pipefail -c`, as on every
// executor) on this host, in the repo root, with custom_env exported, no container. Its
// merged output goes to the terminal and to <work_dir>/<model>_local.log as it arrives.
// Enforces monitor_timeout_seconds (TIMEOUT) and hang detection ("hang
// detected" in the log -> HANG_DETECTED), and on every ending (verdict, cancel) leaves no
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

#include "trtllm_run/log_follower.h"
#include "trtllm_run/plugin_api.h"
#include "trtllm_run/process.h"
#include "trtllm_run/render.h"
#include "trtllm_run/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

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
// After the command exits, output still arriving from its descendants is collected for
// this long before the remaining members of its process group are terminated.
constexpr double kDrainSeconds = 0.5;
// After SIGKILL, how long to wait for the group to disappear before giving up.
constexpr double kKillWaitSeconds = 3.0;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Quoted(const std::string& line) {
  std::string text = line.size() > kMaxQuotedLine ? line.substr(0, kMaxQuotedLine) + "..." : line;
  return "\"" + text + "\"";
}

std::string FormatSeconds(double seconds) {
  std::ostringstream out;
  out.precision(seconds < 10 ? 2 : 0);
  out << std::fixed << seconds << "s";
  return out.str();
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

// Writes all of `data` to `fd`; false on error (errno set).
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

enum class StopReason { kNone, kTimeout, kHang, kCancel, kLeftovers };

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

// One run of a prepared job: the state of the supervision loop.
class Run {
 public:
  Run(const JobSpec& spec, const ExecContext& context) : spec_(spec), context_(context) {}
  RunResult Go();

 private:
  void Progress(const std::string& line) {
    if (context_.progress) *context_.progress << "[local_direct] " << line << std::endl;
  }
  void CopyOutput();
  void BeginTermination(StopReason reason, const std::string& why);
  // The command's processes other than its (reaped or not) leader: its process group and
  // the processes the tracker finds.
  std::vector<int> JobProcesses();
  bool JobAlive() { return child_->GroupAlive() || !JobProcesses().empty(); }
  void Judge();
  int PollTimeoutMs(Clock::time_point now) const;

  const JobSpec& spec_;
  const ExecContext& context_;
  RunResult result_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<JobProcessTracker> tracker_;
  std::unique_ptr<LogFollower> follower_;
  int log_fd_ = -1;
  bool log_write_failed_ = false;
  bool follow_error_reported_ = false;
  std::uint64_t log_bytes_written_ = 0;
  std::string buffer_;

  Clock::time_point start_;
  std::optional<Clock::time_point> deadline_;
  StopReason stop_ = StopReason::kNone;
  std::optional<Clock::time_point> term_sent_at_;
  std::optional<Clock::time_point> kill_sent_at_;
  std::optional<ProcessExit> exit_;
  Clock::time_point exit_at_;
  int cancel_signal_ = 0;
};

RunResult LocalDirectExecutor::Execute(const JobSpec& spec, const ExecContext& context) {
  Run run(spec, context);
  return run.Go();
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

  auto fail = [this](const std::string& why, const std::string& diagnosis) {
    result_.status = RunStatus::kError;
    result_.reason = why;
    result_.errors.push_back(why);
    result_.diagnosis = diagnosis;
    result_.finished_at = NowIso8601();
    result_.duration_seconds = Seconds(Clock::now() - start_);
    return result_;
  };

  log_fd_ =
      ::open(spec_.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd_ < 0) {
    return fail("cannot create the log file " + spec_.log_file + ": " + ::strerror(errno),
                "check that the work dir exists and is writable");
  }

  ProcessOptions options;
  // bash [the workflow's options] -c COMMAND; the command is one argv element, never
  // re-parsed.
  options.argv = {"bash"};
  for (const std::string& option : spec_.shell_options) options.argv.push_back(option);
  options.argv.insert(options.argv.end(), {"-c", spec_.direct_cmd});
  options.working_dir = spec_.working_dir.empty() || spec_.repo_root.empty()
                            ? spec_.repo_root
                            : spec_.repo_root + "/" + spec_.working_dir;
  options.env = spec_.custom_env;
  // Last, so that custom_env cannot replace it: every process of the job inherits it.
  options.env.push_back(WorkDirMarker(spec_.work_dir));
  if (!BecomeChildSubreaper()) {
    result_.notes.push_back(
        "this process could not become a child subreaper: children of the command whose "
        "parent ends are found by their TRTLLM_RUN_WORK_DIR marker only");
  }
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
  if (!spawned.ok()) {
    ::close(log_fd_);
    return fail(spawned.status().ToString(), "the command could not be started; nothing ran");
  }
  child_ = std::move(spawned.value());
  tracker_ = std::make_unique<JobProcessTracker>(child_->pid(), child_->pgid(),
                                                 WorkDirMarkerEntry(spec_.work_dir));
  // For `trtllm-run status/attach/cancel` from another process (workdir.h).
  RunState state = NewRunState(result_.scenario);
  state.pid = child_->pid();
  state.pgid = child_->pgid();
  state.pid_start_time = ProcessStartTime(child_->pid());
  state.log_file = spec_.log_file;
  state.extra["kill_grace_seconds"] = std::to_string(std::max(0, context_.kill_grace_seconds));
  Status saved = WriteRunState(spec_.work_dir, state);
  if (!saved.ok()) result_.errors.push_back(saved.ToString());

  std::vector<std::string> patterns(kBuiltinPatterns, kBuiltinPatterns + kBuiltinCount);
  patterns.insert(patterns.end(), spec_.failure_patterns.begin(), spec_.failure_patterns.end());
  patterns.insert(patterns.end(), spec_.success_patterns.begin(), spec_.success_patterns.end());
  follower_ = std::make_unique<LogFollower>(spec_.log_file, patterns, kTailLines);

  if (spec_.monitor_timeout_seconds > 0) {
    deadline_ = start_ + std::chrono::seconds(spec_.monitor_timeout_seconds);
  }
  Progress(
      "started pid " + std::to_string(child_->pid()) + " (own process group) in " +
      (options.working_dir.empty() ? std::string("the current directory") : options.working_dir) +
      "; log " + spec_.log_file +
      (deadline_ ? "; monitor timeout " + std::to_string(spec_.monitor_timeout_seconds) + "s"
                 : ""));

  const double grace = std::max(0, context_.kill_grace_seconds);
  bool hang_seen = false;
  while (true) {
    Clock::time_point now = Clock::now();
    if (!exit_ && stop_ == StopReason::kNone) {
      if (context_.cancel && context_.cancel->cancelled()) {
        cancel_signal_ = context_.cancel->signal();
        BeginTermination(StopReason::kCancel,
                         "cancelled by " + (cancel_signal_ ? SignalName(cancel_signal_)
                                                           : std::string("request")));
      } else if (hang_seen) {  // a line already read counts before a deadline just passed
        BeginTermination(StopReason::kHang, "\"hang detected\" in the log");
      } else if (deadline_ && now >= *deadline_) {
        BeginTermination(
            StopReason::kTimeout,
            "monitor timeout of " + std::to_string(spec_.monitor_timeout_seconds) + "s reached");
      }
    }
    if (exit_ && stop_ == StopReason::kNone &&
        (child_->output_fd() < 0 || Seconds(now - exit_at_) >= kDrainSeconds)) {
      std::vector<int> members =
          child_->GroupAlive() ? ProcessGroupMembers(child_->pgid()) : std::vector<int>();
      std::vector<int> escaped = JobProcesses();
      if (members.empty() && escaped.empty()) break;
      std::size_t outside = 0;
      for (int pid : escaped) {
        if (std::find(members.begin(), members.end(), pid) == members.end()) ++outside;
      }
      result_.notes.push_back(
          std::to_string(members.size() + outside) +
          " process(es) the command started were still running after it exited (background "
          "jobs" +
          (outside > 0 ? ", " + std::to_string(outside) +
                             " of them outside its process group: setsid or double fork"
                       : std::string()) +
          "); they were sent SIGTERM" +
          (grace > 0 ? ", and SIGKILL if still running after " + FormatSeconds(grace) : ""));
      BeginTermination(StopReason::kLeftovers, "the command exited; ending its leftover processes");
    }
    if (term_sent_at_ && !kill_sent_at_ && Seconds(now - *term_sent_at_) >= grace) {
      if (JobAlive()) {
        child_->SignalGroup(SIGKILL);
        tracker_->Signal(SIGKILL);
        kill_sent_at_ = now;
        result_.notes.push_back("the command's processes were still running " +
                                FormatSeconds(grace) + " after SIGTERM; sent SIGKILL");
        Progress("still running after " + FormatSeconds(grace) + "; sent SIGKILL");
      }
    }
    if (term_sent_at_) {
      tracker_->Reap();
      if (exit_ && !JobAlive()) break;
      if (kill_sent_at_ && Seconds(now - *kill_sent_at_) >= kKillWaitSeconds) {
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
        break;
      }
    }

    std::vector<pollfd> fds;
    if (child_->output_fd() >= 0) fds.push_back({child_->output_fd(), POLLIN, 0});
    if (context_.cancel && stop_ == StopReason::kNone)
      fds.push_back({context_.cancel->wait_fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), PollTimeoutMs(now));

    CopyOutput();
    Result<LogPoll> polled = follower_->Poll();
    if (!polled.ok() && !follow_error_reported_) {
      follow_error_reported_ = true;  // once: the same error would repeat every poll
      result_.errors.push_back(polled.status().ToString());
    }
    if (polled.ok() && polled->restarted) result_.notes.push_back(polled->note);
    hang_seen = follower_->scanner().FindMatch(kHangPattern) != nullptr;
    if (!exit_) {
      exit_ = child_->TryWait();
      if (exit_) exit_at_ = Clock::now();
    }
  }

  // What is still in the pipe, then everything the follower has not read yet.
  CopyOutput();
  if (child_->output_fd() >= 0 && stop_ == StopReason::kNone) {
    result_.notes.push_back(
        "a process that is not one of the command's (it left the process group and dropped "
        "the TRTLLM_RUN_WORK_DIR marker from its environment) still holds the command's "
        "output open; it was not stopped");
  }
  child_->CloseOutput();
  ::close(log_fd_);
  log_fd_ = -1;
  Result<LogPoll> polled = follower_->Poll();
  if (!polled.ok() && !follow_error_reported_) result_.errors.push_back(polled.status().ToString());
  if (!exit_) exit_ = child_->TryWait();

  Judge();
  result_.log_tail = follower_->Tail();
  result_.log_bytes_written = log_bytes_written_;
  result_.log_bytes_read = follower_->bytes_read();
  result_.finished_at = NowIso8601();
  result_.duration_seconds = Seconds(Clock::now() - start_);
  result_.details["pid"] = std::to_string(child_->pid());
  Progress(std::string(RunStatusName(result_.status)) + ": " + result_.reason);
  child_.reset();  // SIGKILLs anything left of the group (nothing, normally) and reaps
  tracker_->Reap();
  state.state = "finished";
  saved = WriteRunState(spec_.work_dir, state);
  if (!saved.ok()) result_.errors.push_back(saved.ToString());
  return result_;
}

int Run::PollTimeoutMs(Clock::time_point now) const {
  double wait = context_.poll_interval_seconds > 0 ? context_.poll_interval_seconds : 0.5;
  if (stop_ != StopReason::kNone || exit_) wait = std::min(wait, 0.05);
  if (deadline_ && stop_ == StopReason::kNone) wait = std::min(wait, Seconds(*deadline_ - now));
  if (term_sent_at_ && !kill_sent_at_) {
    wait = std::min(wait, context_.kill_grace_seconds - Seconds(now - *term_sent_at_));
  }
  return std::max(1, static_cast<int>(wait * 1000));
}

// Moves what the command wrote so far to the log file and the terminal.
void Run::CopyOutput() {
  for (int round = 0; round < 64 && child_->output_fd() >= 0; ++round) {
    buffer_.clear();
    Result<ReadState> state = child_->ReadOutput(&buffer_);
    if (!state.ok()) {
      result_.errors.push_back(state.status().ToString());
      child_->CloseOutput();
      return;
    }
    if (!buffer_.empty()) {
      if (!log_write_failed_ && !WriteAll(log_fd_, buffer_.data(), buffer_.size())) {
        log_write_failed_ = true;
        result_.errors.push_back("writing the log file " + spec_.log_file + " failed: " +
                                 ::strerror(errno) + "; later output is missing from it");
      }
      if (!log_write_failed_) log_bytes_written_ += buffer_.size();
      if (context_.terminal) {
        context_.terminal->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        context_.terminal->flush();
      }
    }
    if (state.value() != ReadState::kData) return;
  }
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

void Run::BeginTermination(StopReason reason, const std::string& why) {
  stop_ = reason;
  term_sent_at_ = Clock::now();
  // Found before the group is signalled: a child that cleared its environment is still
  // below a process of the group now.
  tracker_->Scan();
  child_->SignalGroup(SIGTERM);
  tracker_->Signal(SIGTERM);
  child_->SignalGroup(SIGCONT);  // a stopped process acts on SIGTERM only once continued
  tracker_->Signal(SIGCONT);
  if (reason != StopReason::kLeftovers) {
    Progress(why + "; sent SIGTERM to process group " + std::to_string(child_->pgid()) +
             " and to the command's processes outside it");
  }
}

void Run::Judge() {
  const PatternScanner& scanner = follower_->scanner();
  const PatternMatch* hang = scanner.FindMatch(kHangPattern);
  const PatternMatch* oom = nullptr;
  for (const PatternMatch& match : scanner.matches()) {
    if (match.pattern_index >= kFirstOomPattern && match.pattern_index < kBuiltinCount) {
      oom = &match;
      break;
    }
  }
  const PatternMatch* failure = nullptr;
  for (const PatternMatch& match : scanner.matches()) {
    std::size_t i = match.pattern_index;
    if (i >= kBuiltinCount && i < kBuiltinCount + spec_.failure_patterns.size()) {
      failure = &match;
      break;
    }
  }
  if (exit_) {
    result_.exit_code = exit_->exit_code;
    result_.signal = exit_->signal;
  }
  std::string killed_how =
      kill_sent_at_ ? "SIGTERM, then SIGKILL after " + FormatSeconds(context_.kill_grace_seconds)
                    : std::string("SIGTERM");

  switch (stop_) {
    case StopReason::kCancel:
      result_.status = RunStatus::kCancelled;
      result_.cancelled_by = cancel_signal_ ? SignalName(cancel_signal_) : "request";
      result_.user_interrupt = cancel_signal_ == SIGINT;
      result_.reason = "cancelled by " + result_.cancelled_by +
                       "; the command's process group was stopped with " + killed_how;
      result_.diagnosis =
          "The run was cancelled before the command finished; nothing is left running.";
      return;
    case StopReason::kTimeout:
      result_.status = RunStatus::kTimeout;
      result_.reason = "still running after monitor_timeout_seconds=" +
                       std::to_string(spec_.monitor_timeout_seconds) + "; stopped with " +
                       killed_how;
      result_.diagnosis =
          "The command exceeded its wall-clock limit: raise --monitor-timeout if it needs longer, "
          "or check the "
          "log tail for where it stalled.";
      return;
    case StopReason::kHang:
      result_.status = RunStatus::kHangDetected;
      result_.reason = "log line " + Quoted(hang ? hang->line : std::string("hang detected")) +
                       "; stopped with " + killed_how;
      result_.diagnosis =
          "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";
      return;
    case StopReason::kNone:
    case StopReason::kLeftovers:
      break;
  }

  if (exit_ && exit_->exit_code && *exit_->exit_code == 0) {
    result_.status = RunStatus::kPassed;
    result_.reason = "the command exited with code 0";
    if (hang)
      result_.notes.push_back("the log reports a hang, but the command exited 0: " +
                              Quoted(hang->line));
    if (failure) {
      result_.notes.push_back("failure pattern '" + failure->pattern +
                              "' appears in the log, but the command "
                              "exited 0: " +
                              Quoted(failure->line));
    }
    return;
  }
  if (!exit_ || (!exit_->exit_code && !exit_->signal)) {
    result_.status = RunStatus::kError;
    result_.reason = "the command's exit status was lost (reaped elsewhere)";
    result_.diagnosis =
        "Another part of this process reaps children (SIGCHLD ignored?); the verdict is unknown.";
    return;
  }
  std::string how = exit_->exit_code
                        ? "the command exited with code " + std::to_string(*exit_->exit_code)
                        : "the command was killed by " + SignalName(*exit_->signal);
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
    result_.diagnosis =
        "The command failed; see the log tail" +
        std::string(failure ? " and the line matching '" + failure->pattern + "'" : "") + ".";
  }
}

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(trtllm_run::LocalDirectExecutor, "local_direct", "0.1.0",
                                   "Runs the command on this host, no container")
