// run_state.json and the inspection of a work dir from another process (workdir.h); the
// creation of run directories (dir_util.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "dir_util.h"
#include "json_util.h"
#include "trtllm_run/process.h"
#include "trtllm_run/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

std::string Join(const std::string& dir, const char* name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
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

bool StopRecordedProcessGroup(int pgid, std::uint64_t leader_start_time, double grace_seconds) {
  if (pgid <= 0) return true;
  // While any member of a group lives, its id cannot be taken by a new process; so a
  // live group whose leader is gone is still ours, and a live leader must be the same
  // process (start time) for the group to be ours.
  std::uint64_t leader_now = ProcessStartTime(pgid);
  if (leader_now != 0 && leader_start_time != 0 && leader_now != leader_start_time) return true;
  if (ProcessGroupMembers(pgid).empty()) return true;
  ::kill(-pgid, SIGTERM);
  ::kill(-pgid, SIGCONT);
  using Clock = std::chrono::steady_clock;
  auto wait_gone = [&](double seconds) {
    Clock::time_point end =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
    while (true) {
      if (ProcessGroupMembers(pgid).empty()) return true;
      if (Clock::now() >= end) return false;
      ::usleep(50 * 1000);
    }
  };
  if (wait_gone(grace_seconds)) return true;
  ::kill(-pgid, SIGKILL);
  return wait_gone(3.0);
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
  if (!FileExists(path)) return Status::NotFound(path + " does not exist");
  Result<std::string> text = ReadFileLimited(path, kMaxWorkDirFileBytes, "run state");
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
  info.log_file = info.spec.log_file;

  std::string result_path = Join(work_dir, "result.json");
  if (FileExists(result_path)) {
    Result<std::string> text = ReadFileLimited(result_path, kMaxWorkDirFileBytes, "result");
    Result<RunResult> result =
        text.ok() ? ResultFromJson(text.value(), result_path) : Result<RunResult>(text.status());
    if (result.ok()) {
      info.result = std::move(result.value());
    } else {
      info.problems.push_back(result.status().ToString());
    }
  }

  Result<RunState> state = ReadRunState(work_dir);
  if (state.ok()) {
    info.state = std::move(state.value());
    if (!info.state->log_file.empty()) info.log_file = info.state->log_file;
    info.same_host = info.state->host.empty() || info.state->host == HostName();
    if (info.same_host) {
      info.supervisor_alive =
          SameProcessAlive(info.state->supervisor_pid, info.state->supervisor_start_time);
      info.job_process_alive = SameProcessAlive(info.state->pid, info.state->pid_start_time);
    }
  } else if (state.status().code() != StatusCode::kNotFound) {
    info.problems.push_back(state.status().ToString());
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

namespace {

// "pid 123 on host h" from the lock file ("pid=123 host=h started=..."), else from
// run_state.json; "" when neither tells.
std::string LockHolder(int fd, const std::string& work_dir) {
  char buffer[512] = {};
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  auto field = [&](const std::string& key) {
    std::size_t at = text.find(key + "=");
    if (at == std::string::npos) return std::string();
    at += key.size() + 1;
    return text.substr(at, text.find_first_of(" \n", at) - at);
  };
  std::string pid = field("pid"), host = field("host"), started = field("started");
  if (pid.empty()) {
    Result<RunState> state = ReadRunState(work_dir);
    if (state.ok() && state->supervisor_pid > 0) {
      pid = std::to_string(state->supervisor_pid);
      host = state->host;
      started = state->started_at;
    }
  }
  if (pid.empty()) return "";
  std::string holder = "pid " + pid;
  if (!host.empty()) holder += " on host " + host;
  if (!started.empty()) holder += ", started " + started;
  return holder;
}

}  // namespace

Result<std::unique_ptr<WorkDirLock>> WorkDirLock::Acquire(const std::string& work_dir,
                                                          bool record_holder) {
  std::string path = WorkDirLockPath(work_dir);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    return Status::IoError("cannot lock work dir " + work_dir + ": opening " + path +
                           " failed: " + std::strerror(err));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder = err == EWOULDBLOCK ? LockHolder(fd, work_dir) : "";
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::IoError("cannot lock work dir " + work_dir + ": flock on " + path +
                             " failed: " + std::strerror(err));
    }
    return Status::InvalidInput(
        "work dir " + work_dir + " is in use: another trtllm-run (" +
            (holder.empty() ? std::string("holder unknown") : holder) + ") holds " + path,
        "one run per work dir; `trtllm-run status|attach " + work_dir +
            "` follows that run, `trtllm-run cancel " + work_dir + "` stops it");
  }
  std::unique_ptr<WorkDirLock> lock(new WorkDirLock(fd));
  if (record_holder) lock->RecordHolder();
  return lock;
}

void WorkDirLock::RecordHolder() {
  std::string holder = "pid=" + std::to_string(::getpid()) + " host=" + HostName() +
                       " started=" + NowIso8601() + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, holder.data(), holder.size(), 0);
    (void)ignored;
  }
}

WorkDirLock::~WorkDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

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
