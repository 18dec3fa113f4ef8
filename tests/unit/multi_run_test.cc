// Cases files of `trtllm-run run --cases` (multi_run.h): the YAML/JSON and plain-list
// forms, the precedence of case keys, shared options and defaults, every problem named
// at once; and the combined reports (exit code, result.json, JUnit, table).
#include "trtllm_run/multi_run.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

std::vector<CaseEntry> Parse(const std::string& text, const CaseRequest& shared = {}) {
  Result<std::vector<CaseEntry>> cases = ParseCasesText(text, "cases.yaml", shared);
  INFO((cases.ok() ? std::string() : cases.status().ToString()));
  REQUIRE(cases.ok());
  return cases.value();
}

std::string ParseError(const std::string& text, const std::string& origin = "cases.yaml") {
  Result<std::vector<CaseEntry>> cases = ParseCasesText(text, origin, CaseRequest{});
  REQUIRE(!cases.ok());
  CHECK(cases.status().code() == StatusCode::kInvalidInput);
  return cases.status().ToString();
}

TEST_CASE("cases file: a YAML list, case keys > shared options", "[multi]") {
  CaseRequest shared;
  shared.scenario = "local_slurm";
  shared.partition = "batch";
  std::vector<CaseEntry> cases = Parse(
      "# two cases\n"
      "- name: smoke\n"
      "  custom_cmd: echo hi\n"
      "- custom_cmd: exit 1\n"
      "  partition: debug\n"
      "  extra_files: [a.txt, b.txt]\n"
      "  custom_env: {GREETING: 'hi there'}\n",
      shared);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].index == 1);
  CHECK(cases[0].name == "smoke");
  CHECK(cases[0].origin == "cases.yaml:2 (case 1)");
  CHECK(cases[0].request.custom_cmd == "echo hi");
  CHECK(cases[0].request.scenario == "local_slurm");
  CHECK(cases[0].request.partition == "batch");
  CHECK(cases[1].name.empty());
  CHECK(cases[1].origin == "cases.yaml:4 (case 2)");
  CHECK(cases[1].request.partition == "debug");  // the case's own key wins
  CHECK(cases[1].request.extra_files == std::vector<std::string>{"a.txt", "b.txt"});
  CHECK(cases[1].request.custom_env == "GREETING='hi there'");
}

TEST_CASE("cases file: defaults < shared options < the case, JSON works too", "[multi]") {
  CaseRequest shared;
  shared.time_limit = "00:05:00";
  std::vector<CaseEntry> cases = Parse(
      "defaults:\n"
      "  scenario: local_direct\n"
      "  time_limit: '00:01:00'\n"
      "  monitor_timeout: 2m\n"
      "cases:\n"
      "  - custom_cmd: echo a\n"
      "  - custom_cmd: echo b\n"
      "    monitor_timeout: 10s\n",
      shared);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].request.scenario == "local_direct");
  CHECK(cases[0].request.time_limit == "00:05:00");  // the command line over defaults
  CHECK(cases[0].request.monitor_timeout == "2m");
  CHECK(cases[1].request.monitor_timeout == "10s");

  std::vector<CaseEntry> json = Parse(R"([{"custom_cmd": "echo a"}, {"custom_cmd": "echo b"}])");
  REQUIRE(json.size() == 2);
  CHECK(json[1].request.custom_cmd == "echo b");
}

TEST_CASE("cases file: every bad case is named at once, with its line", "[multi]") {
  std::string error = ParseError(
      "- custom_cmd: echo ok\n"
      "- custom_cmd: echo two\n"
      "  no_such_key: 1\n"
      "- custom_cmd: echo three\n"
      "- required_devices: zero\n"
      "  custom_cmd: echo four\n"
      "- just a string\n");
  INFO(error);
  CHECK_THAT(error, Catch::Contains("3 of 5 cases in cases.yaml are invalid; nothing was run"));
  CHECK_THAT(error, Catch::Contains("case 2: "));
  CHECK_THAT(error, Catch::Contains("cases.yaml:3"));
  CHECK_THAT(error, Catch::Contains("no_such_key"));
  CHECK_THAT(error, Catch::Contains("case 4: "));
  CHECK_THAT(error, Catch::Contains("cases.yaml:5"));
  CHECK_THAT(error, Catch::Contains("case 5: "));
  CHECK_THAT(error, Catch::Contains("must be a mapping"));
  CHECK(error.find("case 1: ") == std::string::npos);
  CHECK(error.find("case 3: ") == std::string::npos);
}

