#include "trtllm_run/result.h"

#include <rapidjson/document.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

const std::vector<std::pair<RunStatus, std::string>>& AllStatuses() {
  static const std::vector<std::pair<RunStatus, std::string>> all = {
      {RunStatus::kPassed, "PASSED"},       {RunStatus::kFailed, "FAILED"},
      {RunStatus::kTimeout, "TIMEOUT"},     {RunStatus::kHangDetected, "HANG_DETECTED"},
      {RunStatus::kCancelled, "CANCELLED"}, {RunStatus::kOutOfMemory, "OUT_OF_MEMORY"},
      {RunStatus::kError, "ERROR"},
  };
  return all;
}

RunResult SampleResult() {
  RunResult r;
  r.status = RunStatus::kFailed;
  r.reason = "command exited with code 2 and the log matched failure pattern 'Traceback'";
  r.exit_code = 2;
  r.signal = std::nullopt;
  r.cancelled_by = "";
  r.workflow_type = "custom";
  r.scenario = "local_direct";
  r.model_name = "llama_3_1_8b";
  r.command = "python3 run.py --n 2";
  r.work_dir = "/repo/work_dirs/llama_3_1_8b_20260101_120000";
  r.log_file = r.work_dir + "/llama_3_1_8b_local.log";
  r.log_tail = {"step 1", "Traceback (most recent call last):", "  File \"run.py\", line 3",
                "ValueError: \"bad\"\ttab \u00fc"};
  r.diagnosis = "the command raised an exception; see the log tail";
  r.errors = {"Traceback (most recent call last):"};
  r.notes = {"workflow custom: custom_cmd given", "model_name from --model-name"};
  r.started_at = "2026-01-01T12:00:00Z";
  r.finished_at = "2026-01-01T12:01:02Z";
  r.duration_seconds = 62.25;
  r.monitor_timeout_seconds = 3600;
  r.log_bytes_written = 123456789012ULL;
  r.log_bytes_read = 4096;
  r.details = {{"pid", "4242"}, {"container", "llama_custom"}};
  return r;
}

void CheckEqual(const RunResult& a, const RunResult& b) {
  CHECK(a.status == b.status);
  CHECK(a.reason == b.reason);
  CHECK(a.exit_code == b.exit_code);
  CHECK(a.signal == b.signal);
  CHECK(a.user_interrupt == b.user_interrupt);
  CHECK(a.cancelled_by == b.cancelled_by);
  CHECK(a.workflow_type == b.workflow_type);
  CHECK(a.scenario == b.scenario);
  CHECK(a.model_name == b.model_name);
  CHECK(a.command == b.command);
  CHECK(a.work_dir == b.work_dir);
  CHECK(a.log_file == b.log_file);
  CHECK(a.log_tail == b.log_tail);
  CHECK(a.diagnosis == b.diagnosis);
  CHECK(a.errors == b.errors);
  CHECK(a.notes == b.notes);
  CHECK(a.started_at == b.started_at);
  CHECK(a.finished_at == b.finished_at);
  CHECK(a.duration_seconds == b.duration_seconds);
  CHECK(a.monitor_timeout_seconds == b.monitor_timeout_seconds);
  CHECK(a.log_bytes_written == b.log_bytes_written);
  CHECK(a.log_bytes_read == b.log_bytes_read);
  CHECK(a.details == b.details);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST_CASE("RunStatus names map both ways", "[result]") {
  for (const auto& [status, name] : AllStatuses()) {
    CHECK(RunStatusName(status) == name);
    CHECK(RunStatusFromName(name) == status);
  }
  CHECK_FALSE(RunStatusFromName("UNKNOWN").has_value());
  CHECK_FALSE(RunStatusFromName("passed").has_value());
  CHECK_FALSE(RunStatusFromName("").has_value());
}

TEST_CASE("ExitCodeFor follows the documented exit codes", "[result]") {
  const std::vector<std::pair<RunStatus, int>> expected = {
      {RunStatus::kPassed, 0},      {RunStatus::kFailed, 1},       {RunStatus::kError, 3},
      {RunStatus::kTimeout, 4},     {RunStatus::kHangDetected, 5}, {RunStatus::kCancelled, 6},
      {RunStatus::kOutOfMemory, 7},
  };
  for (const auto& [status, code] : expected) {
    RunResult r;
    r.status = status;
    CHECK(ExitCodeFor(r) == code);
    r.user_interrupt = true;
    CHECK(ExitCodeFor(r) == 130);
  }
}

TEST_CASE("RunResult round-trips through result.json", "[result]") {
  RunResult sample = SampleResult();
  std::string json = ResultToJson(sample);
  Result<RunResult> back = ResultFromJson(json, "result.json");
  INFO(json);
  REQUIRE(back.ok());
  CheckEqual(back.value(), sample);

  RunResult cancelled;
  cancelled.status = RunStatus::kCancelled;
  cancelled.user_interrupt = true;
  cancelled.cancelled_by = "SIGINT";
  cancelled.signal = 2;
  cancelled.work_dir = "/w";
  Result<RunResult> back2 = ResultFromJson(ResultToJson(cancelled), "x");
  REQUIRE(back2.ok());
  CheckEqual(back2.value(), cancelled);
}

TEST_CASE("result.json has schema_version first, every field, nulls for absent ints", "[result]") {
  std::string json = ResultToJson(SampleResult());
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  std::vector<std::string> keys;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it)
    keys.push_back(it->name.GetString());
  std::vector<std::string> expected = {"schema_version",
                                       "status",
                                       "reason",
                                       "exit_code",
                                       "signal",
                                       "user_interrupt",
                                       "cancelled_by",
                                       "workflow_type",
                                       "scenario",
                                       "model_name",
                                       "command",
                                       "work_dir",
                                       "log_file",
                                       "log_tail",
                                       "diagnosis",
                                       "errors",
                                       "notes",
                                       "started_at",
                                       "finished_at",
                                       "duration_seconds",
                                       "monitor_timeout_seconds",
                                       "log_bytes_written",
                                       "log_bytes_read",
                                       "details",
                                       "tests",
                                       "test_cases"};
  CHECK(keys == expected);
  CHECK(doc["schema_version"].GetInt() == 1);
  CHECK(std::string(doc["status"].GetString()) == "FAILED");
  CHECK(doc["exit_code"].GetInt() == 2);
  CHECK(doc["signal"].IsNull());
  CHECK(doc["details"].IsObject());
  CHECK(std::string(doc["details"]["pid"].GetString()) == "4242");
  CHECK(doc["log_bytes_written"].GetUint64() == 123456789012ULL);
  CHECK(doc["duration_seconds"].GetDouble() == 62.25);
}

