// RunResult: status names, exit codes, result.json and the human summary.
#include "trtllm_run/result.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "model/json_util.h"
#include "model/result_perf.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

constexpr int kSchemaVersion = 1;
constexpr size_t kSummaryLogTailLines = 20;
constexpr size_t kLabelWidth = 12;

struct StatusEntry {
  RunStatus status;
  const char* name;
};

constexpr StatusEntry kStatuses[] = {
    {RunStatus::kPassed, "PASSED"},       {RunStatus::kFailed, "FAILED"},
    {RunStatus::kTimeout, "TIMEOUT"},     {RunStatus::kHangDetected, "HANG_DETECTED"},
    {RunStatus::kCancelled, "CANCELLED"}, {RunStatus::kOutOfMemory, "OUT_OF_MEMORY"},
    {RunStatus::kError, "ERROR"},         {RunStatus::kSkipped, "SKIPPED"},
};

std::string StatusNames() {
  std::string names;
  for (const StatusEntry& entry : kStatuses) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

std::string ResultPath(const std::string& work_dir) {
  if (!work_dir.empty() && work_dir.back() == '/') return work_dir + "result.json";
  return work_dir + "/result.json";
}

// "12.3s", "2m 05s", "1h 02m 03s".
std::string FormatDuration(double seconds) {
  char buffer[64];
  if (!(seconds >= 0)) seconds = 0;
  // result.json may hold any double; keep the conversion below defined (~31.7M years).
  if (seconds > 1e15) seconds = 1e15;
  if (seconds < 60) {
    std::snprintf(buffer, sizeof(buffer), "%.1fs", seconds);
    return buffer;
  }
  long long total = static_cast<long long>(seconds + 0.5);
  long long h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  if (h > 0) {
    std::snprintf(buffer, sizeof(buffer), "%lldh %02lldm %02llds", h, m, s);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldm %02llds", m, s);
  }
  return buffer;
}

std::string SignalText(int signal) {
  std::string text = std::to_string(signal);
  const char* abbrev = sigabbrev_np(signal);
  if (abbrev != nullptr) text += std::string(" (SIG") + abbrev + ")";
  return text;
}

// Appends "label:" padded to the label column, then `value`; continuation lines of a
// multi-line value are indented to the value column.
void AddLine(std::string* out, const std::string& label, const std::string& value) {
  std::string head = label + ":";
  head.append(head.size() < kLabelWidth ? kLabelWidth - head.size() : 1, ' ');
  if (!out->empty()) *out += '\n';
  *out += head;
  const std::string indent(kLabelWidth, ' ');
  size_t start = 0;
  while (true) {
    size_t newline = value.find('\n', start);
    *out += value.substr(start, newline == std::string::npos ? std::string::npos : newline - start);
    if (newline == std::string::npos) break;
    *out += '\n' + indent;
    start = newline + 1;
  }
}

void AddList(std::string* out, const std::string& label, const std::vector<std::string>& items) {
  if (items.empty()) return;
  std::string value;
  for (const std::string& item : items) {
    if (!value.empty()) value += '\n';
    value += item;
  }
  AddLine(out, label, value);
}

// "tests" (an object or null) and "test_cases" (a list of objects) of result.json.
Status ReadTests(const rapidjson::Value& doc, const std::string& origin, RunResult* result) {
  if (doc.HasMember("tests") && !doc["tests"].IsNull()) {
    const rapidjson::Value& tests = doc["tests"];
    if (!tests.IsObject()) {
      return Status::InvalidInput(origin + ": key 'tests' must be an object or null, not " +
                                  json::TypeName(tests));
    }
    json::ObjectReader t(tests, origin + ": tests");
    TestCounts counts;
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("passed", &counts.passed));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("failed", &counts.failed));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("skipped", &counts.skipped));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("xfailed", &counts.xfailed));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("xpassed", &counts.xpassed));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("errors", &counts.errors));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetInt("deselected", &counts.deselected));
    TRTLLM_RUN_RETURN_IF_ERROR(t.GetString("summary", &counts.summary));
    result->tests = counts;
  }
  if (!doc.HasMember("test_cases")) return Status::Ok();
  const rapidjson::Value& cases = doc["test_cases"];
  if (!cases.IsArray()) {
    return Status::InvalidInput(origin + ": key 'test_cases' must be a list, not " +
                                json::TypeName(cases));
  }
  for (rapidjson::SizeType i = 0; i < cases.Size(); ++i) {
    const std::string where = origin + ": test_cases[" + std::to_string(i) + "]";
    if (!cases[i].IsObject()) {
      return Status::InvalidInput(where + " must be an object, not " + json::TypeName(cases[i]));
    }
    json::ObjectReader c(cases[i], where);
    TestCaseOutcome test;
    TRTLLM_RUN_RETURN_IF_ERROR(c.GetString("name", &test.name));
    TRTLLM_RUN_RETURN_IF_ERROR(c.GetString("outcome", &test.outcome));
    TRTLLM_RUN_RETURN_IF_ERROR(c.GetString("message", &test.message));
    result->test_cases.push_back(std::move(test));
  }
  return Status::Ok();
}

}  // namespace

