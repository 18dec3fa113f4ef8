// The combined reports of a cases run (multi_run.h): the exit code, result.json, JUnit
// XML and the summary table.
#include "runtime/cases_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "model/json_util.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

std::string CaseLabel(const CaseOutcome& outcome) {
  if (!outcome.entry.name.empty()) return outcome.entry.name;
  if (!outcome.result.model_name.empty()) return outcome.result.model_name;
  return "case " + std::to_string(outcome.entry.index);
}

namespace {

std::string ListMarkerOf(const RunResult& result) {
  auto found = result.details.find("list_marker");
  return found == result.details.end() ? "" : found->second;
}

// A FAILED case the test list expects may fail (XFAIL) or knows to be flaky (UNSTABLE):
// reported as such, and not a failure of the run, as in TensorRT-LLM's CI.
bool ExcusedByListMarker(const RunResult& result) {
  const std::string marker = ListMarkerOf(result);
  return result.status == RunStatus::kFailed && (marker == "XFAIL" || marker == "UNSTABLE");
}

// "FAILED (XFAIL)", "PASSED (UNSTABLE)", "SKIPPED (SKIP)"; the bare status otherwise.
std::string StatusWithMarker(const RunResult& result) {
  const std::string marker = ListMarkerOf(result);
  return std::string(RunStatusName(result.status)) + (marker.empty() ? "" : " (" + marker + ")");
}

}  // namespace

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1fs", seconds);
  return buffer;
}

int ExitCodeForCases(const MultiRunResult& result) {
  static const RunStatus kBySeverity[] = {
      RunStatus::kError,  RunStatus::kOutOfMemory, RunStatus::kHangDetected, RunStatus::kTimeout,
      RunStatus::kFailed, RunStatus::kCancelled,   RunStatus::kSkipped};
  bool interrupted = false;
  for (const CaseOutcome& outcome : result.cases) {
    interrupted = interrupted || outcome.result.user_interrupt;
  }
  if (interrupted) return kExitUserInterrupt;
  // As pytest: skipped tests beside passed ones are a pass; only a run where nothing
  // passed and something was skipped is SKIPPED (8), as a single skipped case is.
  bool any_passed = false;
  for (const CaseOutcome& outcome : result.cases) {
    any_passed = any_passed || outcome.result.status == RunStatus::kPassed ||
                 ExcusedByListMarker(outcome.result);
  }
  for (RunStatus status : kBySeverity) {
    if (status == RunStatus::kSkipped && any_passed) continue;
    for (const CaseOutcome& outcome : result.cases) {
      if (outcome.result.status == status && !ExcusedByListMarker(outcome.result)) {
        return ExitCodeFor(outcome.result);
      }
    }
  }
  return kExitPassed;
}

