// SlurmWatcher (slurm_watch.h).
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/slurm/watch.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "model/slurm_pending.h"
#include "slurm/watch/slurm_watch_job.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kLostContactLimitEnv[] = "TRTLLM_RUN_TEST_LOST_CONTACT_LIMIT";

using internal::Clock;
using internal::Dur;
using internal::kEndConfirmBatchSeconds;
using internal::kFreeQueries;
using internal::kTailLines;
using internal::ReadRange;
using internal::Seconds;
using internal::SplitLines;

// ---------------------------------------------------------------- SlurmClient

SlurmWatcher::SlurmWatcher(SlurmClient* client, SlurmWatchOptions options)
    : client_(client), options_(std::move(options)) {
  created_ = Clock::now();
  last_query_ = created_;
  next_query_ = Clock::time_point::max();
  next_log_ = created_;
  interval_ = options_.min_query_interval;
  if (const char* limit = std::getenv(kLostContactLimitEnv); limit && *limit) {
    char* end = nullptr;
    double seconds = std::strtod(limit, &end);
    if (end && *end == '\0' && seconds > 0) options_.lost_contact_limit = seconds;
  }
}

SlurmWatcher::~SlurmWatcher() = default;

void SlurmWatcher::Progress(const std::string& line) const {
  if (options_.progress && options_.before_output) options_.before_output();
  if (options_.progress) *options_.progress << options_.progress_prefix << " " << line << std::endl;
}

void SlurmWatcher::Add(const SlurmWatchJob& spec) {
  auto job = std::make_unique<Job>();
  job->spec = spec;
  job->added = Clock::now();
  std::vector<std::string> patterns =
      JobOutputPatterns(spec.failure_patterns, spec.success_patterns, spec.end_marker_token);
  job->out = std::make_unique<LogFollower>(spec.local_out, patterns, kTailLines);
  if (!spec.local_err.empty() && spec.local_err != spec.local_out) {
    job->err = std::make_unique<LogFollower>(spec.local_err, patterns, kTailLines);
  }
  // The new job is asked about within min_query_interval, in a bulk watch as soon as the
  // query budget allows (ConfirmTime). The backoff restarts only for the first job being
  // watched: jobs that many threads submit one after another (run --cases) would otherwise
  // keep the watcher at one query a second for as long as submissions trickle in.
  const bool first = active() == 0;
  if (first) interval_ = options_.min_query_interval;
  jobs_.push_back(std::move(job));
  const Clock::time_point now = Clock::now();
  Clock::time_point ask = now + Dur(options_.min_query_interval);
  if (!first) ask = std::max(ask, ConfirmTime(now));
  next_query_ = std::min(next_query_, ask);
  next_log_ = Clock::now();
}

std::size_t SlurmWatcher::active() const {
  return static_cast<std::size_t>(
      std::count_if(jobs_.begin(), jobs_.end(), [](const auto& job) { return !job->done; }));
}

std::string SlurmWatcher::Describe(const std::string& job_id) const {
  for (const auto& job : jobs_) {
    if (job->spec.job_id != job_id) continue;
    if (job->purged) return "gone from the controller";
    if (!job->record) return "submitted";
    std::string text = job->record->state;
    if (job->record->state == "PENDING" && !job->record->reason.empty()) {
      text += " (" + job->record->reason + ")";
    }
    return text;
  }
  return "unknown";
}

void SlurmWatcher::CancelAll(int signal, const std::string& who) {
  cancel_handled_ = true;
  for (auto& job : jobs_) {
    if (job->done) continue;
    // A job already seen to end keeps its own verdict.
    if (job->terminal || job->purged) continue;
    if (job->action == SlurmAction::kUserCancel) continue;
    job->action = SlurmAction::kUserCancel;
    job->cancel_signal = signal;
    job->action_detail = signal ? SignalName(signal) : who;
    job->cancel_needed = true;
    job->cancel_sent.reset();
  }
  Progress(std::string("cancelling ") + (signal ? "on " + SignalName(signal) : "at " + who) +
           ": scancel " + std::to_string(active()) + " job(s)");
}

double SlurmWatcher::QueryCap() const {
  double cap = options_.max_query_interval;
  // Without accounting a job that ended is only known until MinJobAge purges it.
  if (accounting_ != true && config_.min_job_age_seconds && *config_.min_job_age_seconds > 0) {
    cap = std::min(cap, std::max(1.0, *config_.min_job_age_seconds / 2.0));
  }
  return std::max(cap, options_.min_query_interval);
}

