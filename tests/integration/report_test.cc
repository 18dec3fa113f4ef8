// Reports people and CI use, through the real CLI (local_direct, no service needed):
// result.json against docs/result-schema.md for every status, --json on stdout,
// --junit through a real XML parser. The local_docker verdicts are validated the same
// way in docker_test.cc.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "result_schema.h"
#include "trtllm_run/result.h"

namespace trtllm_run_test {
namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember(key) || !doc[key].IsString()) return "<missing>";
  return doc[key].GetString();
}

std::string SleepArg(int seconds) {
  static int counter = 0;
  return std::to_string(seconds) + "." + std::to_string(::getpid()) + std::to_string(++counter);
}

struct Case {
  const char* status;
  std::string command;
  std::vector<std::string> extra;
  int signal = 0;
  std::string signal_when;
};

TEST_CASE("report: result.json matches the documented schema for every verdict", "[report][cli]") {
  std::string s1 = SleepArg(30), s2 = SleepArg(30), s3 = SleepArg(30), s4 = SleepArg(30);
  std::vector<Case> cases = {
      {"PASSED", "echo ok", {}, 0, ""},
      {"FAILED", "echo Traceback; exit 3", {}, 0, ""},
      {"TIMEOUT", "sleep " + s1, {"--monitor-timeout", "1s"}, 0, ""},
      {"HANG_DETECTED", "echo 'hang detected'; sleep " + s2, {}, 0, ""},
      {"OUT_OF_MEMORY", "echo 'CUDA out of memory'; exit 1", {}, 0, ""},
      {"CANCELLED", "sleep " + s3, {}, SIGTERM, "sleep " + s3},  // exit 6
      {"CANCELLED", "sleep " + s4, {}, SIGINT, "sleep " + s4},   // user interrupt: 130
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    // A stable name: the commands hold per-run sleep markers.
    DYNAMIC_SECTION("case " << i << ": " << c.status << " signal " << c.signal) {
      TempDir root;
      CliOptions options;
      options.args = {"run",          "--scenario",   "local_direct",
                      "--custom-cmd", c.command,      "--repo-root",
                      root.path(),    "--kill-grace", "1"};
      options.args.insert(options.args.end(), c.extra.begin(), c.extra.end());
      options.signal = c.signal;
      options.signal_when_process = c.signal_when;
      CliRun run = RunCli(options);
      INFO(run.Describe());
      std::string work_dir = FindSingleWorkDir(root.path());
      REQUIRE_FALSE(work_dir.empty());
      rapidjson::Document result = ReadResultJson(work_dir);
      REQUIRE_FALSE(result.HasParseError());
      CHECK(Str(result, "status") == c.status);
      std::vector<std::string> problems = ValidateResult(result, run.exit_code);
      INFO(Join(problems));
      CHECK(problems.empty());
    }
  }
}

TEST_CASE("report: every status as ResultToJson writes it matches the documented schema",
          "[report]") {
  // Statuses no local_direct run produces (ERROR) are covered here and, for real, by the
  // [docker] tests (BUILD_FAILED, engine stopped).
  for (const char* name : {"PASSED", "FAILED", "TIMEOUT", "HANG_DETECTED", "CANCELLED",
                           "OUT_OF_MEMORY", "ERROR", "SKIPPED"}) {
    INFO(name);
    trtllm_run::RunResult result;
    result.status = *trtllm_run::RunStatusFromName(name);
    result.started_at = "2026-01-01T12:00:00Z";
    result.finished_at = "2026-01-01T12:00:01Z";
    result.details["k"] = "v";
    rapidjson::Document doc;
    std::string text = trtllm_run::ResultToJson(result);
    doc.Parse(text.c_str());
    REQUIRE_FALSE(doc.HasParseError());
    std::vector<std::string> problems = ValidateResult(doc, trtllm_run::ExitCodeFor(result));
    INFO(Join(problems));
    CHECK(problems.empty());
  }
}

