// WorkDirLock: one run per work dir, held by real processes (fork, exec, SIGKILL).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/workdir_lock_test_XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A child process that takes the lock, reports on a pipe, and waits to be killed.
class LockHolder {
 public:
  explicit LockHolder(const std::string& work_dir) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(fds[0]);
      Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(work_dir);
      char answer = lock.ok() ? 'y' : 'n';
      if (::write(fds[1], &answer, 1) != 1) ::_exit(3);
      while (true) ::pause();
    }
    ::close(fds[1]);
    char answer = 0;
    REQUIRE(::read(fds[0], &answer, 1) == 1);
    ::close(fds[0]);
    REQUIRE(answer == 'y');
  }
  ~LockHolder() { Kill(); }
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  int pid() const { return pid_; }

 private:
  int pid_ = 0;
};

TEST_CASE("WorkDirLock: one holder at a time, released on destruction", "[workdir][lock]") {
  ScratchDir dir;
  Result<std::unique_ptr<WorkDirLock>> first = WorkDirLock::Acquire(dir.path());
  REQUIRE(first.ok());
  CHECK(fs::exists(WorkDirLockPath(dir.path())));
  CHECK(ReadFile(WorkDirLockPath(dir.path())).value().find("pid=" + std::to_string(::getpid())) !=
        std::string::npos);

  // A second Acquire is refused even in the same process (a separate open file).
  Result<std::unique_ptr<WorkDirLock>> second = WorkDirLock::Acquire(dir.path());
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kInvalidInput);
  CHECK(second.status().message().find(dir.path() + " is in use") != std::string::npos);
  CHECK(second.status().message().find("pid " + std::to_string(::getpid())) != std::string::npos);
  CHECK(second.status().hint().find("trtllm-run cancel " + dir.path()) != std::string::npos);

  first.value().reset();
  CHECK(WorkDirLock::Acquire(dir.path()).ok());
}

TEST_CASE("WorkDirLock: another process's lock names it, SIGKILL frees the lock",
          "[workdir][lock]") {
  ScratchDir dir;
  LockHolder holder(dir.path());
  std::string before = ReadFile(WorkDirLockPath(dir.path())).value();
  Result<std::unique_ptr<WorkDirLock>> refused = WorkDirLock::Acquire(dir.path());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("pid " + std::to_string(holder.pid()) + " on host " +
                                        HostName()) != std::string::npos);
  // The refusal changed nothing: the holder's record stays, no other file appeared.
  CHECK(ReadFile(WorkDirLockPath(dir.path())).value() == before);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);

  holder.Kill();  // no stale lock: the kernel drops it with the process
  Result<std::unique_ptr<WorkDirLock>> after = WorkDirLock::Acquire(dir.path());
  CHECK(after.ok());
}

TEST_CASE("WorkDirLock: the job's processes do not inherit the lock", "[workdir][lock]") {
  ScratchDir dir;
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(dir.path());
  REQUIRE(lock.ok());
  // A job started while the lock is held, outliving its supervisor's lock.
  pid_t job = ::fork();
  REQUIRE(job >= 0);
  if (job == 0) {
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::usleep(100 * 1000);
  lock.value().reset();
  Result<std::unique_ptr<WorkDirLock>> again = WorkDirLock::Acquire(dir.path());
  CHECK(again.ok());
  ::kill(job, SIGKILL);
  ::waitpid(job, nullptr, 0);
}

TEST_CASE("WorkDirLock: a missing work dir is an I/O error naming it", "[workdir][lock]") {
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire("/nonexistent/trtllm_wd");
  REQUIRE_FALSE(lock.ok());
  CHECK(lock.status().code() == StatusCode::kIoError);
  CHECK(lock.status().message().find("/nonexistent/trtllm_wd/.lock") != std::string::npos);
}

}  // namespace
}  // namespace trtllm_run
