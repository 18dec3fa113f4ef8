// The CLI's contract with users and CI: bad input is exit 2 with a message naming the
// problem and nothing created; --help, --version and `plugins` say what they should.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "trtllm_run/sdk/plugin_api.h"

namespace fs = std::filesystem;

namespace trtllm_run_test {
namespace {

// Runs `trtllm-run run --repo-root ROOT <args>` and checks the bad-input contract.
CliRun ExpectBadInput(const std::vector<std::string>& args) {
  TempDir root;
  CliOptions options;
  options.args = {"run", "--repo-root", root.path()};
  options.args.insert(options.args.end(), args.begin(), args.end());
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stdout_text.empty());
  CHECK_FALSE(fs::exists(fs::path(root.path()) / "work_dirs"));
  return run;
}

TEST_CASE("CLI: an unknown flag is exit 2 and names the flag", "[cli][bad_input]") {
  CliRun run = ExpectBadInput({"--custom-cmd", "true", "--frobnicate", "3"});
  CHECK_THAT(run.stderr_text, Catch::Contains("--frobnicate"));
  CHECK_THAT(run.stderr_text, Catch::Contains("trtllm-run run --help"));
}

TEST_CASE("CLI: two kinds of command are exit 2 and both are named", "[cli][bad_input]") {
  CliRun run = ExpectBadInput({"--custom-cmd", "true", "--test-cmd", "pytest a.py"});
  CHECK_THAT(run.stderr_text, Catch::Contains("custom_cmd"));
  CHECK_THAT(run.stderr_text, Catch::Contains("test_cmd"));

  CliRun bench_eval =
      ExpectBadInput({"--bench-cmd", "trtllm-bench x", "--eval-cmd", "trtllm-eval"});
  CHECK_THAT(bench_eval.stderr_text, Catch::Contains("bench_cmd"));
  CHECK_THAT(bench_eval.stderr_text, Catch::Contains("eval_cmd"));
}

TEST_CASE("CLI: a bad --monitor-timeout is exit 2 with the accepted forms", "[cli][bad_input]") {
  for (const char* bad : {"soon", "1h30", "0", "-5", "25:61:00"}) {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--monitor-timeout", bad});
    CHECK_THAT(run.stderr_text, Catch::Contains(std::string("'") + bad + "'"));
    CHECK_THAT(run.stderr_text, Catch::Contains("30m"));
  }
}

TEST_CASE("CLI: a missing custom_script is exit 2 and names the file", "[cli][bad_input]") {
  CliRun run = ExpectBadInput({"--custom-script", "/nonexistent/dir/run_me.sh"});
  CHECK_THAT(run.stderr_text, Catch::Contains("/nonexistent/dir/run_me.sh"));
  CHECK_THAT(run.stderr_text, Catch::Contains("does not exist"));
}

TEST_CASE("CLI: other bad input is exit 2 before anything runs", "[cli][bad_input]") {
  SECTION("no command") {
    CliRun run = ExpectBadInput({"--model-name", "x"});
    CHECK_THAT(run.stderr_text, Catch::Contains("no command given"));
  }
  SECTION("a non-numeric device count") {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--required-devices", "four"});
    CHECK_THAT(run.stderr_text, Catch::Contains("required_devices"));
    CHECK_THAT(run.stderr_text, Catch::Contains("four"));
  }
  SECTION("a bad custom_env word") {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--custom-env", "GOOD=1 2BAD=x"});
    CHECK_THAT(run.stderr_text, Catch::Contains("2BAD=x"));
  }
  SECTION("an unknown scenario lists the known ones") {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--scenario", "mars"});
    CHECK_THAT(run.stderr_text, Catch::Contains("mars"));
    CHECK_THAT(run.stderr_text, Catch::Contains("local_direct"));
  }
  SECTION("a stray positional argument") {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "oops"});
    CHECK_THAT(run.stderr_text, Catch::Contains("'oops'"));
  }
  SECTION("a missing --plugin-dir") {
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--plugin-dir", "/no/such/plugins"});
    CHECK_THAT(run.stderr_text, Catch::Contains("/no/such/plugins"));
  }
}