const char* RunStatusName(RunStatus status) {
  for (const StatusEntry& entry : kStatuses) {
    if (entry.status == status) return entry.name;
  }
  return "ERROR";
}

std::optional<RunStatus> RunStatusFromName(const std::string& name) {
  for (const StatusEntry& entry : kStatuses) {
    if (name == entry.name) return entry.status;
  }
  return std::nullopt;
}

int ExitCodeFor(const RunResult& result) {
  if (result.user_interrupt) return kExitUserInterrupt;
  switch (result.status) {
    case RunStatus::kPassed:
      return kExitPassed;
    case RunStatus::kFailed:
      return kExitFailed;
    case RunStatus::kTimeout:
      return kExitTimeout;
    case RunStatus::kHangDetected:
      return kExitHangDetected;
    case RunStatus::kCancelled:
      return kExitCancelled;
    case RunStatus::kOutOfMemory:
      return kExitOutOfMemory;
    case RunStatus::kError:
      return kExitError;
    case RunStatus::kSkipped:
      return kExitSkipped;
  }
  return kExitError;
}

std::string FormatTestCounts(const TestCounts& counts) {
  const std::pair<int, const char*> parts[] = {
      {counts.failed, "failed"},
      {counts.passed, "passed"},
      {counts.skipped, "skipped"},
      {counts.deselected, "deselected"},
      {counts.xfailed, "xfailed"},
      {counts.xpassed, "xpassed"},
      {counts.errors, counts.errors == 1 ? "error" : "errors"},
  };
  std::string text;
  for (const auto& [count, word] : parts) {
    if (count <= 0) continue;
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + word;
  }
  return text.empty() ? "no tests ran" : text;
}

std::string ResultToJson(const RunResult& result) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  w.SetMaxDecimalPlaces(3);
  w.StartObject();
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    json::WriteString(&w, value);
  };
  auto optional_int = [&](const char* key, const std::optional<int>& value) {
    w.Key(key);
    if (value.has_value()) {
      w.Int(*value);
    } else {
      w.Null();
    }
  };
  auto list = [&](const char* key, const std::vector<std::string>& values) {
    w.Key(key);
    json::WriteStringArray(&w, values);
  };
  w.Key("schema_version");
  w.Int(kSchemaVersion);
  w.Key("status");
  w.String(RunStatusName(result.status));
  str("reason", result.reason);
  optional_int("exit_code", result.exit_code);
  optional_int("signal", result.signal);
  w.Key("user_interrupt");
  w.Bool(result.user_interrupt);
  str("cancelled_by", result.cancelled_by);
  str("workflow_type", result.workflow_type);
  str("scenario", result.scenario);
  str("model_name", result.model_name);
  str("command", result.command);
  str("work_dir", result.work_dir);
  str("log_file", result.log_file);
  list("log_tail", result.log_tail);
  str("diagnosis", result.diagnosis);
  list("errors", result.errors);
  list("notes", result.notes);
  str("started_at", result.started_at);
  str("finished_at", result.finished_at);
  w.Key("duration_seconds");
  w.Double(std::isfinite(result.duration_seconds) ? result.duration_seconds : 0.0);
  w.Key("monitor_timeout_seconds");
  w.Int(result.monitor_timeout_seconds);
  w.Key("log_bytes_written");
  w.Uint64(result.log_bytes_written);
  w.Key("log_bytes_read");
  w.Uint64(result.log_bytes_read);
  w.Key("details");
  w.StartObject();
  for (const auto& [key, value] : result.details) {
    json::WriteKey(&w, key);
    json::WriteString(&w, value);
  }
  w.EndObject();
  w.Key("tests");
  if (result.tests) {
    const TestCounts& t = *result.tests;
    w.StartObject();
    const std::pair<const char*, int> counts[] = {
        {"passed", t.passed},         {"failed", t.failed},   {"skipped", t.skipped},
        {"xfailed", t.xfailed},       {"xpassed", t.xpassed}, {"errors", t.errors},
        {"deselected", t.deselected},
    };
    for (const auto& [key, count] : counts) {
      w.Key(key);
      w.Int(count);
    }
    str("summary", t.summary);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("test_cases");
  w.StartArray();
  for (const TestCaseOutcome& test : result.test_cases) {
    w.StartObject();
    str("name", test.name);
    str("outcome", test.outcome);
    str("message", test.message);
    w.EndObject();
  }
  w.EndArray();
  if (result.perf) {
    w.Key("perf");
    WritePerfSection(&w, *result.perf);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

Result<RunResult> ResultFromJson(const std::string& text, const std::string& origin) {
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text, origin, &doc));
  json::ObjectReader r(doc, origin);
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("schema_version"));
  int version = 0;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("schema_version", &version));
  if (version != kSchemaVersion) {
    return Status::InvalidInput(
        origin + ": schema_version " + std::to_string(version) + " is not supported",
        "this trtllm-run reads result.json schema_version " + std::to_string(kSchemaVersion));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(r.Require("status"));
  std::string status_name;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("status", &status_name));
  std::optional<RunStatus> status = RunStatusFromName(status_name);
  if (!status.has_value()) {
    return Status::InvalidInput(origin + ": key 'status' has unknown value '" + status_name + "'",
                                "valid statuses: " + StatusNames());
  }
  RunResult result;
  result.status = *status;
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("reason", &result.reason));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetOptionalInt("exit_code", &result.exit_code));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetOptionalInt("signal", &result.signal));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("user_interrupt", &result.user_interrupt));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("cancelled_by", &result.cancelled_by));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("workflow_type", &result.workflow_type));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("scenario", &result.scenario));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("model_name", &result.model_name));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("command", &result.command));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("work_dir", &result.work_dir));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("log_file", &result.log_file));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("log_tail", &result.log_tail));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("diagnosis", &result.diagnosis));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("errors", &result.errors));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("notes", &result.notes));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("started_at", &result.started_at));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("finished_at", &result.finished_at));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetDouble("duration_seconds", &result.duration_seconds));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetInt("monitor_timeout_seconds", &result.monitor_timeout_seconds));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("log_bytes_written", &result.log_bytes_written));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetUint64("log_bytes_read", &result.log_bytes_read));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringMap("details", &result.details));
  TRTLLM_RUN_RETURN_IF_ERROR(ReadTests(doc, origin, &result));
  if (doc.HasMember("perf") && !doc["perf"].IsNull()) {
    PerfSection perf;
    TRTLLM_RUN_RETURN_IF_ERROR(ReadPerfSection(doc["perf"], origin, &perf));
    result.perf = std::move(perf);
  }
  return result;
}

