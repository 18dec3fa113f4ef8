// SlurmClient and SlurmWatcher (slurm_watch.h).
#include "trtllm_run/slurm_watch.h"

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

#include "trtllm_run/process.h"

namespace trtllm_run {

const char kLostContactLimitEnv[] = "TRTLLM_RUN_TEST_LOST_CONTACT_LIMIT";

using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kTailLines = 60;
constexpr std::size_t kHeadLines = 50;
constexpr std::size_t kHeadBytes = 64 * 1024;
constexpr std::size_t kErrHeadBytes = 16 * 1024;
constexpr int kMaxAccountingTries = 6;
constexpr double kEndConfirmBatchSeconds = 0.2;  // gathers end lines that arrive together

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::duration Dur(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string CommandError(const std::string& what, const CommandOutput& out) {
  std::string message = !out.stderr_text.empty() ? out.stderr_text : out.stdout_text;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (message.size() > 500) message = message.substr(0, 500) + "...";
  std::string how = out.exit_code == 124 ? "timed out"
                    : out.exit_code >= 0 ? "exited with code " + std::to_string(out.exit_code)
                                         : "was killed by " + SignalName(out.signal);
  return what + " " + how + (message.empty() ? "" : ": " + message);
}

// Up to `max` bytes of `path` from `offset`; "" when it cannot be read.
std::string ReadRange(const std::string& path, std::uint64_t offset, std::size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string data(max, '\0');
  std::size_t got = 0;
  while (got < max) {
    ssize_t n = ::pread(fd, &data[got], max - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

std::vector<std::string> SplitLines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size() && lines.size() < max_lines) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

bool AppendFile(const std::string& path, const std::string& bytes, bool truncate) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return true;
}

std::string UserName(const std::string& uid_text) {
  char* end = nullptr;
  long uid = std::strtol(uid_text.c_str(), &end, 10);
  if (uid_text.empty() || *end != '\0') return uid_text;
  struct passwd* pw = ::getpwuid(static_cast<uid_t>(uid));
  return pw ? std::string(pw->pw_name) + " (uid " + uid_text + ")" : "uid " + uid_text;
}

// Prints, for each (path, offset) argument pair: "<size> <count>\n" then <count> bytes
// read from <offset> (size -1: no such file). The bytes go through a temp file so that
// the count is exact even when the file changes meanwhile.
const char kFetchScript[] = R"SH(tmp=$(mktemp) || exit 70
trap 'rm -f "$tmp"' EXIT
max=$1
shift
while [ $# -ge 2 ]; do
  f=$1 off=$2
  shift 2
  if [ -f "$f" ]; then s=$(stat -c %s -- "$f") || s=-1; else s=-1; fi
  : >"$tmp"
  if [ "$s" -gt "$off" ]; then
    tail -c +$((off + 1)) -- "$f" 2>/dev/null | head -c "$max" >"$tmp"
  fi
  printf '%s %s\n' "$s" "$(stat -c %s -- "$tmp")"
  cat -- "$tmp"
done
)SH";

// The controller query for several jobs: every job in one RPC, filtered to ours.
const char kQueryScript[] = R"SH(set -o pipefail
pattern="^JobId=($(IFS='|'; echo "$*")) "
timeout -k 5 "$TRTLLM_RUN_QUERY_TIMEOUT" scontrol --local -o show job | { grep -E "$pattern" || true; }
)SH";

}  // namespace

// ---------------------------------------------------------------- SlurmClient

SlurmClient::SlurmClient(Scenario* scenario, SlurmClientOptions options)
    : scenario_(scenario), options_(options) {}

Result<CommandOutput> SlurmClient::Run(const std::vector<std::string>& argv,
                                       const std::string& stdin_data) {
  std::vector<std::string> full = {"timeout", "-k", "5",
                                   std::to_string(std::max(1, options_.command_timeout_seconds))};
  full.insert(full.end(), argv.begin(), argv.end());
  return scenario_->Run(full, stdin_data);
}

Result<std::string> SlurmClient::Submit(const std::string& script, const std::string& dir,
                                        const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {"bash", "-c",
                                   "cd -- \"$1\" || exit 1; shift; exec sbatch --parsable \"$@\"",
                                   "trtllm-run-submit", dir};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  argv.push_back(script);
  ++stats_.submits;
  Result<CommandOutput> out = Run(argv);
  if (!out.ok()) return out.status().WithContext("sbatch " + script);
  if (out->exit_code != 0) {
    return Status::ExecutionError(CommandError("sbatch --parsable " + script, out.value()));
  }
  std::string id = FirstLine(out->stdout_text);
  id = id.substr(0, id.find(';'));  // "123;cluster" on multi-cluster setups
  if (id.empty() ||
      !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Status::ExecutionError("sbatch --parsable " + script + " printed no job id: " +
                                  FirstLine(out->stdout_text + " " + out->stderr_text));
  }
  return id;
}

Result<SlurmClient::JobsSnapshot> SlurmClient::QueryJobs(const std::vector<std::string>& ids) {
  JobsSnapshot snapshot;
  if (ids.empty()) return snapshot;
  ++stats_.controller_queries;
  Result<CommandOutput> out = Status::Ok();
  if (ids.size() == 1) {
    out = Run({"scontrol", "--local", "-o", "show", "job", "--", ids[0]});
  } else {
    std::vector<std::string> argv = {
        "env",
        "TRTLLM_RUN_QUERY_TIMEOUT=" + std::to_string(options_.command_timeout_seconds),
        "bash",
        "-c",
        kQueryScript,
        "trtllm-run-query"};
    argv.insert(argv.end(), ids.begin(), ids.end());
    out = scenario_->Run(argv, "");
  }
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("scontrol show job");
  }
  if (out->exit_code != 0) {
    if (ids.size() == 1 && IsInvalidJobIdError(out->stderr_text + out->stdout_text)) {
      snapshot.unknown = ids;
      return snapshot;
    }
    ++stats_.failures;
    return Status::ExecutionError(CommandError("scontrol --local -o show job", out.value()));
  }
  snapshot.records = ParseScontrolJobs(out->stdout_text);
  for (const std::string& id : ids) {
    bool found = std::any_of(snapshot.records.begin(), snapshot.records.end(),
                             [&](const SlurmJobRecord& r) { return r.job_id == id; });
    if (!found) snapshot.unknown.push_back(id);
  }
  return snapshot;
}