void SlurmWatcher::EnsureConfig() {
  if (config_loaded_) return;
  Result<SlurmConfigFacts> config = client_->Config();
  if (!config.ok()) return;  // retried with the next query; the defaults are safe
  config_loaded_ = true;
  config_ = config.value();
  if (config_.accounting.has_value() && !accounting_.has_value()) accounting_ = config_.accounting;
}

void SlurmWatcher::ReadOutputs(bool force) {
  Clock::time_point now = Clock::now();
  if (client_->remote()) {
    if (!ReadRemoteOutputs(force, now)) return;
  } else {
    if (!force && now < next_log_) return;
    next_log_ = now + Dur(options_.log_interval);
  }
  for (auto& job : jobs_) {
    if (job->done) continue;
    for (LogFollower* follower : {job->out.get(), job->err.get()}) {
      if (follower == nullptr) continue;
      Result<LogPoll> polled = follower->Poll();
      (void)polled;  // a read error repeats on every poll; the verdict reports missing output
      if (!client_->remote() && job->spec.echo_output && options_.terminal) {
        std::uint64_t& echoed = follower == job->out.get() ? job->echoed_out : job->echoed_err;
        if (polled.ok() && polled->restarted) echoed = 0;
        while (echoed < follower->bytes_seen()) {
          std::string bytes =
              ReadRange(follower->path(), echoed,
                        std::min<std::uint64_t>(follower->bytes_seen() - echoed, 1 << 20));
          if (bytes.empty()) break;
          echoed += bytes.size();
          if (options_.before_output) options_.before_output();
          options_.terminal->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        }
        options_.terminal->flush();
      }
    }
  }
}

void SlurmWatcher::CheckTriggers(Clock::time_point now) {
  const std::size_t kHang = 0, kEnd = 1, kCancelLine = 2, kOomBegin = 3;
  const std::size_t oom_end = kOomBegin + SlurmOomPatterns().size();
  for (auto& job : jobs_) {
    if (job->done) continue;
    if (!job->running_since &&
        (job->out->bytes_read() > 0 || (job->err && job->err->bytes_read() > 0))) {
      job->running_since = now;
    }
    CheckSilence(job.get(), now);
    const PatternMatch* hang = job->out->scanner().FindMatch(kHang);
    if (!hang && job->err) hang = job->err->scanner().FindMatch(kHang);
    if (job->action == SlurmAction::kNone && !job->terminal && !job->purged) {
      if (hang) {
        job->action = SlurmAction::kHang;
        job->action_detail = hang->line;
        job->cancel_needed = true;
        Progress("job " + job->spec.job_id + ": \"" + hang->line.substr(0, 200) +
                 "\": hang detected, cancelling it");
      } else if (job->spec.monitor_timeout_seconds > 0 &&
                 Seconds(now - job->added) >= job->spec.monitor_timeout_seconds) {
        job->action = SlurmAction::kMonitorTimeout;
        job->cancel_needed = true;
        Progress("job " + job->spec.job_id + ": monitor timeout of " +
                 std::to_string(job->spec.monitor_timeout_seconds) + "s reached, cancelling it");
      }
    }
    if (!job->anomaly_seen) {
      for (const LogFollower* follower : {job->out.get(), job->err.get()}) {
        if (follower == nullptr) continue;
        for (const PatternMatch& match : follower->scanner().matches()) {
          if (match.pattern_index == kCancelLine ||
              (match.pattern_index >= kOomBegin && match.pattern_index < oom_end)) {
            job->anomaly_seen = true;
          }
        }
      }
      // slurmstepd says the job is being cancelled or killed: ask soon how it ended.
      if (job->anomaly_seen) next_query_ = std::min(next_query_, now + Dur(0.5));
    }
    if (!job->end_line && job->out->scanner().FindMatch(kEnd)) {
      // The token arrived. The script's marker is the last whole marker line: one the
      // payload printed mid-line, or before the script's own, does not count.
      std::optional<int> code = LastEndMarker(job->out->Tail(), job->spec.end_marker_token);
      if (code) {
        job->end_line = true;
        job->end_line_at = now;
        job->end_clean = code == 0 && !job->anomaly_seen;
        ReportEnding(job.get());
        // One query confirms the end; end lines that arrive together share it.
        next_query_ = std::min(
            next_query_, job->end_clean ? ConfirmTime(now) : now + Dur(kEndConfirmBatchSeconds));
      }
    }
  }
}

