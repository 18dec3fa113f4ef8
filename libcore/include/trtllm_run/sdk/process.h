// ChildProcess: one command started in its own process group, its stdout and stderr
// merged into one non-blocking pipe, supervised without blocking. Executors (built-in and
// third-party) use it to run jobs so that ending a job ends everything it started.
#ifndef TRTLLM_RUN_SDK_PROCESS_H_
#define TRTLLM_RUN_SDK_PROCESS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct ProcessOptions {
  // argv[0] is a path, or a name looked up in $PATH when it has no '/'. Each element
  // reaches the child as one argument, byte for byte; nothing is re-quoted or split.
  std::vector<std::string> argv;
  std::string working_dir;  // empty: the caller's current directory
  std::vector<EnvVar> env;  // set on top of the inherited environment (override)
};

// How a process ended: exactly one of exit_code / signal is set.
struct TRTLLM_RUN_API ProcessExit {
  std::optional<int> exit_code;
  std::optional<int> signal;
  // "exit code 3", "signal 15 (SIGTERM)".
  std::string ToString() const;
};

// The result of one ReadOutput() call.
enum class ReadState {
  kData,        // bytes were appended
  kWouldBlock,  // nothing available now; poll() output_fd()
  kEof,         // every writer closed the pipe; output_fd() is closed and now -1
};

// A started child. The child runs with: a new process group whose id is its pid
// (setpgid before exec, so Ctrl-C at the terminal does not reach it and SignalGroup()
// reaches its descendants); stdin from /dev/null; stdout and stderr both on the write
// end of one pipe; every signal disposition reset to default and an empty signal mask;
// no other inherited file descriptors.
//
// Not thread-safe: use one instance from one thread at a time.
class TRTLLM_RUN_API ChildProcess {
 public:
  // Starts the command. kInvalidInput for an empty argv; kExecutionError (naming the
  // program, the working dir and the OS error) when the program cannot be found or
  // executed or the working dir cannot be entered. Nothing is left running on error.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const ProcessOptions& options);

  // Leaves nothing running: SIGKILLs every remaining member of the process group and
  // reaps the child if it was not reaped yet. Closes the output pipe.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  int pgid() const { return pid_; }

  // The read end of the merged output pipe (O_NONBLOCK, close-on-exec), for poll();
  // -1 after EOF or CloseOutput(). Owned by this object: never close it yourself.
  int output_fd() const { return output_fd_; }

  // Readable (POLLIN) once the child (the group leader) ended, reaped or not: a pidfd,
  // so that a supervisor sees the end at once instead of at its next poll interval. -1
  // where the kernel has none (Linux < 5.3, seccomp): poll TryWait() then. Owned by this
  // object; it stays readable after the end, so stop polling it once TryWait() answered.
  int exit_fd() const { return exit_fd_; }

  // Appends at most `max_bytes` available output to `out` without blocking. EOF comes
  // only after the child and every descendant that inherited the pipe closed it.
  // Read errors other than EAGAIN/EINTR are returned as kIoError.
  Result<ReadState> ReadOutput(std::string* out, std::size_t max_bytes = 64 * 1024);

  // Closes the read end; writers then get SIGPIPE/EPIPE. Idempotent.
  void CloseOutput();

  // Non-blocking: how the child (the group leader) ended, once it has; nullopt while
  // it runs. Reaps it on the first call that sees it ended; the result is kept.
  std::optional<ProcessExit> TryWait();

  // Blocks until the child (the group leader) ends. Does not wait for its descendants.
  ProcessExit Wait();

  // Sends `sig` to every process of the group (kill(-pgid, sig)). Returns false when the
  // group has no process left (or after GroupAlive() once reported it gone).
  bool SignalGroup(int sig);

  // True while a process of the group, other than a zombie, exists. kill(-pgid, 0)
  // counts zombies, which pile up where the system's init does not reap orphans, so a
  // positive answer is confirmed by a /proc scan. Once false, it stays false and the
  // group is never signalled again (its id may be reused).
  bool GroupAlive();

