// A perf case's metrics and gate (perf_case.h).
#include "perf/perf_case.h"

#include <cmath>
#include <ctime>
#include <fstream>
#include <set>

#include "history/history_record.h"
#include "model/json_util.h"
#include "perf/perf_metrics.h"
#include "placement/routing.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::perf {
namespace {

// At most this much of a log's end is read for metrics (the summary is printed last).
constexpr std::size_t kMaxBaselineFileBytes = 4u << 20;

std::string IsoDaysBefore(const std::string& now, int days) {
  std::tm tm{};
  if (!strptime(now.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return "";
  const std::time_t then = timegm(&tm) - static_cast<std::time_t>(days) * 86400;
  std::tm out{};
  gmtime_r(&then, &out);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &out);
  return text;
}

std::string ReadLogTail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from =
      size > static_cast<std::streamoff>(kMaxPerfLogBytes) ? size - kMaxPerfLogBytes : 0;
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

Status BadFile(const std::string& path, const std::string& what) {
  return Status::InvalidInput(
      "--perf-baseline " + path + ": " + what,
      "the file is {\"version\": 1, \"entries\": [{\"match_key\": {KEY: VALUE}, \"metrics\": "
      "{METRIC: {\"baseline\": X, \"threshold_pre_merge\": F, \"threshold_post_merge\": F}}}]} "
      "(docs/perf.md \"Pinned baseline\")");
}

Status ReadPositive(const rapidjson::Value& object, const char* key, const std::string& path,
                    const std::string& where, bool fraction, std::optional<double>* out) {
  if (!object.HasMember(key)) return Status::Ok();
  const rapidjson::Value& v = object[key];
  if (!v.IsNumber() || !std::isfinite(v.GetDouble()) || v.GetDouble() <= 0 ||
      (fraction && v.GetDouble() >= 1)) {
    return BadFile(path, where + "." + key + " must be a number " +
                             (fraction ? "> 0 and < 1 (a fraction: 0.05 is 5 %)" : "> 0"));
  }
  *out = v.GetDouble();
  return Status::Ok();
}

Status ReadEntry(const rapidjson::Value& value, const std::string& path, const std::string& where,
                 BaselineEntry* entry) {
  if (!value.IsObject()) return BadFile(path, where + " must be an object");
  for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    if (key != "match_key" && key != "metrics") {
      return BadFile(
          path, where + ": unknown key '" + EscapeControl(key) + "' (valid: match_key, metrics)");
    }
  }
  if (value.HasMember("match_key")) {
    const rapidjson::Value& key = value["match_key"];
    if (!key.IsObject()) return BadFile(path, where + ".match_key must be an object of strings");
    for (auto it = key.MemberBegin(); it != key.MemberEnd(); ++it) {
      if (!it->value.IsString()) {
        return BadFile(path, where + ".match_key." + EscapeControl(it->name.GetString()) +
                                 " must be a string");
      }
      entry->match_key[it->name.GetString()] = it->value.GetString();
    }
  }
  if (!value.HasMember("metrics") || !value["metrics"].IsObject()) {
    return BadFile(path, where + ".metrics must be an object of metrics");
  }
  for (auto it = value["metrics"].MemberBegin(); it != value["metrics"].MemberEnd(); ++it) {
    const std::string name = it->name.GetString();
    const std::string at = where + ".metrics." + EscapeControl(name);
    if (!MetricInfo(name)) {
      return BadFile(path, at + ": no tool prints a metric of that name (valid: "
                                "total_token_throughput, token_throughput, seq_throughput, "
                                "mean_ttft, p99_itl, ... see docs/perf.md)");
    }
    if (!it->value.IsObject()) return BadFile(path, at + " must be an object");
    for (auto field = it->value.MemberBegin(); field != it->value.MemberEnd(); ++field) {
      const std::string key = field->name.GetString();
      if (key != "baseline" && key != "threshold_pre_merge" && key != "threshold_post_merge") {
        return BadFile(path, at + ": unknown key '" + EscapeControl(key) +
                                 "' (valid: baseline, threshold_pre_merge, threshold_post_merge)");
      }
    }
    PinnedMetric metric;
    TRTLLM_RUN_RETURN_IF_ERROR(
        ReadPositive(it->value, "baseline", path, at, false, &metric.baseline));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadPositive(it->value, "threshold_pre_merge", path, at, true,
                                            &metric.threshold_pre_merge));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadPositive(it->value, "threshold_post_merge", path, at, true,
                                            &metric.threshold_post_merge));
    entry->metrics[name] = metric;
  }
  return Status::Ok();
}

