// Submitting and watching one Slurm job for the local_slurm and remote_slurm executors
// (slurm_run.h). The remote-only steps live in remote_repo.cc, held allocations in
// slurm_alloc.cc.
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "model/dir_util.h"
#include "model/slurm_time.h"
#include "model/trust.h"
#include "slurm/submit/slurm_internal.h"
#include "slurm/submit/ssh_settings.h"
#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/slurm/watch.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

const char kSlurmPasswordEnv[] = "TRTLLM_RUN_SLURM_PASSWORD";
const char kSlurmPasswordFileEnv[] = "TRTLLM_RUN_SLURM_PASSWORD_FILE";
const char kFirstPollDelayEnv[] = "TRTLLM_RUN_TEST_FIRST_POLL_DELAY";

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string Unquote(std::string value) {
  value = Trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

std::string Extra(const JobSpec& spec, const std::string& key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? "" : it->second;
}

std::string LocalUser() {
  struct passwd* pw = ::getpwuid(::getuid());
  return pw ? pw->pw_name : "";
}

}  // namespace

BatchOutputPaths ParseBatchOutputPaths(const std::string& script_text) {
  BatchOutputPaths paths;
  std::size_t start = 0;
  while (start < script_text.size()) {
    std::size_t end = script_text.find('\n', start);
    if (end == std::string::npos) end = script_text.size();
    std::string line(Trim(script_text.substr(start, end - start)));
    start = end + 1;
    if (line.rfind("#SBATCH", 0) != 0) continue;
    std::string rest(Trim(line.substr(7)));
    auto option = [&](const std::string& long_name, const std::string& short_name,
                      std::string* value) {
      if (rest.rfind(long_name + "=", 0) == 0) {
        *value = Unquote(rest.substr(long_name.size() + 1));
      } else if (rest.rfind(long_name + " ", 0) == 0) {
        *value = Unquote(rest.substr(long_name.size() + 1));
      } else if (!short_name.empty() && rest.rfind(short_name + " ", 0) == 0) {
        *value = Unquote(rest.substr(short_name.size() + 1));
      } else if (!short_name.empty() && rest.rfind(short_name, 0) == 0 &&
                 rest.size() > short_name.size() && rest[short_name.size()] != '-') {
        *value = Unquote(rest.substr(short_name.size()));
      }
    };
    option("--output", "-o", &paths.out);
    option("--error", "-e", &paths.err);
    option("--job-name", "-J", &paths.job_name);
  }
  if (paths.out.empty()) paths.out = "slurm-%j.out";
  return paths;
}

std::string ExpandSlurmFilename(const std::string& pattern, const std::string& dir,
                                const std::string& job_id, const std::string& job_name,
                                const std::string& user) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 >= pattern.size()) {
      out += c;
      continue;
    }
    char n = pattern[++i];
    switch (n) {
      case 'j':
      case 'A':
        out += job_id;
        break;
      case 'x':
        out += job_name;
        break;
      case 'u':
        out += user;
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += n;
    }
  }
  if (!out.empty() && out[0] != '/' && !dir.empty()) out = dir + "/" + out;
  return out;
}

bool IsSlurmJobId(const std::string& id) {
  // digits, then at most one "_digits", then at most one "+digits".
  std::size_t i = 0;
  auto digits = [&]() {
    std::size_t start = i;
    while (i < id.size() && id[i] >= '0' && id[i] <= '9') ++i;
    return i > start && i - start <= 20;
  };
  if (!digits()) return false;
  if (i < id.size() && id[i] == '_') {
    ++i;
    if (!digits()) return false;
  }
  if (i < id.size() && id[i] == '+') {
    ++i;
    if (!digits()) return false;
  }
  return i == id.size();
}

std::string RecordedSlurmJobId(const std::string& work_dir) {
  Result<std::string> text = ReadWorkDirFile(work_dir + "/slurm_job_id");
  if (text.ok()) {
    std::string id(Trim(text.value()));
    if (!id.empty()) return id;
  }
  Result<RunState> state = ReadRunState(work_dir);
  if (state.ok()) return state->job_id;
  return "";
}