Result<SlurmClient::Accounting> SlurmClient::QueryAccounting(const std::vector<std::string>& ids) {
  Accounting accounting;
  if (ids.empty()) return accounting;
  ++stats_.accounting_queries;
  Result<CommandOutput> out =
      Run({"sacct", "-n", "-P", "-j", Join(ids, ","), std::string("--format=") + kSacctFormat});
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("sacct");
  }
  if (out->exit_code != 0) {
    if (IsAccountingDisabledError(out->stderr_text + out->stdout_text)) {
      accounting.disabled = true;
      return accounting;
    }
    ++stats_.failures;
    return Status::ExecutionError(CommandError("sacct -j " + Join(ids, ","), out.value()));
  }
  accounting.records = ParseSacct(out->stdout_text);
  return accounting;
}

Status SlurmClient::Cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::Ok();
  ++stats_.cancels;
  std::vector<std::string> argv = {"scancel", "--"};  // ids never read as options
  argv.insert(argv.end(), ids.begin(), ids.end());
  Result<CommandOutput> out = Run(argv);
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("scancel");
  }
  if (out->exit_code == 0) return Status::Ok();
  std::string text = out->stderr_text + out->stdout_text;
  // Jobs that already ended, or that the controller forgot, need no cancel.
  bool benign = true;
  for (const std::string& line : SplitLines(text, 1000)) {
    if (line.empty()) continue;
    if (line.find("already completing or completed") == std::string::npos &&
        !IsInvalidJobIdError(line)) {
      benign = false;
    }
  }
  if (benign) return Status::Ok();
  ++stats_.failures;
  return Status::ExecutionError(CommandError("scancel " + Join(ids, " "), out.value()));
}

