// Files written by someone else, on the real binary: a cases file is read as what it is
// (never as shell lines because its first line looked unusual), and every parser is
// bounded: YAML alias bombs, huge lines, deep JSON nesting and oversized files are refused
// quickly with exit 2, never a crash or minutes of CPU.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

struct Hostile {
  TempDir repo{"trtllm_hostile"};
  CliRun run;

  std::string File(const std::string& name, const std::string& contents) const {
    const std::string path = repo.path() + "/" + name;
    fs::create_directories(fs::path(path).parent_path());
    WriteTextFile(path, contents);
    return path;
  }
  void Go(std::vector<std::string> args, double timeout_seconds = 60) {
    CliOptions options;
    options.args = std::move(args);
    options.timeout_seconds = timeout_seconds;
    options.cwd = repo.path();
    run = RunCli(options);
  }
  // `trtllm-run run --cases FILE --scenario local_direct` in the repo.
  void RunCases(const std::string& cases) {
    Go({"run", "--cases", cases, "--scenario", "local_direct", "--repo-root", repo.path(),
        "--monitor-timeout", "1m"});
  }
  void ExpectRefused(const std::string& message) const {
    INFO(run.Describe());
    CHECK_FALSE(run.timed_out);
    CHECK(run.term_signal == 0);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(message));
    CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  }
};

