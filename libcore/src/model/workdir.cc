// run_state.json and the inspection of a work dir from another process (workdir.h); the
// creation of run directories (dir_util.h).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/dir_util.h"
#include "model/json_util.h"
#include "model/workdir_files.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

std::string Join(const std::string& dir, const char* name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// Known keys of run_state.json; every other string key lands in RunState::extra.
const char* const kKnownKeys[] = {
    "scenario", "state",    "host",           "supervisor_pid", "supervisor_start_time",
    "pid",      "pgid",     "pid_start_time", "container_name", "container_engine",
    "job_id",   "log_file", "started_at",     "updated_at",
};

bool IsKnownKey(const std::string& key) {
  for (const char* known : kKnownKeys) {
    if (key == known) return true;
  }
  return false;
}

// /proc/<pid>/stat: "pid (comm) state ppid ... starttime(22) ...". comm may hold spaces
// and parentheses, so parsing starts after the last ')'.
bool ReadProcStat(int pid, char* state, std::uint64_t* start_time) {
  Result<std::string> text = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return false;
  std::size_t close = text->rfind(')');
  if (close == std::string::npos || close + 2 >= text->size()) return false;
  const char* p = text->c_str() + close + 2;
  *state = *p;
  // Fields after comm: 3 is state; starttime is field 22, i.e. 19 fields after state.
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return false;
    ++p;
  }
  *start_time = std::strtoull(p, nullptr, 10);
  return true;
}

}  // namespace

std::string RunStatePath(const std::string& work_dir) { return Join(work_dir, "run_state.json"); }

std::string HostName() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::uint64_t ProcessStartTime(int pid) {
  if (pid <= 0) return 0;
  char state = 0;
  std::uint64_t start = 0;
  if (!ReadProcStat(pid, &state, &start)) return 0;
  if (state == 'Z' || state == 'X') return 0;
  return start;
}

bool SameProcessAlive(int pid, std::uint64_t start_time) {
  std::uint64_t now = ProcessStartTime(pid);
  if (now == 0) return false;
  return start_time == 0 || now == start_time;
}

EnvVar WorkDirMarker(const std::string& work_dir) { return {kWorkDirMarkerVariable, work_dir}; }

std::string WorkDirMarkerEntry(const std::string& work_dir) {
  return std::string(kWorkDirMarkerVariable) + "=" + work_dir;
}

bool ProcessHoldsWorkDirLock(int pid, const std::string& work_dir) {
  if (pid <= 1) return false;
  struct stat lock;
  if (::lstat(WorkDirLockPath(work_dir).c_str(), &lock) != 0 || !S_ISREG(lock.st_mode)) {
    return false;
  }
  const std::string proc = "/proc/" + std::to_string(pid);
  DIR* fds = ::opendir((proc + "/fd").c_str());
  if (fds == nullptr) return false;
  bool holds = false;
  while (struct dirent* entry = ::readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    struct stat target;
    if (::stat((proc + "/fd/" + entry->d_name).c_str(), &target) != 0) continue;
    if (target.st_dev != lock.st_dev || target.st_ino != lock.st_ino) continue;
    // fdinfo lists the locks held through this open file: "lock:\t1: FLOCK  ADVISORY ...".
    std::ifstream info(proc + "/fdinfo/" + entry->d_name);
    std::string line;
    while (std::getline(info, line)) {
      if (line.rfind("lock:", 0) == 0 && line.find("FLOCK") != std::string::npos) holds = true;
    }
    if (holds) break;
  }
  ::closedir(fds);
  return holds;
}

namespace {

std::string StartTimeMismatch(const char* key, int pid, std::uint64_t now, std::uint64_t recorded) {
  return "pid " + std::to_string(pid) + " now belongs to a process started at " +
         std::to_string(now) + ", not the recorded " + key + " " + std::to_string(recorded) +
         ": the recorded process is gone";
}

}  // namespace

