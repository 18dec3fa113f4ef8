// Held allocations (slurm_run.h): local_slurm's persistent mode keeps one allocation
// (`salloc --no-shell`, no batch step, so every CPU is free for steps) and runs later
// jobs' scripts on this host with SLURM_JOB_ID set to it, so that each `srun` line of the
// script becomes a step of the held allocation instead of a new job in the queue. The
// allocation is recorded in a small state file; it ends at its own --time
// (alloc_time_limit), when a later run finds it idle for longer than its idle limit, or
// with `trtllm-run release`.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "model/json_util.h"
#include "model/slurm_time.h"
#include "os/ssh.h"
#include "slurm/alloc/held_runner.h"
#include "slurm/alloc/slurm_alloc.h"
#include "slurm/alloc/slurm_alloc_wait.h"
#include "slurm/submit/slurm_internal.h"
#include "slurm/submit/ssh_settings.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/supervise/output_pump.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/supervise/supervisor.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

const char kHeldJobName[] = "trtllm-run-held";
const char kDefaultAllocTime[] = "01:00:00";
constexpr int kDefaultIdleSeconds = 1800;

long long Now() { return static_cast<long long>(std::time(nullptr)); }

std::string Extra(const JobSpec& spec, const std::string& key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? "" : it->second;
}

std::string Sanitize(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    out += ok ? c : '_';
  }
  return out;
}

// What an allocation is for: the same cluster, partition, account and shape reuse it.
std::string KeyFor(const JobSpec& spec, const std::string& host) {
  const SlurmParams params = spec.slurm_params.value_or(SlurmParams{});
  const char* conf = std::getenv("SLURM_CONF");
  std::string cluster = std::string(conf ? conf : "default") + "|" + host;
  std::size_t hash = std::hash<std::string>{}(cluster);
  char suffix[20];
  std::snprintf(suffix, sizeof(suffix), "%08zx", hash & 0xffffffffu);
  std::string partition = !params.partition.empty() ? params.partition : spec.partition;
  std::string account = !params.account.empty() ? params.account : spec.account;
  return Sanitize(partition + "-" + account + "-N" + std::to_string(params.nodes) + "-n" +
                  std::to_string(params.ntasks_per_node) +
                  (params.gres.empty() ? "" : "-" + params.gres)) +
         "-" + suffix;
}

std::string ToJson(const HeldAllocation& a) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  str("key", a.key);
  str("job_id", a.job_id);
  str("host", a.host);
  str("user", a.user);
  str("ssh_config_file", a.ssh_config_file);
  str("ssh_port", a.ssh_port);
  str("ssh_identity_file", a.ssh_identity_file);
  str("ssh_options", a.ssh_options);
  str("partition", a.partition);
  str("account", a.account);
  str("time_limit", a.time_limit);
  w.Key("created_at");
  w.Int64(a.created_at);
  w.Key("last_used_at");
  w.Int64(a.last_used_at);
  w.Key("idle_limit_seconds");
  w.Int(a.idle_limit_seconds);
  w.EndObject();
  return std::string(buffer.GetString()) + "\n";
}

std::optional<HeldAllocation> FromJson(const std::string& text, const std::string& path) {
  rapidjson::Document doc;
  if (!json::ParseObject(text, path, &doc).ok()) return std::nullopt;
  HeldAllocation a;
  auto str = [&](const char* key) -> std::string {
    auto it = doc.FindMember(key);
    return it != doc.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
  };
  auto num = [&](const char* key) -> long long {
    auto it = doc.FindMember(key);
    return it != doc.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : 0;
  };
  a.key = str("key");
  a.job_id = str("job_id");
  a.host = str("host");
  a.user = str("user");
  a.ssh_config_file = str("ssh_config_file");
  a.ssh_port = str("ssh_port");
  a.ssh_identity_file = str("ssh_identity_file");
  a.ssh_options = str("ssh_options");
  a.partition = str("partition");
  a.account = str("account");
  a.time_limit = str("time_limit");
  a.created_at = num("created_at");
  a.last_used_at = num("last_used_at");
  a.idle_limit_seconds = static_cast<int>(num("idle_limit_seconds"));
  if (a.idle_limit_seconds <= 0) a.idle_limit_seconds = kDefaultIdleSeconds;
  a.state_file = path;
  if (a.job_id.empty()) return std::nullopt;
  return a;
}

