#include "trtllm_run/sdk/process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <utility>

extern char** environ;

namespace trtllm_run {

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The program to execute: argv0 itself when it names a path, else the first match in
// `path_var` (the child's $PATH), like execvp. Empty when not found.
std::string ResolveProgram(const std::string& argv0, const std::string& path_var) {
  if (argv0.find('/') != std::string::npos) return argv0;
  std::size_t start = 0;
  while (start <= path_var.size()) {
    std::size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    std::string dir = path_var.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + argv0;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

std::string LookupEnv(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return "";
}

ProcessExit DecodeWaitStatus(int status) {
  ProcessExit exit;
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  return exit;
}

// What /proc/<pid>/stat tells about a process.
struct ProcStat {
  int ppid = 0;
  int pgrp = 0;
  bool zombie = false;                // or dead
  unsigned long long start_time = 0;  // field 22, clock ticks since boot
};

bool ReadProcStat(int pid, ProcStat* stat) {
  char path[64];
  ::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "pid (comm) state ppid pgrp ... starttime(22) ...": comm may contain spaces and ')',
  // so parse after the last ')'.
  const char* close = ::strrchr(buf, ')');
  if (close == nullptr) return false;
  char state = 0;
  if (::sscanf(close + 1, " %c %d %d", &state, &stat->ppid, &stat->pgrp) != 3) return false;
  stat->zombie = state == 'Z' || state == 'X' || state == 'x';
  const char* p = close + 2;
  for (int field = 3; field < 22 && p != nullptr; ++field) {
    p = ::strchr(p, ' ');
    if (p != nullptr) ++p;
  }
  stat->start_time = p != nullptr ? ::strtoull(p, nullptr, 10) : 0;
  return true;
}

bool ReadProcStat(int pid, int* pgrp, bool* zombie) {
  ProcStat stat;
  if (!ReadProcStat(pid, &stat)) return false;
  *pgrp = stat.pgrp;
  *zombie = stat.zombie;
  return true;
}

// Every process of /proc with its stat, by pid.
std::map<int, ProcStat> AllProcesses() {
  std::map<int, ProcStat> all;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return all;
  while (struct dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = ::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    ProcStat stat;
    if (ReadProcStat(static_cast<int>(pid), &stat)) all[static_cast<int>(pid)] = stat;
  }
  ::closedir(dir);
  return all;
}

// The pids listed in /proc/<pid>/task/*/children: the children of every thread of `pid`.
// False when the kernel has no such file (CONFIG_PROC_CHILDREN off) or `pid` is gone.
bool ChildrenOf(int pid, std::vector<int>* children) {
  char path[64];
  ::snprintf(path, sizeof(path), "/proc/%d/task", pid);
  DIR* tasks = ::opendir(path);
  if (tasks == nullptr) return false;
  bool found = false;
  while (struct dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] < '0' || task->d_name[0] > '9') continue;
    std::string file = std::string(path) + "/" + task->d_name + "/children";
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    found = true;
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    const char* p = text.c_str();
    char* end = nullptr;
    for (long child = ::strtol(p, &end, 10); end != p; child = ::strtol(p, &end, 10)) {
      if (child > 0) children->push_back(static_cast<int>(child));
      p = end;
    }
  }
  ::closedir(tasks);
  return found;
}

// This process's descendants (zombies included) with their stat, by pid, found by walking
// the children lists down from this process: the cost grows with the job's processes, not
// with the host's. Every process of /proc when the kernel lists no children.
std::map<int, ProcStat> Descendants() {
  std::map<int, ProcStat> below;
  std::vector<int> frontier;
  if (!ChildrenOf(static_cast<int>(::getpid()), &frontier)) return AllProcesses();
  while (!frontier.empty()) {
    int pid = frontier.back();
    frontier.pop_back();
    ProcStat stat;
    if (below.count(pid) != 0 || !ReadProcStat(pid, &stat)) continue;
    below[pid] = stat;
    if (!stat.zombie) ChildrenOf(pid, &frontier);
  }
  return below;
}

const char* const kSecretVariables[] = {
    "TRTLLM_RUN_SLURM_PASSWORD", "TRTLLM_RUN_SLURM_PASSWORD_FILE", "TRTLLM_RUN_SSH_ASKPASS_SECRET",
    "PGPASSWORD",  // libpq's password of a PostgreSQL history store (history_postgres.cc)
};

}  // namespace