void SlurmWatcher::ReportEnding(Job* job) {
  if (job->ending_reported || job->done) return;
  job->ending_reported = true;
  if (job->spec.on_ending) job->spec.on_ending();
}

void SlurmWatcher::CheckSilence(Job* job, Clock::time_point now) {
  const int limit = job->spec.silence_timeout_seconds;
  if (limit <= 0) return;
  const std::uint64_t out_read = job->out->bytes_read();
  const std::uint64_t err_read = job->err ? job->err->bytes_read() : 0;
  if (out_read != job->out_read || err_read != job->err_read) {
    // Every node's and step's output lands in these files (srun -l labels the ranks). The
    // program's last line: both files are read each poll, so which grew "last" says little;
    // stdout's line wins a tie, and the launch scripts' xtrace in .err never counts.
    std::string line;
    if (out_read != job->out_read) line = LastProgramLine(job->out->Tail());
    if (line.empty() && err_read != job->err_read) line = LastProgramLine(job->err->Tail());
    if (!line.empty()) job->last_output_line = line;
    job->out_read = out_read;
    job->err_read = err_read;
    job->output_grew_at = now;
  } else if (!job->output_grew_at && job->record && job->record->state == "RUNNING") {
    job->output_grew_at = now;  // the clock starts when it runs, not while it is pending
  }
  // Not judged once the script printed its end line, while the scheduler does not answer
  // (the output may not arrive either), or after another action.
  if (!job->output_grew_at || job->action != SlurmAction::kNone || job->terminal || job->purged ||
      job->end_line || failing_since_ || Seconds(now - *job->output_grew_at) < limit) {
    return;
  }
  job->action = SlurmAction::kSilence;
  job->action_detail = job->last_output_line;
  job->cancel_needed = true;
  Progress("job " + job->spec.job_id + ": no output for " + std::to_string(limit) +
           "s (--silence-timeout), cancelling it");
}

void SlurmWatcher::SendCancels(Clock::time_point now) {
  std::vector<std::string> ids;
  for (auto& job : jobs_) {
    if (job->done || !job->cancel_needed) continue;
    if (!job->cancel_first_try) job->cancel_first_try = now;
    ids.push_back(job->spec.job_id);
  }
  if (ids.empty()) return;
  Status cancelled = client_->Cancel(ids);
  for (auto& job : jobs_) {
    if (job->done || !job->cancel_needed) continue;
    if (cancelled.ok()) {
      job->cancel_needed = false;
      job->cancel_sent = now;
    } else {
      job->cancel_problem = "scancel failed: " + cancelled.message();
    }
  }
  if (cancelled.ok()) {
    Progress("scancel " + Join(ids, " ") + ": sent; waiting for the job to end");
  } else {
    Progress("scancel " + Join(ids, " ") + " failed (will retry): " + cancelled.message());
  }
  // Confirm soon that the jobs left the queue.
  next_query_ = std::min(next_query_, now + Dur(0.5));
}

Clock::time_point SlurmWatcher::EarliestQuery() const {
  if (options_.first_query_delay <= 0) return created_;
  // Tests only: the delay counts from the first end line, so that the job surely ended
  // (and was purged) before the scheduler is first asked about it.
  std::optional<Clock::time_point> first_end;
  for (const auto& job : jobs_) {
    if (job->end_line_at && (!first_end || *job->end_line_at < *first_end))
      first_end = job->end_line_at;
  }
  if (first_end) return *first_end + Dur(options_.first_query_delay);
  return created_ + Dur(10 * options_.first_query_delay);
}

