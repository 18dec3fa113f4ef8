// trtllm-run's secrets never reach a job: a job that prints its environment (`env`) on
// local_direct and on the real Slurm cluster (local_slurm) shows no password in its log,
// result.json, the JUnit file or --json. And the interactive SSH password prompt is
// printed only once the terminal's echo is off (checked on a real pseudo-terminal).
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

extern char** environ;

namespace trtllm_run_test {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Values unique to this test process, so that a match can only come from this test.
struct Secrets {
  std::string password = "pw-secret-" + std::to_string(::getpid()) + "-x9";
  std::string password_file = "/nonexistent/pw-file-secret-" + std::to_string(::getpid());
  std::string askpass = "askpass-secret-" + std::to_string(::getpid()) + "-q7";
  std::vector<std::pair<std::string, std::string>> Env() const {
    return {{"TRTLLM_RUN_SLURM_PASSWORD", password},
            {"TRTLLM_RUN_SLURM_PASSWORD_FILE", password_file},
            {"TRTLLM_RUN_SSH_ASKPASS_SECRET", askpass},
            {"TRTLLM_RUN_TEST_VISIBLE", "visible-to-the-job"}};
  }
  // Which secret `text` holds, "" when none.
  std::string FoundIn(const std::string& text) const {
    for (const std::string& secret : {password, password_file, askpass}) {
      if (text.find(secret) != std::string::npos) return secret;
    }
    return "";
  }
};

// Runs an `env` job with the secrets set and checks every output of the run.
void CheckEnvJobKeepsSecrets(const std::vector<std::string>& scenario_args,
                             double timeout_seconds) {
  TempDir repo{"trtllm_secrets"};
  TempDir out{"trtllm_secrets_out"};
  Secrets secrets;
  const std::string junit = out.path() + "/junit.xml";
  CliOptions options;
  options.args = {"run",        "--repo-root", repo.path(), "--custom-cmd",
                  "env | sort", "--json",      "--junit",   junit};
  options.args.insert(options.args.end(), scenario_args.begin(), scenario_args.end());
  options.env = secrets.Env();
  options.timeout_seconds = timeout_seconds;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE_FALSE(work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  const std::string log = ReadTextFile(result["log_file"].GetString());
  // The job did print its environment: an ordinary variable is there.
  REQUIRE_THAT(log, Catch::Contains("TRTLLM_RUN_TEST_VISIBLE=visible-to-the-job"));
  CHECK(secrets.FoundIn(log) == "");
  CHECK(secrets.FoundIn(ReadTextFile(work_dir + "/result.json")) == "");
  CHECK(secrets.FoundIn(ReadTextFile(junit)) == "");
  CHECK(secrets.FoundIn(run.stdout_text) == "");  // --json
  CHECK(secrets.FoundIn(run.stderr_text) == "");
  CHECK_THAT(log, !Catch::Contains("TRTLLM_RUN_SLURM_PASSWORD"));
}

TEST_CASE("job secrets: a local_direct job's environment holds no trtllm-run secret",
          "[local_direct][cli]") {
  CheckEnvJobKeepsSecrets({"--scenario", "local_direct"}, 60);
}

TEST_CASE("job secrets: a local_slurm job's environment holds no trtllm-run secret",
          "[slurm][cli]") {
  EnsureSlurm();
  CheckEnvJobKeepsSecrets({"--scenario", "local_slurm", "--partition", "batch", "--skip-install",
                           "true", "--container-runtime", "none", "--container-image", "none"},
                          300);
}

// ----------------------------------------------------------------- the password prompt

// Everything the pty has sent so far, without blocking.
void DrainMaster(int master, std::string* seen) {
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) return;
    seen->append(buffer, static_cast<std::size_t>(n));
  }
}