std::string ProcessExit::ToString() const {
  if (signal) return "signal " + std::to_string(*signal) + " (" + SignalName(*signal) + ")";
  if (exit_code) return "exit code " + std::to_string(*exit_code);
  return "unknown";
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGCHLD:
      return "SIGCHLD";
    case SIGCONT:
      return "SIGCONT";
    case SIGSTOP:
      return "SIGSTOP";
    case SIGTSTP:
      return "SIGTSTP";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::vector<int> ProcessGroupMembers(int pgid) {
  std::vector<int> members;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return members;
  while (struct dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = ::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0) continue;
    int pgrp = 0;
    bool zombie = false;
    if (ReadProcStat(static_cast<int>(pid), &pgrp, &zombie) && pgrp == pgid && !zombie) {
      members.push_back(static_cast<int>(pid));
    }
  }
  ::closedir(dir);
  return members;
}

bool IsTrtllmRunSecret(const std::string& name) {
  for (const char* secret : kSecretVariables) {
    if (name == secret) return true;
  }
  return false;
}

std::vector<std::string> ChildEnvironment(const std::vector<EnvVar>& overrides) {
  auto overridden_later = [&overrides](const std::string& name, std::size_t after) {
    for (std::size_t i = after; i < overrides.size(); ++i) {
      if (overrides[i].name == name) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (IsTrtllmRunSecret(name) || overridden_later(name, 0)) continue;
    env.push_back(std::move(entry));
  }
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    if (!overridden_later(overrides[i].name, i + 1)) {
      env.push_back(overrides[i].name + "=" + overrides[i].value);
    }
  }
  return env;
}

bool ProcessEnvironmentHas(int pid, const std::string& name_value) {
  if (pid <= 0 || name_value.empty()) return false;
  char path[64];
  ::snprintf(path, sizeof(path), "/proc/%d/environ", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // Entries are NUL-terminated; a match is a whole entry.
  std::string environment;
  char buffer[16384];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
    environment.append(buffer, static_cast<std::size_t>(n));
    if (environment.size() > (16u << 20)) break;  // no real environment is this large
  }
  ::close(fd);
  std::string needle = name_value;
  needle.push_back('\0');
  if (environment.compare(0, needle.size(), needle) == 0) return true;
  return environment.find('\0' + needle) != std::string::npos;
}

std::vector<int> ProcessesWithEnvironment(const std::string& name_value) {
  std::vector<int> pids;
  for (const auto& [pid, stat] : AllProcesses()) {
    if (!stat.zombie && ProcessEnvironmentHas(pid, name_value)) pids.push_back(pid);
  }
  return pids;
}

bool BecomeChildSubreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0; }

JobProcessTracker::JobProcessTracker(int leader, int pgid, std::string marker)
    : leader_(leader), pgid_(pgid), marker_(std::move(marker)) {}

std::vector<int> JobProcessTracker::Scan() {
  const int self = static_cast<int>(::getpid());
  std::map<int, ProcStat> all = Descendants();
  // 1 ours, 0 not ours, -1 not decided yet; decided along each parent chain.
  std::map<int, int> ours;
  auto seen_before = [&](int pid, unsigned long long start) {
    for (const auto& [p, s] : seen_) {
      if (p == pid && s == start) return true;
    }
    return false;
  };
  auto tagged = [&](int pid, const ProcStat& stat) {
    return (pgid_ > 1 && stat.pgrp == pgid_) || seen_before(pid, stat.start_time) ||
           (!marker_.empty() && ProcessEnvironmentHas(pid, marker_));
  };
  std::function<int(int, int)> decide = [&](int pid, int depth) -> int {
    if (pid == self) return 0;  // reached this process: not tagged on the way
    auto known = ours.find(pid);
    if (known != ours.end()) return known->second;
    auto it = all.find(pid);
    if (it == all.end() || pid <= 1 || depth > 4096) return ours[pid] = -2;  // not below us
    int parent = it->second.ppid;
    if (parent == self) return ours[pid] = tagged(pid, it->second) ? 1 : 0;
    int above = decide(parent, depth + 1);
    if (above == -2) return ours[pid] = -2;
    return ours[pid] = (above == 1 || tagged(pid, it->second)) ? 1 : 0;
  };
  std::vector<int> live;
  for (const auto& [pid, stat] : all) {
    if (pid == self || pid == leader_ || stat.zombie) continue;
    if (decide(pid, 0) != 1) continue;
    live.push_back(pid);
    if (!seen_before(pid, stat.start_time)) seen_.push_back({pid, stat.start_time});
  }
  return live;
}

