// SshScenario: a Scenario on a remote host over OpenSSH, with one master connection
// per scenario (ControlMaster/ControlPersist, the control socket in a private
// directory) that every command multiplexes over: one authentication, one TCP
// connection, however many commands run.
//
// Passwords (MFA-less password logins) go through SSH_ASKPASS: a two-line askpass
// script in the private control directory prints an environment variable that only the
// ssh child processes get (SSH_ASKPASS_REQUIRE=force). The password never appears in an
// argv, a file, a log or an error message. Without a password, ssh runs in BatchMode
// (keys or agent only; it never prompts).
//
// Bounded commands (Run() with a deadline) and streaming ones (Start()) go through the
// Scenario interface; nothing outside this file builds an ssh command line.
#ifndef TRTLLM_RUN_OS_SSH_H_
#define TRTLLM_RUN_OS_SSH_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The environment variable naming a shared control directory (SshOptions::control_dir).
inline constexpr char kSharedControlDirVariable[] = "TRTLLM_RUN_SSH_CONTROL_DIR";

// How long after a deadline a Run() whose remote `timeout` did not answer kills its ssh
// client (a stalled connection).
inline constexpr double kSshDeadlineMarginSeconds = 5.0;

struct SshOptions {
  std::string destination;    // "host" or "user@host" (or an ssh_config Host alias)
  int port = 0;               // 0: ssh's default (22 or ssh_config)
  std::string user;           // -l USER; empty: from the destination or ssh_config
  std::string identity_file;  // -i FILE with IdentitiesOnly=yes; empty: ssh's default keys
  // Directory of the control socket (<dir>/%C). Empty: $TRTLLM_RUN_SSH_CONTROL_DIR when
  // set (an absolute path), else a private directory (0700) is created under $TMPDIR and
  // removed, with the master, by Close() or the destructor. Given (or from the
  // variable): it is created if missing and kept; the master then outlives this object
  // (ControlPersist) unless Close() is called, so a later process can reuse it. A master
  // already answering there is used as it is, and Close() leaves one it did not start:
  // a person can open it once for an MFA login with
  //   ssh -fNM -o ControlPath=$TRTLLM_RUN_SSH_CONTROL_DIR/%C -o ControlPersist=12h user@host
  std::string control_dir;
  int control_persist_seconds = 600;  // the master's idle lifetime
  int connect_timeout_seconds = 20;
  // Password: `password` itself, else the value of the environment variable named by
  // `password_env` (e.g. TRTLLM_RUN_SLURM_PASSWORD); both empty: BatchMode.
  std::string password;
  std::string password_env;
  std::string ssh_program = "ssh";         // the OpenSSH client (path or name on PATH)
  std::string ssh_config_file;             // -F FILE; empty: the user's ~/.ssh/config
  std::string known_hosts_file;            // UserKnownHostsFile; empty: ssh's default
  std::string strict_host_key_checking;    // "yes", "accept-new", "no"; empty: ssh's default
  std::vector<std::string> extra_options;  // more "-o Key=Value" options ("Key=Value")
};

class SshScenario : public Scenario {
 public:
  ~SshScenario() override;

  std::string Name() const override;  // "ssh:<destination>"
  bool IsRemote() const override { return true; }

  using Scenario::Run;

  // Runs the command on the remote host (quoted for the remote POSIX shell) over the
  // master connection (started first when needed). A master that cannot connect is
  // kExecutionError carrying ssh's message; after that, ssh's exit status 255
  // (connection lost) comes back as a CommandOutput like any other. A deadline runs the
  // command under the remote `timeout -k 2` (coreutils), which ends it and what it
  // started; the ssh client is killed here kSshDeadlineMarginSeconds after the deadline
  // when the connection stalls. timed_out: either happened. Command::env and
  // working_dir travel in the remote command line (`env`, `cd`).
  Result<CommandOutput> Run(const Command& command, Deadline deadline) override;

  // Starts the command over the master connection (started first when needed) in an ssh
  // client of its own: the returned process is that client.
  Result<std::unique_ptr<ChildProcess>> Start(const Command& command) override;

  // Starts the master connection unless one answers `ssh -O check`. kExecutionError
  // with ssh's own message (authentication, host key, unreachable) when it fails.
  // Thread-safe, like Run(): threads sharing one scenario share one master, and a lost
  // master is re-established once, whichever thread finds it gone.
  Status EnsureMaster();

  // True when the master answers `ssh -O check`.
  bool MasterAlive();

  // The full local argv that runs `remote_argv` on the remote host through the master
  // (no password in it). Use with SshEnv() in a ChildProcess.
  std::vector<std::string> SshArgv(const std::vector<std::string>& remote_argv) const;

  // Environment variables the ssh child needs (SSH_ASKPASS and the password variable
  // in password mode; empty otherwise). Contains the secret: never log it.
  std::vector<EnvVar> SshEnv() const;

  // Ends the master (`ssh -O exit`) and removes a private control directory. Idempotent.
  Status Close();

  // How many master connections this object opened (1 after any number of commands
  // over a live master).
  int connections_opened() const { return connections_opened_.load(); }

  const std::string& control_path() const { return control_path_; }
  const SshOptions& options() const { return options_; }

 private:
  friend Result<std::unique_ptr<SshScenario>> MakeSshScenario(const SshOptions& options);
  SshScenario() = default;
  std::vector<std::string> BaseArgv() const;

  SshOptions options_;
  std::string control_dir_;
  std::string control_path_;
  std::string askpass_path_;
  std::string password_;
  bool owns_control_dir_ = false;
  bool closed_ = false;
  bool started_master_ = false;  // EnsureMaster() started the master (Close() ends it)
  std::atomic<int> connections_opened_{0};
  std::mutex master_mu_;  // EnsureMaster(): one thread checks and (re)starts the master
};

// Validates the options, creates the control directory (and askpass script in password
// mode). Connects lazily, on the first Run() or EnsureMaster(). kInvalidInput for an
// empty destination or a password_env naming an unset variable.
Result<std::unique_ptr<SshScenario>> MakeSshScenario(const SshOptions& options);

// The remote command line ssh sends for `argv`: each word ShellQuote()d, space-joined.
std::string RemoteCommandLine(const std::vector<std::string>& argv);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_OS_SSH_H_