TEST_CASE("job secrets: the SSH password prompt appears only once the terminal's echo is off",
          "[sshd][cli]") {
  EnsureSshd();
  TempDir repo{"trtllm_prompt"};
  const std::string ssh_config = repo.path() + "/ssh_config";
  WriteTextFile(ssh_config,
                "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                "  UserKnownHostsFile /run/trtllm-test-sshd/known_hosts\n"
                "  PubkeyAuthentication no\n");
  // Planned against a saved probe: the run reaches the connection, which asks for the
  // password because key authentication fails.
  const std::string slurm_env = repo.path() + "/slurm_env.json";
  CliRun probe = RunCli({"env", "--output", slurm_env});
  INFO(probe.Describe());
  REQUIRE(probe.exit_code == 0);
  std::vector<std::string> args = {
      TRTLLM_RUN_BIN,        "run",
      "--scenario",          "remote_slurm",
      "--ssh-host",          "trtllm-test-login",
      "--slurm-user",        "slurmpw",
      "--ssh-config-file",   ssh_config,
      "--slurm-env-file",    slurm_env,
      "--repo-root",         repo.path(),
      "--remote-repo-path",  "/home/slurmpw/trtllm_prompt_never/TensorRT-LLM",
      "--repo-url",          "/nonexistent",
      "--partition",         "batch",
      "--skip-install",      "true",
      "--container-runtime", "none",
      "--container-image",   "none",
      "--build-project",     "false",
      "--custom-cmd",        "echo never"};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.rfind("TRTLLM_RUN_SLURM_PASSWORD", 0) != 0) env.push_back(entry);
  }

  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string slave_name = ::ptsname(master);
  int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  REQUIRE(slave >= 0);
  termios mode{};
  REQUIRE(::tcgetattr(slave, &mode) == 0);
  mode.c_lflag |= ECHO;
  mode.c_iflag |= IXON;
  REQUIRE(::tcsetattr(slave, TCSANOW, &mode) == 0);
  // XOFF: the terminal's output stops, so the prompt's write blocks inside trtllm-run
  // until XON. Whatever trtllm-run did to the terminal before that write is then visible
  // here, and nothing after it can have happened yet.
  REQUIRE(::write(master, "\x13", 1) == 1);
  const std::string out_path = repo.path() + "/stderr.txt";

  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(&e[0]);
  envp.push_back(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setsid();
    int tty = ::open(slave_name.c_str(), O_RDWR);  // the controlling terminal now
    int null_fd = ::open("/dev/null", O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (tty < 0 || null_fd < 0 || out < 0) ::_exit(126);
    ::dup2(null_fd, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  std::string seen;
  bool echo_off_before_prompt = false;
  bool exited = false;
  int status = 0;
  for (auto start = Clock::now(); SecondsSince(start) < 30;) {
    termios now{};
    if (::tcgetattr(slave, &now) != 0) break;
    if ((now.c_lflag & ECHO) == 0) {
      echo_off_before_prompt = true;
      break;
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  DrainMaster(master, &seen);
  CHECK(seen.find("SSH password") == std::string::npos);  // output is still stopped
  // XON: the prompt comes out now.
  REQUIRE(::write(master, "\x11", 1) == 1);
  for (auto start = Clock::now();
       !exited && SecondsSince(start) < 10 && seen.find("SSH password for") == std::string::npos;) {
    DrainMaster(master, &seen);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO("terminal output: " << seen);
  INFO("trtllm-run output: " << ReadTextFile(out_path));
  REQUIRE_THAT(seen, Catch::Contains("SSH password for trtllm-test-login"));
  CHECK(echo_off_before_prompt);
  // A typed password is not echoed.
  const std::string typed = "typed-password-" + std::to_string(::getpid());
  REQUIRE(::write(master, (typed + "\n").data(), typed.size() + 1) ==
          static_cast<ssize_t>(typed.size() + 1));
  for (auto start = Clock::now(); !exited && SecondsSince(start) < 60;) {
    DrainMaster(master, &seen);
    if (::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  DrainMaster(master, &seen);
  CHECK(seen.find(typed) == std::string::npos);
  ::close(slave);
  ::close(master);
}

}  // namespace
}  // namespace trtllm_run_test
