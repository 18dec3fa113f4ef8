// Scenario: where commands run and where files live. LocalHost runs processes here; a
// remote scenario runs them over one multiplexed SSH connection. Executors that share
// scheduler logic (local_slurm, remote_slurm) differ only in their Scenario: every
// command they run, bounded or streaming, goes through it.
#ifndef TRTLLM_RUN_SDK_SCENARIO_H_
#define TRTLLM_RUN_SDK_SCENARIO_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct CommandOutput {
  int exit_code = -1;  // -1 when ended by a signal
  int signal = 0;
  bool timed_out = false;   // the deadline passed and the command was stopped
  std::string stdout_text;  // stdout (and stderr, interleaved, with Command::merge_stderr)
  std::string stderr_text;
};

// One command for a scenario.
struct Command {
  // argv[0] is a path, or a name looked up in PATH (the remote PATH over SSH; locally the
  // PATH of `env` when it sets one). No shell: each word reaches the command as it is.
  std::vector<std::string> argv;
  std::string stdin_data;  // Run(): fed to stdin, which is then closed. Start(): must be empty.
  // Set on top of the scenario's environment (locally: this process's environment less
  // trtllm-run's secrets). Over SSH they travel in the remote command line: no secrets.
  std::vector<EnvVar> env;
  std::string working_dir;  // empty: the scenario's default (the caller's / the login dir)
  // Run(): stderr goes into stdout_text, interleaved as written. Start(): stderr shares
  // the output pipe; without it stderr (over SSH also ssh's own messages) is discarded,
  // so that the pipe carries the command's stdout alone.
  bool merge_stderr = false;
};

// When a bounded Run() stops its command. kNoDeadline: never.
using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();
// The deadline `seconds` from now.
inline Deadline DeadlineIn(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

class TRTLLM_RUN_API Scenario {
 public:
  virtual ~Scenario();

  // "local", or "ssh:<destination>".
  virtual std::string Name() const = 0;
  virtual bool IsRemote() const = 0;

  // Runs the command to completion, or until `deadline`, and captures its output.
  // Returns non-OK only when the command could not be started (kNotFound: no such
  // program); a non-zero exit is a normal CommandOutput. At the deadline the command and
  // every process it started in its process group get SIGTERM, then SIGKILL 2 s later,
  // and the output says timed_out (over SSH: `timeout` on the remote side does that,
  // and the ssh client is killed here when the connection stalls past the deadline).
  // A deadline already passed returns timed_out without running anything. Blocks the
  // calling thread; thread-safe (one scenario may run commands on several threads).
  virtual Result<CommandOutput> Run(const Command& command, Deadline deadline) = 0;

  // Starts the command and returns at once; its stdout (Command::merge_stderr: and
  // stderr) streams through the process's output pipe as it is written, for poll() and
  // ReadOutput(). Ending the returned process ends the command here; over SSH it ends the
  // ssh client, and the remote command ends when it next writes. kNotFound / kExecution
  // Error when it cannot start; kInvalidInput for stdin_data.
  virtual Result<std::unique_ptr<ChildProcess>> Start(const Command& command) = 0;

  // Run() of `argv` fed `stdin_data`, without a deadline.
  Result<CommandOutput> Run(const std::vector<std::string>& argv, const std::string& stdin_data);
};

// The scenario for this host.
TRTLLM_RUN_API std::unique_ptr<Scenario> MakeLocalScenario();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SCENARIO_H_