// An exclusive lock on <dir>/<key>.lock while an allocation is looked up or made.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }

 private:
  int fd_ = -1;
};

// "salloc: Granted job allocation 123" -> "123".
Result<std::string> ParseGranted(std::string output, const std::string& how) {
  std::size_t granted = output.find("Granted job allocation ");
  if (granted == std::string::npos) {
    while (!output.empty() && output.back() == '\n') output.pop_back();
    return Status::ExecutionError("salloc did not grant an allocation (" + how + "): " + output);
  }
  std::size_t start = granted + 23, end = start;
  while (end < output.size() && output[end] >= '0' && output[end] <= '9') ++end;
  return output.substr(start, end - start);
}

struct Acquired {
  HeldAllocation allocation;
  bool reused = false;
  std::vector<std::string> notes;
};

// salloc --no-shell, here or remotely through the scenario: interruptible by `cancel` and
// withdrawn when it pends hopelessly or past spec.max_pending_seconds (then `pending` says
// why). Returns the allocation's job id.
Result<std::string> Allocate(const JobSpec& spec, const std::string& time_limit,
                             const ExecContext& context, SlurmClient* client,
                             internal::SallocPendingStop* pending) {
  const SlurmParams params = spec.slurm_params.value_or(SlurmParams{});
  std::vector<std::string> argv = {
      "salloc",
      "--no-shell",
      "--job-name=" + std::string(kHeldJobName),
      "--nodes=" + std::to_string(std::max(1, params.nodes)),
      "--ntasks-per-node=" + std::to_string(std::max(1, params.ntasks_per_node)),
      "--time=" + time_limit};
  std::string partition = !params.partition.empty() ? params.partition : spec.partition;
  std::string account = !params.account.empty() ? params.account : spec.account;
  if (!partition.empty()) argv.push_back("--partition=" + partition);
  if (!account.empty()) argv.push_back("--account=" + account);
  if (!params.gres.empty()) argv.push_back("--gres=" + params.gres);
  const std::string prefix =
      "[" + (spec.scenario.empty() ? std::string("slurm") : spec.scenario) + "]";
  Result<internal::SallocOutcome> outcome =
      internal::RunSalloc(argv, context, client, spec.max_pending_seconds, prefix);
  if (!outcome.ok()) return outcome.status();
  if (outcome->interrupted) {
    return Status::ExecutionError("cancelled while waiting for the allocation");
  }
  if (outcome->stop.action != SlurmAction::kNone) {
    *pending = outcome->stop;
    return Status::ExecutionError("the allocation request pended with reason " +
                                  outcome->stop.reason + " and was withdrawn");
  }
  return ParseGranted(outcome->output, outcome->exit.ToString());
}