void AddSshConnectionExtras(const CaseRequest& request, JobSpec* spec) {
  if (request.ssh_config_file) spec->extra["ssh_config_file"] = *request.ssh_config_file;
  if (request.ssh_port) spec->extra["ssh_port"] = std::to_string(*request.ssh_port);
  if (request.identity) spec->extra["ssh_identity_file"] = *request.identity;
  std::string options;
  for (const std::string& option : request.ssh_option) options += option + "\n";
  if (!options.empty()) spec->extra["ssh_options"] = options;
}

Result<SshOptions> SshOptionsForSpec(const JobSpec& spec) {
  if (spec.ssh_host.empty()) {
    return Status::InvalidInput("job_spec.json of " + spec.work_dir + " has no ssh_host",
                                "give --ssh-host (or a catalog cluster with ssh_host)");
  }
  SshOptions options;
  options.destination = spec.ssh_host;
  bool has_user = spec.ssh_host.find('@') != std::string::npos;
  if (!has_user && !spec.slurm_user.empty()) options.user = spec.slurm_user;
  options.ssh_config_file = Extra(spec, "ssh_config_file");
  if (std::string port = Extra(spec, "ssh_port"); !port.empty()) {
    try {
      options.port = std::stoi(port);
    } catch (const std::exception&) {
      return Status::InvalidInput("job_spec.json of " + spec.work_dir + ": ssh_port '" + port +
                                  "' is not a number");
    }
  }
  options.identity_file = Extra(spec, "ssh_identity_file");
  std::istringstream ssh_options(Extra(spec, "ssh_options"));
  for (std::string line; std::getline(ssh_options, line);) {
    if (!line.empty()) options.extra_options.push_back(line);
  }
  if (const char* secret = std::getenv(kSlurmPasswordEnv); secret && *secret) {
    options.password_env = kSlurmPasswordEnv;
  } else if (const char* file = std::getenv(kSlurmPasswordFileEnv); file && *file) {
    Result<std::string> text = ReadFile(file);
    if (!text.ok()) {
      return Status::InvalidInput("cannot read the SSH password file named by $" +
                                      std::string(kSlurmPasswordFileEnv) + ": " +
                                      text.status().message(),
                                  "give a readable file (mode 0600) holding the password");
    }
    std::string password = text.value();
    while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
      password.pop_back();
    }
    options.password = password;
  }
  return options;
}

Status AddSlurmRunFields(const CaseRequest& request, bool remote, JobSpec* spec) {
  // Persistent mode is a local_slurm choice of the request (remote_slurm reuses held
  // allocations through release_allocation instead).
  spec->persistent_mode = !remote && request.persistent_mode.value_or(false);
  AddSshConnectionExtras(request, spec);
  if (request.release_allocation) {
    spec->extra["release_allocation"] = *request.release_allocation ? "true" : "false";
  }
  if (request.alloc_time_limit) {
    if (!ParseSlurmDuration(*request.alloc_time_limit)) {
      return Status::InvalidInput(
          "alloc_time_limit '" + *request.alloc_time_limit + "' is not a Slurm time",
          "give minutes (60), HH:MM:SS (01:00:00) or D-HH:MM:SS");
    }
    spec->extra["alloc_time_limit"] = *request.alloc_time_limit;
  }
  return WriteJobSpec(*spec);
}

