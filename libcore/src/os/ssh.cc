// SshScenario: OpenSSH with one master connection per scenario. Processes are started
// with posix_spawnp so that the ssh children get exactly the environment we give them
// (the askpass secret) and no inherited descriptors: the master ssh daemonizes, and a
// pipe it inherited would never reach EOF.
#include "os/ssh.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "os/captured_run.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

namespace fs = std::filesystem;
using internal::Fd;

const char kSecretVariable[] = "TRTLLM_RUN_SSH_ASKPASS_SECRET";

// Starts argv with stdin/stdout/stderr on the given descriptors, nothing else inherited,
// default signal dispositions and an empty signal mask.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::vector<EnvVar>& extra_env,
                    int stdin_fd, int stdout_fd, int stderr_fd) {
  // trtllm-run's secrets stay here; the askpass secret comes through extra_env.
  std::vector<std::string> env = ChildEnvironment(extra_env);
  std::vector<char*> args, envp;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int error = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (error != 0) {
    return Status::ExecutionError("cannot start '" + argv[0] + "': " + std::strerror(error),
                                  "install the OpenSSH client or give its path");
  }
  return pid;
}

int WaitExit(pid_t pid, int* signal_number) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *signal_number = 0;
  if (WIFSIGNALED(status)) {
    *signal_number = WTERMSIG(status);
    return -1;
  }
  return WEXITSTATUS(status);
}

// Runs argv with stdin from /dev/null and stdout+stderr appended to `log_path`; waits
// for it (not for anything it leaves running) and returns its exit code.
Result<int> RunToLog(const std::vector<std::string>& argv, const std::vector<EnvVar>& extra_env,
                     const std::string& log_path) {
  Fd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  Fd log_fd(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (null_fd.get() < 0 || log_fd.get() < 0) {
    return Status::IoError("cannot open '" + log_path + "': " + std::strerror(errno));
  }
  Result<pid_t> pid = Spawn(argv, extra_env, null_fd.get(), log_fd.get(), log_fd.get());
  if (!pid.ok()) return pid.status();
  int signal_number = 0;
  return WaitExit(pid.value(), &signal_number);
}

std::string LastLines(const std::string& text, size_t count) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  std::string out;
  for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : "; ") + lines[i];
  }
  return out;
}

// Removes control sockets in `dir` that no master listens on any more (a master that was
// killed leaves its socket behind, and a new master cannot bind over it: it would then
// run without multiplexing, and every later command would open another connection).
void RemoveStaleSockets(const std::string& dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::error_code type_error;
    if (!entry.is_socket(type_error)) continue;
    std::string path = entry.path().string();
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    struct sockaddr_un address {};
    address.sun_family = AF_UNIX;
    if (path.size() < sizeof(address.sun_path)) {
      std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
      if (::connect(fd, reinterpret_cast<struct sockaddr*>(&address), sizeof(address)) != 0 &&
          errno == ECONNREFUSED) {
        ::unlink(path.c_str());
      }
    }
    ::close(fd);
  }
}

}  // namespace

std::string RemoteCommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) line += (line.empty() ? "" : " ") + ShellQuote(word);
  return line;
}

Result<std::unique_ptr<SshScenario>> MakeSshScenario(const SshOptions& options) {
  if (options.destination.empty()) {
    return Status::InvalidInput("no SSH destination", "give --ssh-host HOST (or user@host)");
  }
  if (options.destination[0] == '-') {
    return Status::InvalidInput("SSH destination '" + options.destination + "' starts with '-'");
  }
  if (options.port < 0 || options.port > 65535) {
    return Status::InvalidInput("SSH port " + std::to_string(options.port) + " is out of range",
                                "give a port between 1 and 65535");
  }
  std::unique_ptr<SshScenario> scenario(new SshScenario());
  scenario->options_ = options;
  scenario->password_ = options.password;
  if (scenario->password_.empty() && !options.password_env.empty()) {
    const char* value = std::getenv(options.password_env.c_str());
    if (value == nullptr || *value == '\0') {
      return Status::InvalidInput(
          "$" + options.password_env + " is not set",
          "export the SSH password in $" + options.password_env + ", or use key authentication");
    }
    scenario->password_ = value;
  }

  // The socket is <dir>/<%C: 40 hex digits>, and ssh first binds it with a 17-byte
  // random suffix: Unix socket paths hold 107 bytes, so the directory gets at most 48.
  const size_t kMaxDirLength = 107 - 1 - 40 - 17 - 1;
  std::error_code error;
  SshOptions resolved = options;
  const char* shared = std::getenv(kSharedControlDirVariable);
  if (resolved.control_dir.empty() && shared != nullptr && shared[0] == '/') {
    resolved.control_dir = shared;
    scenario->options_.control_dir = shared;
  }
  if (resolved.control_dir.empty()) {
    const std::string name = "/trtllm-ssh-XXXXXX";
    std::string base = "/tmp";
    const char* tmpdir = std::getenv("TMPDIR");
    if (tmpdir != nullptr && *tmpdir == '/' && std::strlen(tmpdir) + name.size() <= kMaxDirLength) {
      base = tmpdir;
    }
    std::string templ = base + name;
    std::vector<char> buffer(templ.begin(), templ.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()) == nullptr) {
      return Status::IoError("cannot create a private directory under " + base + ": " +
                             std::strerror(errno));
    }
    scenario->control_dir_ = buffer.data();
    scenario->owns_control_dir_ = true;
  } else {
    if (resolved.control_dir.size() > kMaxDirLength) {
      return Status::InvalidInput(
          "SSH control directory '" + resolved.control_dir + "' is too long for a socket path",
          "use a directory path of at most " + std::to_string(kMaxDirLength) + " characters");
    }
    fs::create_directories(resolved.control_dir, error);
    if (error) {
      return Status::IoError("cannot create the SSH control directory '" + resolved.control_dir +
                             "': " + error.message());
    }
    scenario->control_dir_ = resolved.control_dir;
  }
  scenario->control_path_ = scenario->control_dir_ + "/%C";
  if (!scenario->password_.empty()) {
    scenario->askpass_path_ = scenario->control_dir_ + "/askpass";
    std::string script = std::string("#!/bin/sh\nprintf '%s\\n' \"$") + kSecretVariable + "\"\n";
    {
      std::ofstream out(scenario->askpass_path_, std::ios::trunc);
      out << script;
      if (!out) return Status::IoError("cannot write '" + scenario->askpass_path_ + "'");
    }
    ::chmod(scenario->askpass_path_.c_str(), 0700);
  }
  return scenario;
}

