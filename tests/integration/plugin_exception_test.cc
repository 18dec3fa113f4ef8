// No exception crosses the plugin API: a workflow or executor that throws from any method
// core calls, through the real binary, ends the case as ERROR (exit 3) with a message
// naming the plugin, the method and what it threw; the process does not crash. The
// plugins are tests/plugins/throwing_*.cc.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"

using namespace trtllm_run_test;

namespace {

const std::string kThrowingPlugins = std::string(TEST_PLUGIN_DIR) + "/throwing";

CliRun RunThrowing(const TempDir& repo, const std::string& command,
                   const std::vector<std::string>& extra = {}) {
  CliOptions options;
  options.args = {"run",        "--plugin-dir",      kThrowingPlugins,
                  "--scenario", "throwing_executor", "--custom-cmd",
                  command,      "--repo-root",       repo.path()};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.timeout_seconds = 60;
  return RunCli(options);
}

TEST_CASE("a plugin that throws while planning: exit 3, the plugin and the exception named",
          "[cli][plugins]") {
  struct Case {
    std::string command, plugin, method, what;
  };
  const std::vector<Case> cases = {
      {"throw:Claims", "workflow 'throwing_workflow'", "Claims()", "Claims failed on purpose"},
      {"throw:Plan", "workflow 'throwing_workflow'", "Plan()", "Plan failed on purpose"},
      {"throw-int:Plan", "workflow 'throwing_workflow'", "Plan()", "not a std::exception"},
      {"throw:Validate", "executor 'throwing_executor'", "Validate()",
       "Validate failed on purpose"},
      {"throw:Prepare", "executor 'throwing_executor'", "Prepare()", "Prepare failed on purpose"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.command) {
      TempDir repo("trtllm_throwing");
      CliRun run = RunThrowing(repo, c.command);
      INFO(run.Describe());
      CHECK(run.term_signal == 0);  // no std::terminate, no abort
      CHECK(run.exit_code == 3);
      CHECK_THAT(run.stderr_text,
                 Catch::Contains(c.plugin + " threw from " + c.method) && Catch::Contains(c.what));
      CHECK(FindSingleWorkDir(repo.path()).empty());  // nothing half-written is left
    }
  }
}

TEST_CASE("a plugin that throws while running: result ERROR naming the plugin, exit 3",
          "[cli][plugins]") {
  struct Case {
    std::string command, expected;
  };
  const std::vector<Case> cases = {
      {"throw:Execute",
       "executor 'throwing_executor' threw from Execute(): throwing_executor: "
       "Execute failed on purpose"},
      {"throw-int:Execute",
       "executor 'throwing_executor' threw from Execute(): an exception "
       "that is not a std::exception"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.command) {
      TempDir repo("trtllm_throwing");
      CliRun run = RunThrowing(repo, c.command);
      INFO(run.Describe());
      CHECK(run.term_signal == 0);
      CHECK(run.exit_code == 3);
      CHECK_THAT(run.stderr_text, Catch::Contains(c.expected));
      const std::string work_dir = FindSingleWorkDir(repo.path());
      REQUIRE(!work_dir.empty());
      rapidjson::Document result = ReadResultJson(work_dir);
      REQUIRE(!result.HasParseError());
      CHECK(std::string(result["status"].GetString()) == "ERROR");
      CHECK_THAT(std::string(result["reason"].GetString()), Catch::Contains(c.expected));
    }
  }
}

TEST_CASE("a workflow whose Judge() throws keeps the executor's verdict and records the error",
          "[cli][plugins]") {
  TempDir repo("trtllm_throwing");
  CliRun run = RunThrowing(repo, "throw:Judge");
  INFO(run.Describe());
  CHECK(run.term_signal == 0);
  CHECK(run.exit_code == 0);  // the executor's PASSED stands
  const std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(!result.HasParseError());
  CHECK(std::string(result["status"].GetString()) == "PASSED");
  std::string errors;
  for (const auto& error : result["errors"].GetArray()) errors += error.GetString();
  CHECK_THAT(errors, Catch::Contains("workflow 'throwing_workflow' threw from Judge(): "
                                     "throwing_workflow: Judge failed on purpose"));
}

TEST_CASE("run --cases: a case whose executor throws is ERROR, the other cases still run",
          "[cli][plugins][multi]") {
  TempDir repo("trtllm_throwing");
  WriteTextFile(repo.path() + "/cases.yaml",
                "defaults:\n  scenario: throwing_executor\ncases:\n"
                "  - {name: fine, custom_cmd: 'throw:nothing'}\n"
                "  - {name: throws, custom_cmd: 'throw:Execute'}\n");
  CliOptions options;
  options.args = {
      "run",         "--plugin-dir", kThrowingPlugins, "--cases", repo.path() + "/cases.yaml",
      "--repo-root", repo.path(),    "--json"};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.term_signal == 0);
  CHECK(run.exit_code == 3);  // ERROR is the most severe verdict
  rapidjson::Document combined;
  combined.Parse(run.stdout_text.c_str());
  REQUIRE(!combined.HasParseError());
  REQUIRE(combined["cases"].Size() == 2);
  CHECK(std::string(combined["cases"][0]["status"].GetString()) == "PASSED");
  CHECK(std::string(combined["cases"][1]["status"].GetString()) == "ERROR");
  REQUIRE(combined["cases"][1].HasMember("result"));
  CHECK_THAT(std::string(combined["cases"][1]["result"]["reason"].GetString()),
             Catch::Contains("executor 'throwing_executor' threw from Execute()"));
}

}  // namespace
