// `perf evaluate FILE` (perf_evaluate.h).
#include "perf/perf_evaluate.h"

#include "model/json_util.h"
#include "model/result_perf.h"
#include "perf/perf_case.h"
#include "perf/perf_gate.h"
#include "perf/perf_metrics.h"
#include "trtllm_run/sdk/input_limits.h"

namespace trtllm_run::perf {
namespace {

constexpr std::size_t kMaxEvaluateBytes = 64u << 20;

Status Bad(const std::string& path, const std::string& what) {
  return Status::InvalidInput(
      "perf evaluate " + path + ": " + what,
      "the file is {\"mode\": MODE, \"measured_at\": TIME, \"metrics\": [{\"name\", \"value\", "
      "\"direction\", \"gated\"}], \"history\": {METRIC: [[TIME, VALUE], ...]}, "
      "\"latest_post_merge\": {METRIC: VALUE}, \"pinned\": {METRIC: {\"baseline\", "
      "\"threshold_pre_merge\", \"threshold_post_merge\"}}} (docs/perf.md)");
}

std::optional<double> NumberOf(const rapidjson::Value& object, const char* key) {
  if (!object.HasMember(key) || !object[key].IsNumber()) return std::nullopt;
  return object[key].GetDouble();
}

}  // namespace

Result<std::string> EvaluateGateFile(const std::string& path) {
  Result<std::string> text = ReadFileLimited(path, kMaxEvaluateBytes, "perf evaluate");
  if (!text.ok()) return Bad(path, text.status().message());
  rapidjson::Document doc;
  Status parsed = json::ParseObject(text.value(), path, &doc);
  if (!parsed.ok()) return Bad(path, parsed.message());
  GateInput input;
  if (!doc.HasMember("mode") || !doc["mode"].IsString()) return Bad(path, "no mode");
  input.mode = doc["mode"].GetString();
  if (Status mode = CheckGateMode(input.mode); !mode.ok() || input.mode == "off") {
    return Bad(path, "mode must be pre-merge, post-merge or warn");
  }
  if (doc.HasMember("measured_at") && doc["measured_at"].IsString()) {
    input.measured_at = doc["measured_at"].GetString();
  }
  if (!doc.HasMember("metrics") || !doc["metrics"].IsArray()) {
    return Bad(path, "metrics must be a list");
  }
  for (const rapidjson::Value& m : doc["metrics"].GetArray()) {
    if (!m.IsObject() || !m.HasMember("name") || !m["name"].IsString() || !NumberOf(m, "value")) {
      return Bad(path, "each metric needs a name and a value");
    }
    PerfMetric metric;
    metric.name = m["name"].GetString();
    metric.value = *NumberOf(m, "value");
    std::optional<MetricLine> info = MetricInfo(metric.name);
    metric.maximize = info ? info->maximize : true;
    metric.gated = info ? info->gated : false;
    if (m.HasMember("direction") && m["direction"].IsString()) {
      metric.maximize = std::string(m["direction"].GetString()) != "minimize";
    }
    if (m.HasMember("gated") && m["gated"].IsBool()) metric.gated = m["gated"].GetBool();
    input.measured.push_back(metric);
  }
  if (doc.HasMember("history") && doc["history"].IsObject()) {
    for (auto it = doc["history"].MemberBegin(); it != doc["history"].MemberEnd(); ++it) {
      if (!it->value.IsArray()) return Bad(path, "history values must be lists");
      for (const rapidjson::Value& point : it->value.GetArray()) {
        if (!point.IsArray() || point.Size() != 2 || !point[0].IsString() || !point[1].IsNumber()) {
          return Bad(path, "a history point is [TIME, VALUE]");
        }
        input.history[it->name.GetString()].push_back({point[0].GetString(), point[1].GetDouble()});
      }
    }
  }
  if (doc.HasMember("latest_post_merge") && doc["latest_post_merge"].IsObject()) {
    const rapidjson::Value& latest = doc["latest_post_merge"];
    for (auto it = latest.MemberBegin(); it != latest.MemberEnd(); ++it) {
      if (it->value.IsNumber())
        input.latest_post_merge[it->name.GetString()] = it->value.GetDouble();
    }
  }
  if (doc.HasMember("pinned") && doc["pinned"].IsObject()) {
    input.pinned_file = true;
    for (auto it = doc["pinned"].MemberBegin(); it != doc["pinned"].MemberEnd(); ++it) {
      if (!it->value.IsObject()) return Bad(path, "a pinned metric is an object");
      PinnedMetric pinned;
      pinned.baseline = NumberOf(it->value, "baseline");
      pinned.threshold_pre_merge = NumberOf(it->value, "threshold_pre_merge");
      pinned.threshold_post_merge = NumberOf(it->value, "threshold_post_merge");
      input.pinned[it->name.GetString()] = pinned;
    }
  }
  PerfSection section;
  section.metrics = input.measured;
  section.gate = EvaluateGate(input);
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  WritePerfSection(&w, section);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace trtllm_run::perf