TEST_CASE("ResultFromJson errors name the file, key and valid values", "[result]") {
  const std::string origin = "/w/result.json";
  auto error = [&](const std::string& text) {
    Result<RunResult> r = ResultFromJson(text, origin);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidInput);
    return r.status();
  };
  CHECK(error("{\"status\": \"PASSED\"}").message() ==
        origin + ": required key 'schema_version' is missing");
  Status newer = error("{\"schema_version\": 2, \"status\": \"PASSED\"}");
  CHECK(newer.message() == origin + ": schema_version 2 is not supported");
  CHECK(error("{\"schema_version\": 1}").message() ==
        origin + ": required key 'status' is missing");
  Status unknown = error("{\"schema_version\": 1, \"status\": \"UNKNOWN\"}");
  CHECK(unknown.message() == origin + ": key 'status' has unknown value 'UNKNOWN'");
  CHECK(unknown.hint() ==
        "valid statuses: PASSED, FAILED, TIMEOUT, HANG_DETECTED, CANCELLED, OUT_OF_MEMORY, ERROR, "
        "SKIPPED");
  CHECK(error("{\"schema_version\": 1, \"status\": \"FAILED\", \"exit_code\": \"2\"}").message() ==
        origin + ": key 'exit_code' must be an integer or null, got a string");
  CHECK(
      error("{\"schema_version\": 1, \"status\": \"FAILED\", \"log_bytes_read\": -1}").message() ==
      origin +
          ": key 'log_bytes_read' must be a non-negative integer, got a "
          "negative integer");
  CHECK(
      error("{\"schema_version\": 1, \"status\": \"FAILED\", \"details\": {\"a\": 1}}").message() ==
      origin + ": key 'details.a' must be a string, got an integer");
  CHECK_THAT(error("not json").message(), Catch::StartsWith(origin + ": not valid JSON"));

  // Unknown keys are ignored: new keys may be added within schema_version 1.
  Result<RunResult> extra =
      ResultFromJson("{\"schema_version\": 1, \"status\": \"TIMEOUT\", \"future\": [1]}", origin);
  REQUIRE(extra.ok());
  CHECK(extra->status == RunStatus::kTimeout);
}