Result<SlurmConfigFacts> SlurmClient::Config() {
  // The slurm.conf the client tools read, when it is a plain file here (no Include lines,
  // which the file alone cannot resolve): no RPC. Otherwise (configless clusters, includes)
  // `scontrol show config`.
  Result<CommandOutput> file =
      Run({"bash", "-c",
           "f=${SLURM_CONF:-/etc/slurm/slurm.conf}; [ -f \"$f\" ] && "
           "[ -r \"$f\" ] || exit 3; grep -qi '^[[:space:]]*include' \"$f\" "
           "&& exit 4; cat -- \"$f\""});
  if (file.ok() && file->exit_code == 0 && !file->stdout_text.empty()) {
    SlurmConfigFacts facts = ParseSlurmConfFile(file->stdout_text);
    facts.source = "slurm.conf";
    return facts;
  }
  ++stats_.config_queries;
  Result<CommandOutput> out = Run({"scontrol", "show", "config"});
  if (!out.ok()) return out.status().WithContext("scontrol show config");
  if (out->exit_code != 0) {
    return Status::ExecutionError(CommandError("scontrol show config", out.value()));
  }
  SlurmConfigFacts facts = ParseSlurmConfig(out->stdout_text);
  facts.source = "scontrol show config";
  return facts;
}

Status SlurmClient::FetchFiles(std::vector<FileChunk>* chunks, std::size_t max_bytes) {
  if (chunks->empty()) return Status::Ok();
  ++stats_.log_fetches;
  std::vector<std::string> argv = {"bash", "-c", kFetchScript, "trtllm-run-fetch",
                                   std::to_string(max_bytes)};
  for (const FileChunk& chunk : *chunks) {
    argv.push_back(chunk.path);
    argv.push_back(std::to_string(chunk.offset));
  }
  Result<CommandOutput> out = scenario_->Run(argv, "");
  if (!out.ok()) {
    ++stats_.failures;
    return out.status().WithContext("reading the job's output");
  }
  if (out->exit_code != 0) {
    ++stats_.failures;
    return Status::ExecutionError(CommandError("reading the job's output", out.value()));
  }
  const std::string& text = out->stdout_text;
  std::size_t pos = 0;
  for (FileChunk& chunk : *chunks) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      return Status::ExecutionError("reading the job's output: the reply was cut short");
    }
    std::istringstream header(text.substr(pos, nl - pos));
    long long size = -1;
    std::size_t count = 0;
    if (!(header >> size >> count) || nl + 1 + count > text.size()) {
      return Status::ExecutionError("reading the job's output: unexpected reply \"" +
                                    text.substr(pos, std::min<std::size_t>(80, nl - pos)) + "\"");
    }
    chunk.size = size;
    chunk.bytes = text.substr(nl + 1, count);
    pos = nl + 1 + count;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- SlurmWatcher

struct SlurmWatcher::Job {
  SlurmWatchJob spec;
  Clock::time_point added;
  std::unique_ptr<LogFollower> out;
  std::unique_ptr<LogFollower> err;
  std::uint64_t fetched_out = 0, fetched_err = 0;  // remote offsets copied so far
  std::uint64_t echoed_out = 0, echoed_err = 0;    // local echo offsets
  bool out_truncate = true, err_truncate = true;   // the first copy starts the local file

  std::optional<SlurmJobRecord> record;
  bool terminal = false;
  bool purged = false;
  std::string shown_state;

  SlurmAction action = SlurmAction::kNone;
  int cancel_signal = 0;
  std::string action_detail;
  bool cancel_needed = false;
  std::optional<Clock::time_point> cancel_first_try;
  std::optional<Clock::time_point> cancel_sent;
  std::string cancel_problem;

  bool end_line = false;
  bool end_clean = false;
  std::optional<Clock::time_point> end_line_at;
  bool anomaly_seen = false;  // a cancel or out-of-memory line

  bool lost = false;
  // Contact was lost after the job printed its end line: judged from its output alone.
  bool judged_unconfirmed = false;
  int acct_tries = 0;
  bool acct_done = false;
  std::optional<Clock::time_point> next_acct;
  std::vector<SlurmAcctRecord> acct;
  std::string acct_error;
  bool done = false;
};