  // SIGTERM to the group, then SIGKILL once `grace_seconds` passed while any member is
  // alive; reaps the leader. Blocks up to grace_seconds plus about one second. Output
  // arriving meanwhile stays in the pipe (read it from another thread, or accept that
  // a writer blocked on a full pipe is killed after the grace period).
  ProcessExit Terminate(double grace_seconds);

 private:
  ChildProcess() = default;
  struct Impl;  // the Boost.Process handle; kept out of this public header
  std::unique_ptr<Impl> impl_;
  int pid_ = -1;
  int output_fd_ = -1;
  int exit_fd_ = -1;
  std::optional<ProcessExit> exit_;
  bool group_gone_ = false;
};

// Pids of live (not zombie) processes whose process group is `pgid` (Linux /proc).
TRTLLM_RUN_API std::vector<int> ProcessGroupMembers(int pgid);

// True for the environment variables that hold trtllm-run's own secrets: the SSH
// password ($TRTLLM_RUN_SLURM_PASSWORD), the file it is read from
// ($TRTLLM_RUN_SLURM_PASSWORD_FILE), the askpass hand-over
// ($TRTLLM_RUN_SSH_ASKPASS_SECRET) and libpq's password of a PostgreSQL history store
// ($PGPASSWORD: trtllm-run's own connection reads it). No child inherits them: ChildProcess, the
// local scenario's commands (sbatch, srun, docker, ...) and ssh all start from ChildEnvironment().
TRTLLM_RUN_API bool IsTrtllmRunSecret(const std::string& name);

// This process's environment without trtllm-run's secrets, with `overrides` applied on
// top (a name given twice: the later value wins, as with repeated `export`), as
// NAME=VALUE strings. An override is passed as given, secret or not.
TRTLLM_RUN_API std::vector<std::string> ChildEnvironment(const std::vector<EnvVar>& overrides);

// True when the environment process `pid` started with (/proc/PID/environ) holds the
// entry `name_value` ("NAME=VALUE") exactly. False when it cannot be read (gone, a
// zombie, another user's process).
TRTLLM_RUN_API bool ProcessEnvironmentHas(int pid, const std::string& name_value);

// Pids of live (not zombie) processes whose environment holds `name_value`
// (ProcessEnvironmentHas), this process included when it does.
TRTLLM_RUN_API std::vector<int> ProcessesWithEnvironment(const std::string& name_value);

// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): a descendant
// whose parent ends is re-parented to this process instead of to init, so the job's
// double-forked and setsid children stay findable. Process-wide and lasting; harmless
// to call again. False when the kernel refuses.
TRTLLM_RUN_API bool BecomeChildSubreaper();

// The processes of one job below this process: the descendants of this process that are
// in process group `pgid`, carry `marker` ("NAME=VALUE") in their environment, or descend
// (below this process) from one that does; plus every process seen so once (by pid and
// start time) that still lives. With this process a child subreaper, that covers children
// that left the group with setsid and orphans of double forks. A process that both left
// the group and cleared its environment is found only while its parent is one of them.
// The descendants are found by walking /proc/<pid>/task/*/children down from this process,
// so a scan costs in the job's processes, not the host's (every process of /proc only on
// a kernel without those files).
//
// Not thread-safe: one instance per job, used from one thread.
class TRTLLM_RUN_API JobProcessTracker {
 public:
  // `leader`: the job's own child, never reaped here (its owner, ChildProcess, does).
  JobProcessTracker(int leader, int pgid, std::string marker);

  // Live job processes other than the leader, scanned now.
  std::vector<int> Scan();
  // Sends `sig` to every process Scan() finds (each by pid: they may be in other groups).
  // Returns how many were signalled.
  std::size_t Signal(int sig);
  // Reaps the job processes re-parented to this process that ended (zombies); never the
  // leader, never a child this tracker did not see as the job's.
  void Reap();

 private:
  int leader_;
  int pgid_;
  std::string marker_;
  std::vector<std::pair<int, unsigned long long>> seen_;  // pid, start time
};

// "SIGTERM" for 15, "SIG<n>" style names for the common signals, else "signal <n>".
TRTLLM_RUN_API std::string SignalName(int sig);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_PROCESS_H_
