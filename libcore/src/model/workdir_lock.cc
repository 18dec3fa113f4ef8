// WorkDirLock: one run per work dir, an flock on <work_dir>/.lock naming its holder.
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
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

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
  // O_NOFOLLOW: a .lock symlinked elsewhere is never opened (RecordHolder truncates it);
  // O_NONBLOCK: neither is a FIFO put in its place.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  struct stat st;
  if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    ::close(fd);
    return Status::InvalidInput(
        "cannot lock work dir " + work_dir + ": " + path + " is not a regular file",
        "remove it; trtllm-run creates the lock file itself");
  }
  if (fd < 0 && errno == ELOOP) {
    return Status::InvalidInput(
        "cannot lock work dir " + work_dir + ": " + path + " is a symbolic link",
        "remove it; trtllm-run creates the lock file itself and never writes through a link");
  }
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
  // A new lock file is empty: truncating it anyway costs ext4 a journal handle and an
  // orphan-list update (~0.1 ms of a run's few).
  struct stat st;
  const bool empty = ::fstat(fd_, &st) == 0 && st.st_size == 0;
  if (empty || ::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, holder.data(), holder.size(), 0);
    (void)ignored;
  }
}

WorkDirLock::~WorkDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace trtllm_run