TEST_CASE("WriteResult writes <work_dir>/result.json atomically", "[result]") {
  char name[] = "/tmp/c_result_test_XXXXXX";
  REQUIRE(mkdtemp(name) != nullptr);
  RunResult r = SampleResult();
  r.work_dir = name;
  REQUIRE(WriteResult(r).ok());
  std::ifstream in(std::string(name) + "/result.json");
  std::string on_disk((std::istreambuf_iterator<char>(in)), {});
  CHECK(on_disk == ResultToJson(r));
  fs::remove_all(name);

  RunResult no_dir;
  Status s = WriteResult(no_dir);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == StatusCode::kInvalidInput);
}

TEST_CASE("FormatSummary for a passing run", "[result]") {
  RunResult r;
  r.status = RunStatus::kPassed;
  r.reason = "command exited with code 0";
  r.exit_code = 0;
  r.workflow_type = "custom";
  r.scenario = "local_direct";
  r.command = "echo hi";
  r.work_dir = "/w";
  r.log_file = "/w/x_local.log";
  r.duration_seconds = 1.24;
  r.monitor_timeout_seconds = 3600;
  r.log_tail = {"hi"};
  CHECK(FormatSummary(r) ==
        "status:     PASSED (exit code 0)\n"
        "reason:     command exited with code 0\n"
        "workflow:   custom\n"
        "scenario:   local_direct\n"
        "command:    echo hi\n"
        "exited:     code 0\n"
        "work dir:   /w\n"
        "log file:   /w/x_local.log\n"
        "duration:   1.2s (limit 1h 00m 00s)");
}

TEST_CASE("FormatSummary for a failing run shows diagnosis, errors, details and log tail",
          "[result]") {
  RunResult r = SampleResult();
  r.command = "line one \\\nline two";
  std::string summary = FormatSummary(r);
  INFO(summary);
  CHECK(summary.back() != '\n');
  std::vector<std::string> lines = Lines(summary);
  CHECK(lines[0] == "status:     FAILED (exit code 1)");
  CHECK_THAT(summary, Catch::Contains("\ncommand:    line one \\\n            line two\n"));
  CHECK_THAT(summary, Catch::Contains("\nexited:     code 2\n"));
  CHECK_THAT(summary, Catch::Contains("\nduration:   1m 02s (limit 1h 00m 00s)\n"));
  CHECK_THAT(summary, Catch::Contains("\ndiagnosis:  the command raised an exception"));
  CHECK_THAT(summary, Catch::Contains("\nerrors:     Traceback (most recent call last):\n"));
  CHECK_THAT(summary, Catch::Contains("\nnotes:      workflow custom: custom_cmd given\n"
                                      "            model_name from --model-name\n"));
  CHECK_THAT(summary, Catch::Contains("\ndetails:    container: llama_custom\n"
                                      "            pid: 4242\n"));
  CHECK_THAT(summary, Catch::Contains("\nlog tail (last 4 lines):\n  | step 1\n"));
  CHECK_THAT(summary, Catch::EndsWith("  | ValueError: \"bad\"\ttab \u00fc"));
  // Every labelled line puts its value in the same column.
  for (const std::string& line : lines) {
    if (line.empty() || line[0] == ' ' || line.rfind("log tail", 0) == 0) continue;
    INFO(line);
    REQUIRE(line.size() > 12);
    CHECK(line.find(':') < 11);
    CHECK(line[11] == ' ');
    CHECK(line[12] != ' ');
  }
}

TEST_CASE("FormatSummary shows signals, interrupts and a long log tail's last lines", "[result]") {
  RunResult r;
  r.status = RunStatus::kCancelled;
  r.user_interrupt = true;
  r.cancelled_by = "SIGINT";
  r.signal = 9;
  r.duration_seconds = 3725;
  for (int i = 0; i < 50; ++i) r.log_tail.push_back("line " + std::to_string(i));
  std::string summary = FormatSummary(r);
  INFO(summary);
  CHECK_THAT(summary, Catch::StartsWith("status:     CANCELLED (exit code 130)\n"));
  CHECK_THAT(summary, Catch::Contains("\nexited:     signal 9 (SIGKILL)\n"));
  CHECK_THAT(summary, Catch::Contains("\ncancelled:  by SIGINT\n"));
  CHECK_THAT(summary, Catch::Contains("\nduration:   1h 02m 05s\n"));
  CHECK_THAT(summary, Catch::Contains("log tail (last 20 lines):\n  | line 30\n"));
  CHECK_THAT(summary, !Catch::Contains("line 29"));
  CHECK_THAT(summary, Catch::EndsWith("  | line 49"));
}

}  // namespace
}  // namespace trtllm_run
