// `trtllm-run run --cases FILE --run-dir DIR`: the combined result goes where the caller
// said (the MCP server hands that directory out as a handle), never beside it.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

TEST_CASE("run --cases --run-dir: the combined result.json goes to DIR, which must be new",
          "[cli][cases]") {
  TempDir repo("trtllm_run_dir");
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases, "- {custom_cmd: 'echo one'}\n");
  const std::string dir = repo.path() + "/elsewhere/run";
  CliOptions options;
  options.args = {"run",         "--cases",   cases,       "--scenario", "local_direct",
                  "--repo-root", repo.path(), "--run-dir", dir};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK(fs::exists(dir + "/result.json"));
  CHECK(ReadTextFile(dir + "/result.json").find("\"run_dir\": \"" + dir + "\"") !=
        std::string::npos);

  // The same directory again: refused before anything runs (no "_2" beside it).
  CliRun again = RunCli(options);
  INFO(again.Describe());
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.stderr_text,
             Catch::Contains("--run-dir") && Catch::Contains("does not exist yet"));
  CHECK_FALSE(fs::exists(dir + "_2"));

  CliRun alone = RunCli({"run", "--custom-cmd", "echo x", "--run-dir", dir + "2"});
  CHECK(alone.exit_code == 2);
  CHECK_THAT(alone.stderr_text, Catch::Contains("need --cases FILE"));
}