TEST_CASE("CLI: request files work and their errors name file and key", "[cli][request]") {
  TempDir root;
  std::string good = root.path() + "/case.yaml";
  WriteTextFile(good,
                "model_name: from_file\n"
                "custom_cmd: echo \"file says $WHO\"\n"
                "custom_env:\n  WHO: the file\n"
                "monitor_timeout: 1m\n");
  CliRun run =
      RunCli({"run", "--request", good, "--repo-root", root.path(), "--scenario", "local_direct"});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.stdout_text, Catch::Contains("file says the file"));
  std::string work_dir = FindSingleWorkDir(root.path());
  CHECK(fs::path(work_dir).filename().string().rfind("from_file_", 0) == 0);

  // Flags override the file.
  TempDir second;
  CliRun overridden = RunCli({"run", "--request", good, "--repo-root", second.path(),
                              "--custom-cmd", "echo flag wins", "--scenario", "local_direct"});
  CHECK_THAT(overridden.stdout_text, Catch::Contains("flag wins"));

  std::string bad = root.path() + "/bad.yaml";
  WriteTextFile(bad, "custom_cmd: true\nmonitor_timout: 5m\n");
  TempDir third;
  CliRun rejected = RunCli({"run", "--request", bad, "--repo-root", third.path()});
  INFO(rejected.Describe());
  CHECK(rejected.exit_code == 2);
  CHECK_THAT(rejected.stderr_text, Catch::Contains("bad.yaml"));
  CHECK_THAT(rejected.stderr_text, Catch::Contains("monitor_timout"));
  CHECK_THAT(rejected.stderr_text, Catch::Contains("monitor_timeout"));  // the suggestion
  CHECK_FALSE(fs::exists(fs::path(third.path()) / "work_dirs"));
}

TEST_CASE("CLI: --help, --version and unknown subcommands", "[cli]") {
  CliRun help = RunCli({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.stdout_text, Catch::Contains("plugins"));
  CHECK_THAT(help.stdout_text, Catch::Contains("130"));

  CliRun run_help = RunCli({"run", "--help"});
  CHECK(run_help.exit_code == 0);
  for (const char* flag : {"--custom-cmd", "--custom-script", "--custom-env", "--model-name",
                           "--monitor-timeout", "--repo-root", "--request", "--plugin-dir"}) {
    CHECK_THAT(run_help.stdout_text, Catch::Contains(flag));
  }

  CliRun version = RunCli({"--version"});
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.stdout_text, Catch::StartsWith("trtllm-run "));
  CHECK_THAT(version.stdout_text,
             Catch::Contains("plugin API " + std::to_string(TRTLLM_RUN_PLUGIN_API_VERSION)));

  CliRun unknown = RunCli({"launch"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.stderr_text, Catch::Contains("unknown subcommand 'launch'"));
}

TEST_CASE("CLI: plugins lists the built-ins and reports broken plugins", "[cli][plugins]") {
  CliOptions options;
  options.args = {"plugins"};
  options.unset_env = {"TRTLLM_RUN_PLUGIN_PATH"};
  CliRun builtin = RunCli(options);
  INFO(builtin.Describe());
  CHECK(builtin.exit_code == 0);
  CHECK_THAT(builtin.stdout_text, Catch::Contains("workflow_custom.so"));
  CHECK_THAT(builtin.stdout_text, Catch::Contains("executor_local_direct.so"));
  CHECK(builtin.stderr_text.empty());

  // A directory with good and broken plugins: every problem has its own warning and the
  // good ones are listed.
  options.env = {{"TRTLLM_RUN_PLUGIN_PATH", std::string(TEST_PLUGIN_DIR) + "/mixed"}};
  CliRun mixed = RunCli(options);
  INFO(mixed.Describe());
  CHECK(mixed.exit_code == 0);
  CHECK_THAT(mixed.stdout_text, Catch::Contains("test_executor"));
  CHECK_THAT(mixed.stdout_text, Catch::Contains("test_workflow"));
  CHECK_THAT(mixed.stderr_text, Catch::Contains("not a shared library"));
  CHECK_THAT(mixed.stderr_text, Catch::Contains("plugin API version"));
  CHECK_THAT(mixed.stderr_text, Catch::Contains("no entry point"));
  CHECK_THAT(mixed.stderr_text, Catch::Contains("duplicate plugin name"));
}

}  // namespace
}  // namespace trtllm_run_test
