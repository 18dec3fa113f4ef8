// Ctrl-C on a real terminal (issue 27, item 1: "after Ctrl-C the stale status line stays
// on screen"). tmux is the terminal: trtllm-run runs in a detached session of a private
// tmux server, the test presses Ctrl-C with send-keys (the terminal driver, not the test,
// turns it into SIGINT and echoes "^C" after the live line) and reads the screen as a
// person would see it with capture-pane. A byte stream cannot show this bug: "\r\033[K"
// is there, but the echo wrapped the cursor below the line it should clear.
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"

using namespace trtllm_run_test;

namespace {

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// A private tmux server (its own socket) with one detached session of `columns` x 40
// running `command` under sh, then "EXIT=<code>" once it ends; killed on destruction.
class TmuxTerminal {
 public:
  TmuxTerminal(const TempDir& dir, const std::string& command, int columns)
      : socket_(dir.path() + "/tmux.sock") {
    CliRun started = Tmux({"new-session", "-d", "-s", "t", "-x", std::to_string(columns), "-y",
                           "40", command + "; echo EXIT=$?; sleep 600"});
    INFO(started.Describe());
    REQUIRE(started.exit_code == 0);
  }
  ~TmuxTerminal() { Tmux({"kill-server"}); }
  TmuxTerminal(const TmuxTerminal&) = delete;
  TmuxTerminal& operator=(const TmuxTerminal&) = delete;

  // The visible screen, one line per row, trailing blanks dropped.
  std::string Screen() { return Tmux({"capture-pane", "-p", "-t", "t"}).stdout_text; }

  // Polls the screen until it contains `text`; the last screen either way.
  std::string WaitFor(const std::string& text, double seconds) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    std::string screen = Screen();
    while (screen.find(text) == std::string::npos && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      screen = Screen();
    }
    return screen;
  }

  void PressCtrlC() { REQUIRE(Tmux({"send-keys", "-t", "t", "C-c"}).exit_code == 0); }

 private:
  CliRun Tmux(std::vector<std::string> args) {
    CliOptions options;
    options.program = "/usr/bin/env";
    options.args = {"tmux", "-S", socket_};
    options.args.insert(options.args.end(), args.begin(), args.end());
    options.unset_env = {"TMUX"};
    options.timeout_seconds = 20;
    return RunCli(options);
  }

  std::string socket_;
};

// The rows of `screen` that hold a live status line ("[<name>] running ...").
std::vector<std::string> StatusRows(const std::string& screen, const std::string& name) {
  std::vector<std::string> rows;
  std::istringstream lines(screen);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("[" + name + "] running ") != std::string::npos) rows.push_back(line);
  }
  return rows;
}

// Runs `args` on an 80-column tmux terminal, waits for `name`'s live line, presses
// Ctrl-C and returns the screen once trtllm-run has ended.
std::string InterruptOnTerminal(const TempDir& dir, const std::vector<std::string>& args,
                                const std::string& name) {
  std::string command = Quote(TRTLLM_RUN_BIN);
  for (const std::string& arg : args) command += " " + Quote(arg);
  TmuxTerminal terminal(dir, command, 80);
  std::string running = terminal.WaitFor("[" + name + "] running ", 60);
  INFO(running);
  REQUIRE_FALSE(StatusRows(running, name).empty());
  terminal.PressCtrlC();
  return terminal.WaitFor("EXIT=", 60);
}

}  // namespace

TEST_CASE("terminal: Ctrl-C leaves no stale status line of run on screen (tmux)",
          "[cli][daily][pty]") {
  TempDir dir("trtllm_ctrl_c_run");
  // The job's last line fills the live line to the terminal's width, as a long log
  // line does: that is when the "^C" echo wrapped.
  std::string screen = InterruptOnTerminal(
      dir,
      {"run", "--no-history", "--scenario", "local_direct", "--repo-root", dir.path(),
       "--custom-cmd", "echo " + std::string(150, 'x') + "; sleep 60"},
      "local_direct");
  INFO(screen);
  CHECK_THAT(screen, Catch::Contains("EXIT=130") && Catch::Contains("status:     CANCELLED"));
  CHECK(StatusRows(screen, "local_direct").empty());
}

TEST_CASE("terminal: Ctrl-C leaves no stale status line of run --cases on screen (tmux)",
          "[cli][daily][cases][pty]") {
  TempDir dir("trtllm_ctrl_c_cases");
  WriteTextFile(dir.path() + "/cases.yaml",
                "- {name: first-" + std::string(40, 'a') +
                    ", custom_cmd: 'sleep 60', scenario: local_direct}\n"
                    "- {name: second, custom_cmd: 'sleep 60', scenario: local_direct}\n");
  std::string screen = InterruptOnTerminal(
      dir,
      {"run", "--no-history", "--cases", dir.path() + "/cases.yaml", "--repo-root", dir.path()},
      "cases");
  INFO(screen);
  CHECK_THAT(screen, Catch::Contains("EXIT=130") && Catch::Contains("2 cases: CANCELLED 2"));
  CHECK(StatusRows(screen, "cases").empty());
}
