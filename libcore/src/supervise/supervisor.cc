// The supervision loop (supervisor.h).
#include "trtllm_run/sdk/supervise/supervisor.h"

#include <poll.h>

#include <algorithm>
#include <vector>

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

// With an exit fd nothing needs polling: the loop still wakes this often to redraw the
// elapsed time of the progress line.
constexpr double kIdleWakeSeconds = 1.0;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string CancelledBy(int signal) {
  return "cancelled by " + (signal ? SignalName(signal) : std::string("request"));
}

// The state of one Supervise() call.
class Loop {
 public:
  Loop(SupervisedJob* job, const SupervisorOptions& options) : job_(job), options_(options) {
    if (options.monitor_timeout_seconds > 0) {
      deadline_ = options.started + std::chrono::seconds(options.monitor_timeout_seconds);
    }
    last_output_ = Clock::now();
  }
  SupervisionOutcome Run();

 private:
  void CheckTriggers(Clock::time_point now);
  // True when the loop ends now.
  bool Advance(Clock::time_point now);
  void Wait(Clock::time_point now);
  void Follow();
  void DrawProgress();
  // When the silence timeout stops the job if nothing more arrives; none when it is off.
  std::optional<Clock::time_point> SilenceDeadline() const;
  std::string LastLogLine() const;

  SupervisedJob* job_;
  const SupervisorOptions& options_;
  SupervisionOutcome outcome_;
  std::optional<Clock::time_point> deadline_;
  Clock::time_point last_output_;  // the last poll that read new bytes, or Supervise()'s start
  std::optional<Clock::time_point> stop_at_, escalated_at_;
  Clock::time_point exit_at_;
  bool follow_error_reported_ = false;
};

SupervisionOutcome Loop::Run() {
  while (true) {
    Clock::time_point now = Clock::now();
    CheckTriggers(now);
    if (Advance(now)) break;
    Wait(now);
    job_->PumpOutput();
    Follow();
    if (!outcome_.exit) {
      outcome_.exit = job_->PollExit();
      if (outcome_.exit) exit_at_ = Clock::now();
    }
    if (!outcome_.exit) DrawProgress();
  }
  job_->PumpOutput();
  Follow();
  if (!outcome_.exit) outcome_.exit = job_->PollExit();
  return outcome_;
}

// Cancellation first, then a hang already read (it counts before a deadline that just
// passed), then the silence timeout, then the monitor timeout.
void Loop::CheckTriggers(Clock::time_point now) {
  if (outcome_.exit || outcome_.stop != StopReason::kNone) return;
  StopReason reason = StopReason::kNone;
  std::string why;
  const PatternMatch* hang = options_.follower && options_.stop_on_hang
                                 ? options_.follower->scanner().FindMatch(options_.hang_pattern)
                                 : nullptr;
  if (options_.cancel && options_.cancel->cancelled()) {
    reason = StopReason::kCancel;
    outcome_.cancel_signal = options_.cancel->signal();
    why = CancelledBy(outcome_.cancel_signal);
  } else if (hang) {
    reason = StopReason::kHang;
    why = "\"hang detected\" in the log";
  } else if (std::optional<Clock::time_point> silent = SilenceDeadline();
             silent && now >= *silent) {
    reason = StopReason::kSilence;
    outcome_.last_output_line = LastLogLine();
    why = "no output for " + std::to_string(options_.silence_timeout_seconds) + "s";
  } else if (deadline_ && now >= *deadline_) {
    reason = StopReason::kTimeout;
    why = "monitor timeout of " + std::to_string(options_.monitor_timeout_seconds) + "s reached";
  }
  if (reason == StopReason::kNone) return;
  outcome_.stop = reason;
  stop_at_ = now;
  job_->BeginStop(reason, why);
}