SshScenario::~SshScenario() {
  if (owns_control_dir_) Close().IgnoreError();
}

std::string SshScenario::Name() const {
  std::string name = "ssh:";
  if (!options_.user.empty() && options_.destination.find('@') == std::string::npos) {
    name += options_.user + "@";
  }
  name += options_.destination;
  if (options_.port > 0) name += ":" + std::to_string(options_.port);
  return name;
}

std::vector<std::string> SshScenario::BaseArgv() const {
  std::vector<std::string> argv = {options_.ssh_program};
  if (!options_.ssh_config_file.empty()) argv.insert(argv.end(), {"-F", options_.ssh_config_file});
  argv.insert(argv.end(), {"-o", "ControlPath=" + control_path_});
  if (options_.port > 0) argv.insert(argv.end(), {"-p", std::to_string(options_.port)});
  if (!options_.user.empty()) argv.insert(argv.end(), {"-l", options_.user});
  if (!options_.identity_file.empty()) {
    argv.insert(argv.end(), {"-i", options_.identity_file, "-o", "IdentitiesOnly=yes"});
  }
  argv.insert(argv.end(),
              {"-o", "ConnectTimeout=" + std::to_string(options_.connect_timeout_seconds), "-o",
               "ServerAliveInterval=30", "-o", "ServerAliveCountMax=4"});
  if (!options_.known_hosts_file.empty()) {
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + options_.known_hosts_file});
  }
  if (!options_.strict_host_key_checking.empty()) {
    argv.insert(argv.end(), {"-o", "StrictHostKeyChecking=" + options_.strict_host_key_checking});
  }
  if (password_.empty()) {
    argv.insert(argv.end(), {"-o", "BatchMode=yes"});
  } else {
    argv.insert(argv.end(), {"-o", "BatchMode=no", "-o", "NumberOfPasswordPrompts=1"});
  }
  for (const std::string& option : options_.extra_options) argv.insert(argv.end(), {"-o", option});
  return argv;
}

std::vector<EnvVar> SshScenario::SshEnv() const {
  if (password_.empty()) return {};
  return {{"SSH_ASKPASS", askpass_path_},
          {"SSH_ASKPASS_REQUIRE", "force"},
          {kSecretVariable, password_}};
}

std::vector<std::string> SshScenario::SshArgv(const std::vector<std::string>& remote_argv) const {
  std::vector<std::string> argv = BaseArgv();
  argv.insert(argv.end(), {"-o", "ControlMaster=no", "-T", "--", options_.destination});
  if (!remote_argv.empty()) argv.push_back(RemoteCommandLine(remote_argv));
  return argv;
}

bool SshScenario::MasterAlive() {
  if (closed_) return false;
  std::vector<std::string> argv = BaseArgv();
  argv.insert(argv.end(), {"-O", "check", "--", options_.destination});
  Result<CommandOutput> check = internal::RunCaptured(argv, {}, "", "", false, kNoDeadline);
  return check.ok() && check.value().exit_code == 0;
}

