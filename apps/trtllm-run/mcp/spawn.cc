#include "spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/workdir_files.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run::mcp {
namespace {

// Async-signal-safe pieces of the child (between fork and exec nothing else may run:
// the server has other threads).
void WriteAll(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
}

[[noreturn]] void ExecGrandchild(char* const* argv, char* const* envp, int out_fd, int err_fd,
                                 int report) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  int in_fd = ::open("/dev/null", O_RDONLY);
  if (in_fd < 0 || ::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0) {
    int error = errno;
    WriteAll(report, &error, sizeof error);
    ::_exit(127);
  }
  // Everything else closes on exec, the report pipe too (its EOF means: executed).
  constexpr unsigned kCloseRangeCloexec = 1U << 2;  // CLOSE_RANGE_CLOEXEC, Linux 5.11
  if (::syscall(SYS_close_range, 3U, ~0U, kCloseRangeCloexec) != 0) {
    for (int fd = 3; fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  ::execve(argv[0], argv, envp);
  int error = errno;
  WriteAll(report, &error, sizeof error);
  ::_exit(127);
}

// `path` opened for the child's output: /dev/null as it is, any other file appended to
// beneath its directory, never through a symlink, never a FIFO (OpenForAppend).
Result<int> OpenOutput(const std::string& path) {
  if (path == "/dev/null") {
    int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return Status::IoError(std::string("cannot open /dev/null: ") + std::strerror(errno));
    return fd;
  }
  return OpenForAppend(path);
}

bool ReadAll(int fd, void* data, std::size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Result<DetachedProcess> SpawnDetached(const std::vector<std::string>& argv,
                                      const std::string& stdout_path,
                                      const std::string& stderr_path) {
  if (argv.empty()) return Status::InvalidInput("nothing to start: empty argv");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env = ChildEnvironment({});  // trtllm-run's secrets stay here
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  Result<int> out_fd = OpenOutput(stdout_path);
  if (!out_fd.ok()) return out_fd.status();
  Result<int> err_fd = OpenOutput(stderr_path);
  if (!err_fd.ok()) {
    ::close(out_fd.value());
    return err_fd.status();
  }
  struct CloseOutputs {  // the parent's copies; the grandchild has its own after fork
    int out, err;
    ~CloseOutputs() {
      ::close(out);
      ::close(err);
    }
  } close_outputs{out_fd.value(), err_fd.value()};
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return Status::ExecutionError(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t child = ::fork();
  if (child < 0) {
    int error = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Status::ExecutionError(std::string("fork: ") + std::strerror(error));
  }
  if (child == 0) {
    ::close(report[0]);
    ::setsid();
    pid_t grandchild = ::fork();
    if (grandchild == 0)
      ExecGrandchild(args.data(), envp.data(), out_fd.value(), err_fd.value(), report[1]);
    WriteAll(report[1], &grandchild, sizeof grandchild);
    ::_exit(grandchild < 0 ? 1 : 0);
  }
  ::close(report[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  pid_t pid = -1;
  bool have_pid = ReadAll(report[0], &pid, sizeof pid);
  int exec_error = 0;
  bool failed = ReadAll(report[0], &exec_error, sizeof exec_error);
  ::close(report[0]);
  if (!have_pid || pid <= 0) {
    return Status::ExecutionError("cannot start " + argv[0] + ": fork failed");
  }
  if (failed) {
    return Status::ExecutionError("cannot start " + argv[0] + ": " + std::strerror(exec_error),
                                  "the trtllm-run binary the server runs from must be executable");
  }
  DetachedProcess process;
  process.pid = pid;
  process.start_time = ProcessStartTime(pid);
  return process;
}

}  // namespace trtllm_run::mcp
