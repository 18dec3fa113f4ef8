// The local scenario's bounded runs and streams (sdk/scenario.h): a deadline stops the
// command and everything it started in its process group, in about the deadline and with
// nothing left running; a started command's lines arrive as they are written, not when it
// ends. The same over a real sshd: tests/integration/ssh_scenario_test.cc.
#include <dirent.h>
#include <poll.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/scenario.h"

using namespace trtllm_run;

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A `sleep` argument no other process has: "29.<random digits>".
std::string UniqueSleep() {
  std::random_device device;
  return "29." + std::to_string(device() % 1000000000u);
}

// Pids whose command line holds `word` as one argument.
std::vector<int> ProcessesWithArgument(const std::string& word) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + name + "/cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string arg;
    for (char c : cmdline) {
      if (c != '\0') {
        arg += c;
        continue;
      }
      if (arg == word) pids.push_back(std::stoi(name));
      arg.clear();
    }
  }
  ::closedir(proc);
  return pids;
}

}  // namespace

TEST_CASE("the local scenario stops a command at its deadline with what it started", "[scenario]") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  const std::string sleep_for = UniqueSleep();
  Command command;
  // A child and a grandchild that both outlive the deadline by far.
  command.argv = {"bash", "-c", "echo started; sleep \"$1\" & sleep \"$1\"; echo never",
                  "deadline-test", sleep_for};
  const Clock::time_point start = Clock::now();
  Result<CommandOutput> out = local->Run(command, DeadlineIn(1.0));
  const double took = Since(start);
  REQUIRE(out.ok());
  CHECK(out->timed_out);
  CHECK(out->stdout_text == "started\n");
  CHECK(took >= 0.9);
  CHECK(took < 3.0);  // SIGTERM ends them: the 2 s SIGKILL grace is not used up
  CHECK(ProcessesWithArgument(sleep_for).empty());

  // A command that ignores SIGTERM gets SIGKILL after the grace period.
  command.argv = {"bash", "-c", "trap '' TERM; sleep \"$1\"", "deadline-test", sleep_for};
  const Clock::time_point stubborn_start = Clock::now();
  Result<CommandOutput> stubborn = local->Run(command, DeadlineIn(0.5));
  REQUIRE(stubborn.ok());
  CHECK(stubborn->timed_out);
  CHECK(Since(stubborn_start) < 5.0);
  CHECK(ProcessesWithArgument(sleep_for).empty());

  // A command that ends in time is not timed out, and a deadline already passed runs
  // nothing.
  command.argv = {"bash", "-c", "echo fine; exit 3"};
  Result<CommandOutput> quick = local->Run(command, DeadlineIn(30));
  REQUIRE(quick.ok());
  CHECK_FALSE(quick->timed_out);
  CHECK(quick->exit_code == 3);
  command.argv = {"bash", "-c", "echo ran"};
  Result<CommandOutput> late = local->Run(command, Clock::now() - std::chrono::seconds(1));
  REQUIRE(late.ok());
  CHECK(late->timed_out);
  CHECK(late->stdout_text.empty());
}

TEST_CASE("the local scenario runs a command with its environment dir and merged stderr",
          "[scenario]") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Command command;
  command.argv = {"bash", "-c", "echo \"$PWD $TRTLLM_TEST_VALUE\"; echo err >&2; echo out"};
  command.env = {{"TRTLLM_TEST_VALUE", "a b"}};
  command.working_dir = "/tmp";
  command.merge_stderr = true;
  Result<CommandOutput> out = local->Run(command, kNoDeadline);
  REQUIRE(out.ok());
  CHECK(out->stdout_text == "/tmp a b\nerr\nout\n");
  CHECK(out->stderr_text.empty());

  // A background process that keeps the output open after the command ended is not
  // waited for once it left the command's process group.
  command = Command{};
  command.argv = {"bash", "-c", "setsid sleep 3 & echo done"};
  const Clock::time_point start = Clock::now();
  Result<CommandOutput> detached = local->Run(command, kNoDeadline);
  REQUIRE(detached.ok());
  CHECK(detached->stdout_text == "done\n");
  CHECK(Since(start) < 2.0);
}

TEST_CASE("the local scenario keeps the last output of a command that exits at once",
          "[scenario]") {
  // What a command writes just before it exits must not be lost when the loop sees the
  // exit first (the sanitizer build lost "to-stdout" of quoting_test's command #12 once: the
  // output came after the loop's read and before its waitpid). The window is short, so
  // this repeats the shape 600 times, with and without a deadline.
  // Four threads at once, so that a thread is often preempted between its read and its
  // waitpid.
  std::atomic<int> lost{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&lost, t] {
      std::unique_ptr<Scenario> local = MakeLocalScenario();
      Command command;
      command.argv = {"bash", "-c", "echo to-stderr >&2; echo to-stdout"};
      for (int i = 0; i < 150; ++i) {
        Result<CommandOutput> out = local->Run(command, (i + t) % 2 ? kNoDeadline : DeadlineIn(30));
        if (!out.ok() || out->stdout_text != "to-stdout\n" || out->stderr_text != "to-stderr\n") {
          ++lost;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(lost == 0);
}

TEST_CASE("the local scenario streams a started command's lines as they come", "[scenario]") {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  Command command;
  command.argv = {"bash", "-c", "echo one; echo hidden >&2; sleep 1.5; echo two"};
  const Clock::time_point start = Clock::now();
  Result<std::unique_ptr<ChildProcess>> started = local->Start(command);
  REQUIRE(started.ok());
  ChildProcess& child = *started.value();
  std::string text;
  double first_line_at = -1;
  while (Since(start) < 10) {
    pollfd fd = {child.output_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    Result<ReadState> state = child.ReadOutput(&text);
    REQUIRE(state.ok());
    if (first_line_at < 0 && text.find("one\n") != std::string::npos) first_line_at = Since(start);
    if (state.value() == ReadState::kEof) break;
  }
  CHECK(text == "one\ntwo\n");  // stderr discarded without merge_stderr
  CHECK(first_line_at >= 0);
  CHECK(first_line_at < 1.0);  // before the command ended, not with its end
  CHECK(child.Wait().exit_code == 0);

  Command with_stdin;
  with_stdin.argv = {"cat"};
  with_stdin.stdin_data = "x";
  Result<std::unique_ptr<ChildProcess>> refused = local->Start(with_stdin);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidInput);
}