// 9 lists of 9 aliases of the list before: 9^9 (387 million) leaves from 430 bytes.
std::string AliasBomb() {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string before = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) text += (k ? ", " : "") + before;
    text += "]\n";
  }
  return text + "custom_cmd: \"true\"\n";
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("hostile input: a cases file is read as what it is, never as shell lines",
          "[cli][hostile]") {
  Hostile h;
  const std::string marker = h.repo.path() + "/command_substitution_ran";
  const std::string touch = "$(touch " + marker + ")";

  SECTION("a JSON list with a UTF-8 byte order mark is JSON") {
    const std::string cases = h.File(
        "bom.json", "\xEF\xBB\xBF[{\"name\": \"bom " + touch + "\", \"custom_cmd\": \"true\"}]\n");
    h.RunCases(cases);
    INFO(h.run.Describe());
    CHECK(h.run.exit_code == 0);
    CHECK_THAT(h.run.stderr_text, Catch::Contains("custom"));
    CHECK_THAT(h.run.stderr_text, Catch::Contains("PASSED 1"));
  }
  SECTION("YAML with quoted keys is YAML") {
    const std::string cases = h.File("quoted.yaml",
                                     "\"defaults\": {\"monitor_timeout\": \"1m\"}\n\"cases\":\n  - "
                                     "{\"name\": \"quoted " +
                                         touch + "\", \"custom_cmd\": \"true\"}\n");
    h.RunCases(cases);
    INFO(h.run.Describe());
    CHECK(h.run.exit_code == 0);
    CHECK_THAT(h.run.stderr_text, Catch::Contains("PASSED 1"));
  }
  SECTION("broken YAML with quoted keys is refused with the YAML error, not run") {
    const std::string cases = h.File(
        "broken.yaml", "\"custom_cmd\": \"echo " + touch + "\"\n\"scenario\": [local_direct\n");
    h.RunCases(cases);
    h.ExpectRefused("broken.yaml:");
    CHECK_THAT(h.run.stderr_text, Catch::Contains("not valid YAML or JSON"));
  }
  SECTION("plain-list lines that are neither test ids nor commands are refused, all named") {
    const std::string cases = h.File(
        "ids.txt", "pytest --version\n\"" + touch + "\" x\ncustom_cmd: echo " + touch + "\n");
    h.RunCases(cases);
    h.ExpectRefused("2 of 3 cases in " + cases + " are invalid; nothing was run");
    CHECK_THAT(h.run.stderr_text, Catch::Contains("ids.txt:2 (case 2): '\""));
    CHECK_THAT(h.run.stderr_text, Catch::Contains("which starts YAML or JSON"));
    CHECK_THAT(h.run.stderr_text, Catch::Contains("ids.txt:3 (case 3): "));
    CHECK_THAT(h.run.stderr_text, Catch::Contains("its first word 'custom_cmd:' is not a program"));
  }
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("hostile input: parsers are bounded, refuse with exit 2 and never crash",
          "[cli][hostile]") {
  Hostile h;
  SECTION("a YAML alias bomb in --request is refused at once") {
    const std::string request = h.File("bomb.yaml", AliasBomb());
    h.Go({"plan", "--request", request, "--scenario", "local_direct"}, 20);
    h.ExpectRefused("bomb.yaml:");
    CHECK_THAT(h.run.stderr_text, Catch::Contains("more than 1000000 nodes"));
    CHECK(h.run.seconds < 10);
  }
  SECTION("a 40 KB test id in a plain case list is planned and run") {
    h.File("tests/test_long.py",
           "import pytest\n\nVALUE = object()\n\n\n"
           "@pytest.mark.parametrize('x', [pytest.param(VALUE)])\n"
           "def test_p(x):\n    pass\n");
    const std::string cases =
        h.File("long.txt", "tests/test_long.py::test_p[" + std::string(40000, 'a') + "]\n");
    h.RunCases(cases);
    INFO(h.run.Describe().substr(0, 4000));
    CHECK_FALSE(h.run.timed_out);
    CHECK(h.run.term_signal == 0);
    CHECK_THAT(h.run.stderr_text, Catch::Contains("planned 1 cases"));
    CHECK_THAT(h.run.stderr_text, Catch::Contains("1 cases:"));
  }
  SECTION("a decorator with 300000 blank lines inside its call is read") {
    h.File("tests/test_deep.py", "import pytest\n\n\n@pytest.mark.skip_less_device(" +
                                     std::string(300000, '\n') + "1)\ndef test_x():\n    pass\n");
    h.Go({"plan", "--test-cmd", "pytest tests/test_deep.py::test_x", "--scenario", "local_direct",
          "--repo-root", h.repo.path()});
    INFO(h.run.Describe().substr(0, 4000));
    CHECK(h.run.term_signal == 0);
    CHECK(h.run.exit_code == 0);
    CHECK_THAT(h.run.stdout_text,
               Catch::Contains("required_devices 1: skip_less_device(1) on test_x"));
  }
  SECTION("200000-deep JSON in a work dir: status, attach, cancel, exec refuse it") {
    const std::string work_dir = h.repo.path() + "/wd";
    h.File("wd/job_spec.json", Nested(200000));
    h.File("wd/run_state.json", Nested(200000));
    for (const char* subcommand : {"status", "attach", "cancel", "exec"}) {
      INFO(subcommand);
      h.Go({subcommand, work_dir});
      INFO(h.run.Describe().substr(0, 4000));
      CHECK(h.run.term_signal == 0);
      CHECK(h.run.exit_code == 2);
      CHECK_THAT(h.run.stderr_text, Catch::Contains("nest deeper than 100 levels"));
    }
  }
  SECTION("200000-deep JSON in plan --slurm-env-file is refused") {
    const std::string env = h.File("slurm_env.json", "{\"user\": " + Nested(200000) + "}");
    h.Go({"plan", "--slurm-env-file", env, "--scenario", "local_slurm", "--custom-cmd", "true"});
    h.ExpectRefused("slurm_env.json: arrays and objects nest deeper than 100 levels");
  }
  SECTION("a 50 MB request file is refused before it is parsed") {
    const std::string request = h.File(
        "big.yaml", "custom_cmd: \"true\"\n#" + std::string(std::size_t{50} << 20, 'x') + "\n");
    h.Go({"plan", "--request", request, "--scenario", "local_direct"}, 20);
    h.ExpectRefused("request file '" + request +
                    "' is 52428821 bytes (50.0 MiB), over the limit of "
                    "1048576 bytes (1.0 MiB)");
    CHECK(h.run.seconds < 5);
  }
}