std::string CasesToJson(const MultiRunResult& result) {
  rapidjson::StringBuffer buffer;
  json::Writer writer(buffer);
  writer.SetIndent(' ', 2);
  writer.StartObject();
  json::WriteKey(&writer, "schema_version");
  writer.Int(1);
  json::WriteKey(&writer, "kind");
  json::WriteString(&writer, "cases");
  json::WriteKey(&writer, "status");
  int exit_code = ExitCodeForCases(result);
  json::WriteString(&writer, exit_code == kExitPassed ? "PASSED" : "NOT_PASSED");
  json::WriteKey(&writer, "exit_code");
  writer.Int(exit_code);
  json::WriteKey(&writer, "cases_file");
  json::WriteString(&writer, result.cases_file);
  json::WriteKey(&writer, "run_dir");
  json::WriteString(&writer, result.run_dir);
  json::WriteKey(&writer, "started_at");
  json::WriteString(&writer, result.started_at);
  json::WriteKey(&writer, "finished_at");
  json::WriteString(&writer, result.finished_at);
  json::WriteKey(&writer, "duration_seconds");
  writer.Double(result.duration_seconds);
  json::WriteKey(&writer, "max_parallel");
  writer.Int(result.max_parallel);
  json::WriteKey(&writer, "max_parallel_local");
  writer.Int(result.max_parallel_local);
  json::WriteKey(&writer, "counts");
  writer.StartObject();
  json::WriteKey(&writer, "total");
  writer.Int(static_cast<int>(result.cases.size()));
  for (RunStatus status :
       {RunStatus::kPassed, RunStatus::kFailed, RunStatus::kTimeout, RunStatus::kHangDetected,
        RunStatus::kCancelled, RunStatus::kOutOfMemory, RunStatus::kError, RunStatus::kSkipped}) {
    int count = 0;
    for (const CaseOutcome& outcome : result.cases) count += outcome.result.status == status;
    json::WriteKey(&writer, RunStatusName(status));
    writer.Int(count);
  }
  writer.EndObject();
  WriteSessionReports(&writer, result.sessions);
  json::WriteKey(&writer, "cases");
  writer.StartArray();
  for (const CaseOutcome& outcome : result.cases) {
    writer.StartObject();
    json::WriteKey(&writer, "index");
    writer.Int(outcome.entry.index);
    json::WriteKey(&writer, "name");
    json::WriteString(&writer, CaseLabel(outcome));
    json::WriteKey(&writer, "origin");
    json::WriteString(&writer, outcome.entry.origin);
    json::WriteKey(&writer, "scenario");
    json::WriteString(&writer, outcome.scenario);
    json::WriteKey(&writer, "status");
    json::WriteString(&writer, RunStatusName(outcome.result.status));
    json::WriteKey(&writer, "exit_code");
    writer.Int(ExitCodeFor(outcome.result));
    json::WriteKey(&writer, "job_id");
    json::WriteString(&writer, outcome.job_id);
    json::WriteKey(&writer, "work_dir");
    json::WriteString(&writer, outcome.result.work_dir);
    json::WriteKey(&writer, "duration_seconds");
    writer.Double(outcome.result.duration_seconds);
    json::WriteKey(&writer, "result");
    rapidjson::Document doc;
    doc.Parse(ResultToJson(outcome.result).c_str());
    if (doc.HasParseError()) {
      writer.Null();
    } else {
      doc.Accept(writer);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string CasesToJUnit(const MultiRunResult& result) {
  int failures = 0, skipped = 0;
  for (const CaseOutcome& outcome : result.cases) {
    const bool excused = ExcusedByListMarker(outcome.result);
    skipped += outcome.result.status == RunStatus::kSkipped || excused;
    failures += outcome.result.status != RunStatus::kPassed &&
                outcome.result.status != RunStatus::kSkipped && !excused;
  }
  char total_time[64];
  std::snprintf(total_time, sizeof total_time, "%.3f", std::max(0.0, result.duration_seconds));
  auto attr = [](const char* name, const std::string& value) {
    return std::string(" ") + name + "=\"" + XmlEscape(value) + "\"";
  };
  const std::string tests = std::to_string(result.cases.size());
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + attr("tests", tests) + attr("failures", std::to_string(failures)) +
         attr("errors", "0") + attr("time", total_time) + ">\n";
  xml += "  <testsuite" + attr("name", "trtllm-run") + attr("tests", tests) +
         attr("failures", std::to_string(failures)) + attr("errors", "0") +
         attr("skipped", std::to_string(skipped)) + attr("time", total_time) +
         attr("timestamp", result.started_at) + ">\n";
  xml += "    <properties>\n      <property" + attr("name", "run_dir") +
         attr("value", result.run_dir) + "/>\n    </properties>\n";
  for (const CaseOutcome& outcome : result.cases) {
    const RunResult& r = outcome.result;
    char seconds[64];
    std::snprintf(seconds, sizeof seconds, "%.3f", std::max(0.0, r.duration_seconds));
    std::string scenario = outcome.scenario.empty() ? "unknown" : outcome.scenario;
    std::string workflow = r.workflow_type.empty() ? "unknown" : r.workflow_type;
    xml += "    <testcase" + attr("classname", "trtllm-run." + scenario + "." + workflow) +
           attr("name", CaseLabel(outcome)) + attr("time", seconds) + ">\n";
    xml += "      <properties>\n";
    auto property = [&](const std::string& name, const std::string& value) {
      xml += "        <property" + attr("name", name) + attr("value", value) + "/>\n";
    };
    property("status", RunStatusName(r.status));
    property("origin", outcome.entry.origin);
    property("work_dir", r.work_dir);
    property("log_file", r.log_file);
    if (!outcome.job_id.empty()) property("job_id", outcome.job_id);
    const std::string marker = ListMarkerOf(r);
    if (!marker.empty()) {
      property("list_marker", marker);
      auto reason = r.details.find("list_marker_reason");
      property("list_marker_reason", reason == r.details.end() ? "" : reason->second);
    }
    xml += "      </properties>\n";
    if (r.status == RunStatus::kSkipped) {
      xml += "      <skipped" + (marker.empty() ? "" : attr("type", marker)) +
             attr("message", r.reason) + "/>\n";
    } else if (ExcusedByListMarker(r)) {
      // As pytest's JUnit writes an xfailed test: skipped, typed by the list's marker.
      xml += "      <skipped" + attr("type", marker) +
             attr("message", marker + " in the test list: " + r.reason) + "/>\n";
    } else if (r.status != RunStatus::kPassed) {
      xml += "      " + FailureElement(r) + "\n";
    }
    std::string out;
    for (const std::string& line : r.log_tail) out += line + "\n";
    xml += "      <system-out>" + XmlEscape(out) + "</system-out>\n";
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string FormatCasesTable(const MultiRunResult& result) {
  std::vector<std::vector<std::string>> rows = {
      {"#", "case", "scenario", "job id", "status", "tests", "duration", "work dir"}};
  std::map<std::string, int> counts;
  for (const CaseOutcome& outcome : result.cases) {
    std::string label = CaseLabel(outcome);
    if (label.size() > 48) label = label.substr(0, 45) + "...";
    rows.push_back({std::to_string(outcome.entry.index), label, outcome.scenario,
                    outcome.job_id.empty() ? "-" : outcome.job_id, StatusWithMarker(outcome.result),
                    outcome.result.tests ? FormatTestCounts(*outcome.result.tests) : "-",
                    Seconds(outcome.result.duration_seconds),
                    outcome.result.work_dir.empty() ? "-" : outcome.result.work_dir});
    ++counts[ExcusedByListMarker(outcome.result) ? StatusWithMarker(outcome.result)
                                                 : RunStatusName(outcome.result.status)];
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    text += line + "\n";
  }
  text += std::to_string(result.cases.size()) + " cases:";
  for (const auto& [status, count] : counts) text += " " + status + " " + std::to_string(count);
  text += "\ncombined result: " + result.run_dir + "/result.json";
  return text;
}

void WriteSessionReports(json::Writer* writer, const std::vector<SessionReport>& sessions) {
  json::WriteKey(writer, "sessions");
  writer->StartArray();
  for (const SessionReport& session : sessions) {
    writer->StartObject();
    json::WriteKey(writer, "scenario");
    json::WriteString(writer, session.scenario);
    json::WriteKey(writer, "cases");
    writer->Int(session.cases);
    json::WriteKey(writer, "shared");
    writer->Bool(!session.stats.empty());
    json::WriteKey(writer, "stats");
    writer->StartObject();
    for (const auto& [key, value] : session.stats) {
      json::WriteKey(writer, key);
      json::WriteString(writer, value);
    }
    writer->EndObject();
    writer->EndObject();
  }
  writer->EndArray();
}

}  // namespace trtllm_run
