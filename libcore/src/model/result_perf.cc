// result.json's "perf" section (result_perf.h).
#include "model/result_perf.h"

#include <cmath>

namespace trtllm_run {
namespace {

// JSON has no NaN or infinity: such a value (never parsed from a log) is written as null.
void Number(json::Writer* w, double value) {
  if (std::isfinite(value)) {
    w->Double(value);
  } else {
    w->Null();
  }
}

void WriteGate(json::Writer* w, const PerfGate& gate) {
  w->StartObject();
  json::WriteKey(w, "mode");
  json::WriteString(w, gate.mode);
  json::WriteKey(w, "regressed");
  w->Bool(gate.regressed);
  json::WriteKey(w, "exempt");
  w->Bool(gate.exempt);
  json::WriteKey(w, "baseline_source");
  json::WriteString(w, gate.baseline_source);
  json::WriteKey(w, "rows");
  w->StartArray();
  for (const PerfGateRow& row : gate.rows) {
    w->StartObject();
    json::WriteKey(w, "metric");
    json::WriteString(w, row.metric);
    json::WriteKey(w, "new");
    Number(w, row.new_value);
    json::WriteKey(w, "baseline");
    Number(w, row.baseline);
    json::WriteKey(w, "threshold");
    Number(w, row.threshold);
    json::WriteKey(w, "change");
    Number(w, row.change);
    json::WriteKey(w, "gated");
    w->Bool(row.gated);
    json::WriteKey(w, "regressed");
    w->Bool(row.regressed);
    w->EndObject();
  }
  w->EndArray();
  json::WriteKey(w, "notes");
  json::WriteStringArray(w, gate.notes);
  w->EndObject();
}

Status ReadNumber(const rapidjson::Value& object, const char* key, const std::string& where,
                  double* out) {
  if (!object.HasMember(key)) return Status::Ok();
  const rapidjson::Value& v = object[key];
  if (v.IsNull()) {
    *out = std::nan("");
    return Status::Ok();
  }
  if (!v.IsNumber()) {
    return Status::InvalidInput(where + ": key '" + key + "' must be a number, not " +
                                json::TypeName(v));
  }
  *out = v.GetDouble();
  return Status::Ok();
}

Status ReadGate(const rapidjson::Value& value, const std::string& where, PerfGate* gate) {
  if (!value.IsObject()) {
    return Status::InvalidInput(where + " must be an object, not " + json::TypeName(value));
  }
  json::ObjectReader r(value, where);
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("mode", &gate->mode));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("regressed", &gate->regressed));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetBool("exempt", &gate->exempt));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetString("baseline_source", &gate->baseline_source));
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringArray("notes", &gate->notes));
  if (!value.HasMember("rows")) return Status::Ok();
  const rapidjson::Value& rows = value["rows"];
  if (!rows.IsArray()) return r.WrongType("rows", "an array of objects");
  for (rapidjson::SizeType i = 0; i < rows.Size(); ++i) {
    const std::string at = where + ".rows[" + std::to_string(i) + "]";
    if (!rows[i].IsObject()) {
      return Status::InvalidInput(at + " must be an object, not " + json::TypeName(rows[i]));
    }
    json::ObjectReader row_reader(rows[i], at);
    PerfGateRow row;
    TRTLLM_RUN_RETURN_IF_ERROR(row_reader.GetString("metric", &row.metric));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadNumber(rows[i], "new", at, &row.new_value));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadNumber(rows[i], "baseline", at, &row.baseline));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadNumber(rows[i], "threshold", at, &row.threshold));
    TRTLLM_RUN_RETURN_IF_ERROR(ReadNumber(rows[i], "change", at, &row.change));
    TRTLLM_RUN_RETURN_IF_ERROR(row_reader.GetBool("gated", &row.gated));
    TRTLLM_RUN_RETURN_IF_ERROR(row_reader.GetBool("regressed", &row.regressed));
    gate->rows.push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace

