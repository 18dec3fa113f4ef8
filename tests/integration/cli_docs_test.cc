// The man page and the shell completion are generated from the option tables: every
// flag a subcommand's --help lists is in them, the man page renders, and bash completes
// subcommands and flags with the generated script.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

CliRun Cli(std::vector<std::string> args) {
  CliOptions options;
  options.args = std::move(args);
  options.timeout_seconds = 60;
  return RunCli(options);
}

CliRun Bash(const std::string& script) {
  CliOptions options;
  options.program = "/bin/bash";
  options.args = {"-c", script};
  options.timeout_seconds = 60;
  return RunCli(options);
}

// The long flags a subcommand's --help lists.
std::vector<std::string> HelpFlags(const std::string& subcommand) {
  std::vector<std::string> flags;
  std::istringstream in(Cli({subcommand, "--help"}).stdout_text);
  for (std::string line; std::getline(in, line);) {
    std::size_t at = line.find("--");
    std::size_t first = line.find_first_not_of(' ');  // flag lines: "  -p, --x", "      --y"
    if (first == std::string::npos || first > 6 || line[first] != '-' || at == std::string::npos) {
      continue;
    }
    std::string flag = line.substr(at, line.find_first_of(" [", at) - at);
    if (flag != "--help") flags.push_back(flag);
  }
  return flags;
}

std::string RoffFlag(const std::string& flag) {
  std::string out;
  for (char c : flag) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

}  // namespace

TEST_CASE("cli docs: the man page holds every subcommand's flags and renders", "[cli]") {
  TempDir dir;
  CliRun man = Cli({"--help-man"});
  REQUIRE(man.exit_code == 0);
  CHECK(man.stdout_text.find(".TH TRTLLM\\-RUN 1") != std::string::npos);
  for (const char* subcommand :
       {"run", "plan", "env", "status", "cancel", "release", "history", "stage", "perf"}) {
    CHECK_THAT(man.stdout_text, Catch::Contains(std::string(".SS \"") + subcommand + "\""));
    for (const std::string& flag : HelpFlags(subcommand)) {
      INFO(subcommand << " " << flag);
      CHECK_THAT(man.stdout_text, Catch::Contains("\\fB" + RoffFlag(flag) + "\\fR"));
    }
  }
  const std::string page = dir.path() + "/trtllm-run.1";
  WriteTextFile(page, man.stdout_text);
  // man(1) when installed, else groff's nroff: the page renders without warnings.
  const bool have_man = fs::exists("/usr/bin/man");
  CliRun rendered = Bash(have_man ? "MANWIDTH=100 man -l '" + page + "' | col -b"
                                  : "nroff -man -ww '" + page + "' | col -b");
  INFO(rendered.Describe());
  CHECK(rendered.exit_code == 0);
  CHECK_THAT(rendered.stdout_text, Catch::Contains("--time-limit DURATION"));
  CHECK_THAT(rendered.stdout_text, Catch::Contains("EXIT STATUS"));
  CHECK_THAT(rendered.stdout_text, Catch::Contains("export-durations"));
  CHECK_THAT(rendered.stdout_text, Catch::Contains("history.sqlite"));
  CHECK(rendered.stderr_text.find("warning") == std::string::npos);
}

TEST_CASE("cli docs: bash completion from the option tables", "[cli]") {
  TempDir dir;
  CliRun generated = Cli({"--completion", "bash"});
  REQUIRE(generated.exit_code == 0);
  const std::string script = dir.path() + "/trtllm-run";
  WriteTextFile(script, generated.stdout_text);
  auto complete = [&](const std::string& words) {
    return Bash("source '" + script + "' && complete -p trtllm-run && COMP_WORDS=(" + words +
                ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _trtllm_run && "
                "printf '%s\\n' \"${COMPREPLY[@]}\"");
  };
  CliRun st = complete("trtllm-run st");
  INFO(st.Describe());
  REQUIRE(st.exit_code == 0);
  CHECK_THAT(st.stdout_text, Catch::StartsWith("complete -F _trtllm_run trtllm-run\n"));
  CHECK_THAT(st.stdout_text, Catch::EndsWith("\nstatus\n"));
  CliRun flags = complete("trtllm-run run --time");
  CHECK_THAT(flags.stdout_text, Catch::Contains("\n--time-limit\n"));
  CliRun env = complete("trtllm-run env --ssh-p");
  CHECK_THAT(env.stdout_text, Catch::EndsWith("\n--ssh-port\n"));
  // A FILE value completes file names.
  WriteTextFile(dir.path() + "/case_request.yaml", "custom_cmd: true\n");
  CliRun file = complete("trtllm-run run --request " + dir.path() + "/case_req");
  CHECK_THAT(file.stdout_text, Catch::EndsWith("\n" + dir.path() + "/case_request.yaml\n"));
  CliRun zsh = Cli({"--completion", "zsh"});
  CHECK(zsh.exit_code == 0);
  CHECK(zsh.stdout_text.rfind("#compdef trtllm-run\n", 0) == 0);
  CHECK_THAT(zsh.stdout_text, Catch::Contains("'--ssh-port[SSH port of the login node"));
}

}  // namespace trtllm_run_test
