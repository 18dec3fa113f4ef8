// Two runs' perf metrics side by side (perf_compare.h).
#include "perf/perf_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/decimal.h"
#include "model/json_util.h"
#include "perf/perf_metrics.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::perf {
namespace {

constexpr std::size_t kMaxResultBytes = 64u << 20;

}  // namespace

Result<std::vector<PerfMetric>> WorkDirMetrics(const std::string& work_dir) {
  const std::string path = (std::filesystem::path(work_dir) / "result.json").string();
  Result<std::string> text = ReadFileLimited(path, kMaxResultBytes, "result.json");
  if (!text.ok()) {
    return Status::InvalidInput(
        "'" + work_dir + "' is not a finished work dir: " + text.status().message(),
        "give the work dirs of two finished runs (they hold result.json)");
  }
  Result<RunResult> result = ResultFromJson(text.value(), path);
  if (!result.ok()) return Status::InvalidInput(result.status().message(), result.status().hint());
  if (result->perf && !result->perf->metrics.empty()) return result->perf->metrics;
  std::vector<PerfMetric> metrics;
  if (!result->log_file.empty()) {
    Result<std::string> log = ReadFileLimited(result->log_file, kMaxPerfLogBytes, "log");
    if (log.ok()) metrics = ParsePerfMetrics(log.value());
  }
  if (metrics.empty()) {
    return Status::NotFound("work dir '" + work_dir + "' has no perf metrics",
                            "compare the work dirs of trtllm-bench or perf-sanity runs");
  }
  return metrics;
}

Result<Comparison> CompareWorkDirs(const std::string& a, const std::string& b) {
  Result<std::vector<PerfMetric>> left = WorkDirMetrics(a);
  if (!left.ok()) return left.status();
  Result<std::vector<PerfMetric>> right = WorkDirMetrics(b);
  if (!right.ok()) return right.status();
  Comparison comparison;
  comparison.a = a;
  comparison.b = b;
  std::map<std::string, std::size_t> row_of;
  auto row_for = [&](const PerfMetric& metric) -> CompareRow& {
    auto it = row_of.find(metric.name);
    if (it != row_of.end()) return comparison.rows[it->second];
    row_of[metric.name] = comparison.rows.size();
    CompareRow row;
    row.metric = metric.name;
    row.unit = metric.unit;
    row.maximize = metric.maximize;
    comparison.rows.push_back(row);
    return comparison.rows.back();
  };
  for (const PerfMetric& metric : left.value()) row_for(metric).a = metric.value;
  for (const PerfMetric& metric : right.value()) row_for(metric).b = metric.value;
  for (CompareRow& row : comparison.rows) {
    if (!row.a) {
      row.verdict = "only in B";
    } else if (!row.b) {
      row.verdict = "only in A";
    } else {
      if (*row.a != 0) row.change = (*row.b - *row.a) / std::fabs(*row.a);
      const double change = row.change.value_or(*row.b == *row.a ? 0 : (*row.b > 0 ? 1 : -1));
      if (std::fabs(change) < 0.0005) {
        row.verdict = "same";
      } else {
        row.verdict = (change > 0) == row.maximize ? "better" : "worse";
      }
    }
  }
  return comparison;
}

std::string FormatComparison(const Comparison& comparison) {
  std::vector<std::vector<std::string>> cells = {{"metric", "A", "B", "change", ""}};
  for (const CompareRow& row : comparison.rows) {
    cells.push_back({row.metric + (row.unit.empty() ? "" : " (" + row.unit + ")"),
                     row.a ? FixedDecimals(*row.a, 4) : "-", row.b ? FixedDecimals(*row.b, 4) : "-",
                     row.change
                         ? (*row.change >= 0 ? "+" : "") + FixedDecimals(*row.change * 100, 2) + "%"
                         : "-",
                     row.verdict});
  }
  std::vector<std::size_t> width(5, 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::string out =
      "A: " + EscapeControl(comparison.a) + "\nB: " + EscapeControl(comparison.b) + "\n";
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const std::string pad(width[i] - line[i].size(), ' ');
      text += (i ? "  " : "") + (i == 0 || i == 4 ? line[i] + pad : pad + line[i]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

std::string ComparisonJson(const Comparison& comparison) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  auto number = [&w](const std::optional<double>& value) {
    if (value && std::isfinite(*value)) {
      w.Double(*value);
    } else {
      w.Null();
    }
  };
  w.StartObject();
  json::WriteKey(&w, "a");
  json::WriteString(&w, comparison.a);
  json::WriteKey(&w, "b");
  json::WriteString(&w, comparison.b);
  json::WriteKey(&w, "rows");
  w.StartArray();
  for (const CompareRow& row : comparison.rows) {
    w.StartObject();
    json::WriteKey(&w, "metric");
    json::WriteString(&w, row.metric);
    json::WriteKey(&w, "unit");
    json::WriteString(&w, row.unit);
    json::WriteKey(&w, "direction");
    json::WriteString(&w, row.maximize ? "maximize" : "minimize");
    json::WriteKey(&w, "a");
    number(row.a);
    json::WriteKey(&w, "b");
    number(row.b);
    json::WriteKey(&w, "change");
    number(row.change);
    json::WriteKey(&w, "verdict");
    json::WriteString(&w, row.verdict);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace trtllm_run::perf