TEST_CASE("cases file: refusals: secrets, unknown top-level keys, empty lists", "[multi]") {
  CHECK_THAT(ParseError("- custom_cmd: echo\n  slurm_password: hunter2\n"),
             Catch::Contains("slurm_password"));
  CHECK(ParseError("- custom_cmd: echo\n  slurm_password: hunter2\n").find("hunter2") ==
        std::string::npos);
  CHECK_THAT(ParseError("defaults: {scenario: local_direct}\nkases: []\n"),
             Catch::Contains("unknown key 'kases'"));
  CHECK_THAT(ParseError("defaults: {scenario: local_direct}\n"),
             Catch::Contains("needs a `cases:` list"));
  CHECK_THAT(ParseError("[]\n"), Catch::Contains("no cases"));
  CHECK_THAT(ParseError("# nothing here\n\n", "ids.txt"), Catch::Contains("ids.txt: no cases"));
  CHECK_THAT(ParseError("- custom_cmd: [unclosed\n"), Catch::Contains("not valid YAML"));
}

TEST_CASE("cases file: a plain list of test ids shares the command-line options", "[multi]") {
  CaseRequest shared;
  shared.scenario = "local_slurm";
  shared.skip_install = true;
  Result<std::vector<CaseEntry>> parsed = ParseCasesText(
      "# nightly\n"
      "\n"
      "tests/unittest/test_a.py::test_b[fp8-tp2]\n"
      "accuracy/test_llm_api.py::TestLlama::test_auto_dtype TIMEOUT (90)\n"
      "test_e2e[aggr-gpt_oss-gpt_oss_tp4]   # perf-sanity\n"
      "python3 scripts/check.py --fast\n",
      "ids.txt", shared);
  REQUIRE(parsed.ok());
  const std::vector<CaseEntry>& cases = parsed.value();
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].origin == "ids.txt:3 (case 1)");
  CHECK(cases[0].name == "tests/unittest/test_a.py::test_b[fp8-tp2]");
  CHECK(cases[0].request.test_cmd == "pytest 'tests/unittest/test_a.py::test_b[fp8-tp2]'");
  CHECK(cases[0].request.scenario == "local_slurm");
  CHECK(cases[0].request.skip_install == true);
  CHECK(!cases[0].request.monitor_timeout);
  // A test-list line goes to the pytest workflow as written: TIMEOUT (90) is the test's
  // own pytest-timeout there, not the job's monitor_timeout.
  CHECK(cases[1].request.test_cmd ==
        "accuracy/test_llm_api.py::TestLlama::test_auto_dtype TIMEOUT (90)");
  CHECK(!cases[1].request.monitor_timeout);
  CHECK(cases[1].name == "accuracy/test_llm_api.py::TestLlama::test_auto_dtype");
  CHECK(cases[2].request.test_cmd ==
        "pytest 'perf/test_perf_sanity.py::test_e2e[aggr-gpt_oss-gpt_oss_tp4]'");
  CHECK(cases[3].request.test_cmd == "python3 scripts/check.py --fast");
  CHECK(cases[3].origin == "ids.txt:6 (case 4)");
}

