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

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

namespace fs = std::filesystem;

const char kSecretVariable[] = "TRTLLM_RUN_SSH_ASKPASS_SECRET";

// Closes a descriptor once.
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

// Runs argv to completion, feeding stdin_data, capturing stdout and stderr.
Result<CommandOutput> RunCaptured(const std::vector<std::string>& argv,
                                  const std::vector<EnvVar>& extra_env,
                                  const std::string& stdin_data) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return Status::ExecutionError("pipe failed");
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);

  Result<pid_t> pid = Spawn(argv, extra_env, in_read.get(), out_write.get(), err_write.get());
  if (!pid.ok()) return pid.status();
  in_read.Close();
  out_write.Close();
  err_write.Close();
  ::fcntl(in_write.get(), F_SETFL, O_NONBLOCK);

  // Writing to a child that stopped reading raises SIGPIPE: keep it off this thread and
  // discard it afterwards (the child was started with an empty mask).
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);

  CommandOutput output;
  size_t written = 0;
  if (stdin_data.empty()) in_write.Close();
  char buffer[65536];
  while (out_read.get() >= 0 || err_read.get() >= 0) {
    struct pollfd fds[3];
    int count = 0;
    int in_index = -1, out_index = -1, err_index = -1;
    if (in_write.get() >= 0) {
      in_index = count;
      fds[count++] = {in_write.get(), POLLOUT, 0};
    }
    if (out_read.get() >= 0) {
      out_index = count;
      fds[count++] = {out_read.get(), POLLIN, 0};
    }
    if (err_read.get() >= 0) {
      err_index = count;
      fds[count++] = {err_read.get(), POLLIN, 0};
    }
    if (::poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (in_index >= 0 && fds[in_index].revents != 0) {
      ssize_t n = ::write(in_write.get(), stdin_data.data() + written, stdin_data.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size()) {
        in_write.Close();
      }
    }
    auto drain = [&](int index, Fd* fd, std::string* text) {
      if (index < 0 || fds[index].revents == 0) return;
      ssize_t n = ::read(fd->get(), buffer, sizeof buffer);
      if (n > 0) {
        text->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        fd->Close();
      }
    };
    drain(out_index, &out_read, &output.stdout_text);
    drain(err_index, &err_read, &output.stderr_text);
  }
  in_write.Close();
  const struct timespec no_wait = {0, 0};
  while (sigtimedwait(&pipe_signal, nullptr, &no_wait) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  output.exit_code = WaitExit(pid.value(), &output.signal);
  return output;
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
  Result<CommandOutput> check = RunCaptured(argv, {}, "");
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

Result<CommandOutput> SshScenario::Run(const std::vector<std::string>& argv,
                                       const std::string& stdin_data) {
  if (argv.empty()) return Status::Internal("SshScenario::Run called with an empty argv");
  TRTLLM_RUN_RETURN_IF_ERROR(EnsureMaster());
  return RunCaptured(SshArgv(argv), SshEnv(), stdin_data);
}

Status SshScenario::Close() {
  if (closed_) return Status::Ok();
  closed_ = true;
  // A master someone else started (a person's ControlMaster in the shared directory)
  // is theirs: it stays.
  if (started_master_ || owns_control_dir_) {
    std::vector<std::string> argv = BaseArgv();
    argv.insert(argv.end(), {"-O", "exit", "--", options_.destination});
    (void)RunCaptured(argv, {}, "");  // best effort: ControlPersist ends it anyway
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