namespace internal {

RunResult BaseResult(const JobSpec& spec) {
  RunResult result;
  result.scenario = spec.scenario;
  result.workflow_type = spec.workflow_type;
  result.model_name = spec.model_name;
  result.command = spec.script_path;
  result.work_dir = spec.work_dir;
  result.monitor_timeout_seconds = spec.monitor_timeout_seconds;
  result.started_at = NowIso8601();
  return result;
}

void TakeVerdict(const RunResult& judged, RunResult* result) {
  result->status = judged.status;
  result->reason = judged.reason;
  result->exit_code = judged.exit_code;
  result->signal = judged.signal;
  result->user_interrupt = judged.user_interrupt;
  result->cancelled_by = judged.cancelled_by;
  result->diagnosis = judged.diagnosis;
  result->errors.insert(result->errors.end(), judged.errors.begin(), judged.errors.end());
}

RunResult ErrorResult(RunResult result, const std::string& reason, const std::string& diagnosis) {
  result.status = RunStatus::kError;
  result.reason = reason;
  result.errors.push_back(reason);
  DiagnosisInput in;
  in.status = RunStatus::kError;
  in.scenario = result.scenario;
  in.workflow_type = result.workflow_type;
  in.errors = result.errors;
  in.reason = reason;
  std::string table = DiagnoseFailure(in);
  result.diagnosis = diagnosis;
  if (!table.empty()) result.diagnosis = table + (diagnosis.empty() ? "" : "\n" + diagnosis);
  result.finished_at = NowIso8601();
  return result;
}

// The last non-blank line in the last 4 KiB of `path`, for the progress line; "" when
// there is none (or it cannot be read: a FIFO, not there yet).
std::string LastLogLine(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  char buffer[4096];
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t from =
      size > static_cast<off_t>(sizeof buffer) ? size - static_cast<off_t>(sizeof buffer) : 0;
  ssize_t n = size > 0 ? ::pread(fd, buffer, sizeof buffer, from) : 0;
  ::close(fd);
  std::string text(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  std::size_t newline = text.rfind('\n', end);
  std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end + 1 - start);
}

void Say(const ExecContext& context, const std::string& prefix, const std::string& line) {
  if (context.progress) *context.progress << prefix << " " << line << std::endl;
}

double FirstPollDelay() {
  const char* value = std::getenv(kFirstPollDelayEnv);
  if (value == nullptr || *value == '\0') return 0;
  char* end = nullptr;
  double seconds = std::strtod(value, &end);
  return end && *end == '\0' && seconds > 0 ? seconds : 0;
}

SlurmWatchOptions WatchOptions(const JobSpec& spec, const ExecContext& context,
                               const Scenario& scenario) {
  SlurmWatchOptions options;
  options.terminal = context.terminal;
  options.progress = context.progress;
  options.progress_prefix =
      "[" + (spec.scenario.empty() ? std::string("slurm") : spec.scenario) + "]";
  options.kill_grace_seconds = context.kill_grace_seconds;
  double poll = context.poll_interval_seconds > 0 ? context.poll_interval_seconds : 0.5;
  options.log_interval = scenario.IsRemote() ? std::max(1.0, poll) : std::min(0.25, poll);
  options.first_query_delay = FirstPollDelay();
  return options;
}

SubmitOutcome SubmitJob(SlurmClient* client, const JobSpec& spec, const ExecContext& context,
                        const SubmitRequest& request) {
  SubmitOutcome outcome;
  RunResult& base = outcome.result;
  base = BaseResult(spec);
  base.command = request.script_local;
  const std::string prefix =
      "[" + (spec.scenario.empty() ? std::string("slurm") : spec.scenario) + "]";
  Result<std::string> text = ReadFile(request.script_local);
  if (!text.ok()) {
    base = ErrorResult(base, "cannot read the batch script: " + text.status().message(),
                       "the work dir is incomplete; prepare the case again");
    return outcome;
  }
  BatchOutputPaths paths = ParseBatchOutputPaths(text.value());
  if (context.cancel && context.cancel->cancelled()) {
    base.status = RunStatus::kCancelled;
    base.cancelled_by = context.cancel->signal() ? SignalName(context.cancel->signal()) : "request";
    base.user_interrupt = context.cancel->signal() == SIGINT;
    base.reason = "cancelled before the job was submitted";
    base.finished_at = NowIso8601();
    return outcome;
  }
  // A recorded job carries a token of this run, so that `trtllm-run cancel` can prove
  // the job the work dir names is this run's (ProveSlurmJobOwnership).
  std::vector<std::string> sbatch_args = request.sbatch_args;
  if (request.record) {
    const std::string token = NewSlurmJobToken();
    Status written = token.empty()
                         ? Status::IoError("no random bytes from /dev/urandom")
                         : WriteFileAtomic(spec.work_dir + "/" + kSlurmJobTokenFile, token + "\n");
    if (!written.ok()) {
      base = ErrorResult(base,
                         request.label + ": cannot record the job's token: " + written.ToString(),
                         "nothing was submitted; check that the work dir is writable");
      return outcome;
    }
    sbatch_args.push_back(std::string("--comment=") + kSlurmJobCommentPrefix + token);
  }
  Result<std::string> submitted =
      client->Submit(request.script_submit, request.submit_dir, sbatch_args);
  if (!submitted.ok()) {
    base = ErrorResult(base,
                       request.label + ": sbatch refused the job: " + submitted.status().message(),
                       "nothing was submitted; fix the problem above and run again");
    return outcome;
  }
  const std::string job_id = submitted.value();
  if (request.record) {
    Status written = WriteFileAtomic(spec.work_dir + "/slurm_job_id", job_id + "\n");
    if (!written.ok()) base.errors.push_back(written.ToString());
  }
  const std::string user = client->remote() ? spec.slurm_user : LocalUser();
  SlurmWatchJob& job = outcome.job;
  job.job_id = job_id;
  job.out_path = ExpandSlurmFilename(paths.out, request.submit_dir, job_id, paths.job_name, user);
  job.err_path = paths.err.empty() ? ""
                                   : ExpandSlurmFilename(paths.err, request.submit_dir, job_id,
                                                         paths.job_name, user);
  if (job.err_path == job.out_path) job.err_path.clear();
  if (client->remote()) {
    outcome.remote_log_file = job.out_path;
    job.local_out = spec.work_dir + "/" + fs::path(job.out_path).filename().string();
    job.local_err = job.err_path.empty()
                        ? ""
                        : spec.work_dir + "/" + fs::path(job.err_path).filename().string();
  } else {
    job.local_out = job.out_path;
    job.local_err = job.err_path;
  }
  if (request.record) {
    RunState state = NewRunState(spec.scenario);
    state.job_id = job_id;
    state.log_file = job.local_out;
    if (client->remote()) {
      state.extra["remote_log_file"] = job.out_path;
      state.extra["ssh_host"] = spec.ssh_host;
    }
    Status written = WriteRunState(spec.work_dir, state);
    if (!written.ok()) base.errors.push_back(written.ToString());
  }
  Say(context, prefix, request.label + ": submitted job " + job_id + "; output " + job.out_path);
  job.end_marker_token = EndMarkerTokenOfScript(text.value());
  job.on_ending = context.job_ending;
  job.success_patterns = request.success_patterns;
  job.failure_patterns = request.failure_patterns;
  job.monitor_timeout_seconds = request.monitor_timeout_seconds;
  job.max_pending_seconds = request.max_pending_seconds;
  job.silence_timeout_seconds = request.silence_timeout_seconds;
  job.workflow_type = spec.workflow_type;
  job.scenario = spec.scenario;
  job.time_limit = spec.slurm_params ? spec.slurm_params->time_limit : spec.time_limit;
  job.echo_output = request.echo;
  outcome.submitted = true;
  return outcome;
}

RunResult FinishJob(const SubmitOutcome& submitted, const RunResult& judged,
                    const SlurmClientStats& stats, const JobSpec& spec,
                    const SubmitRequest& request) {
  const SlurmWatchJob& job = submitted.job;
  RunResult result = submitted.result;
  TakeVerdict(judged, &result);
  result.notes.insert(result.notes.end(), judged.notes.begin(), judged.notes.end());
  result.details = judged.details;
  result.log_file = job.local_out;
  result.log_tail = judged.log_tail;
  result.log_bytes_read = judged.log_bytes_read;
  result.log_bytes_written = judged.log_bytes_written;
  result.details["scheduler_queries"] = std::to_string(stats.controller_queries);
  result.details["accounting_queries"] = std::to_string(stats.accounting_queries);
  if (!job.err_path.empty()) result.details["err_file"] = job.local_err;
  if (!submitted.remote_log_file.empty()) {
    result.details["remote_log_file"] = submitted.remote_log_file;
  }
  result.finished_at = NowIso8601();
  if (request.record) {
    Result<RunState> state = ReadRunState(spec.work_dir);
    if (state.ok()) {
      RunState finished = state.value();
      finished.state = "finished";
      WriteRunState(spec.work_dir, finished).IgnoreError();
    }
  }
  return result;
}

RunResult SubmitAndWatch(SlurmClient* client, const JobSpec& spec, const ExecContext& context,
                         const SubmitRequest& request) {
  SubmitOutcome submitted = SubmitJob(client, spec, context, request);
  if (!submitted.submitted) return submitted.result;
  const std::string name = spec.scenario.empty() ? std::string("slurm") : spec.scenario;
  ProgressReporter progress(context.progress, IsTerminalStream(context.progress), name);
  SlurmWatchOptions options = WatchOptions(spec, context, *client->scenario());
  options.before_output = [&progress] { progress.Clear(); };
  SlurmWatcher watcher(client, options);
  watcher.Add(submitted.job);
  const std::string& job_id = submitted.job.job_id;
  const auto started = std::chrono::steady_clock::now();
  std::optional<SlurmVerdict> verdict;
  while (!verdict) {
    // Live: wake every second to redraw the elapsed time; plain lines need no wakeups.
    for (SlurmVerdict& v : watcher.Poll(context.cancel, progress.live() ? 1.0 : 5.0)) {
      verdict = std::move(v);
    }
    if (verdict) break;
    std::string state = watcher.Describe(job_id);
    progress.SetJob("job " + job_id + " " + state);
    progress.Update(
        {state == "RUNNING" ? "running" : "waiting",
         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
         submitted.job.monitor_timeout_seconds, LastLogLine(submitted.job.local_out)});
  }
  progress.Clear();
  return FinishJob(submitted, verdict->result, client->stats(), spec, request);
}

}  // namespace internal