RecordedProcessCheck CheckRecordedSupervisor(const RunState& state, const std::string& work_dir) {
  const int pid = state.supervisor_pid;
  if (pid == 0) {
    return {RecordedProcess::kUnproven,
            RunStatePath(work_dir) + " records no supervisor_pid: nothing shows who runs it"};
  }
  if (pid <= 1) {
    return {RecordedProcess::kUnproven, RunStatePath(work_dir) + " records supervisor_pid " +
                                            std::to_string(pid) +
                                            ": not a trtllm-run (a supervisor pid is > 1)"};
  }
  std::uint64_t now = ProcessStartTime(pid);
  if (now == 0) {
    return {RecordedProcess::kGone, "the supervisor, pid " + std::to_string(pid) + ", is gone"};
  }
  if (state.supervisor_start_time == 0) {
    return {RecordedProcess::kUnproven,
            RunStatePath(work_dir) + " records supervisor_pid " + std::to_string(pid) +
                " without a supervisor_start_time: process " + std::to_string(pid) +
                " cannot be told from an unrelated process with the same pid"};
  }
  if (now != state.supervisor_start_time) {
    return {RecordedProcess::kGone,
            StartTimeMismatch("supervisor_start_time", pid, now, state.supervisor_start_time)};
  }
  if (!ProcessHoldsWorkDirLock(pid, work_dir)) {
    return {RecordedProcess::kUnproven,
            "process " + std::to_string(pid) +
                " (supervisor_pid, started at the recorded supervisor_start_time) does not hold " +
                WorkDirLockPath(work_dir) + ": it is not the run of this work dir"};
  }
  return {RecordedProcess::kProven, ""};
}

RecordedProcessCheck CheckRecordedJobLeader(const RunState& state, const std::string& work_dir) {
  const std::string where = RunStatePath(work_dir);
  if (state.pid == 0 && state.pgid == 0) return {RecordedProcess::kNone, ""};
  if (state.pgid <= 1) {
    return {RecordedProcess::kUnproven, where + " records pgid " + std::to_string(state.pgid) +
                                            ": process group " + std::to_string(state.pgid) +
                                            " is not a job's (a job's group id is > 1)"};
  }
  if (state.pid <= 1) {
    return {RecordedProcess::kUnproven, where + " records pid " + std::to_string(state.pid) +
                                            ": not a job's process (a job's pid is > 1)"};
  }
  if (state.pid != state.pgid) {
    return {RecordedProcess::kUnproven,
            where + " records pid " + std::to_string(state.pid) + " and pgid " +
                std::to_string(state.pgid) +
                ": a job trtllm-run starts leads its own process group (pgid equals pid)"};
  }
  if (state.pid_start_time == 0) {
    return {RecordedProcess::kUnproven,
            where + " records pid " + std::to_string(state.pid) +
                " without a pid_start_time: process " + std::to_string(state.pid) +
                " cannot be told from an unrelated process with the same pid"};
  }
  std::uint64_t now = ProcessStartTime(state.pid);
  if (now == 0) {
    return {RecordedProcess::kGone,
            "the job's process, pid " + std::to_string(state.pid) + ", is gone"};
  }
  if (now != state.pid_start_time) {
    return {RecordedProcess::kGone,
            StartTimeMismatch("pid_start_time", state.pid, now, state.pid_start_time)};
  }
  if (!ProcessEnvironmentHas(state.pid, WorkDirMarkerEntry(work_dir))) {
    return {RecordedProcess::kUnproven,
            "process " + std::to_string(state.pid) +
                " (pid, started at the recorded pid_start_time) does not carry " +
                WorkDirMarkerEntry(work_dir) +
                " in its environment: it is not the job of this work dir"};
  }
  return {RecordedProcess::kProven, ""};
}

Status StopRecordedJob(const RunState& state, const std::string& work_dir, double grace_seconds) {
  RecordedProcessCheck leader = CheckRecordedJobLeader(state, work_dir);
  if (leader.verdict == RecordedProcess::kUnproven) {
    return Status::InvalidInput(
        "refusing to signal the job recorded in " + work_dir + ": " + leader.why,
        "trtllm-run signals only processes proven to be the run of this work dir; if the "
        "process is yours, stop it yourself");
  }
  // While any member of a group lives its id cannot be taken by a new process: once the
  // leader is proven, the group stays this job's until it is empty.
  const int group = leader.verdict == RecordedProcess::kProven ? state.pgid : 0;
  const std::string marker = WorkDirMarkerEntry(work_dir);
  const int self = static_cast<int>(::getpid());
  auto marked = [&]() {
    std::vector<int> pids;
    for (int pid : ProcessesWithEnvironment(marker)) {
      if (pid != self) pids.push_back(pid);
    }
    return pids;
  };
  auto group_alive = [&]() { return group > 1 && !ProcessGroupMembers(group).empty(); };
  auto send = [&](int sig) {
    if (group_alive()) ::kill(-group, sig);
    for (int pid : marked()) ::kill(pid, sig);
  };
  auto wait_gone = [&](double seconds) {
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    while (true) {
      if (!group_alive() && marked().empty()) return true;
      if (std::chrono::steady_clock::now() >= end) return false;
      ::usleep(50 * 1000);
    }
  };
  if (!group_alive() && marked().empty()) return Status::Ok();
  send(SIGTERM);
  send(SIGCONT);  // a stopped process acts on SIGTERM only once continued
  if (wait_gone(grace_seconds)) return Status::Ok();
  send(SIGKILL);
  if (wait_gone(3.0)) return Status::Ok();
  std::vector<int> left = marked();
  if (group > 1) {
    for (int pid : ProcessGroupMembers(group)) {
      if (std::find(left.begin(), left.end(), pid) == left.end()) left.push_back(pid);
    }
  }
  std::string pids;
  for (int pid : left) pids += (pids.empty() ? "" : " ") + std::to_string(pid);
  return Status::ExecutionError("process(es) of the job of " + work_dir +
                                    " survived SIGKILL (uninterruptible sleep?): pid " + pids,
                                "check them with `ps -o pid,stat,wchan,args -p " + pids + "`");
}