Result<Acquired> Acquire(const JobSpec& spec, const ExecContext& context, SlurmClient* client,
                         const std::string& host, internal::SallocPendingStop* pending) {
  std::string dir = AllocationStateDir();
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return Status::IoError("cannot create the allocation state dir " + dir + ": " +
                           error.message());
  }
  ::chmod(dir.c_str(), 0700);
  Acquired acquired;
  const std::string key = KeyFor(spec, host);
  const std::string path = dir + "/" + key + ".json";
  FileLock lock(dir + "/" + key + ".lock");
  std::string time_limit = Extra(spec, "alloc_time_limit");
  if (time_limit.empty()) time_limit = kDefaultAllocTime;
  int idle_limit = kDefaultIdleSeconds;
  if (std::optional<int> limit = ParseSlurmDuration(time_limit)) {
    idle_limit = std::min(idle_limit, *limit);
  }
  if (Result<std::string> text = ReadFile(path); text.ok()) {
    std::optional<HeldAllocation> held = FromJson(text.value(), path);
    if (held) {
      Result<SlurmClient::JobsSnapshot> snapshot = client->QueryJobs({held->job_id});
      bool running =
          snapshot.ok() && !snapshot->records.empty() && snapshot->records[0].state == "RUNNING";
      if (running && Now() - held->last_used_at > held->idle_limit_seconds) {
        client->Cancel({held->job_id}).IgnoreError();
        acquired.notes.push_back("released allocation " + held->job_id + ": idle for " +
                                 std::to_string(Now() - held->last_used_at) + "s (limit " +
                                 std::to_string(held->idle_limit_seconds) + "s)");
      } else if (running) {
        held->last_used_at = Now();
        WriteFileAtomic(path, ToJson(*held)).IgnoreError();
        acquired.allocation = *held;
        acquired.reused = true;
        return acquired;
      } else if (snapshot.ok()) {
        acquired.notes.push_back(
            "allocation " + held->job_id + " has ended (" +
            (snapshot->records.empty() ? std::string("gone") : snapshot->records[0].state) + ")");
      } else {
        return snapshot.status().WithContext("checking the held allocation " + held->job_id);
      }
    }
    fs::remove(path, error);
  }
  Result<std::string> job_id = Allocate(spec, time_limit, context, client, pending);
  if (!job_id.ok()) return job_id.status();
  HeldAllocation& a = acquired.allocation;
  a.key = key;
  a.host = host;
  a.user = host.empty() ? "" : spec.slurm_user;
  a.ssh_config_file = host.empty() ? "" : Extra(spec, "ssh_config_file");
  a.ssh_port = host.empty() ? "" : Extra(spec, "ssh_port");
  a.ssh_identity_file = host.empty() ? "" : Extra(spec, "ssh_identity_file");
  a.ssh_options = host.empty() ? "" : Extra(spec, "ssh_options");
  a.job_id = job_id.value();
  const SlurmParams params = spec.slurm_params.value_or(SlurmParams{});
  a.partition = !params.partition.empty() ? params.partition : spec.partition;
  a.account = !params.account.empty() ? params.account : spec.account;
  a.time_limit = time_limit;
  a.created_at = a.last_used_at = Now();
  a.idle_limit_seconds = idle_limit;
  a.state_file = path;
  Status written = WriteFileAtomic(path, ToJson(a));
  if (!written.ok()) {
    client->Cancel({a.job_id}).IgnoreError();
    return written;
  }
  return acquired;
}

void Touch(const HeldAllocation& allocation) {
  Result<std::string> text = ReadFile(allocation.state_file);
  if (!text.ok()) return;
  std::optional<HeldAllocation> held = FromJson(text.value(), allocation.state_file);
  if (!held || held->job_id != allocation.job_id) return;
  held->last_used_at = Now();
  WriteFileAtomic(allocation.state_file, ToJson(*held)).IgnoreError();
}

}  // namespace

std::string AllocationStateDir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime && *runtime) return std::string(runtime) + "/trtllm-run/allocations";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/trtllm-run/allocations";
}

std::vector<HeldAllocation> ListHeldAllocations() {
  std::vector<HeldAllocation> list;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(AllocationStateDir(), error)) {
    if (entry.path().extension() != ".json") continue;
    Result<std::string> text = ReadFile(entry.path().string());
    if (!text.ok()) continue;
    if (std::optional<HeldAllocation> held = FromJson(text.value(), entry.path().string())) {
      list.push_back(*held);
    }
  }
  std::sort(list.begin(), list.end(),
            [](const HeldAllocation& a, const HeldAllocation& b) { return a.key < b.key; });
  return list;
}

Status ReleaseHeldAllocation(const HeldAllocation& allocation, Scenario* scenario) {
  SlurmClient client(scenario);
  Status cancelled = client.Cancel({allocation.job_id});
  if (!cancelled.ok()) return cancelled.WithContext("releasing allocation " + allocation.job_id);
  std::error_code error;
  if (!allocation.state_file.empty()) fs::remove(allocation.state_file, error);
  return Status::Ok();
}