namespace internal {

SubmitRequest LocalSubmitRequest(const JobSpec& spec) {
  SubmitRequest request;
  request.label = "job";
  request.script_local = spec.script_path;
  request.script_submit = spec.script_path;
  request.submit_dir = spec.work_dir;
  request.success_patterns = spec.success_patterns;
  request.failure_patterns = spec.failure_patterns;
  request.monitor_timeout_seconds = spec.monitor_timeout_seconds;
  request.max_pending_seconds = spec.max_pending_seconds;
  request.silence_timeout_seconds = spec.silence_timeout_seconds;
  request.echo = true;
  request.record = true;
  return request;
}

bool NamesLoginNode(const JobSpec& spec) {
  return !spec.ssh_host.empty() || !spec.remote_work_dir.empty();
}

}  // namespace internal

Status CheckRecordedSshSettings(const SshOptions& options, const JobSpec& spec,
                                const std::string& hint) {
  const std::string where = "job_spec.json of " + spec.work_dir;
  if (!options.destination.empty() && options.destination[0] == '-') {
    return Status::InvalidInput(where + ": ssh_host starts with '-'", hint);
  }
  for (const std::string& option : options.extra_options) {
    TRTLLM_RUN_RETURN_IF_ERROR(CheckUntrustedSshOption(option, where + ": ssh_options"));
  }
  if (!options.ssh_config_file.empty()) {
    struct stat st {};
    const std::string& file = options.ssh_config_file;
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidInput(where + ": ssh_config_file '" + file + "' is no regular file",
                                  hint);
    }
    if ((st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & 022) != 0) {
      return Status::InvalidInput(where + ": ssh_config_file '" + file +
                                      "' is not owned by you or root, or is writable by group "
                                      "or others",
                                  hint);
    }
  }
  return Status::Ok();
}