const BaselineEntry* MatchingEntry(const BaselineFile& file,
                                   const std::map<std::string, std::string>& key) {
  for (const BaselineEntry& entry : file.entries) {
    bool all = true;
    for (const auto& [name, value] : entry.match_key) {
      auto it = key.find(name);
      all = all && it != key.end() && it->second == value;
    }
    if (all) return &entry;
  }
  return nullptr;
}

}  // namespace

Result<BaselineFile> LoadBaselineFile(const std::string& path) {
  Result<std::string> text = ReadFileLimited(path, kMaxBaselineFileBytes, "--perf-baseline");
  if (!text.ok()) {
    return Status::InvalidInput("--perf-baseline " + path + ": " + text.status().message(),
                                "give a readable JSON file (docs/perf.md \"Pinned baseline\")");
  }
  rapidjson::Document doc;
  Status parsed = json::ParseObject(text.value(), "--perf-baseline " + path, &doc);
  if (!parsed.ok()) {
    return Status::InvalidInput(parsed.message(), BadFile(path, "").hint());
  }
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    if (key != "version" && key != "entries") {
      return BadFile(path, "unknown key '" + EscapeControl(key) + "' (valid: version, entries)");
    }
  }
  if (!doc.HasMember("version") || !doc["version"].IsInt() || doc["version"].GetInt() != 1) {
    return BadFile(path, "\"version\" must be 1");
  }
  if (!doc.HasMember("entries") || !doc["entries"].IsArray()) {
    return BadFile(path, "\"entries\" must be a list");
  }
  BaselineFile file;
  file.path = path;
  const rapidjson::Value& entries = doc["entries"];
  for (rapidjson::SizeType i = 0; i < entries.Size(); ++i) {
    BaselineEntry entry;
    TRTLLM_RUN_RETURN_IF_ERROR(
        ReadEntry(entries[i], path, "entries[" + std::to_string(i) + "]", &entry));
    file.entries.push_back(std::move(entry));
  }
  return file;
}

Status CheckGateMode(const std::string& mode) {
  if (mode == "pre-merge" || mode == "post-merge" || mode == "warn" || mode == "off") {
    return Status::Ok();
  }
  return Status::InvalidInput("--perf-gate '" + EscapeControl(mode) + "' is not a gate mode",
                              "valid: pre-merge (10 %), post-merge (5 %), warn (annotate only), "
                              "off");
}

bool IsPerfCase(const RunResult& result) {
  return result.workflow_type == kBenchWorkflow || result.workflow_type == kPerfSanityWorkflow;
}