SlurmWatcher::SlurmWatcher(SlurmClient* client, SlurmWatchOptions options)
    : client_(client), options_(std::move(options)) {
  created_ = Clock::now();
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
      JobOutputPatterns(spec.failure_patterns, spec.success_patterns);
  job->out = std::make_unique<LogFollower>(spec.local_out, patterns, kTailLines);
  if (!spec.local_err.empty() && spec.local_err != spec.local_out) {
    job->err = std::make_unique<LogFollower>(spec.local_err, patterns, kTailLines);
  }
  jobs_.push_back(std::move(job));
  interval_ = options_.min_query_interval;
  next_query_ = std::min(next_query_, Clock::now() + Dur(options_.min_query_interval));
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
  if (!force && now < next_log_) return;
  next_log_ = now + Dur(options_.log_interval);
  if (client_->remote()) {
    std::vector<SlurmClient::FileChunk> chunks;
    std::vector<std::pair<Job*, bool>> owners;  // (job, is_err)
    for (auto& job : jobs_) {
      if (job->done) continue;
      chunks.push_back({job->spec.out_path, job->fetched_out, -1, ""});
      owners.emplace_back(job.get(), false);
      if (!job->spec.err_path.empty()) {
        chunks.push_back({job->spec.err_path, job->fetched_err, -1, ""});
        owners.emplace_back(job.get(), true);
      }
    }
    Status fetched = client_->FetchFiles(&chunks);
    if (fetched.ok()) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        Job* job = owners[i].first;
        bool is_err = owners[i].second;
        std::uint64_t& offset = is_err ? job->fetched_err : job->fetched_out;
        bool& truncate = is_err ? job->err_truncate : job->out_truncate;
        const std::string& local = is_err ? job->spec.local_err : job->spec.local_out;
        const SlurmClient::FileChunk& chunk = chunks[i];
        if (chunk.size < 0) continue;  // not created yet
        if (static_cast<std::uint64_t>(chunk.size) < offset) {
          offset = 0;  // truncated or replaced: copy it again from the start
          truncate = true;
          continue;
        }
        if (chunk.bytes.empty() && !truncate) continue;
        if (AppendFile(local, chunk.bytes, truncate)) {
          truncate = false;
          offset += chunk.bytes.size();
          if (job->spec.echo_output && options_.terminal && !chunk.bytes.empty()) {
            if (options_.before_output) options_.before_output();
            options_.terminal->write(chunk.bytes.data(),
                                     static_cast<std::streamsize>(chunk.bytes.size()));
            options_.terminal->flush();
          }
        }
      }
    }
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
    if (!job->end_line) {
      const PatternMatch* end = job->out->scanner().FindMatch(kEnd);
      if (end && end->line_complete) {
        std::optional<int> code = ParseEndMarker(end->line);
        job->end_line = true;
        job->end_line_at = now;
        job->end_clean = code == 0 && !job->anomaly_seen;
        if (!job->end_clean || options_.confirm_clean_end) {
          // One query confirms the end; end lines that arrive together share it.
          next_query_ = std::min(next_query_, now + Dur(kEndConfirmBatchSeconds));
        }
      }
    }
  }
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
  for (auto& job : jobs_) {
    if (job->done || job->terminal || job->purged) continue;
    const std::string& id = job->spec.job_id;
    for (const SlurmJobRecord& record : snapshot->records) {
      if (record.job_id != id) continue;
      job->record = record;
      job->terminal = IsTerminalSlurmState(record.state);
    }
    if (std::find(snapshot->unknown.begin(), snapshot->unknown.end(), id) !=
        snapshot->unknown.end()) {
      job->purged = true;
    }
    std::string shown = Describe(id);
    if (job->record && job->record->state == "RUNNING" && !job->record->node_list.empty()) {
      shown += " on " + job->record->node_list;
    }
    if (shown != job->shown_state) {
      job->shown_state = shown;
      Progress("job " + id + ": " + shown);
    }
    if (job->action != SlurmAction::kNone) attention = true;  // waiting for it to end
    if (job->end_line && !job->terminal && !job->purged &&
        (!job->end_clean || options_.confirm_clean_end)) {
      attention = true;  // the script printed its last line: the job is about to end
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
}

std::vector<SlurmVerdict> SlurmWatcher::Finalize(Clock::time_point now) {
  std::vector<SlurmVerdict> verdicts;
  double confirm_limit =
      config_.kill_wait_seconds.value_or(30) + options_.kill_grace_seconds + 30.0;
  bool lost_contact =
      failing_since_ && Seconds(now - *failing_since_) > options_.lost_contact_limit;
  std::vector<Job*> ready;
  for (auto& job : jobs_) {
    if (job->done) continue;
    bool is_ready = false;
    if (job->action != SlurmAction::kNone) {
      if (job->cancel_sent && (job->terminal || job->purged)) {
        is_ready = true;
      } else if (job->cancel_sent && Seconds(now - *job->cancel_sent) > confirm_limit) {
        job->cancel_problem = "still " +
                              (job->record ? job->record->state : std::string("queued")) + " " +
                              std::to_string(static_cast<int>(confirm_limit)) + "s after scancel";
        is_ready = true;
      } else if (!job->cancel_sent && job->cancel_first_try &&
                 Seconds(now - *job->cancel_first_try) > confirm_limit) {
        is_ready = true;  // scancel kept failing: cancel_problem says why
      }
    } else {
      is_ready = job->terminal || job->purged ||
                 (job->end_line && job->end_clean && !options_.confirm_clean_end);
    }
    if (!is_ready && lost_contact) {
      // The job's own end line still tells how it ended (its exit code); without one the
      // verdict is unknown.
      if (job->end_line && job->action == SlurmAction::kNone) {
        job->judged_unconfirmed = true;
        job->acct_done = true;  // the scheduler does not answer: accounting is not asked
      } else {
        job->lost = true;
      }
      is_ready = true;
    }
    if (is_ready) ready.push_back(job.get());
  }
  if (ready.empty()) return verdicts;

  // Accounting for the jobs whose records say more than the controller: everything but a
  // plain COMPLETED, and jobs the controller forgot.
  std::vector<Job*> need_acct;
  for (Job* job : ready) {
    if (job->acct_done) continue;
    bool completed = job->terminal && job->record && job->record->state == "COMPLETED";
    bool unconfirmed_clean = job->end_clean && !job->terminal && !job->purged;
    if (accounting_ == false || job->action != SlurmAction::kNone || completed ||
        unconfirmed_clean || job->lost) {
      job->acct_done = true;
      continue;
    }
    if (job->next_acct && now < *job->next_acct) continue;
    need_acct.push_back(job);
  }
  if (!need_acct.empty()) {
    std::vector<std::string> ids;
    for (Job* job : need_acct) ids.push_back(job->spec.job_id);
    Result<SlurmClient::Accounting> accounting = client_->QueryAccounting(ids);
    for (Job* job : need_acct) {
      ++job->acct_tries;
      if (!accounting.ok()) {
        job->acct_error = accounting.status().message();
      } else if (accounting->disabled) {
        accounting_ = false;
        job->acct_done = true;
        continue;
      } else {
        accounting_ = true;
        job->acct.clear();
        bool final_row = false;
        for (const SlurmAcctRecord& record : accounting->records) {
          std::string base = record.id.substr(0, record.id.find('.'));
          if (base != job->spec.job_id) continue;
          job->acct.push_back(record);
          if (record.step.empty() && IsTerminalSlurmState(record.state)) final_row = true;
        }
        job->acct_error.clear();
        if (final_row) {
          job->acct_done = true;
          continue;
        }
        // slurmdbd receives the end of a job asynchronously: ask again shortly.
        job->acct_error = job->acct.empty() ? "no record yet" : "no final record yet";
      }
      if (job->acct_tries >= kMaxAccountingTries) {
        job->acct_done = true;
      } else {
        job->next_acct = now + Dur(std::min(4.0, 0.5 * (1 << job->acct_tries)));
      }
    }
  }

  bool any_final = std::any_of(ready.begin(), ready.end(), [](Job* job) { return job->acct_done; });
  if (!any_final) return verdicts;
  ReadOutputs(true);  // the last bytes the job wrote
  for (Job* job : ready) {
    if (!job->acct_done) continue;
    SlurmJobEvidence e;
    e.job_id = job->spec.job_id;
    e.workflow_type = job->spec.workflow_type;
    e.scenario = job->spec.scenario;
    e.log_file = job->spec.local_out;
    e.err_file = job->err ? job->spec.local_err : "";
    e.monitor_timeout_seconds = job->spec.monitor_timeout_seconds;
    e.time_limit = job->spec.time_limit;
    e.action = job->action;
    e.cancel_signal = job->cancel_signal;
    e.action_detail = job->action_detail;
    e.action_confirmed = job->cancel_sent && (job->terminal || job->purged);
    e.action_problem = job->cancel_problem;
    e.controller = job->record;
    e.controller_final = job->terminal;
    e.purged = job->purged;
    if (accounting_ == false) {
      e.accounting_available = false;  // disabled on the cluster
    } else if (!job->acct.empty()) {
      e.accounting_available = true;
    } else if (job->acct_tries > 0 && !job->acct_error.empty() &&
               job->acct_error != "no record yet") {
      e.accounting_error = job->acct_error;  // sacct kept failing
    } else {
      e.accounting_available = accounting_ == true || job->acct_tries > 0;
    }
    e.accounting = job->acct;
    e.accounting_queried = job->acct_tries > 0;
    if (job->judged_unconfirmed && accounting_ != false) {
      e.accounting_error = "not asked: the scheduler does not answer";
    }
    JobOutputScan scan;
    scan.out = &job->out->scanner();
    scan.err = job->err ? &job->err->scanner() : nullptr;
    scan.failure_count = job->spec.failure_patterns.size();
    scan.success_count = job->spec.success_patterns.size();
    struct stat st;
    scan.out_exists = ::stat(job->spec.local_out.c_str(), &st) == 0;
    scan.out_bytes = scan.out_exists ? static_cast<std::uint64_t>(st.st_size) : 0;
    scan.out_head = SplitLines(ReadRange(job->spec.local_out, 0, kHeadBytes), kHeadLines);
    scan.out_tail = job->out->Tail();
    if (job->err) scan.err_head = SplitLines(ReadRange(job->spec.local_err, 0, kErrHeadBytes), 200);
    AddOutputEvidence(scan, &e);
    for (const SlurmAcctRecord& record : job->acct) {
      if (record.step.empty() && !record.cancelled_by.empty() && !client_->remote()) {
        e.cancelled_by_name = UserName(record.cancelled_by);
      }
    }
    RunResult result;
    if (job->lost) {
      result.status = RunStatus::kError;
      result.reason = "lost contact with the scheduler for " +
                      std::to_string(static_cast<int>(Seconds(now - *failing_since_))) +
                      "s (last error: " + last_failure_ + "); job " + job->spec.job_id +
                      " may still be " + (job->record ? job->record->state : "queued");
      result.errors.push_back(result.reason);
      result.diagnosis = "The verdict is unknown. Check `squeue -j " + job->spec.job_id +
                         "`, and `trtllm-run cancel WORK_DIR` to stop it.";
      result.details["job_id"] = job->spec.job_id;
      result.log_file = job->spec.local_out;
      result.log_tail = job->out->Tail();
    } else {
      result = JudgeSlurmJob(e);
      if (job->judged_unconfirmed) {
        result.notes.push_back("lost contact with the scheduler for " +
                               std::to_string(static_cast<int>(Seconds(now - *failing_since_))) +
                               "s (last error: " + last_failure_ +
                               "); the verdict rests on the job's end line, unconfirmed by Slurm");
      }
    }
    result.log_bytes_read = job->out->bytes_read() + (job->err ? job->err->bytes_read() : 0);
    result.log_bytes_written = scan.out_bytes;
    job->done = true;
    verdicts.push_back({job->spec.job_id, std::move(result)});
  }
  return verdicts;
}

Clock::time_point SlurmWatcher::NextWake(Clock::time_point now) const {
  Clock::time_point wake = next_log_;
  Clock::time_point earliest_query = EarliestQuery();
  wake = std::min(wake, std::max(next_query_, earliest_query));
  for (const auto& job : jobs_) {
    if (job->done) continue;
    if (job->cancel_needed) wake = std::min(wake, now + Dur(1.0));
    if (job->next_acct) wake = std::min(wake, std::max(now, *job->next_acct));
    if (job->spec.monitor_timeout_seconds > 0 && job->action == SlurmAction::kNone) {
      wake = std::min(wake, job->added + std::chrono::seconds(job->spec.monitor_timeout_seconds));
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
  if (QueryDue(now)) QueryController(now);
  std::vector<SlurmVerdict> verdicts = Finalize(Clock::now());
  if (!verdicts.empty() || active() == 0) return verdicts;
  now = Clock::now();
  double wait = std::min(max_wait_seconds, Seconds(NextWake(now) - now));
  if (wait > 0) {
    pollfd fd{cancel && !cancel_handled_ ? cancel->wait_fd() : -1, POLLIN, 0};
    ::poll(&fd, 1, static_cast<int>(wait * 1000) + 1);
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