Clock::time_point SlurmWatcher::ConfirmTime(Clock::time_point now) const {
  const Clock::time_point soon = now + Dur(kEndConfirmBatchSeconds);
  const double per_minute = options_.confirm_queries_per_job_minute;
  if (per_minute <= 0) return soon;
  // The budget is earned by the jobs' run time (first output or RUNNING to the end line):
  // every controller query so far is spent from it, and a confirmation is brought forward
  // only as far as it allows. A job that ran 60 / per_minute seconds pays for its own.
  double job_seconds = 0;
  int accruing = 0;           // running jobs: they earn more while the confirmation waits
  bool more_to_come = false;  // a job not yet running: it will need queries of its own
  for (const auto& job : jobs_) {
    if (!job->running_since) {
      if (!job->done && !job->end_line) more_to_come = true;
      continue;
    }
    Clock::time_point until = now;
    if (job->end_line_at) {
      until = *job->end_line_at;
    } else if (job->done_at) {
      until = *job->done_at;
    } else {
      ++accruing;
    }
    job_seconds += std::max(0.0, Seconds(until - *job->running_since));
  }
  const double spent = client_->stats().controller_queries + 1;  // with the confirmation
  const double allowed = kFreeQueries + per_minute * job_seconds / 60;
  if (spent <= allowed) return soon;
  // Nothing runs or waits to run: these are the watch's last verdicts, and holding them
  // saves no query.
  if (accruing == 0 && !more_to_come) return soon;
  Clock::time_point latest = last_query_ + Dur(std::max(options_.max_confirm_wait, 0.0));
  if (accruing == 0) return std::max(soon, latest);
  double wait = (spent - allowed) * 60 / per_minute / accruing;
  return std::max(soon, std::min(now + Dur(wait), latest));
}

bool SlurmWatcher::QueryDue(Clock::time_point now) const {
  if (now < EarliestQuery()) return false;
  return now >= next_query_;
}

void SlurmWatcher::QueryController(Clock::time_point now) {
  std::vector<std::string> ids;
  for (auto& job : jobs_) {
    if (!job->done && !job->terminal && !job->purged && !job->lost) ids.push_back(job->spec.job_id);
  }
  if (ids.empty()) {
    next_query_ = Clock::time_point::max();
    return;
  }
  EnsureConfig();
  last_query_ = now;
  Result<SlurmClient::JobsSnapshot> snapshot = client_->QueryJobs(ids);
  if (!snapshot.ok()) {
    if (!failing_since_) failing_since_ = now;
    if (last_failure_ != snapshot.status().message()) {
      Progress("scheduler query failed (retrying): " + snapshot.status().message());
    }
    last_failure_ = snapshot.status().message();
    double backoff = std::min(30.0, std::max(1.0, 2 * Seconds(now - *failing_since_)));
    next_query_ = now + Dur(std::min(backoff, std::max(1.0, interval_)));
    return;
  }
  if (failing_since_) {
    Progress("scheduler answers again after " +
             std::to_string(static_cast<int>(Seconds(now - *failing_since_))) + "s");
  }
  failing_since_.reset();
  last_failure_.clear();
  bool attention = false;
  bool confirming = false;  // clean end lines wait for the controller (ConfirmTime)
  for (auto& job : jobs_) {
    if (job->done || job->terminal || job->purged) continue;
    const std::string& id = job->spec.job_id;
    for (const SlurmJobRecord& record : snapshot->records) {
      if (record.job_id != id) continue;
      job->record = record;
      job->terminal = IsTerminalSlurmState(record.state);
      if (!job->running_since && record.state != "PENDING") job->running_since = now;
    }
    if (std::find(snapshot->unknown.begin(), snapshot->unknown.end(), id) !=
        snapshot->unknown.end()) {
      job->purged = true;
    }
    if (job->terminal || job->purged) ReportEnding(job.get());
    CheckPending(job.get(), now);
    std::string shown = Describe(id);
    if (job->record && job->record->state == "RUNNING" && !job->record->node_list.empty()) {
      shown += " on " + job->record->node_list;
    }
    if (shown != job->shown_state) {
      job->shown_state = shown;
      Progress("job " + id + ": " + shown);
    }
    if (job->action != SlurmAction::kNone) attention = true;  // waiting for it to end
    if (job->end_line && !job->terminal && !job->purged) {
      // The script printed its last line: the job is about to end.
      if (job->end_clean && options_.confirm_queries_per_job_minute > 0) {
        confirming = true;
      } else {
        attention = true;
      }
    }
    if ((job->terminal || job->purged) && !job->end_line) attention = true;
    if (job->anomaly_seen && !job->terminal && !job->purged) attention = true;
  }
  if (attention) {
    next_query_ = now + Dur(std::min(1.0, options_.min_query_interval));
  } else {
    interval_ = std::min(interval_ * 2, QueryCap());
    next_query_ = now + Dur(interval_);
  }
  if (confirming) next_query_ = std::min(next_query_, ConfirmTime(now));
}