TEST_CASE("cases file: a plain list with a shared command of another kind is refused", "[multi]") {
  CaseRequest shared;
  shared.custom_cmd = "echo shared";
  Result<std::vector<CaseEntry>> parsed =
      ParseCasesText("tests/a.py::test_one\ntests/a.py::test_two\n", "ids.txt", shared);
  REQUIRE(!parsed.ok());
  CHECK(parsed.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(parsed.status().ToString(), Catch::Contains("ids.txt:1 (case 1)"));
  CHECK_THAT(parsed.status().ToString(), Catch::Contains("ids.txt:2 (case 2)"));
}

CaseOutcome Outcome(int index, RunStatus status, bool interrupt = false) {
  CaseOutcome outcome;
  outcome.entry.index = index;
  outcome.entry.origin = "c.yaml:" + std::to_string(index);
  outcome.scenario = "local_slurm";
  outcome.result.status = status;
  outcome.result.user_interrupt = interrupt;
  outcome.result.model_name = "m" + std::to_string(index);
  outcome.result.workflow_type = "custom";
  outcome.result.work_dir = "/w/m" + std::to_string(index);
  outcome.result.reason = "because <" + std::to_string(index) + ">";
  return outcome;
}

TEST_CASE("ExitCodeForCases: 0 all passed, 130 interrupted, else the most severe", "[multi]") {
  MultiRunResult run;
  run.cases = {Outcome(1, RunStatus::kPassed), Outcome(2, RunStatus::kPassed)};
  CHECK(ExitCodeForCases(run) == 0);
  run.cases.push_back(Outcome(3, RunStatus::kCancelled));
  CHECK(ExitCodeForCases(run) == kExitCancelled);
  run.cases.push_back(Outcome(4, RunStatus::kFailed));
  CHECK(ExitCodeForCases(run) == kExitFailed);
  run.cases.push_back(Outcome(5, RunStatus::kTimeout));
  CHECK(ExitCodeForCases(run) == kExitTimeout);
  run.cases.push_back(Outcome(6, RunStatus::kHangDetected));
  CHECK(ExitCodeForCases(run) == kExitHangDetected);
  run.cases.push_back(Outcome(7, RunStatus::kOutOfMemory));
  CHECK(ExitCodeForCases(run) == kExitOutOfMemory);
  run.cases.push_back(Outcome(8, RunStatus::kError));
  CHECK(ExitCodeForCases(run) == kExitError);
  run.cases.push_back(Outcome(9, RunStatus::kCancelled, /*interrupt=*/true));
  CHECK(ExitCodeForCases(run) == kExitUserInterrupt);
}

TEST_CASE("combined reports: result.json counts, JUnit testcases, the table", "[multi]") {
  MultiRunResult run;
  run.run_dir = "/w/cases_1";
  run.cases_file = "c.yaml";
  run.cases = {Outcome(1, RunStatus::kPassed), Outcome(2, RunStatus::kFailed),
               Outcome(3, RunStatus::kFailed)};
  run.cases[1].job_id = "4242";
  run.cases[0].entry.name = "smoke";
  SessionReport session;
  session.scenario = "local_slurm";
  session.cases = 3;
  session.stats = {{"watchers", "1"}, {"controller_queries", "5"}};
  run.sessions.push_back(session);

  rapidjson::Document doc;
  doc.Parse(CasesToJson(run).c_str());
  REQUIRE(!doc.HasParseError());
  CHECK(std::string(doc["kind"].GetString()) == "cases");
  CHECK(doc["exit_code"].GetInt() == 1);
  CHECK(doc["counts"]["total"].GetInt() == 3);
  CHECK(doc["counts"]["FAILED"].GetInt() == 2);
  CHECK(doc["counts"]["PASSED"].GetInt() == 1);
  CHECK(std::string(doc["cases_file"].GetString()) == "c.yaml");
  REQUIRE(doc["cases"].Size() == 3);
  CHECK(std::string(doc["cases"][0]["name"].GetString()) == "smoke");
  CHECK(std::string(doc["cases"][1]["name"].GetString()) == "m2");
  CHECK(std::string(doc["cases"][1]["job_id"].GetString()) == "4242");
  CHECK(std::string(doc["cases"][1]["result"]["status"].GetString()) == "FAILED");
  CHECK(std::string(doc["sessions"][0]["stats"]["watchers"].GetString()) == "1");

  std::string xml = CasesToJUnit(run);
  CHECK_THAT(xml, Catch::Contains("tests=\"3\" failures=\"2\""));
  std::size_t testcases = 0;
  for (std::size_t at = xml.find("<testcase "); at != std::string::npos;
       at = xml.find("<testcase ", at + 1)) {
    ++testcases;
  }
  CHECK(testcases == 3);
  CHECK_THAT(xml, Catch::Contains("name=\"smoke\""));
  CHECK_THAT(xml, Catch::Contains("message=\"because &lt;2&gt;\""));

  std::string table = FormatCasesTable(run);
  CHECK_THAT(table, Catch::Contains("job id"));
  CHECK_THAT(table, Catch::Contains("4242"));
  CHECK_THAT(table, Catch::Contains("/w/m3"));
  CHECK_THAT(table, Catch::Contains("3 cases: FAILED 2 PASSED 1"));
}

}  // namespace
}  // namespace trtllm_run
