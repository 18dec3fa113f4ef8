// Defaults set once: $XDG_CONFIG_HOME/trtllm-run/config.yaml and <repo>/.trtllm-run.yaml
// (user_config.h). Precedence flags > request file > repo config > user config; a
// cluster's section overrides the top level; the plan summary names file and line.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

namespace {

struct ConfigSetup {
  TempDir root{"trtllm_config"};
  std::string repo = root.path() + "/repo";
  std::string xdg = root.path() + "/xdg";
  std::string user_config = xdg + "/trtllm-run/config.yaml";
  std::string repo_config = repo + "/.trtllm-run.yaml";
  ConfigSetup() {
    fs::create_directories(repo);
    fs::create_directories(xdg + "/trtllm-run");
  }
  CliRun Plan(std::vector<std::string> args) {
    CliOptions options;
    options.args = {"plan", "--repo-root", repo};
    options.args.insert(options.args.end(), args.begin(), args.end());
    options.env = {{"XDG_CONFIG_HOME", xdg}};
    options.timeout_seconds = 60;
    return RunCli(options);
  }
  std::string JobSpec() {
    std::string dir = FindSingleWorkDir(repo);
    std::string text = dir.empty() ? "" : ReadTextFile(dir + "/job_spec.json");
    fs::remove_all(repo + "/work_dirs");
    return text;
  }
};

}  // namespace

TEST_CASE("config file: repo config over user config, request file and flags over both",
          "[cli][config]") {
  ConfigSetup setup;
  WriteTextFile(setup.user_config, "# defaults\nmonitor_timeout: 10m\ntime_limit: '01:00:00'\n");
  const std::vector<std::string> direct = {"--scenario", "local_direct", "--custom-cmd", "echo hi"};

  CliRun user_only = setup.Plan(direct);
  INFO(user_only.Describe());
  REQUIRE(user_only.exit_code == 0);
  CHECK_THAT(user_only.stdout_text,
             Catch::Contains("config: monitor_timeout=10m (from " + setup.user_config + ":2)"));
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"monitor_timeout_seconds\": 600"));

  WriteTextFile(setup.repo_config, "monitor_timeout: 5m\n");
  CliRun repo = setup.Plan(direct);
  INFO(repo.Describe());
  REQUIRE(repo.exit_code == 0);
  CHECK_THAT(repo.stdout_text,
             Catch::Contains("config: monitor_timeout=5m (from " + setup.repo_config + ":1)"));
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"monitor_timeout_seconds\": 300"));

  const std::string request = setup.root.path() + "/request.yaml";
  WriteTextFile(request, "monitor_timeout: 2m\n");
  std::vector<std::string> with_request = direct;
  with_request.insert(with_request.end(), {"--request", request});
  CliRun from_request = setup.Plan(with_request);
  INFO(from_request.Describe());
  REQUIRE(from_request.exit_code == 0);
  CHECK_THAT(from_request.stdout_text, !Catch::Contains("config: monitor_timeout"));
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"monitor_timeout_seconds\": 120"));

  with_request.insert(with_request.end(), {"--monitor-timeout", "1m"});
  CliRun from_flag = setup.Plan(with_request);
  INFO(from_flag.Describe());
  REQUIRE(from_flag.exit_code == 0);
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"monitor_timeout_seconds\": 60"));
}

TEST_CASE("config file: a cluster's section overrides the top level on that cluster",
          "[cli][config][slurm]") {
  ConfigSetup setup;
  fs::create_directories(setup.root.path() + "/models");
  WriteTextFile(setup.user_config,
                "partition: batch\nllm_models_root: /models\nmodels_path: " + setup.root.path() +
                    "/models\n"
                    "clusters:\n  trtllm-test:\n    partition: debug\n"
                    "  elsewhere:\n    partition: cpu\n");
  const std::vector<std::string> slurm = {"--scenario", "local_slurm",  "--container-image",
                                          "img:tag",    "--custom-cmd", "echo hi"};
  CliRun run = setup.Plan(slurm);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.stdout_text, Catch::Contains("config: partition=debug (from " + setup.user_config +
                                              ":6, cluster trtllm-test)"));
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"partition\": \"debug\""));

  std::vector<std::string> flagged = slurm;
  flagged.insert(flagged.end(), {"--partition", "batch"});
  CliRun flag = setup.Plan(flagged);
  INFO(flag.Describe());
  REQUIRE(flag.exit_code == 0);
  CHECK_THAT(flag.stdout_text, !Catch::Contains("config: partition"));
  CHECK_THAT(setup.JobSpec(), Catch::Contains("\"partition\": \"batch\""));
}

TEST_CASE("config file: unknown keys are all reported with did-you-mean, file and line",
          "[cli][config]") {
  ConfigSetup setup;
  WriteTextFile(setup.user_config,
                "partiton: batch\nclusters:\n  c1:\n    acount: research\n    custom_cmd: x\n");
  CliRun run = setup.Plan({"--scenario", "local_direct", "--custom-cmd", "echo hi"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains(setup.user_config + ":1: unknown key 'partiton'") &&
                                  Catch::Contains("did you mean 'partition'") &&
                                  Catch::Contains(setup.user_config + ":4: unknown key 'acount'") &&
                                  Catch::Contains("did you mean 'account'") &&
                                  Catch::Contains(":5: 'custom_cmd' belongs to one case"));
  CHECK_FALSE(fs::exists(setup.repo + "/work_dirs"));

  // The repo's config is checked as strictly, and a bad value is named with its line.
  fs::remove(setup.user_config);
  WriteTextFile(setup.repo_config, "node_count: many\n");
  CliRun repo = setup.Plan({"--scenario", "local_direct", "--custom-cmd", "echo hi"});
  INFO(repo.Describe());
  CHECK(repo.exit_code == 2);
  CHECK_THAT(repo.stderr_text, Catch::Contains(setup.repo_config + ":1"));
  CHECK_FALSE(fs::exists(setup.repo + "/work_dirs"));
}

TEST_CASE("config file: hostile files are refused by size, YAML budget and content",
          "[cli][config]") {
  ConfigSetup setup;
  const std::vector<std::string> direct = {"--scenario", "local_direct", "--custom-cmd", "echo hi"};
  WriteTextFile(setup.user_config, "partition: " + std::string(2 << 20, 'a') + "\n");
  CliRun large = setup.Plan(direct);
  CHECK(large.exit_code == 2);
  CHECK_THAT(large.stderr_text, Catch::Contains("over the limit"));

  WriteTextFile(setup.user_config, "partition: " + std::string(200, '[') + "\n");
  CliRun deep = setup.Plan(direct);
  CHECK(deep.exit_code == 2);
  CHECK_THAT(deep.stderr_text, Catch::Contains(setup.user_config));

  WriteTextFile(setup.user_config, "account: \"a\\x1b[31mb\"\n");
  CliRun control = setup.Plan(direct);
  INFO(control.Describe());
  CHECK(control.exit_code == 2);
  CHECK_THAT(control.stderr_text, Catch::Contains(setup.user_config + ":1"));
  CHECK(control.stderr_text.find('\x1b') == std::string::npos);

  WriteTextFile(setup.user_config, "- partition\n");
  CliRun list = setup.Plan(direct);
  CHECK(list.exit_code == 2);
  CHECK_THAT(list.stderr_text, Catch::Contains("must be a mapping"));
  CHECK_FALSE(fs::exists(setup.repo + "/work_dirs"));
}
