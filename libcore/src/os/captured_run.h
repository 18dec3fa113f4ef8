// The one way libcore runs a command to completion with its output captured: the local
// scenario runs its commands with it, the SSH scenario its ssh clients. Private to libcore.
#ifndef TRTLLM_RUN_OS_CAPTURED_RUN_H_
#define TRTLLM_RUN_OS_CAPTURED_RUN_H_

#include <unistd.h>

#include <string>
#include <vector>

#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run::internal {

// Owns a file descriptor: closes it once, at Close() or destruction.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Seconds between SIGTERM and SIGKILL when a deadline passes.
inline constexpr double kDeadlineGraceSeconds = 2.0;

// Runs `argv` in a new process group (so a deadline reaches what it started) with the
// environment ChildEnvironment(env), in `working_dir` (empty: ours), no descriptors
// inherited but the three standard ones, default signal dispositions and an empty mask;
// feeds `stdin_data` (a child that stops reading gets EPIPE, and this process no SIGPIPE),
// reads stdout and stderr concurrently (merged into stdout_text with `merge_stderr`).
// Waits for the end of the output; once the command ended and no process of its group
// is left, output that a process outside the group still holds open is not waited for.
// At `deadline`: SIGTERM to the group, SIGKILL kDeadlineGraceSeconds later, timed_out.
// kNotFound when argv[0] is not found on the PATH of that environment.
Result<CommandOutput> RunCaptured(const std::vector<std::string>& argv,
                                  const std::vector<EnvVar>& env, const std::string& stdin_data,
                                  const std::string& working_dir, bool merge_stderr,
                                  Deadline deadline);

// The program `name` names: itself when it has a '/', else the first executable
// PATH entry (PATH as `environment`'s NAME=VALUE entries set it). Empty: none.
std::string FindProgram(const std::string& name, const std::vector<std::string>& environment);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_OS_CAPTURED_RUN_H_
