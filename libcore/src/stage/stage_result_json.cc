// The stage's result.json (stage_run.h StageResultToJson; docs/result-schema.md "CI stages").
#include <string>

#include "model/json_util.h"
#include "runtime/cases_report.h"
#include "stage/stage_run.h"

namespace trtllm_run {
namespace {

using json::Writer;

void Str(Writer* w, const char* key, const std::string& value) {
  json::WriteKey(w, key);
  json::WriteString(w, value);
}

void Num(Writer* w, const char* key, double value) {
  json::WriteKey(w, key);
  w->Double(value);
}

void Int(Writer* w, const char* key, int value) {
  json::WriteKey(w, key);
  w->Int(value);
}

}  // namespace

std::string StageResultToJson(const StageRunResult& result) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Str(&w, "kind", "stage");
  Str(&w, "stage", result.stage_name);
  Str(&w, "test_db_context", result.test_db_context);
  Str(&w, "status", result.status);
  Int(&w, "exit_code", ExitCodeForStage(result));
  Str(&w, "reason", result.reason);
  Str(&w, "run_dir", result.run_dir);
  Str(&w, "junit", result.junit_path);
  Str(&w, "started_at", result.started_at);
  Str(&w, "finished_at", result.finished_at);
  Num(&w, "duration_seconds", result.duration_seconds);
  Int(&w, "split_count", result.split_count);
  json::WriteKey(&w, "splits");
  w.StartArray();
  for (int split : result.splits) w.Int(split);
  w.EndArray();

  const stage::StageCounts& c = result.counts;
  json::WriteKey(&w, "counts");
  w.StartObject();
  Int(&w, "total", c.total);
  Int(&w, "passed", c.passed);
  Int(&w, "flaky", c.flaky);
  Int(&w, "failed", c.failed);
  Int(&w, "not_run", c.not_run);
  Int(&w, "skipped", c.skipped);
  Int(&w, "waived", c.waived);
  w.EndObject();

  json::WriteKey(&w, "shard_runs");
  w.StartArray();
  for (const StageShardRun& run : result.shard_runs) {
    w.StartObject();
    Int(&w, "split_id", run.split_id);
    Int(&w, "round", run.round);
    Str(&w, "status", run.status);
    Str(&w, "reason", run.reason);
    Str(&w, "job_id", run.job_id);
    Str(&w, "work_dir", run.work_dir);
    Num(&w, "duration_seconds", run.seconds);
    json::WriteKey(&w, "tests");
    json::WriteStringArray(&w, run.test_ids);
    w.EndObject();
  }
  w.EndArray();

  WriteSessionReports(&w, result.sessions);

  json::WriteKey(&w, "tests");
  w.StartArray();
  for (const stage::StageTestResult& test : result.tests) {
    w.StartObject();
    Str(&w, "id", test.id);
    Int(&w, "split_id", test.split_id);
    Str(&w, "outcome", stage::StageTestVerdictName(stage::VerdictOf(test)));
    Num(&w, "seconds", test.attempts.empty() ? 0.0 : test.attempts.back().seconds);
    Int(&w, "reruns", test.attempts.empty() ? 0 : static_cast<int>(test.attempts.size()) - 1);
    if (test.waived_reason) Str(&w, "waived_reason", *test.waived_reason);
    if (test.reused_reason) Str(&w, "skipped_reason", *test.reused_reason);
    if (!test.not_run_reason.empty()) Str(&w, "not_run_reason", test.not_run_reason);
    if (!test.rerun_note.empty()) Str(&w, "rerun_note", test.rerun_note);
    json::WriteKey(&w, "attempts");
    w.StartArray();
    for (const stage::TestAttempt& attempt : test.attempts) {
      w.StartObject();
      Str(&w, "outcome", stage::JUnitOutcomeName(attempt.outcome));
      Num(&w, "seconds", attempt.seconds);
      if (!attempt.message.empty()) Str(&w, "message", attempt.message);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();

  json::WriteKey(&w, "warnings");
  json::WriteStringArray(&w, result.warnings);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace trtllm_run
