// RunCaptured (captured_run.h): posix_spawn and one poll() loop over stdin, stdout and
// stderr, with the deadline as the loop's timeout.
#include "os/captured_run.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "trtllm_run/sdk/process.h"

namespace trtllm_run::internal {
namespace {

using Clock = std::chrono::steady_clock;

bool IsExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

int MillisUntil(Clock::time_point when) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 200));
}

void Decode(int status, CommandOutput* output) {
  if (WIFSIGNALED(status)) {
    output->signal = WTERMSIG(status);
    output->exit_code = -1;
  } else {
    output->exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

std::string FindProgram(const std::string& name, const std::vector<std::string>& environment) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return name;
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const std::string& entry : environment) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

Result<CommandOutput> RunCaptured(const std::vector<std::string>& argv,
                                  const std::vector<EnvVar>& env, const std::string& stdin_data,
                                  const std::string& working_dir, bool merge_stderr,
                                  Deadline deadline) {
  if (argv.empty()) return Status::Internal("RunCaptured called with an empty argv");
  CommandOutput output;
  if (deadline != kNoDeadline && Clock::now() >= deadline) {
    output.timed_out = true;
    return output;
  }
  // trtllm-run's secrets stay here; what the caller passes (the askpass secret) goes on.
  std::vector<std::string> environment = ChildEnvironment(env);
  const std::string program = FindProgram(argv[0], environment);
  if (program.empty()) {
    return Status::NotFound("command not found: " + argv[0],
                            "install it or add its directory to PATH");
  }

  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  std::vector<char*> args, envp;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  for (const std::string& entry : environment) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.get(), 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, merge_stderr ? out_write.get() : err_write.get(), 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  int error = ::posix_spawn(&pid, program.c_str(), &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    return Status::ExecutionError("cannot start '" + argv[0] + "'" +
                                  (working_dir.empty() ? "" : " in '" + working_dir + "'") + ": " +
                                  std::strerror(error));
  }
  in_read.Close();
  out_write.Close();
  err_write.Close();
  ::fcntl(in_write.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(out_read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_read.get(), F_SETFL, O_NONBLOCK);
  if (merge_stderr) err_read.Close();

  // Writing to a child that stopped reading raises SIGPIPE: keep it off this thread and
  // discard it afterwards (the child was started with an empty mask).
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);

  std::size_t written = 0;
  if (stdin_data.empty()) in_write.Close();
  std::optional<int> status;  // the leader's, once reaped
  std::optional<Clock::time_point> terminated_at, killed_at;
  char buffer[65536];
  auto drain = [&](Fd* fd, std::string* text) {
    while (fd->get() >= 0) {
      ssize_t n = ::read(fd->get(), buffer, sizeof buffer);
      if (n > 0) {
        text->append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || errno != EAGAIN) fd->Close();
      return;
    }
  };
  while (out_read.get() >= 0 || err_read.get() >= 0 || !status) {
    struct pollfd fds[3];
    int count = 0;
    int in_index = -1;
    if (in_write.get() >= 0) {
      in_index = count;
      fds[count++] = {in_write.get(), POLLOUT, 0};
    }
    if (out_read.get() >= 0) fds[count++] = {out_read.get(), POLLIN, 0};
    if (err_read.get() >= 0) fds[count++] = {err_read.get(), POLLIN, 0};
    // At most 200 ms: the leader's end, the deadline and the grace period are looked at
    // between two waits.
    int wait_ms = 200;
    if (killed_at) {
      wait_ms = MillisUntil(*killed_at + std::chrono::seconds(1));
    } else if (terminated_at) {
      wait_ms = MillisUntil(*terminated_at + std::chrono::milliseconds(
                                                 static_cast<int>(kDeadlineGraceSeconds * 1000)));
    } else if (deadline != kNoDeadline) {
      wait_ms = MillisUntil(deadline);
    }
    if (count == 0 && !terminated_at && deadline == kNoDeadline) {
      // The output ended and nothing bounds the wait: the leader's end, at once.
      int raw = 0;
      while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
      }
      status = raw;
      break;
    }
    // The output ended: the leader's end is looked for often, not every 200 ms.
    if (count == 0) wait_ms = std::min(wait_ms, 5);
    if (::poll(fds, count, wait_ms) < 0 && errno != EINTR) break;
    if (in_index >= 0 && fds[in_index].revents != 0) {
      ssize_t n = ::write(in_write.get(), stdin_data.data() + written, stdin_data.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size()) {
        in_write.Close();
      }
    }
    drain(&out_read, &output.stdout_text);
    drain(&err_read, &output.stderr_text);

    if (!status) {
      int raw = 0;
      if (::waitpid(pid, &raw, WNOHANG) == pid) status = raw;
    }
    if (status && ProcessGroupMembers(pid).empty()) {
      // Everything of the group ended, but what it wrote after the drain above and before
      // it exited is still in the pipes: read that once more (bounded: a writer outside
      // the group, a daemon it started, is not waited for).
      for (int reads = 0; reads < 16 && (out_read.get() >= 0 || err_read.get() >= 0); ++reads) {
        const std::size_t before = output.stdout_text.size() + output.stderr_text.size();
        drain(&out_read, &output.stdout_text);
        drain(&err_read, &output.stderr_text);
        if (output.stdout_text.size() + output.stderr_text.size() == before) break;
      }
      break;
    }
    const Clock::time_point now = Clock::now();
    if (killed_at) {
      if (now >= *killed_at + std::chrono::seconds(1)) break;  // an unkillable writer
    } else if (terminated_at) {
      if (now >= *terminated_at +
                     std::chrono::milliseconds(static_cast<int>(kDeadlineGraceSeconds * 1000))) {
        ::kill(-pid, SIGKILL);
        killed_at = now;
      }
    } else if (deadline != kNoDeadline && now >= deadline) {
      output.timed_out = true;
      ::kill(-pid, SIGTERM);
      terminated_at = now;
    }
  }
  in_write.Close();
  const struct timespec no_wait = {0, 0};
  while (sigtimedwait(&pipe_signal, nullptr, &no_wait) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (!status) {  // an unkillable writer, or poll() failed
    int raw = 0;
    while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
    }
    status = raw;
  }
  Decode(*status, &output);
  return output;
}

}  // namespace trtllm_run::internal