std::size_t JobProcessTracker::Signal(int sig) {
  std::size_t signalled = 0;
  for (int pid : Scan()) {
    if (::kill(pid, sig) == 0) ++signalled;
  }
  return signalled;
}

void JobProcessTracker::Reap() {
  const int self = static_cast<int>(::getpid());
  for (const auto& [pid, stat] : Descendants()) {
    if (!stat.zombie || stat.ppid != self || pid == leader_) continue;
    bool job_process = pgid_ > 1 && stat.pgrp == pgid_;
    for (const auto& [p, s] : seen_)
      job_process = job_process || (p == pid && s == stat.start_time);
    if (job_process) ::waitpid(pid, nullptr, WNOHANG);
  }
}

// Nothing: the child is a plain pid, reaped with waitpid (the header keeps the pointer
// for ABI stability).
struct ChildProcess::Impl {};

namespace {

// posix_spawn's attributes and file actions, destroyed on every path.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

// posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK), no copy of this process's page
// tables) rather than fork: fork copied the page tables of the whole ~30 MB process and
// the parent then took a copy-on-write fault on each page it touched before the child's
// exec (~15 ms of CPU per spawn here, most of what `run --custom-cmd true` cost beyond
// plan and the job). glibc's child blocks all signals, resets every handled signal,
// and reports an exec error as posix_spawn's return value (then reaps the child).
Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const ProcessOptions& options) {
  if (options.argv.empty()) {
    return Status::InvalidInput("cannot start a process: the argument list is empty");
  }
  std::vector<std::string> env = ChildEnvironment(options.env);
  std::string program = ResolveProgram(options.argv[0], LookupEnv(env, "PATH"));
  std::string where = options.working_dir.empty() ? "" : " in " + options.working_dir;
  if (program.empty()) {
    return Status::ExecutionError(
        "cannot start '" + options.argv[0] + "'" + where + ": not found in $PATH",
        "install it or give its full path");
  }

  if (!options.working_dir.empty()) {
    struct stat st;
    if (::stat(options.working_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::ExecutionError("cannot start '" + options.argv[0] +
                                    "': the working directory " + options.working_dir +
                                    " does not exist or is not a directory");
    }
  }

  // The merged output pipe. Both ends close-on-exec: the child's copies are made by
  // dup2 onto fds 1 and 2 (which clears the flag on them).
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) == -1) {
    return Status::ExecutionError(std::string("cannot create the output pipe: ") +
                                  ::strerror(errno));
  }
  if (::fcntl(fds[0], F_SETFL, O_NONBLOCK) == -1) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::ExecutionError(std::string("cannot make the output pipe non-blocking: ") +
                                  ::strerror(err));
  }

  // argv is passed as a raw array so that argv[0] stays what the caller gave.
  std::vector<char*> raw_argv;
  for (const std::string& arg : options.argv) raw_argv.push_back(const_cast<char*>(arg.c_str()));
  raw_argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  SpawnSetup setup;
  // Own process group: the terminal's Ctrl-C does not reach the job, and the job with all
  // its descendants can be signalled as one. A job must not inherit the supervisor's
  // ignored signals (SIGPIPE, ...) or mask: every signal back to its default, an empty
  // mask (handlers are reset by execve anyway).
  sigset_t all;
  sigset_t none;
  ::sigfillset(&all);
  ::sigemptyset(&none);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  // stdin at EOF, stdout and stderr the pipe; no descriptor beyond 0-2 reaches the job
  // (close-on-exec or not: closefrom).
  posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&setup.actions, fds[1], 2);
  if (!options.working_dir.empty()) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, options.working_dir.c_str());
  }
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);

  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &setup.actions, &setup.attr,
                                    raw_argv.data(), envp.data());
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return Status::ExecutionError("cannot start '" + program + "'" + where + ": " +
                                  ::strerror(spawned));
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->output_fd_ = fds[0];
  // Close-on-exec by default. Opened before anything can reap the child, so it refers to
  // this child and no later process with a reused pid.
  child->exit_fd_ = static_cast<int>(::syscall(SYS_pidfd_open, child->pid_, 0u));
  return child;
}

