// The daily CLI (issue 27, item 1): what a new user types, on the real binary. Flags the
// chosen executor does not read are refused, skips do not fail a batch, config and cases
// errors come in one round, hints point only where they help, and the shortcuts users
// expect (`logs @last`, -n, -V, `help`) work.
#include <sys/stat.h>
#include <cctype>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <sstream>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

namespace {

// A user config under a fresh $XDG_CONFIG_HOME (mode 0600, as the trust rules want).
std::string WriteUserConfig(const TempDir& home, const std::string& text) {
  fs::create_directories(home.path() + "/trtllm-run");
  const std::string path = home.path() + "/trtllm-run/config.yaml";
  WriteTextFile(path, text);
  ::chmod(path.c_str(), 0600);
  return path;
}

}  // namespace

TEST_CASE(
    "daily cli: Slurm and Docker flags on a local_direct case are exit 2 naming each flag "
    "and the scenarios that read them",
    "[cli][daily]") {
  TempDir repo("trtllm_unused_flags");
  CliRun run = RunCli({"plan", "--scenario", "local_direct", "-p", "batch", "-A", "research", "-t",
                       "30m", "--max-pending", "1h", "--docker-memory", "8g", "--custom-cmd",
                       "true", "--repo-root", repo.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text,
             Catch::Contains("--max-pending, -p/--partition, -A/--account, -t/--time-limit, "
                             "--docker-memory are not used by scenario local_direct") &&
                 Catch::Contains("local_docker") && Catch::Contains("local_slurm") &&
                 Catch::Contains("remote_slurm"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE(
    "daily cli: on a host without Slurm and Docker routing picks local_direct and the Slurm "
    "and Docker flags are exit 2 naming them",
    "[cli][daily]") {
  TempDir repo("trtllm_unused_routed");
  // A PATH with a shell and no sinfo, sbatch or docker: this host as a dev box without
  // them (the case: no --scenario, routing runs it "here anyway").
  TempDir bin("trtllm_unused_routed_bin");
  for (const char* tool :
       {"bash", "sh", "mktemp", "rm", "cat", "wc", "id", "timeout", "sed", "nvidia-smi", "true"}) {
    for (const char* dir : {"/usr/bin/", "/bin/"}) {
      if (fs::exists(std::string(dir) + tool)) {
        fs::create_symlink(std::string(dir) + tool, fs::path(bin.path()) / tool);
        break;
      }
    }
  }
  CliOptions options;
  options.args = {"run",         "-p",           "batch",         "-A",          "research",
                  "-t",          "30m",          "--max-pending", "1h",          "--docker-memory",
                  "8g",          "--custom-cmd", "true",          "--repo-root", repo.path(),
                  "--no-history"};
  options.env = {{"PATH", bin.path()}, {"DOCKER_HOST", "unix://" + bin.path() + "/no.sock"}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text,
             Catch::Contains("--max-pending, -p/--partition, -A/--account, -t/--time-limit, "
                             "--docker-memory are not used by scenario local_direct") &&
                 Catch::Contains("routing chose local_direct"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("daily cli: a config file's partition is a default and never refused on local_direct",
          "[cli][daily]") {
  TempDir repo("trtllm_unused_config");
  TempDir config_home("trtllm_unused_config_home");
  WriteUserConfig(config_home, "partition: batch\ntime_limit: 30m\n");
  CliOptions options;
  options.args = {"plan", "--scenario",  "local_direct", "--custom-cmd",
                  "true", "--repo-root", repo.path()};
  options.env = {{"XDG_CONFIG_HOME", config_home.path()}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
}

TEST_CASE("daily cli: a config's unknown key and bad duration come in one report with file:line",
          "[cli][daily][config]") {
  TempDir repo("trtllm_config_round");
  TempDir config_home("trtllm_config_round_home");
  const std::string path =
      WriteUserConfig(config_home, "monitor_timeout: forever\npartiton: batch\n");
  CliOptions options;
  options.args = {"plan", "--scenario",  "local_direct", "--custom-cmd",
                  "true", "--repo-root", repo.path()};
  options.env = {{"XDG_CONFIG_HOME", config_home.path()}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains(path + ":1") && Catch::Contains("'forever'") &&
                                  Catch::Contains(path + ":2") &&
                                  Catch::Contains("did you mean 'partition'"));
}

TEST_CASE(
    "daily cli: a cases file's typo key and a case with no command and a bad duration "
    "come in one report",
    "[cli][daily][cases]") {
  TempDir repo("trtllm_cases_round");
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases,
                "- {name: a, custom_cmd: 'true', scenraio: local_direct}\n"
                "- {name: b, scenario: local_direct}\n"
                "- {name: c, custom_cmd: 'true', scenario: local_direct, monitor_timeout: "
                "forever}\n");
  CliRun run = RunCli({"plan", "--cases", cases, "--repo-root", repo.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("3 of 3 cases") &&
                                  Catch::Contains("did you mean 'scenario'") &&
                                  Catch::Contains("no command given") &&
                                  Catch::Contains("monitor_timeout 'forever'"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("daily cli: a time limit above MaxTime names no other scenario (none would fix it)",
          "[cli][daily]") {
  TempDir repo("trtllm_maxtime_hint");
  const std::string slurm_env =
      std::string(TRTLLM_RUN_SOURCE_DIR) + "/tests/fixtures/slurm_env/cluster_a.json";
  CliRun run = RunCli({"plan", "--scenario", "local_slurm", "--slurm-env-file", slurm_env, "-p",
                       "small", "-t", "10h", "--container-image", "img:tag", "--custom-cmd", "true",
                       "--repo-root", repo.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("MaxTime"));
  CHECK_THAT(run.stderr_text, !Catch::Contains("--scenario local_direct"));
}

TEST_CASE("daily cli: a models mount error names no other scenario (none would fix it)",
          "[cli][daily]") {
  TempDir repo("trtllm_models_hint");
  const std::string source = TRTLLM_RUN_SOURCE_DIR;
  fs::copy(source + "/tests/fixtures/trtllm", repo.path() + "/tree", fs::copy_options::recursive);
  CliRun run = RunCli({"plan", "--scenario", "local_slurm", "--slurm-env-file",
                       source + "/tests/fixtures/slurm_env/cluster_a.json", "-p", "small",
                       "--container-image", "img:tag", "--test-cmd",
                       "pytest accuracy/test_llm_api_pytorch.py::TestLlama3_1_8B::test_auto_dtype",
                       "--repo-root", repo.path() + "/tree"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("problems with the models mount") &&
                                  Catch::Contains("--models-path HOST_DIR"));
  CHECK_THAT(run.stderr_text, !Catch::Contains("--scenario local_direct") &&
                                  !Catch::Contains("pick another scenario"));
}

TEST_CASE("daily cli: logs, status, attach take a name from list and @last, and -n is --tail",
          "[cli][daily][logs]") {
  TempDir repo("trtllm_names");
  CliOptions first;
  first.args = {
      "run",         "--scenario", "local_direct", "--custom-cmd", "echo one; echo two; echo three",
      "--repo-root", repo.path(),  "--no-history"};
  first.cwd = repo.path();
  CliRun ran = RunCli(first);
  INFO(ran.Describe());
  REQUIRE(ran.exit_code == 0);
  const std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE_FALSE(work_dir.empty());
  const std::string name = fs::path(work_dir).filename().string();

  CliOptions by_name;
  by_name.cwd = repo.path();
  by_name.args = {"logs", "-n", "1", name};
  CliRun logs = RunCli(by_name);
  INFO(logs.Describe());
  CHECK(logs.exit_code == 0);
  CHECK_THAT(logs.stdout_text, Catch::Contains("three") && !Catch::Contains("one"));

  by_name.args = {"status", "@last"};
  CliRun status = RunCli(by_name);
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("PASSED"));

  by_name.args = {"attach", name};  // a finished run: its verdict and its exit code
  CliRun attach = RunCli(by_name);
  INFO(attach.Describe());
  CHECK(attach.exit_code == 0);
  CHECK_THAT(attach.stdout_text + attach.stderr_text, Catch::Contains("PASSED"));

  by_name.args = {"logs", "--tail", "2", "@last"};
  CliRun last = RunCli(by_name);
  INFO(last.Describe());
  CHECK(last.exit_code == 0);
  CHECK_THAT(last.stdout_text, Catch::Contains("two") && Catch::Contains("three"));

  TempDir empty("trtllm_names_empty");
  by_name.cwd = empty.path();
  by_name.args = {"logs", "@last"};
  CliRun none = RunCli(by_name);
  INFO(none.Describe());
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.stderr_text, Catch::Contains("@last: no work dirs"));
}

TEST_CASE("daily cli: --scen is refused with a did-you-mean, never taken as --scenario",
          "[cli][daily]") {
  TempDir repo("trtllm_prefix");
  CliRun run = RunCli(
      {"plan", "--scen", "local_direct", "--custom-cmd", "true", "--repo-root", repo.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text,
             Catch::Contains("unknown option '--scen'") && Catch::Contains("'--scenario'"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("daily cli: help, version, -V and help SUBCOMMAND are accepted", "[cli][daily]") {
  for (const char* flag : {"-V", "version", "--version"}) {
    CliRun run = RunCli({flag});
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.stdout_text, Catch::StartsWith("trtllm-run "));
  }
  CliRun help = RunCli({"help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.stdout_text, Catch::Contains("subcommands:") && Catch::Contains("config.yaml"));
  CliRun logs = RunCli({"help", "logs"});
  INFO(logs.Describe());
  CHECK(logs.exit_code == 0);
  // The subcommand's description, and value names instead of ARG.
  CHECK_THAT(logs.stdout_text, Catch::Contains("print a work dir's log") &&
                                   Catch::Contains("--tail N") && Catch::Contains("-n"));
  CliRun run_help = RunCli({"run", "--help"});
  CHECK_THAT(run_help.stdout_text, Catch::Contains("--max-pending DURATION") &&
                                       Catch::Contains("--max-parallel N") &&
                                       !Catch::Contains(" ARG"));
}

TEST_CASE("daily cli: every subcommand's --help has its description and no ARG value name",
          "[cli][daily]") {
  CliRun help = RunCli({"help"});
  REQUIRE(help.exit_code == 0);
  // The subcommands as `help` lists them: "  NAME  description" under "subcommands:".
  std::vector<std::string> subcommands;
  std::istringstream lines(help.stdout_text.substr(help.stdout_text.find("subcommands:\n") + 13));
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
    subcommands.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  CHECK(subcommands.size() >= 16);
  for (const std::string& subcommand : subcommands) {
    CliRun run = RunCli({subcommand, "--help"});
    INFO(subcommand << ":\n" << run.stdout_text);
    CHECK(run.exit_code == 0);
    // usage, a blank line, then the description (before: stage --python, release
    // --job-id, env --format and --partitions, mcp --max-message-bytes showed ARG).
    // (Checked by hand: std::regex recurses once per character of a whole help text and
    // overflowed the sanitizer build's stack.)
    const std::string& text = run.stdout_text;
    CHECK(text.rfind("usage: trtllm-run " + subcommand + " ", 0) == 0);
    const std::size_t blank = text.find("\n\n");
    REQUIRE(blank != std::string::npos);
    CHECK(text.find('\n') == blank);  // the usage is one line
    const std::size_t description_end = text.find('\n', blank + 2);
    REQUIRE(description_end != std::string::npos);
    CHECK(description_end > blank + 3);  // a description line, not another blank one
    CHECK_FALSE(std::isspace(static_cast<unsigned char>(text[blank + 2])));
    CHECK(run.stdout_text.find(" ARG ") == std::string::npos);
    CHECK(run.stdout_text.find(" ARG\n") == std::string::npos);
  }
}

TEST_CASE("daily cli: the man page has the user config, ENVIRONMENT and EXAMPLES", "[cli][daily]") {
  CliRun man = RunCli({"--help-man"});
  CHECK(man.exit_code == 0);
  CHECK_THAT(man.stdout_text,
             Catch::Contains("run/config.yaml") && Catch::Contains(".SH ENVIRONMENT") &&
                 Catch::Contains(".SH EXAMPLES") && Catch::Contains("clusters.yaml"));
  CliRun bash = RunCli({"--completion", "bash"});
  CHECK_THAT(bash.stdout_text,
             Catch::Contains("--scenario) COMPREPLY=($(compgen -W \"local_direct local_docker") &&
                 Catch::Contains("--container-runtime) COMPREPLY=($(compgen -W \"pyxis none\""));
  CliRun zsh = RunCli({"--completion", "zsh"});
  CHECK_THAT(zsh.stdout_text, Catch::Contains(":SCENARIO:(local_direct local_docker"));
}

TEST_CASE(
    "daily cli: a config's partition is credited to the config, not to --partition, and a "
    "clusters: section for an unknown cluster is warned",
    "[cli][daily][config][slurm]") {
  TempDir repo("trtllm_credit");
  TempDir config_home("trtllm_credit_home");
  WriteUserConfig(config_home, "partition: small\nclusters:\n  no-such-cluster: {account: x}\n");
  const std::string slurm_env =
      std::string(TRTLLM_RUN_SOURCE_DIR) + "/tests/fixtures/slurm_env/cluster_a.json";
  CliOptions options;
  // No --scenario: routing sends the case to this host's Slurm cluster (the test cluster).
  options.args = {"plan",         "--slurm-env-file",  slurm_env, "--container-image",
                  "img:tag",      "--custom-cmd",      "true",    "--models-path",
                  "/data/models", "--llm-models-root", "/models", "--repo-root",
                  repo.path()};
  options.env = {{"XDG_CONFIG_HOME", config_home.path()}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.stdout_text, Catch::Contains("partition small (partition from a config file") &&
                                  !Catch::Contains("(--partition"));
  CHECK_THAT(run.stdout_text, Catch::Contains("clusters: 'no-such-cluster' names no cluster"));
}

TEST_CASE("daily cli: examples/cases/ids.txt's own documented command plans", "[cli][daily]") {
  TempDir repo("trtllm_ids_example");
  const std::string source = TRTLLM_RUN_SOURCE_DIR;
  fs::copy(source + "/tests/fixtures/trtllm", repo.path() + "/tree", fs::copy_options::recursive);
  const std::string tree = repo.path() + "/tree";
  // The file's first id, as a TensorRT-LLM checkout has it (the fixture tree does not).
  fs::create_directories(tree + "/tests/unittest/llmapi");
  WriteTextFile(tree + "/tests/unittest/llmapi/test_llm.py",
                "def test_llm_loading_from_hf():\n    pass\n");
  // The command as the file's header documents it, `plan` for `run` and a saved probe of
  // the test cluster for the live one.
  CliRun run = RunCli({"plan", "--cases", source + "/examples/cases/ids.txt", "--scenario",
                       "local_slurm", "--partition", "batch", "--models-path", "/data/models",
                       "--llm-models-root", "/models", "--slurm-env-file",
                       source + "/tests/fixtures/slurm_env/cluster_a.json", "--repo-root", tree});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
}

TEST_CASE(
    "daily cli: run --cases on a terminal prints one line per case cut to the width "
    "before its verdict (pty via script)",
    "[cli][daily][cases][pty]") {
  TempDir repo("trtllm_cases_pty");
  const std::string cases = repo.path() + "/cases.yaml";
  std::string text;
  for (int i = 1; i <= 5; ++i) {
    text += "- {name: case-" + std::to_string(i) + "-" + std::string(60, 'x') +
            ", custom_cmd: 'echo " + std::to_string(i) + "', scenario: local_direct}\n";
  }
  WriteTextFile(cases, text);
  const std::string transcript = repo.path() + "/typescript";
  // script(1) runs trtllm-run on a pseudo-terminal 60 columns wide; stderr goes to it too.
  const std::string command = "stty cols 60 rows 40; exec " + std::string(TRTLLM_RUN_BIN) +
                              " run --no-history --max-parallel-local 2 --cases " + cases +
                              " --repo-root " + repo.path();
  CliOptions options;
  options.program = "/usr/bin/script";
  options.args = {"-qefc", command, transcript};
  options.timeout_seconds = 120;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  std::string screen = ReadTextFile(transcript);
  INFO(screen);
  // Each case's verdict line, up to what ends it on screen (a newline, a carriage return
  // or the escape that redraws the live board): never wider than the terminal.
  int case_lines = 0;
  for (std::size_t at = screen.find("trtllm-run: ["); at != std::string::npos;
       at = screen.find("trtllm-run: [", at + 1)) {
    const std::size_t end = screen.find_first_of("\r\n\x1b", at);
    const std::string line = screen.substr(at, end - at);
    if (line.find("/5]") == std::string::npos) continue;
    ++case_lines;
    CHECK(line.size() <= 60);
    // The name is what gets cut, never the verdict (before: "case-1-xxx...x: PAS...").
    CHECK(std::regex_search(line, std::regex("\\.\\.\\.: PASSED in [0-9.]+s$")));
  }
  CHECK(case_lines == 5);
  // Before the final table: the planned line, the session line and the five verdicts.
  const std::string before_table = screen.substr(0, screen.find("#  case"));
  int lines = 0;
  for (char c : before_table) lines += c == '\n';
  CHECK(lines <= 5 + 4);
  CHECK_THAT(screen, !Catch::Contains("[case 1] "));
}