Status CheckWorkDirLocation(const JobSpec& spec, const std::string& dir) {
  std::error_code error;
  if (!spec.work_dir.empty() && std::filesystem::equivalent(spec.work_dir, dir, error)) {
    return Status::Ok();
  }
  return Status::InvalidInput(
      dir + "/job_spec.json: work_dir is '" + spec.work_dir +
          "', not this directory (copied or moved?): the run it records is that directory's, "
          "and trtllm-run acts only on the run of the directory it is given",
      "`trtllm-run status " + dir + "` shows this copy's own files; give '" + spec.work_dir +
          "' to act on that run");
}

RunState NewRunState(const std::string& scenario) {
  RunState state;
  state.scenario = scenario;
  state.host = HostName();
  state.supervisor_pid = static_cast<int>(::getpid());
  state.supervisor_start_time = ProcessStartTime(state.supervisor_pid);
  state.started_at = NowIso8601();
  state.updated_at = state.started_at;
  return state;
}

Status WriteRunState(const std::string& work_dir, RunState state) {
  state.updated_at = NowIso8601();
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  auto str = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    w.Key(key);
    json::WriteString(&w, value);
  };
  auto num = [&](const char* key, std::uint64_t value) {
    if (value == 0) return;
    w.Key(key);
    w.Uint64(value);
  };
  str("scenario", state.scenario);
  str("state", state.state);
  str("host", state.host);
  num("supervisor_pid", static_cast<std::uint64_t>(state.supervisor_pid));
  num("supervisor_start_time", state.supervisor_start_time);
  num("pid", static_cast<std::uint64_t>(state.pid));
  num("pgid", static_cast<std::uint64_t>(state.pgid));
  num("pid_start_time", state.pid_start_time);
  str("container_name", state.container_name);
  str("container_engine", state.container_engine);
  str("job_id", state.job_id);
  str("log_file", state.log_file);
  str("started_at", state.started_at);
  str("updated_at", state.updated_at);
  for (const auto& [key, value] : state.extra) {
    if (IsKnownKey(key)) continue;
    json::WriteKey(&w, key);
    json::WriteString(&w, value);
  }
  w.EndObject();
  return WriteFileAtomic(RunStatePath(work_dir),
                         std::string(buffer.GetString(), buffer.GetSize()) + "\n");
}

Result<RunState> ReadRunState(const std::string& work_dir) {
  std::string path = RunStatePath(work_dir);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return Status::NotFound(path + " does not exist");
  Result<std::string> text = ReadWorkDirFile(path);
  if (!text.ok()) return text.status();
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text.value(), path, &doc));
  json::ObjectReader r(doc, path);
  RunState state;
  state.state.clear();
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("scenario"));
  std::uint64_t supervisor_pid = 0, pid = 0, pgid = 0;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("scenario", &state.scenario));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("state", &state.state));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("host", &state.host));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("supervisor_pid", &supervisor_pid));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("supervisor_start_time", &state.supervisor_start_time));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("pid", &pid));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("pgid", &pgid));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("pid_start_time", &state.pid_start_time));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_name", &state.container_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("container_engine", &state.container_engine));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("job_id", &state.job_id));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("log_file", &state.log_file));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("started_at", &state.started_at));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("updated_at", &state.updated_at));
  if (supervisor_pid > INT_MAX || pid > INT_MAX || pgid > INT_MAX) {
    return Status::InvalidInput(path + ": a pid is out of range");
  }
  state.supervisor_pid = static_cast<int>(supervisor_pid);
  state.pid = static_cast<int>(pid);
  state.pgid = static_cast<int>(pgid);
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    std::string key(it->name.GetString(), it->name.GetStringLength());
    if (IsKnownKey(key) || !it->value.IsString()) continue;
    state.extra[key] = std::string(it->value.GetString(), it->value.GetStringLength());
  }
  return state;
}