namespace internal {

namespace {

SlurmAction ActionFor(StopReason stop) {
  switch (stop) {
    case StopReason::kCancel:
      return SlurmAction::kUserCancel;
    case StopReason::kHang:
      return SlurmAction::kHang;
    case StopReason::kTimeout:
      return SlurmAction::kMonitorTimeout;
    case StopReason::kSilence:
      return SlurmAction::kSilence;
    case StopReason::kNone:
    case StopReason::kLeftovers:
      break;
  }
  return SlurmAction::kNone;
}

// The sizing variables sbatch gives the batch step of a job of the allocation's shape
// (Allocate's --nodes and --ntasks-per-node).
std::vector<EnvVar> HeldJobEnv(const JobSpec& spec) {
  const SlurmParams params = spec.slurm_params.value_or(SlurmParams{});
  const std::string nodes = std::to_string(std::max(1, params.nodes));
  const std::string per_node = std::to_string(std::max(1, params.ntasks_per_node));
  const std::string tasks =
      std::to_string(std::max(1, params.nodes) * std::max(1, params.ntasks_per_node));
  return {{"SLURM_NNODES", nodes},
          {"SLURM_JOB_NUM_NODES", nodes},
          {"SLURM_NTASKS", tasks},
          {"SLURM_NPROCS", tasks},
          {"SLURM_NTASKS_PER_NODE", per_node}};
}

// What the script's log showed, for JudgeSlurmJob.
void AddHeldLogEvidence(const JobSpec& spec, const std::string& log, const std::string& end_token,
                        const LogFollower& follower, SlurmJobEvidence* e,
                        std::uint64_t* log_bytes) {
  JobOutputScan scan;
  scan.end_token = end_token;
  scan.out = &follower.scanner();
  scan.failure_count = spec.failure_patterns.size();
  scan.success_count = spec.success_patterns.size();
  struct stat st;
  scan.out_exists = ::stat(log.c_str(), &st) == 0;
  scan.out_bytes = scan.out_exists ? static_cast<std::uint64_t>(st.st_size) : 0;
  scan.out_tail = follower.Tail();
  Result<std::string> head = ReadFile(log);
  if (head.ok()) {
    std::string text_head = head.value().substr(0, 64 * 1024);
    std::size_t pos = 0;
    while (pos < text_head.size() && scan.out_head.size() < 50) {
      std::size_t nl = text_head.find('\n', pos);
      if (nl == std::string::npos) nl = text_head.size();
      scan.out_head.push_back(text_head.substr(pos, nl - pos));
      pos = nl + 1;
    }
  }
  AddOutputEvidence(scan, e);
  *log_bytes = scan.out_bytes;
}

// The verdict of the script run in `allocation`: its supervision, then JudgeSlurmJob.
RunResult JudgeHeldRun(const JobSpec& spec, const HeldAllocation& allocation,
                       const std::string& log, const std::string& end_token,
                       const LogFollower& follower, const SupervisionOutcome& supervised,
                       bool confirmed, RunResult result) {
  SlurmJobEvidence e;
  e.job_id = allocation.job_id;
  e.workflow_type = spec.workflow_type;
  e.scenario = spec.scenario;
  e.log_file = log;
  e.monitor_timeout_seconds = spec.monitor_timeout_seconds;
  e.silence_timeout_seconds = spec.silence_timeout_seconds;
  e.time_limit = allocation.time_limit;
  e.action = ActionFor(supervised.stop);
  e.cancel_signal = supervised.cancel_signal;
  if (e.action == SlurmAction::kUserCancel) {
    e.action_detail = supervised.cancel_signal ? SignalName(supervised.cancel_signal) : "request";
  } else if (e.action == SlurmAction::kHang) {
    const PatternMatch* hang = follower.scanner().FindMatch(0);
    e.action_detail = hang ? hang->line : std::string();
  } else if (e.action == SlurmAction::kSilence) {
    e.action_detail = supervised.last_output_line;
  }
  e.action_confirmed = confirmed;
  if (!e.action_confirmed) e.action_problem = "processes or steps of the run survived SIGKILL";
  if (supervised.exit) {
    const ProcessExit& exit = *supervised.exit;
    SlurmJobRecord record;  // the script's own ending stands for the job's
    record.job_id = allocation.job_id;
    record.state = exit.exit_code && *exit.exit_code == 0 ? "COMPLETED" : "FAILED";
    record.exit.code = exit.exit_code.value_or(0);
    record.exit.signal = exit.signal.value_or(0);
    e.controller = record;
    e.controller_final = true;
    e.controller_source = "its script's exit status";
  }
  std::uint64_t log_bytes = 0;
  AddHeldLogEvidence(spec, log, end_token, follower, &e, &log_bytes);
  RunResult judged = JudgeSlurmJob(e);
  TakeVerdict(judged, &result);
  result.reason = "in held allocation " + allocation.job_id + ": " + judged.reason;
  result.notes.insert(result.notes.end(), judged.notes.begin(), judged.notes.end());
  for (const auto& [key, value] : judged.details) result.details[key] = value;
  result.log_file = log;
  result.log_tail = judged.log_tail;
  result.log_bytes_read = follower.bytes_read();
  result.log_bytes_written = log_bytes;
  return result;
}

}  // namespace

RunResult RunInHeldAllocation(const JobSpec& spec, const ExecContext& context, Scenario* scenario,
                              const HeldPlace& place) {
  const std::string name = spec.scenario.empty() ? std::string("slurm") : spec.scenario;
  const std::string prefix = "[" + name + "]";
  const bool on_login_node = scenario->IsRemote();  // its files live on another host
  RunResult base = BaseResult(spec);
  auto started = Clock::now();
  Result<std::string> text = ReadFile(spec.script_path);
  if (!text.ok()) {
    return ErrorResult(base, "cannot read the batch script: " + text.status().message(), "");
  }
  SlurmClient client(scenario);
  Say(context, prefix, "held allocation: looking for one to reuse");
  SallocPendingStop pending;
  Result<Acquired> acquired = Acquire(spec, context, &client, place.host, &pending);
  if (!acquired.ok() && pending.action != SlurmAction::kNone) {
    RunResult withdrawn = PendingAllocationResult(base, pending);
    withdrawn.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return withdrawn;
  }
  if (!acquired.ok()) {
    if (context.cancel && context.cancel->cancelled()) {
      base.status = RunStatus::kCancelled;
      base.cancelled_by =
          context.cancel->signal() ? SignalName(context.cancel->signal()) : "request";
      base.user_interrupt = context.cancel->signal() == SIGINT;
      base.reason = "cancelled while waiting for the allocation; nothing ran";
      base.finished_at = NowIso8601();
      return base;
    }
    return ErrorResult(base, "no held allocation: " + acquired.status().message(),
                       "check the partition/account, or run without a held allocation");
  }
  const HeldAllocation& allocation = acquired->allocation;
  base.notes.insert(base.notes.end(), acquired->notes.begin(), acquired->notes.end());
  base.notes.push_back(std::string(acquired->reused ? "reused" : "made") + " held allocation " +
                       allocation.job_id + " (" + allocation.key + ", --time " +
                       allocation.time_limit + "); `trtllm-run release` ends it");
  base.details["allocation_id"] = allocation.job_id;
  base.details["allocation_reused"] = acquired->reused ? "true" : "false";
  Say(context, prefix, base.notes.back());

  BatchOutputPaths paths = ParseBatchOutputPaths(text.value());
  const std::string run_log =
      ExpandSlurmFilename(paths.out, place.run_dir, allocation.job_id, paths.job_name, "");
  const std::string log =
      on_login_node ? spec.work_dir + "/" + fs::path(run_log).filename().string() : run_log;
  ProgressReporter progress(context.progress, IsTerminalStream(context.progress), name);
  std::unique_ptr<HeldRunner> runner =
      MakeHeldRunner(allocation.job_id, &progress, *scenario, place.script, place.run_dir, run_log,
                     log, spec.work_dir, context.terminal);
  runner->set_job_env(HeldJobEnv(spec));
  Status launched = runner->Start(paths.job_name);
  if (!launched.ok()) return ErrorResult(base, launched.ToString(), "");
  RunState state = runner->State(NewRunState(name));
  state.log_file = log;
  state.extra["allocation_id"] = allocation.job_id;
  WriteRunState(spec.work_dir, state).IgnoreError();

  const std::string end_token = EndMarkerTokenOfScript(text.value());
  LogFollower follower(
      log, JobOutputPatterns(spec.failure_patterns, spec.success_patterns, end_token), 60);
  SupervisorOptions supervision;
  supervision.cancel = context.cancel;
  supervision.monitor_timeout_seconds = spec.monitor_timeout_seconds;
  supervision.silence_timeout_seconds = spec.silence_timeout_seconds;
  supervision.kill_grace_seconds = std::max(0, context.kill_grace_seconds);
  supervision.give_up_seconds = 30;
  supervision.poll_interval_seconds = on_login_node ? 1.0 : 0.25;
  supervision.follower = &follower;
  supervision.hang_pattern = 0;
  supervision.progress = &progress;
  supervision.started = started;
  SupervisionOutcome supervised = Supervise(runner.get(), supervision);
  progress.Clear();
  Touch(allocation);

  bool steps_left =
      supervised.stop != StopReason::kNone && !CancelLeftoverSteps(&client, allocation.job_id);
  const std::vector<std::string>& pump_errors = runner->PumpErrors();
  base.errors.insert(base.errors.end(), pump_errors.begin(), pump_errors.end());
  base.errors.insert(base.errors.end(), supervised.errors.begin(), supervised.errors.end());
  base.notes.insert(base.notes.end(), supervised.notes.begin(), supervised.notes.end());
  RunResult result = JudgeHeldRun(spec, allocation, log, end_token, follower, supervised,
                                  runner->group_gone() && !steps_left, base);
  result.finished_at = NowIso8601();
  result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  state.state = "finished";
  WriteRunState(spec.work_dir, state).IgnoreError();
  return result;
}

Status CancelHeldAllocationRun(const JobSpec& spec) {
  Result<RunState> state = ReadRunState(spec.work_dir);
  if (!state.ok()) return state.status();
  auto remote = state->extra.find("remote_pgid");
  if (remote != state->extra.end()) {
    // The script runs detached on the login node: stop its process group there.
    Result<SshOptions> options = SshOptionsForSpec(spec);
    if (!options.ok()) return options.status();
    Result<std::unique_ptr<SshScenario>> ssh = MakeSshScenario(options.value());
    if (!ssh.ok()) return ssh.status();
    const std::string& pgid = remote->second;
    if (pgid.empty() || pgid.size() > 9 ||
        pgid.find_first_not_of("0123456789") != std::string::npos || std::stol(pgid) <= 1) {
      return Status::InvalidInput("run_state.json of " + spec.work_dir + " records remote_pgid '" +
                                      pgid +
                                      "': not a process group id (> 1); nothing was signalled",
                                  "stop the run's script on the login node yourself");
    }
    const std::string group = "-" + pgid;
    Result<CommandOutput> out = ssh.value()->Run(
        {"bash", "-c",
         "kill -TERM -- \"$1\" 2>/dev/null || exit 0; for i in $(seq 100); do "
         "kill -0 -- \"$1\" 2>/dev/null || exit 0; sleep 0.1; done; kill -KILL -- \"$1\"",
         "trtllm-run-cancel", group},
        "");
    ssh.value()->Close().IgnoreError();
    if (!out.ok()) return out.status();
    return Status::Ok();
  }
  if (state->pid == 0 && state->pgid == 0) return Status::Ok();
  if (state->host != HostName()) {
    return Status::ExecutionError("the run was started on " + state->host + "; cancel it there");
  }
  return StopRecordedJob(state.value(), spec.work_dir, 30.0);
}

}  // namespace internal
}  // namespace trtllm_run
