// Planning errors all at once, with the route: every independent problem of a case (and
// of every case of a cases file) in one message, and each error after routing names the
// scenario routing chose, why, and the --scenario values that send the case elsewhere.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

TEST_CASE(
    "planning errors: a custom command routed to local_slurm says so and names "
    "--scenario local_direct",
    "[cli][slurm]") {
  // This host is a Slurm login node: a plain run goes to local_slurm, which needs an image.
  TempDir repo("trtllm_route_error");
  CliOptions options;
  options.args = {"run", "--custom-cmd", "echo hi", "--repo-root", repo.path()};
  options.cwd = repo.path();
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("no container image") &&
                                  Catch::Contains("routing chose local_slurm") &&
                                  Catch::Contains("--scenario local_direct"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE(
    "planning errors: bench on Slurm without models reports --models-path and "
    "--llm-models-root together",
    "[cli][slurm]") {
  TempDir repo("trtllm_models_errors");
  CliOptions options;
  options.args = {"plan",
                  "--scenario",
                  "local_slurm",
                  "--container-image",
                  "img:tag",
                  "--repo-root",
                  repo.path(),
                  "--bench-cmd",
                  "trtllm-bench --model meta-llama/Llama-3.1-8B throughput"};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("--models-path") &&
                                  Catch::Contains("--llm-models-root") &&
                                  Catch::Contains("2 problems") &&
                                  Catch::Contains("routing chose local_slurm: requested"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("planning errors: independent problems of one case come in one message", "[cli]") {
  TempDir repo("trtllm_case_errors");
  CliRun run = RunCli({"plan", "--custom-cmd", "echo hi", "--scenario", "local_direct",
                       "--monitor-timeout", "2x", "--repo-root", repo.path() + "/missing"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains("2 problems in this case") &&
                                  Catch::Contains("monitor_timeout '2x'") &&
                                  Catch::Contains("is not a directory"));
}

TEST_CASE(
    "planning errors: three bad cases of a file in one message, each with its problems "
    "and route, nothing submitted",
    "[cli][cases][slurm]") {
  TempDir repo("trtllm_cases_errors");
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases,
                "- {name: two-problems, custom_cmd: 'echo a', scenario: local_direct,\n"
                "   monitor_timeout: 2x, repo_root: " +
                    repo.path() +
                    "/missing}\n"
                    "- {name: two-commands, custom_cmd: 'echo b', test_cmd: 'tests/x.py'}\n"
                    "- {name: no-image, custom_cmd: 'echo c', scenario: local_slurm}\n"
                    "- {name: fine, custom_cmd: 'echo d', scenario: local_direct}\n");
  CliOptions options;
  options.args = {"run", "--cases", cases, "--repo-root", repo.path()};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text,
             Catch::Contains("3 of 4 cases cannot be planned") &&
                 Catch::Contains("'two-problems'") && Catch::Contains("2 problems in this case") &&
                 Catch::Contains("'two-commands'") && Catch::Contains("'no-image'") &&
                 Catch::Contains("routing chose local_slurm"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}