Status CancelSlurmJob(const JobSpec& spec, const ExecContext& context) {
  if (spec.persistent_mode || Extra(spec, "release_allocation") == "false") {
    // The run's steps live in a held allocation: stop the script that makes them (the
    // allocation stays for later runs; `trtllm-run release` ends it).
    return internal::CancelHeldAllocationRun(spec);
  }
  std::string job_id = RecordedSlurmJobId(spec.work_dir);
  if (job_id.empty()) {
    return Status::NotFound("no Slurm job is recorded in " + spec.work_dir +
                                " (no slurm_job_id, no job_id in run_state.json)",
                            "the job was never submitted, or this is not a Slurm work dir");
  }
  if (!IsSlurmJobId(job_id)) {
    return Status::InvalidInput("the Slurm job id '" + job_id + "' recorded in " + spec.work_dir +
                                    " (slurm_job_id, else run_state.json job_id) is not a job id; "
                                    "nothing was cancelled",
                                "a job id is 123, 123_4 or 123+1; cancel the job yourself with "
                                "`scancel -- ID` if you know it");
  }
  std::unique_ptr<Scenario> own;
  Scenario* scenario = context.scenario;
  // A remote executor's job spec names its login node and remote work dir.
  std::unique_ptr<SshScenario> ssh;
  if (internal::NamesLoginNode(spec)) {
    Result<SshOptions> options = SshOptionsForSpec(spec);
    if (!options.ok()) return options.status();
    TRTLLM_RUN_RETURN_IF_ERROR(CheckRecordedSshSettings(
        options.value(), spec,
        "cancel reaches the cluster only through SSH settings you control; nothing was "
        "cancelled: cancel the job with `scancel` on the login node"));
    if (context.slurm_password) options->password = *context.slurm_password;
    Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options.value());
    if (!made.ok()) return made.status();
    ssh = std::move(made.value());
    scenario = ssh.get();
  } else if (scenario == nullptr || scenario->IsRemote()) {
    own = MakeLocalScenario();
    scenario = own.get();
  }
  SlurmClient client(scenario);
  // A work dir only claims the job: the controller's record must prove it this run's.
  Status proven = ProveSlurmJobOwnership(&client, spec, job_id);
  if (proven.code() == StatusCode::kNotFound) {
    if (context.progress) *context.progress << "trtllm-run cancel: " << proven.message() << "\n";
    if (ssh) ssh->Close().IgnoreError();
    return Status::Ok();
  }
  if (!proven.ok()) {
    if (ssh) ssh->Close().IgnoreError();
    return proven;
  }
  Status cancelled;
  for (int attempt = 0; attempt < 5; ++attempt) {
    cancelled = client.Cancel({job_id});
    if (cancelled.ok()) break;
    std::this_thread::sleep_for(std::chrono::seconds(1 << attempt));
  }
  if (!cancelled.ok()) return cancelled.WithContext("cancelling Slurm job " + job_id);
  // Confirmed only once the job left the queue (or reached a terminal state).
  const int limit = 30 + std::max(0, context.kill_grace_seconds) + 30;
  std::string last = "unknown";
  for (auto deadline = Clock::now() + std::chrono::seconds(limit); Clock::now() < deadline;) {
    Result<SlurmClient::JobsSnapshot> snapshot = client.QueryJobs({job_id});
    if (snapshot.ok()) {
      if (!snapshot->unknown.empty()) {
        if (ssh) ssh->Close().IgnoreError();
        return Status::Ok();
      }
      if (!snapshot->records.empty()) {
        last = snapshot->records[0].state;
        if (IsTerminalSlurmState(last)) {
          if (ssh) ssh->Close().IgnoreError();
          return Status::Ok();
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  if (ssh) ssh->Close().IgnoreError();
  return Status::ExecutionError(
      "Slurm job " + job_id + " is still " + last + " " + std::to_string(limit) + "s after scancel",
      "check `squeue -j " + job_id +
          "`; ask the cluster admins when "
          "it does not end");
}

}  // namespace trtllm_run
