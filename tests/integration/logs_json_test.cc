// `trtllm-run logs --json`: the log of a work dir as one JSON document, whatever bytes the
// job wrote (control characters and invalid UTF-8 still make valid JSON).
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"

using namespace trtllm_run_test;

namespace {

CliRun Cli(std::vector<std::string> args) {
  CliOptions options;
  options.args = std::move(args);
  options.timeout_seconds = 60;
  return RunCli(options);
}

}  // namespace

TEST_CASE("logs --json prints the log as a valid JSON document, not with -f", "[cli][daily]") {
  TempDir repo("trtllm_logs_json");
  CliRun run = Cli({"run", "--custom-cmd", "echo one; printf '\\033[31mtwo\\377\\n'; echo three",
                    "--scenario", "local_direct", "--repo-root", repo.path()});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string dir = FindSingleWorkDir(repo.path());

  CliRun logs = Cli({"logs", "--json", "--tail", "2", dir});
  INFO(logs.Describe());
  REQUIRE(logs.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(logs.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["work_dir"].GetString()) == dir);
  CHECK(std::string(doc["phase"].GetString()) == "finished");
  const std::string text = doc["text"].GetString();
  CHECK_THAT(text, !Catch::Contains("one") && Catch::Contains("\x1b[31mtwo") &&
                       Catch::Contains("three\n"));
  CHECK_THAT(text, Catch::Contains("\xEF\xBF\xBD"));  // the stray byte, replaced

  CliRun both = Cli({"logs", "--json", "-f", dir});
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.stdout_text + both.stderr_text, Catch::Contains("not both"));
}