Status WriteResult(const RunResult& result) {
  if (result.work_dir.empty()) {
    return Status::InvalidInput("cannot write result.json: the result has no work_dir");
  }
  return WriteFileAtomic(ResultPath(result.work_dir), ResultToJson(result));
}

std::string FormatSummary(const RunResult& result) {
  std::string out;
  AddLine(&out, "status",
          std::string(RunStatusName(result.status)) + " (exit code " +
              std::to_string(ExitCodeFor(result)) + ")");
  if (!result.reason.empty()) AddLine(&out, "reason", result.reason);
  if (!result.workflow_type.empty()) AddLine(&out, "workflow", result.workflow_type);
  if (!result.scenario.empty()) AddLine(&out, "scenario", result.scenario);
  if (!result.model_name.empty()) AddLine(&out, "model", result.model_name);
  if (!result.command.empty()) AddLine(&out, "command", result.command);
  if (result.exit_code.has_value() || result.signal.has_value()) {
    std::string exited;
    if (result.exit_code.has_value()) exited = "code " + std::to_string(*result.exit_code);
    if (result.signal.has_value()) {
      if (!exited.empty()) exited += ", ";
      exited += "signal " + SignalText(*result.signal);
    }
    AddLine(&out, "exited", exited);
  }
  if (!result.cancelled_by.empty()) AddLine(&out, "cancelled", "by " + result.cancelled_by);
  if (!result.work_dir.empty()) AddLine(&out, "work dir", result.work_dir);
  if (!result.log_file.empty()) AddLine(&out, "log file", result.log_file);
  std::string duration = FormatDuration(result.duration_seconds);
  if (result.monitor_timeout_seconds > 0) {
    duration += " (limit " + FormatDuration(result.monitor_timeout_seconds) + ")";
  }
  AddLine(&out, "duration", duration);
  if (result.tests) AddLine(&out, "tests", FormatTestCounts(*result.tests));
  if (!result.diagnosis.empty()) AddLine(&out, "diagnosis", result.diagnosis);
  AddList(&out, "errors", result.errors);
  AddList(&out, "notes", result.notes);
  std::vector<std::string> details;
  for (const auto& [key, value] : result.details) details.push_back(key + ": " + value);
  AddList(&out, "details", details);
  if (result.status != RunStatus::kPassed && !result.log_tail.empty()) {
    size_t first = result.log_tail.size() > kSummaryLogTailLines
                       ? result.log_tail.size() - kSummaryLogTailLines
                       : 0;
    out += "\nlog tail (last " + std::to_string(result.log_tail.size() - first) + " lines):";
    for (size_t i = first; i < result.log_tail.size(); ++i) out += "\n  | " + result.log_tail[i];
  }
  return out;
}

}  // namespace trtllm_run
