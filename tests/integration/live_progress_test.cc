// Live progress of every executor and of `run --cases` through the real binary: on a
// pseudo-terminal (script(1)) one status line redrawn in place ("\r\033[K"); in pipes
// plain lines without control characters.
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace trtllm_run_test {
namespace {

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// trtllm-run `args` under script(1): stdin, stdout and stderr are a pseudo-terminal.
CliRun RunOnTerminal(const std::vector<std::string>& args,
                     const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::string command;
  for (const auto& [name, value] : env) command += name + "=" + Quote(value) + " ";
  command += Quote(TRTLLM_RUN_BIN);
  for (const std::string& arg : args) command += " " + Quote(arg);
  CliOptions options;
  options.program = "/usr/bin/env";
  options.args = {"script", "-qec", command, "/dev/null"};
  options.timeout_seconds = 180;
  return RunCli(options);
}

// The first control character other than '\n' in `text`, or 0.
int ControlCharacter(const std::string& text) {
  for (char c : text) {
    if (c != '\n' && static_cast<unsigned char>(c) < 0x20) return c;
  }
  return 0;
}

std::vector<std::string> SlurmArgs(const std::string& repo, const std::string& command) {
  return {"run",  "--scenario",          "local_slurm", "--repo-root",
          repo,   "--partition",         "batch",       "--skip-install",
          "true", "--container-runtime", "none",        "--container-image",
          "none", "--custom-cmd",        command};
}

TEST_CASE("live progress: local_slurm shows job id and Slurm state, redrawn in place",
          "[slurm][cli][progress]") {
  EnsureSlurm();
  TempDir repo("trtllm_progress");
  CliRun live = RunOnTerminal(SlurmArgs(repo.path(), "echo first; sleep 4; echo second"));
  INFO(live.Describe());
  CHECK(live.exit_code == 0);
  CHECK_THAT(live.stdout_text, Catch::Contains("\r\033[K[local_slurm] "));
  CHECK(std::regex_search(live.stdout_text, std::regex("\\| job [0-9]+ (RUNNING|PENDING)")));

  TempDir repo2("trtllm_progress");
  CliOptions options;
  options.args = SlurmArgs(repo2.path(), "echo first; sleep 2; echo second");
  options.timeout_seconds = 180;
  CliRun plain = RunCli(options);
  INFO(plain.Describe());
  CHECK(plain.exit_code == 0);
  CHECK_THAT(plain.stderr_text, Catch::Contains("[local_slurm] "));
  CHECK_THAT(plain.stderr_text, Catch::Contains(" | job "));
  CHECK(ControlCharacter(plain.stderr_text) == 0);
}

TEST_CASE("live progress: a held allocation's run is redrawn in place", "[slurm][cli][progress]") {
  EnsureSlurm();
  TempDir state("trtllm_slurm_state");  // a private allocation state dir
  TempDir repo("trtllm_progress");
  std::vector<std::string> args = SlurmArgs(repo.path(), "echo first; sleep 2.5; echo second");
  args.insert(args.end(), {"--persistent-mode", "true", "--alloc-time-limit", "10"});
  CliRun live = RunOnTerminal(args, {{"XDG_RUNTIME_DIR", state.path()}});
  INFO(live.Describe());
  CHECK(live.exit_code == 0);
  CHECK_THAT(live.stdout_text, Catch::Contains("\r\033[K[local_slurm] running "));
  CHECK_THAT(live.stdout_text, Catch::Contains("| held allocation "));
  CliOptions release;
  release.args = {"release"};
  release.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
}

TEST_CASE("live progress: run --cases draws a live table of the run", "[cli][multi][progress]") {
  TempDir repo("trtllm_progress");
  WriteTextFile(repo.path() + "/cases.yaml",
                "defaults:\n  scenario: local_direct\ncases:\n"
                "  - {name: quick, custom_cmd: 'true'}\n"
                "  - {name: slow, custom_cmd: 'sleep 3'}\n"
                "  - {name: waits, custom_cmd: 'sleep 1'}\n");
  std::vector<std::string> args = {"run",
                                   "--cases",
                                   repo.path() + "/cases.yaml",
                                   "--repo-root",
                                   repo.path(),
                                   "--max-parallel-local",
                                   "2"};
  CliRun live = RunOnTerminal(args);
  INFO(live.Describe());
  CHECK(live.exit_code == 0);
  CHECK_THAT(live.stdout_text, Catch::Contains("\r\033[K[cases] running "));
  CHECK_THAT(live.stdout_text, Catch::Contains(", done "));
  CHECK_THAT(live.stdout_text, Catch::Contains("/3 "));
  CHECK_THAT(live.stdout_text, Catch::Contains("| slowest: case 2 slow"));

  CliOptions options;
  options.args = args;
  options.timeout_seconds = 120;
  CliRun plain = RunCli(options);
  INFO(plain.Describe());
  CHECK(plain.exit_code == 0);
  CHECK(plain.stderr_text.find("[cases]") == std::string::npos);  // the table is live only
  CHECK(ControlCharacter(plain.stderr_text + plain.stdout_text) == 0);
}

}  // namespace
}  // namespace trtllm_run_test