TEST_CASE("report: the validator rejects what the documentation does not allow", "[report]") {
  trtllm_run::RunResult result;
  result.status = trtllm_run::RunStatus::kFailed;
  result.started_at = "2026-01-01T12:00:00Z";
  result.finished_at = "2026-01-01T12:00:01Z";
  std::string text = trtllm_run::ResultToJson(result);
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  REQUIRE(ValidateResult(doc, 1).empty());
  CHECK_FALSE(ValidateResult(doc, 0).empty());  // FAILED is exit 1
  doc["status"].SetString("MAYBE");
  CHECK_FALSE(ValidateResult(doc).empty());
  doc["status"].SetString("FAILED");
  doc["exit_code"].SetString("3");
  CHECK_FALSE(ValidateResult(doc).empty());
  doc["exit_code"].SetNull();
  doc.RemoveMember("diagnosis");
  CHECK_FALSE(ValidateResult(doc).empty());
}

TEST_CASE("report: --json prints result.json alone on stdout, the job output goes to stderr",
          "[report][cli]") {
  TempDir root;
  CliRun run = RunCli({"run", "--scenario", "local_direct", "--json", "--custom-cmd",
                       "echo job output line; exit 3", "--repo-root", root.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  rapidjson::Document printed;
  printed.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(printed.HasParseError());
  std::string work_dir = FindSingleWorkDir(root.path());
  CHECK(run.stdout_text == ReadTextFile(work_dir + "/result.json"));
  CHECK(Str(printed, "status") == "FAILED");
  CHECK_THAT(run.stderr_text, Catch::Contains("job output line"));
  std::vector<std::string> problems = ValidateResult(printed, run.exit_code);
  INFO(Join(problems));
  CHECK(problems.empty());
}

TEST_CASE("report: --junit writes XML a real parser accepts, for a pass and a failure",
          "[report][cli]") {
  TempDir root;
  std::string pass = root.path() + "/pass.xml";
  std::string fail = root.path() + "/fail.xml";
  CliRun ok = RunCli({"run", "--scenario", "local_direct", "--junit", pass, "--model-name", "M1",
                      "--custom-cmd", "echo fine", "--repo-root", root.path()});
  CHECK(ok.exit_code == 0);
  CliRun bad = RunCli({"run", "--scenario", "local_direct", "--junit", fail, "--model-name", "M2",
                       "--custom-cmd", "printf 'bad \\033[1m<x> & \\001 \\377\\n'; exit 2",
                       "--repo-root", root.path()});
  CHECK(bad.exit_code == 1);
  // xml.etree is strict XML 1.0: control characters or bad UTF-8 would fail the parse.
  const char* script = R"(
import sys, xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    case = ET.parse(path).getroot().find('testsuite').find('testcase')
    failure = case.find('failure')
    print(case.get('name'), 'none' if failure is None else failure.get('type'),
          '' if failure is None else failure.get('message'))
    if failure is not None:
        assert '<x> &' in failure.text, failure.text
)";
  CliOptions options;
  options.program = "/usr/bin/env";
  options.args = {"python3", "-c", script, pass, fail};
  CliRun parsed = RunCli(options);
  INFO(parsed.Describe());
  CHECK(parsed.exit_code == 0);
  CHECK(parsed.stdout_text == "m1 none \nm2 FAILED the command exited with code 2\n");
}

TEST_CASE("report: --junit to an unwritable place is an error message, not a lost verdict",
          "[report][cli]") {
  TempDir root;
  // An unwritable path is refused before the case runs (exit 2, nothing run)...
  CliRun refused =
      RunCli({"run", "--scenario", "local_direct", "--junit", root.path() + "/no/such/dir/r.xml",
              "--custom-cmd", "true", "--repo-root", root.path()});
  INFO(refused.Describe());
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.stderr_text, Catch::Contains("no/such/dir/r.xml"));
  // ...and one that breaks while the case runs costs the report, never the verdict.
  const std::string dir = root.path() + "/reports";
  std::filesystem::create_directories(dir);
  CliRun run = RunCli({"run", "--scenario", "local_direct", "--junit", dir + "/r.xml",
                       "--custom-cmd", "rm -rf " + dir, "--repo-root", root.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);  // the verdict's exit code stands
  CHECK_THAT(run.stderr_text, Catch::Contains("reports/r.xml"));
}

}  // namespace
}  // namespace trtllm_run_test