void SlurmWatcher::CheckPending(Job* job, Clock::time_point now) {
  if (job->action != SlurmAction::kNone || job->terminal || job->purged || !job->record ||
      job->record->state != "PENDING") {
    return;
  }
  const std::string& reason = job->record->reason;
  const std::string& id = job->spec.job_id;
  if (std::optional<HopelessPendingReason> hopeless = FindHopelessPendingReason(reason)) {
    job->action = SlurmAction::kHopelessPending;
    job->action_detail = reason;
    job->cancel_needed = true;
    Progress("job " + id + ": pending with reason " + hopeless->reason + " (" + hopeless->meaning +
             "), which waiting cannot clear: cancelling it");
  } else if (job->spec.max_pending_seconds > 0 &&
             Seconds(now - job->added) >= job->spec.max_pending_seconds) {
    job->action = SlurmAction::kMaxPending;
    job->action_detail = reason.empty() ? "no reason given" : reason;
    job->cancel_needed = true;
    Progress("job " + id + ": still pending after max_pending " +
             std::to_string(job->spec.max_pending_seconds) + "s (" + job->action_detail +
             "), cancelling it");
  }
}

Clock::time_point SlurmWatcher::PendingDeadline(const Job& job) const {
  if (job.spec.max_pending_seconds <= 0 || job.action != SlurmAction::kNone || job.terminal ||
      job.purged || (job.record && job.record->state != "PENDING")) {
    return Clock::time_point::max();
  }
  return job.added + std::chrono::seconds(job.spec.max_pending_seconds);
}

Clock::time_point SlurmWatcher::NextWake(Clock::time_point now) const {
  // With the output stream up, its frames wake Poll(); a second bounds the wait so that a
  // silent stream is noticed.
  Clock::time_point wake = StreamUp() ? now + Dur(1.0) : next_log_;
  Clock::time_point earliest_query = EarliestQuery();
  wake = std::min(wake, std::max(next_query_, earliest_query));
  for (const auto& job : jobs_) {
    if (job->done) continue;
    if (job->cancel_needed) wake = std::min(wake, now + Dur(1.0));
    if (job->next_acct) wake = std::min(wake, std::max(now, *job->next_acct));
    if (job->spec.monitor_timeout_seconds > 0 && job->action == SlurmAction::kNone) {
      wake = std::min(wake, job->added + std::chrono::seconds(job->spec.monitor_timeout_seconds));
    }
    wake = std::min(wake, PendingDeadline(*job));
    if (job->output_grew_at && job->spec.silence_timeout_seconds > 0 &&
        job->action == SlurmAction::kNone) {
      wake = std::min(
          wake, *job->output_grew_at + std::chrono::seconds(job->spec.silence_timeout_seconds));
    }
  }
  return std::max(wake, now);
}

std::vector<SlurmVerdict> SlurmWatcher::Poll(CancellationToken* cancel, double max_wait_seconds) {
  Clock::time_point now = Clock::now();
  if (cancel && cancel->cancelled() && !cancel_handled_) CancelAll(cancel->signal(), "request");
  ReadOutputs(false);
  CheckTriggers(now);
  SendCancels(now);
  for (const auto& job : jobs_) {
    if (!job->done && PendingDeadline(*job) <= now) next_query_ = std::min(next_query_, now);
  }
  if (QueryDue(now)) QueryController(now);
  std::vector<SlurmVerdict> verdicts = Finalize(Clock::now());
  if (!verdicts.empty() || active() == 0) return verdicts;
  now = Clock::now();
  double wait = std::min(max_wait_seconds, Seconds(NextWake(now) - now));
  if (wait > 0) {
    pollfd fds[2] = {{cancel && !cancel_handled_ ? cancel->wait_fd() : -1, POLLIN, 0},
                     {StreamFd(), POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(wait * 1000) + 1);
  }
  return verdicts;
}

void SlurmWatcher::Run(CancellationToken* cancel,
                       const std::function<void(SlurmVerdict)>& on_verdict) {
  while (active() > 0) {
    for (SlurmVerdict& verdict : Poll(cancel, 5.0)) on_verdict(std::move(verdict));
  }
}

}  // namespace trtllm_run