const char* WorkDirPhaseName(WorkDirPhase phase) {
  switch (phase) {
    case WorkDirPhase::kNotStarted:
      return "not started";
    case WorkDirPhase::kRunning:
      return "running";
    case WorkDirPhase::kAbandoned:
      return "abandoned";
    case WorkDirPhase::kFinished:
      return "finished";
  }
  return "unknown";
}

Result<WorkDirInfo> InspectWorkDir(const std::string& work_dir) {
  WorkDirInfo info;
  info.work_dir = work_dir;
  Result<JobSpec> spec = ReadJobSpec(work_dir);
  if (!spec.ok()) return spec.status();
  info.spec = std::move(spec.value());
  Status located = CheckWorkDirLocation(info.spec, work_dir);
  if (!located.ok()) {
    info.location_problem = located.message();
    info.problems.push_back(located.message());
  }
  std::string log_file = info.spec.log_file;

  struct stat st;
  Result<RunState> state = ReadRunState(work_dir);
  if (state.ok()) {
    info.state = std::move(state.value());
    if (!info.state->log_file.empty()) log_file = info.state->log_file;
    info.same_host = info.state->host.empty() || info.state->host == HostName();
    // A copy's recorded processes are the original's: none of them is this directory's.
    if (info.same_host && info.location_problem.empty()) {
      RecordedProcessCheck supervisor = CheckRecordedSupervisor(*info.state, work_dir);
      info.supervisor_alive = supervisor.verdict == RecordedProcess::kProven;
      if (supervisor.verdict == RecordedProcess::kUnproven) {
        info.supervisor_unproven = supervisor.why;
      }
      info.job_process_alive =
          CheckRecordedJobLeader(*info.state, work_dir).verdict == RecordedProcess::kProven;
    }
  } else if (state.status().code() != StatusCode::kNotFound) {
    info.problems.push_back(state.status().ToString());
  }

  // result.json is read after the supervisor was checked: a supervisor writes it before it
  // releases the lock and exits, so one seen unproven (lock released) or gone has
  // written its verdict by now. Read first, a run ending in between looked abandoned.
  std::string result_path = Join(work_dir, "result.json");
  if (::lstat(result_path.c_str(), &st) == 0) {
    Result<std::string> text = ReadWorkDirFile(result_path);
    Result<RunResult> result =
        text.ok() ? ResultFromJson(text.value(), result_path) : Result<RunResult>(text.status());
    if (result.ok()) {
      info.result = std::move(result.value());
    } else {
      info.problems.push_back(result.status().ToString());
    }
  }

  if (!info.result && !info.supervisor_unproven.empty()) {
    info.problems.push_back("the recorded supervisor is not proven to be this run's: " +
                            info.supervisor_unproven);
  }

  // The log: a regular file inside this directory, or nothing to read.
  Result<std::string> inside = PathInsideWorkDir(work_dir, log_file, info.spec.work_dir);
  if (inside.ok() && ::lstat(inside->c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    inside = Status::InvalidInput("'" + *inside + "' is not a regular file" +
                                  (S_ISLNK(st.st_mode) ? " (a symbolic link)" : ""));
  }
  if (inside.ok()) {
    info.log_file = inside.value();
  } else {
    info.log_refused = "log file '" + log_file + "' not read: " + inside.status().message();
  }

  if (info.result) {
    info.phase = WorkDirPhase::kFinished;
  } else if (!info.state) {
    info.phase = WorkDirPhase::kNotStarted;
  } else if (!info.same_host || info.supervisor_alive) {
    info.phase = WorkDirPhase::kRunning;
  } else {
    info.phase = WorkDirPhase::kAbandoned;
  }
  return info;
}

std::string WorkDirLockPath(const std::string& work_dir) { return Join(work_dir, ".lock"); }

std::string LocalTimestamp() {
  std::time_t now = std::time(nullptr);
  struct tm local {};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d_%H%M%S", &local);
  return buffer;
}

Result<std::string> CreateUniqueDir(const std::string& planned, const std::string& what) {
  std::error_code error;
  std::filesystem::path parent = std::filesystem::path(planned).parent_path();
  std::filesystem::create_directories(parent, error);
  if (error) return Status::IoError("cannot create '" + parent.string() + "': " + error.message());
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string candidate = attempt == 1 ? planned : planned + "_" + std::to_string(attempt);
    if (::mkdir(candidate.c_str(), 0755) == 0) return candidate;
    if (errno != EEXIST) {
      return Status::IoError("cannot create " + what + " '" + candidate +
                             "': " + std::strerror(errno));
    }
  }
  return Status::IoError("cannot find a free " + what + " name next to '" + planned + "'");
}

}  // namespace trtllm_run