void WritePerfSection(json::Writer* w, const PerfSection& perf) {
  // result.json's other numbers keep 3 decimals; a metric keeps every digit it was printed
  // with, so that a value read back equals the log's.
  w->SetMaxDecimalPlaces(json::Writer::kDefaultMaxDecimalPlaces);
  w->StartObject();
  json::WriteKey(w, "metrics");
  w->StartArray();
  for (const PerfMetric& metric : perf.metrics) {
    w->StartObject();
    json::WriteKey(w, "name");
    json::WriteString(w, metric.name);
    json::WriteKey(w, "value");
    Number(w, metric.value);
    json::WriteKey(w, "unit");
    json::WriteString(w, metric.unit);
    json::WriteKey(w, "direction");
    json::WriteString(w, metric.maximize ? "maximize" : "minimize");
    json::WriteKey(w, "gated");
    w->Bool(metric.gated);
    w->EndObject();
  }
  w->EndArray();
  json::WriteKey(w, "match_key");
  w->StartObject();
  for (const auto& [key, value] : perf.match_key) {
    json::WriteKey(w, key);
    json::WriteString(w, value);
  }
  w->EndObject();
  if (perf.gate) {
    json::WriteKey(w, "gate");
    WriteGate(w, *perf.gate);
  }
  json::WriteKey(w, "history");
  w->StartObject();
  for (const auto& [metric, points] : perf.history) {
    json::WriteKey(w, metric);
    w->StartArray();
    for (const auto& [at, value] : points) {
      w->StartArray();
      json::WriteString(w, at);
      Number(w, value);
      w->EndArray();
    }
    w->EndArray();
  }
  w->EndObject();
  w->EndObject();
  w->SetMaxDecimalPlaces(3);
}

Status ReadPerfSection(const rapidjson::Value& value, const std::string& origin,
                       PerfSection* perf) {
  const std::string where = origin + ": perf";
  if (!value.IsObject()) {
    return Status::InvalidInput(where + " must be an object, not " + json::TypeName(value));
  }
  json::ObjectReader r(value, where);
  if (value.HasMember("metrics")) {
    const rapidjson::Value& metrics = value["metrics"];
    if (!metrics.IsArray()) return r.WrongType("metrics", "an array of objects");
    for (rapidjson::SizeType i = 0; i < metrics.Size(); ++i) {
      const std::string at = where + ".metrics[" + std::to_string(i) + "]";
      if (!metrics[i].IsObject()) {
        return Status::InvalidInput(at + " must be an object, not " + json::TypeName(metrics[i]));
      }
      json::ObjectReader m(metrics[i], at);
      PerfMetric metric;
      std::string direction = "maximize";
      TRTLLM_RUN_RETURN_IF_ERROR(m.GetString("name", &metric.name));
      TRTLLM_RUN_RETURN_IF_ERROR(ReadNumber(metrics[i], "value", at, &metric.value));
      TRTLLM_RUN_RETURN_IF_ERROR(m.GetString("unit", &metric.unit));
      TRTLLM_RUN_RETURN_IF_ERROR(m.GetString("direction", &direction));
      TRTLLM_RUN_RETURN_IF_ERROR(m.GetBool("gated", &metric.gated));
      metric.maximize = direction != "minimize";
      perf->metrics.push_back(std::move(metric));
    }
  }
  TRTLLM_RUN_RETURN_IF_ERROR(r.GetStringMap("match_key", &perf->match_key));
  if (value.HasMember("gate") && !value["gate"].IsNull()) {
    PerfGate gate;
    TRTLLM_RUN_RETURN_IF_ERROR(ReadGate(value["gate"], where + ".gate", &gate));
    perf->gate = std::move(gate);
  }
  if (value.HasMember("history")) {
    const rapidjson::Value& history = value["history"];
    if (!history.IsObject()) return r.WrongType("history", "an object of point arrays");
    for (auto it = history.MemberBegin(); it != history.MemberEnd(); ++it) {
      const std::string metric = it->name.GetString();
      const std::string at = where + ".history." + metric;
      if (!it->value.IsArray()) {
        return Status::InvalidInput(at + " must be an array of [time, value] pairs");
      }
      auto& points = perf->history[metric];
      for (const rapidjson::Value& point : it->value.GetArray()) {
        if (!point.IsArray() || point.Size() != 2 || !point[0].IsString() || !point[1].IsNumber()) {
          return Status::InvalidInput(at + " must be an array of [time, value] pairs");
        }
        points.emplace_back(point[0].GetString(), point[1].GetDouble());
      }
    }
  }
  return Status::Ok();
}

}  // namespace trtllm_run