bool Loop::Advance(Clock::time_point now) {
  if (outcome_.exit && outcome_.stop == StopReason::kNone) {
    AfterExit after = job_->CheckAfterExit(Seconds(now - exit_at_));
    if (after == AfterExit::kDone) return true;
    if (after == AfterExit::kStopLeftovers) {
      outcome_.stop = StopReason::kLeftovers;
      stop_at_ = now;
      job_->BeginStop(StopReason::kLeftovers, "the command exited; ending its leftover processes");
    }
  }
  if (!stop_at_) return false;
  double since = Seconds(now - *stop_at_);
  if (!outcome_.exit) job_->WhileStopping(since);
  if (!escalated_at_ && since >= options_.kill_grace_seconds && job_->Escalate()) {
    escalated_at_ = now;
    outcome_.escalated = true;
  }
  if (outcome_.exit && job_->Gone()) return true;
  if (escalated_at_ && !outcome_.gave_up &&
      Seconds(now - *escalated_at_) >= options_.give_up_seconds) {
    outcome_.gave_up = true;
    if (job_->GiveUp()) return true;
  }
  return false;
}

void Loop::Wait(Clock::time_point now) {
  std::vector<pollfd> fds;
  if (job_->OutputFd() >= 0) fds.push_back({job_->OutputFd(), POLLIN, 0});
  const bool exit_fd = job_->ExitFd() >= 0;
  if (exit_fd && !outcome_.exit) fds.push_back({job_->ExitFd(), POLLIN, 0});
  if (options_.cancel && outcome_.stop == StopReason::kNone) {
    fds.push_back({options_.cancel->wait_fd(), POLLIN, 0});
  }
  double wait = exit_fd
                    ? kIdleWakeSeconds
                    : (options_.poll_interval_seconds > 0 ? options_.poll_interval_seconds : 0.5);
  if (stop_at_ || outcome_.exit) wait = std::min(wait, options_.settle_seconds);
  if (deadline_ && outcome_.stop == StopReason::kNone) {
    wait = std::min(wait, Seconds(*deadline_ - now));
  }
  if (std::optional<Clock::time_point> silent = SilenceDeadline();
      silent && outcome_.stop == StopReason::kNone) {
    wait = std::min(wait, Seconds(*silent - now));
  }
  if (stop_at_ && !escalated_at_) {
    wait = std::min(wait, options_.kill_grace_seconds - Seconds(now - *stop_at_));
  }
  if (escalated_at_ && !outcome_.gave_up) {
    wait = std::min(wait, options_.give_up_seconds - Seconds(now - *escalated_at_));
  }
  ::poll(fds.data(), fds.size(), std::max(1, static_cast<int>(wait * 1000)));
}

void Loop::Follow() {
  if (!options_.follower) return;
  Result<LogPoll> polled = options_.follower->Poll();
  if (!polled.ok() && !follow_error_reported_) {
    follow_error_reported_ = true;  // once: the same error would repeat every round
    outcome_.errors.push_back(polled.status().ToString());
  }
  if (polled.ok() && polled->restarted) outcome_.notes.push_back(polled->note);
  if (polled.ok() && (polled->new_bytes > 0 || polled->restarted)) last_output_ = Clock::now();
}

std::optional<Clock::time_point> Loop::SilenceDeadline() const {
  if (options_.silence_timeout_seconds <= 0 || !options_.follower) return std::nullopt;
  return last_output_ + std::chrono::seconds(options_.silence_timeout_seconds);
}

std::string Loop::LastLogLine() const {
  if (!options_.follower) return "";
  std::vector<std::string> tail = options_.follower->Tail();
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    if (it->find_first_not_of(" \t\r") != std::string::npos) return *it;
  }
  return "";
}

void Loop::DrawProgress() {
  if (!options_.progress) return;
  ProgressSnapshot snapshot;
  snapshot.state = outcome_.stop == StopReason::kNone ? options_.state : "stopping";
  snapshot.elapsed_seconds = Seconds(Clock::now() - options_.started);
  snapshot.time_limit_seconds = options_.monitor_timeout_seconds;
  snapshot.last_line = LastLogLine();
  options_.progress->SetJob(job_->Label());
  options_.progress->Update(snapshot);
}

}  // namespace

SupervisedJob::~SupervisedJob() = default;

SupervisionOutcome Supervise(SupervisedJob* job, const SupervisorOptions& options) {
  Loop loop(job, options);
  return loop.Run();
}

}  // namespace trtllm_run