void ApplyPerf(RunResult* result, const PerfOptions& options) {
  if (!IsPerfCase(*result) || result->log_file.empty()) return;
  std::vector<PerfMetric> metrics = ParsePerfMetrics(ReadLogTail(result->log_file));
  const history::CaseRecord where = history::CaseRecordOf(*result, "run", "");
  PerfSection perf;
  perf.match_key = MatchKeyOf(*result, where.gpu_type);
  perf.metrics = metrics;
  const std::string now = options.now.empty() ? NowIso8601() : options.now;
  const std::string key_text = MatchKeyText(perf.match_key);
  const bool gating = options.gate_mode != "off";
  const bool passed = result->status == RunStatus::kPassed;

  std::vector<history::PerfPointRecord> points;
  if (options.store) {
    Result<std::vector<history::PerfPointRecord>> read =
        options.store->PerfPoints(key_text, IsoDaysBefore(now, kHistoryDays));
    if (read.ok()) {
      points = std::move(read.value());
    } else {
      result->notes.push_back("perf: history not read: " + read.status().ToString());
    }
  }
  if (gating && metrics.empty()) {
    result->notes.push_back("perf gate " + options.gate_mode +
                            ": the log printed no perf metric; nothing gated");
  }
  if (gating && !metrics.empty()) {
    GateInput input;
    input.mode = options.gate_mode;
    input.measured = metrics;
    input.measured_at = now;
    std::string latest_at, latest_dir;
    for (const history::PerfPointRecord& point : points) {
      if (point.pre_merge) continue;
      input.history[point.metric].push_back({point.recorded_at, point.value});
      if (point.recorded_at >= latest_at) {
        latest_at = point.recorded_at;
        latest_dir = point.work_dir;
      }
    }
    for (const history::PerfPointRecord& point : points) {
      if (!point.pre_merge && point.recorded_at == latest_at && point.work_dir == latest_dir) {
        input.latest_post_merge[point.metric] = point.value;
      }
    }
    if (options.baseline) {
      if (const BaselineEntry* entry = MatchingEntry(*options.baseline, perf.match_key)) {
        input.pinned = entry->metrics;
        input.pinned_file = true;
      } else {
        result->notes.push_back("perf: no entry of --perf-baseline " + options.baseline->path +
                                " matches this case's match key " + key_text);
      }
    }
    PerfGate gate = EvaluateGate(input);
    gate.baseline_source = input.pinned_file ? "file " + options.baseline->path
                           : options.store   ? "history " + options.store->location()
                                             : "";
    for (const auto& [metric, values] : input.history) {
      for (const TimedValue& value : values) {
        perf.history[metric].emplace_back(value.at, value.value);
      }
    }
    const std::string table = FormatGateTable(gate);
    if (gate.regressed) {
      const bool fails = (gate.mode == "pre-merge" || gate.mode == "post-merge") && !gate.exempt;
      std::string regressed;
      for (const PerfGateRow& row : gate.rows) {
        if (row.regressed) regressed += (regressed.empty() ? "" : ", ") + row.metric;
      }
      const std::string line = "perf_regression: " + regressed + " beyond the " + gate.mode +
                               " threshold of the baseline (" + gate.baseline_source + ")";
      if (fails && passed) {
        result->status = RunStatus::kFailed;
        result->reason = "perf regression (--perf-gate " + gate.mode + "): " + regressed;
        result->diagnosis = line + "\n" + table;
      } else if (fails) {
        result->diagnosis += (result->diagnosis.empty() ? "" : "\n") + line + "\n" + table;
      } else {
        result->notes.push_back("perf gate " + gate.mode + ": " + line +
                                (gate.exempt ? " (exempt, not failed)" : " (warning only)"));
      }
    }
    for (const std::string& note : gate.notes) result->notes.push_back("perf gate: " + note);
    perf.gate = std::move(gate);
  }
  if (options.store && passed && !metrics.empty()) {
    std::vector<history::PerfPointRecord> records;
    for (const PerfMetric& metric : metrics) {
      history::PerfPointRecord record;
      record.recorded_at = now;
      record.match_key = key_text;
      record.metric = metric.name;
      record.value = metric.value;
      record.pre_merge = options.gate_mode == "pre-merge";
      record.commit = where.commit;
      record.branch = where.branch;
      record.work_dir = result->work_dir;
      records.push_back(std::move(record));
    }
    Status recorded = options.store->RecordPerf(records);
    if (!recorded.ok()) result->notes.push_back("perf: not recorded: " + recorded.ToString());
  }
  result->perf = std::move(perf);
}

}  // namespace trtllm_run::perf
