#include "cli_harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace trtllm_run_test {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// The history store runs record in ($XDG_DATA_HOME/trtllm-run/history.sqlite): one of the
// test process's own, so that no test writes the history of the user running the tests;
// removed when the tests end. A test that sets (or unsets) XDG_DATA_HOME gets its own.
const std::string& TestDataHome() {
  static const TempDir dir("trtllm_run_test_data");
  return dir.path();
}

std::vector<std::string> BuildEnv(const CliOptions& options) {
  std::vector<std::string> env;
  bool data_home_chosen = false;
  for (const auto& kv : options.env)
    data_home_chosen = data_home_chosen || kv.first == "XDG_DATA_HOME";
  for (const auto& unset : options.unset_env) {
    data_home_chosen = data_home_chosen || unset == "XDG_DATA_HOME";
  }
  if (!data_home_chosen) env.push_back("XDG_DATA_HOME=" + TestDataHome());
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    bool drop = false;
    for (const auto& kv : options.env) drop = drop || kv.first == name;
    for (const auto& unset : options.unset_env) drop = drop || unset == name;
    drop = drop || (!data_home_chosen && name == "XDG_DATA_HOME");
    if (!drop) env.push_back(entry);
  }
  for (const auto& kv : options.env) env.push_back(kv.first + "=" + kv.second);
  return env;
}

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what is available; returns false at EOF or error.
bool Drain(int fd, std::string* out) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
      out->append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

bool ReadProcState(int pid, char* state) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  *state = text[close + 2];
  return true;
}

// A live process other than trtllm-run itself (whose argv holds the command text)
// carries `marker`.
bool JobStarted(const std::string& marker, int cli_pid) {
  for (int pid : PidsWithMarker(marker)) {
    if (pid != cli_pid) return true;
  }
  return false;
}

}  // namespace

std::string CliRun::Describe() const {
  std::ostringstream out;
  out << "exit_code=" << exit_code << " term_signal=" << term_signal << " timed_out=" << timed_out
      << " seconds=" << seconds << "\n--- stdout ---\n"
      << stdout_text << "\n--- stderr ---\n"
      << stderr_text;
  return out.str();
}

CliRun RunCli(std::vector<std::string> args) {
  CliOptions options;
  options.args = std::move(args);
  return RunCli(options);
}

CliRun RunCli(const CliOptions& options) {
  CliRun run;
  std::vector<std::string> argv_strings;
  argv_strings.push_back(options.program);
  for (const std::string& arg : options.args) argv_strings.push_back(arg);
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(&arg[0]);
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = BuildEnv(options);
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(&entry[0]);
  envp.push_back(nullptr);

  int in_pipe[2], out_pipe[2], err_pipe[2];
  REQUIRE(::pipe2(in_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);

  Clock::time_point start = Clock::now();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    struct sigaction dfl;
    ::memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
    }
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here, so that kill(-pid) works at once
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  int in_fd = in_pipe[1];
  int out_fd = out_pipe[0];
  int err_fd = err_pipe[0];
  SetNonBlocking(in_fd);
  SetNonBlocking(out_fd);
  SetNonBlocking(err_fd);
  std::size_t stdin_written = 0;
  if (options.stdin_text.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }

  bool exited = false;
  int status = 0;
  Clock::time_point exited_at;
  while (true) {
    if (!exited) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        exited = true;
        exited_at = Clock::now();
        run.seconds = SecondsSince(start);
      }
    }
    if (exited && out_fd < 0 && err_fd < 0) break;
    // Leftover writers holding the pipes must not hang the test.
    if (exited && SecondsSince(exited_at) > 2.0) break;
    double elapsed = SecondsSince(start);
    if (!exited && options.signal > 0 && !run.signal_sent &&
        elapsed >= options.signal_after_seconds &&
        (options.signal_when_process.empty() || JobStarted(options.signal_when_process, pid))) {
      ::kill(pid, options.signal);
      run.signal_sent = true;
      run.signal_sent_at = elapsed;
    }
    if (!exited && elapsed >= options.timeout_seconds) {
      run.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    std::vector<pollfd> fds;
    if (out_fd >= 0) fds.push_back({out_fd, POLLIN, 0});
    if (err_fd >= 0) fds.push_back({err_fd, POLLIN, 0});
    if (in_fd >= 0) fds.push_back({in_fd, POLLOUT, 0});
    ::poll(fds.data(), fds.size(), 20);
    if (out_fd >= 0 && !Drain(out_fd, &run.stdout_text)) {
      ::close(out_fd);
      out_fd = -1;
    }
    if (err_fd >= 0 && !Drain(err_fd, &run.stderr_text)) {
      ::close(err_fd);
      err_fd = -1;
    }
    if (in_fd >= 0) {
      ssize_t n = ::write(in_fd, options.stdin_text.data() + stdin_written,
                          options.stdin_text.size() - stdin_written);
      if (n > 0) stdin_written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
          stdin_written == options.stdin_text.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  for (int fd : {in_fd, out_fd, err_fd}) {
    if (fd >= 0) ::close(fd);
  }
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.term_signal = WTERMSIG(status);
  }
  if (run.exit_code == 127 && run.stderr_text.empty()) {
    FAIL("cannot execute " << options.program);
  }
  std::string cmdline;
  for (const std::string& arg : argv_strings) cmdline += Quote(arg) + " ";
  UNSCOPED_INFO("ran: " << cmdline);
  return run;
}

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix + "_XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  REQUIRE(::mkdtemp(buf.data()) != nullptr);
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string FindSingleWorkDir(const std::string& repo_root) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(repo_root) / "work_dirs";
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory()) found.push_back(entry.path().string());
  }
  return found.size() == 1 ? found[0] : "";
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  try {
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return "";  // e.g. /proc/<pid>/cmdline of a process that exited meanwhile (ESRCH)
  }
}

void WriteTextFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  REQUIRE(out.good());
}

rapidjson::Document ReadResultJson(const std::string& work_dir) {
  rapidjson::Document doc;
  std::string text = ReadTextFile(work_dir + "/result.json");
  doc.Parse(text.c_str());
  return doc;
}

std::vector<int> PidsWithMarker(const std::string& marker) {
  std::vector<int> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  int self = ::getpid();
  while (struct dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = ::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    std::string cmdline = ReadTextFile("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(marker) == std::string::npos) continue;
    char state = 0;
    if (ReadProcState(static_cast<int>(pid), &state) && (state == 'Z' || state == 'X')) continue;
    pids.push_back(static_cast<int>(pid));
  }
  ::closedir(dir);
  return pids;
}

bool ProcessWithMarkerAlive(const std::string& marker) { return !PidsWithMarker(marker).empty(); }

bool WaitNoProcessWithMarker(const std::string& marker, double seconds) {
  Clock::time_point start = Clock::now();
  while (ProcessWithMarkerAlive(marker)) {
    if (SecondsSince(start) >= seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void KillProcessesWithMarker(const std::string& marker) {
  for (int pid : PidsWithMarker(marker)) ::kill(pid, SIGKILL);
}

std::string UniqueMarker(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
}

int DeadPid() {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace trtllm_run_test