ChildProcess::~ChildProcess() {
  CloseOutput();
  if (exit_fd_ >= 0) ::close(exit_fd_);
  if (pid_ > 0 && !group_gone_ && ::kill(-pid_, 0) == 0) ::kill(-pid_, SIGKILL);
  if (pid_ > 0 && !exit_) Wait();
}

Result<ReadState> ChildProcess::ReadOutput(std::string* out, std::size_t max_bytes) {
  if (output_fd_ < 0) return ReadState::kEof;
  std::size_t old_size = out->size();
  out->resize(old_size + max_bytes);
  ssize_t n;
  do {
    n = ::read(output_fd_, &(*out)[old_size], max_bytes);
  } while (n < 0 && errno == EINTR);
  int err = errno;
  out->resize(old_size + (n > 0 ? static_cast<std::size_t>(n) : 0));
  if (n > 0) return ReadState::kData;
  if (n == 0) {
    CloseOutput();
    return ReadState::kEof;
  }
  if (err == EAGAIN || err == EWOULDBLOCK) return ReadState::kWouldBlock;
  return Status::IoError("reading the output of process " + std::to_string(pid_) + ": " +
                         ::strerror(err));
}

void ChildProcess::CloseOutput() {
  if (output_fd_ >= 0) {
    ::close(output_fd_);
    output_fd_ = -1;
  }
}

std::optional<ProcessExit> ChildProcess::TryWait() {
  if (exit_ || pid_ <= 0) return exit_;
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, WNOHANG);
  } while (reaped == -1 && errno == EINTR);
  if (reaped == 0) return std::nullopt;
  if (reaped == -1) {
    // ECHILD: someone else reaped it (a SIGCHLD handler set to SIG_IGN or waitpid(-1)).
    // It is gone; its status is lost.
    exit_ = ProcessExit{std::nullopt, std::nullopt};
    return exit_;
  }
  exit_ = DecodeWaitStatus(status);
  return exit_;
}

ProcessExit ChildProcess::Wait() {
  if (exit_ || pid_ <= 0) return exit_.value_or(ProcessExit{});
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, 0);
  } while (reaped == -1 && errno == EINTR);
  exit_ = reaped == -1 ? ProcessExit{std::nullopt, std::nullopt} : DecodeWaitStatus(status);
  return *exit_;
}

bool ChildProcess::SignalGroup(int sig) {
  if (pid_ <= 0 || group_gone_) return false;
  if (::kill(-pid_, sig) == 0) return true;
  if (errno == ESRCH) group_gone_ = true;
  return false;
}

bool ChildProcess::GroupAlive() {
  if (pid_ <= 0 || group_gone_) return false;
  if (::kill(-pid_, 0) == -1 && errno == ESRCH) {
    group_gone_ = true;
    return false;
  }
  // Our own unreaped leader is a zombie as well; TryWait() reaps it so the scan below
  // and later kill() calls see only the real members.
  TryWait();
  if (ProcessGroupMembers(pid_).empty()) {
    group_gone_ = true;
    return false;
  }
  return true;
}

ProcessExit ChildProcess::Terminate(double grace_seconds) {
  using Clock = std::chrono::steady_clock;
  SignalGroup(SIGTERM);
  // A stopped job cannot act on SIGTERM until continued.
  SignalGroup(SIGCONT);
  auto deadline = Clock::now() + std::chrono::duration<double>(grace_seconds);
  while (GroupAlive() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (GroupAlive()) SignalGroup(SIGKILL);
  ProcessExit exit = Wait();
  // SIGKILL is immediate, but the kernel may take a moment to tear large processes down.
  auto kill_deadline = Clock::now() + std::chrono::seconds(1);
  while (GroupAlive() && Clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit;
}

}  // namespace trtllm_run