Status SshScenario::EnsureMaster() {
  std::lock_guard<std::mutex> lock(master_mu_);
  if (closed_) return Status::Internal("SshScenario used after Close()");
  if (MasterAlive()) return Status::Ok();
  RemoveStaleSockets(control_dir_);
  std::vector<std::string> argv = BaseArgv();
  argv.insert(argv.end(), {"-o", "ControlMaster=yes", "-o",
                           "ControlPersist=" + std::to_string(options_.control_persist_seconds),
                           "-N", "-f", "--", options_.destination});
  std::string log_path = control_dir_ + "/master.log";
  Result<int> exit_code = RunToLog(argv, SshEnv(), log_path);
  if (!exit_code.ok()) return exit_code.status();
  if (exit_code.value() != 0) {
    Result<std::string> log = ReadFile(log_path);
    std::string message = log.ok() ? LastLines(log.value(), 3) : "";
    return Status::ExecutionError(
        "cannot connect to " + Name() + " (ssh exit " + std::to_string(exit_code.value()) + ")" +
            (message.empty() ? "" : ": " + message),
        password_.empty() ? "check the host, port, user and key (ssh runs in BatchMode: keys or "
                            "agent only; set $TRTLLM_RUN_SLURM_PASSWORD for a password login)"
                          : "check the host, port, user and password");
  }
  ++connections_opened_;
  started_master_ = true;
  return Status::Ok();
}

namespace {

// The remote argv of `command`: under `timeout` until `deadline`, in its working dir,
// with its environment.
std::vector<std::string> RemoteArgv(const Command& command, Deadline deadline) {
  std::vector<std::string> argv;
  if (deadline != kNoDeadline) {
    double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", std::max(0.001, left));
    argv = {"timeout", "-k", "2", seconds};
  }
  if (!command.working_dir.empty()) {
    argv.insert(argv.end(), {"sh", "-c", "cd -- \"$1\" || exit 1; shift; exec \"$@\"",
                             "trtllm-run-cd", command.working_dir});
  }
  if (!command.env.empty()) {
    argv.push_back("env");
    for (const EnvVar& var : command.env) argv.push_back(var.name + "=" + var.value);
  }
  argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  return argv;
}

}  // namespace

Result<CommandOutput> SshScenario::Run(const Command& command, Deadline deadline) {
  if (command.argv.empty()) return Status::Internal("SshScenario::Run called with an empty argv");
  TRTLLM_RUN_RETURN_IF_ERROR(EnsureMaster());
  if (deadline != kNoDeadline && std::chrono::steady_clock::now() >= deadline) {
    CommandOutput passed;
    passed.timed_out = true;
    return passed;
  }
  const Deadline local_deadline =
      deadline == kNoDeadline
          ? kNoDeadline
          : deadline +
                std::chrono::milliseconds(static_cast<int>(kSshDeadlineMarginSeconds * 1000));
  Result<CommandOutput> out =
      internal::RunCaptured(SshArgv(RemoteArgv(command, deadline)), SshEnv(), command.stdin_data,
                            "", command.merge_stderr, local_deadline);
  // `timeout` exits 124 when it ended the command (137 when that took SIGKILL).
  if (out.ok() && deadline != kNoDeadline && (out->exit_code == 124 || out->exit_code == 137) &&
      std::chrono::steady_clock::now() >= deadline - std::chrono::milliseconds(50)) {
    out->timed_out = true;
  }
  return out;
}

Result<std::unique_ptr<ChildProcess>> SshScenario::Start(const Command& command) {
  if (command.argv.empty()) {
    return Status::Internal("SshScenario::Start called with an empty argv");
  }
  if (!command.stdin_data.empty()) {
    return Status::InvalidInput("Scenario::Start feeds no stdin", "run the command with Run()");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(EnsureMaster());
  ProcessOptions process;
  if (!command.merge_stderr) {
    // ssh's messages ("mux_client_request_session: ...") go with the command's stderr.
    process.argv = {"/bin/sh", "-c", "exec 2>/dev/null; exec \"$@\"", "trtllm-run-stream"};
  }
  std::vector<std::string> ssh_argv = SshArgv(RemoteArgv(command, kNoDeadline));
  process.argv.insert(process.argv.end(), ssh_argv.begin(), ssh_argv.end());
  process.env = SshEnv();
  return ChildProcess::Spawn(process);
}

Status SshScenario::Close() {
  if (closed_) return Status::Ok();
  closed_ = true;
  // A master someone else started (a person's ControlMaster in the shared directory)
  // is theirs: it stays.
  if (started_master_ || owns_control_dir_) {
    std::vector<std::string> argv = BaseArgv();
    argv.insert(argv.end(), {"-O", "exit", "--", options_.destination});
    (void)internal::RunCaptured(argv, {}, "", "", false,
                                kNoDeadline);  // best effort: ControlPersist ends it anyway
  }
  if (owns_control_dir_) {
    std::error_code error;
    fs::remove_all(control_dir_, error);
  } else if (!askpass_path_.empty()) {
    std::error_code error;
    fs::remove(askpass_path_, error);
  }
  return Status::Ok();
}

}  // namespace trtllm_run
