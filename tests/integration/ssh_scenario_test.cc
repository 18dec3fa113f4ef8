// The SSH scenario's bounded runs and streams (sdk/scenario.h) against the real sshd of
// tests/services/sshd.sh (127.0.0.1:2222, user sshtest): a deadline stops the remote
// command and what it started (the remote `timeout`) in about the deadline, with no
// process left on the remote side nor here (the ssh client); a started command's lines
// arrive as they are written; environment and working dir travel with the command. The
// remote side is this host, so both sides are seen in /proc.
#include <dirent.h>
#include <poll.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "os/ssh.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/process.h"

using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

using Clock = std::chrono::steady_clock;

const char kSshDir[] = "/run/trtllm-test-sshd";

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string UniqueSleep() {
  std::random_device device;
  return "29." + std::to_string(device() % 1000000000u);
}

// Pids whose command line holds `word` (a whole argument, or a word of ssh's one remote
// command line argument).
std::vector<int> ProcessesWith(const std::string& word) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + name + "/cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(word) != std::string::npos) pids.push_back(std::stoi(name));
  }
  ::closedir(proc);
  return pids;
}

// Waits up to `seconds` for no process to hold `word`; returns those left.
std::vector<int> LeftAfter(const std::string& word, double seconds) {
  const Clock::time_point start = Clock::now();
  std::vector<int> left = ProcessesWith(word);
  while (!left.empty() && Since(start) < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = ProcessesWith(word);
  }
  return left;
}

std::unique_ptr<SshScenario> KeyUserScenario() {
  EnsureSshd();
  SshOptions options;
  options.destination = "sshtest@127.0.0.1";
  options.port = 2222;
  options.identity_file = std::string(kSshDir) + "/id_ed25519";
  options.known_hosts_file = std::string(kSshDir) + "/known_hosts";
  options.strict_host_key_checking = "yes";
  Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options);
  REQUIRE(made.ok());
  std::unique_ptr<SshScenario> ssh = std::move(made.value());
  REQUIRE(ssh->EnsureMaster().ok());  // the deadline bounds the command, not the login
  return ssh;
}

}  // namespace

TEST_CASE("ssh scenario: a deadline stops the remote command and leaves nothing behind", "[sshd]") {
  std::unique_ptr<SshScenario> ssh = KeyUserScenario();
  Scenario& scenario = *ssh;
  const std::string sleep_for = UniqueSleep();
  Command command;
  command.argv = {"bash", "-c", "echo started; sleep \"$1\" & sleep \"$1\"; echo never",
                  "deadline-test", sleep_for};
  const Clock::time_point start = Clock::now();
  Result<CommandOutput> out = scenario.Run(command, DeadlineIn(1.0));
  const double took = Since(start);
  REQUIRE(out.ok());
  INFO(out->stderr_text);
  CHECK(out->timed_out);
  CHECK(out->stdout_text == "started\n");
  CHECK(took >= 0.9);
  CHECK(took < 3.5);
  // Neither the remote sleeps nor the ssh client (its argv holds the remote command line).
  CHECK(LeftAfter(sleep_for, 1.0).empty());

  // A command that ends in time: its exit code, not timed out.
  command.argv = {"bash", "-c", "echo fine; exit 3"};
  Result<CommandOutput> quick = scenario.Run(command, DeadlineIn(30));
  REQUIRE(quick.ok());
  CHECK_FALSE(quick->timed_out);
  CHECK(quick->exit_code == 3);
  CHECK(quick->stdout_text == "fine\n");
  CHECK(ssh->connections_opened() == 1);
}

TEST_CASE("ssh scenario: environment and working dir travel with the command", "[sshd]") {
  std::unique_ptr<SshScenario> ssh = KeyUserScenario();
  Command command;
  command.argv = {"bash", "-c", "echo \"$PWD|$TRTLLM_TEST_VALUE\"; echo err >&2"};
  command.env = {{"TRTLLM_TEST_VALUE", "it's $(not run)"}};
  command.working_dir = "/tmp";
  command.merge_stderr = true;
  Result<CommandOutput> out = ssh->Run(command, DeadlineIn(30));
  REQUIRE(out.ok());
  CHECK(out->stdout_text == "/tmp|it's $(not run)\nerr\n");
  CHECK(out->exit_code == 0);
}

TEST_CASE("ssh scenario: a started command streams its lines as they come", "[sshd]") {
  std::unique_ptr<SshScenario> ssh = KeyUserScenario();
  const std::string sleep_for = UniqueSleep();
  Command command;
  command.argv = {"bash", "-c", "echo one; echo hidden >&2; sleep 1.5; echo two; sleep \"$1\"",
                  "stream-test", sleep_for};
  const Clock::time_point start = Clock::now();
  Result<std::unique_ptr<ChildProcess>> started = ssh->Start(command);
  REQUIRE(started.ok());
  std::unique_ptr<ChildProcess> child = std::move(started.value());
  std::string text;
  double first_line_at = -1, second_line_at = -1;
  while (Since(start) < 15 && second_line_at < 0) {
    pollfd fd = {child->output_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    Result<ReadState> state = child->ReadOutput(&text);
    REQUIRE(state.ok());
    if (first_line_at < 0 && text.find("one\n") != std::string::npos) first_line_at = Since(start);
    if (text.find("two\n") != std::string::npos) second_line_at = Since(start);
    if (state.value() == ReadState::kEof) break;
  }
  CHECK(text == "one\ntwo\n");  // the remote stderr and ssh's own messages discarded
  CHECK(first_line_at >= 0);
  CHECK(first_line_at < 1.4);
  CHECK(second_line_at >= 1.4);
  // Ending the stream ends the ssh client here at once.
  child->Terminate(1.0);
  child.reset();
  std::vector<int> local_client;
  for (int pid : ProcessesWith(sleep_for)) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "ssh") local_client.push_back(pid);
  }
  CHECK(local_client.empty());
  ssh->Run({"pkill", "-f", "--", sleep_for}, "").IgnoreError();
}
