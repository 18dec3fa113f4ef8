// The perf gate (perf_gate.h).
#include "perf/perf_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/decimal.h"
#include "perf/perf_metrics.h"

namespace trtllm_run::perf {
namespace {

bool Usable(double value) { return std::isfinite(value) && value > 0; }

bool Misses(double value, double baseline, double threshold, bool maximize) {
  return maximize ? value < baseline * (1 - threshold) : value > baseline * (1 + threshold);
}

}  // namespace

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double k = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(k);
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double fraction = k - static_cast<double>(lo);
  return values[lo] + fraction * (values[hi] - values[lo]);
}

std::optional<double> Baseline(const std::vector<TimedValue>& values, bool maximize) {
  std::map<std::string, std::pair<double, int>> by_day;  // day -> (sum, count)
  for (const TimedValue& point : values) {
    if (!std::isfinite(point.value)) continue;
    auto& [sum, count] = by_day[point.at.substr(0, 10)];
    sum += point.value;
    ++count;
  }
  if (by_day.empty()) return std::nullopt;
  std::vector<double> daily;
  for (const auto& [day, sum_count] : by_day) {
    daily.push_back(sum_count.first / sum_count.second);
  }
  std::vector<double> smoothed;
  for (std::size_t i = 0; i < daily.size(); ++i) {
    const std::size_t from = i >= 2 ? i - 2 : 0;
    double sum = 0;
    for (std::size_t j = from; j <= i; ++j) sum += daily[j];
    smoothed.push_back(sum / static_cast<double>(i - from + 1));
  }
  return Percentile(smoothed, maximize ? 95 : 5);
}

PerfGate EvaluateGate(const GateInput& input) {
  PerfGate gate;
  gate.mode = input.mode;
  const bool pre_merge = input.mode == "pre-merge";
  bool any_history = false;
  for (const auto& [metric, points] : input.history) any_history = any_history || !points.empty();
  if (!any_history && !input.pinned_file) {
    gate.notes.push_back("no baseline: no post-merge history of this match key in the last " +
                         std::to_string(kHistoryDays) +
                         " days and no --perf-baseline entry; not gated");
    return gate;
  }
  std::map<std::string, double> baselines;  // of the gated metrics, for the exemption
  std::map<std::string, double> pre_merge_thresholds;
  std::map<std::string, bool> directions;
  for (const PerfMetric& metric : input.measured) {
    const PinnedMetric* pinned = nullptr;
    if (auto it = input.pinned.find(metric.name); it != input.pinned.end()) pinned = &it->second;
    std::optional<double> baseline;
    if (pinned && pinned->baseline && *pinned->baseline > 0) {
      baseline = pinned->baseline;
    } else {
      std::vector<TimedValue> points;
      if (auto it = input.history.find(metric.name); it != input.history.end()) {
        points = it->second;
      }
      if (!points.empty()) {  // CI: the new data joins its history
        points.push_back({input.measured_at, metric.value});
        baseline = Baseline(points, metric.maximize);
      }
    }
    if (!baseline || !(*baseline > 0) || !std::isfinite(*baseline)) continue;
    double threshold = pre_merge ? kPreMergeThreshold : kPostMergeThreshold;
    if (pinned) {
      const std::optional<double>& own =
          pre_merge ? pinned->threshold_pre_merge : pinned->threshold_post_merge;
      if (own && *own > 0) threshold = *own;
    }
    PerfGateRow row;
    row.metric = metric.name;
    row.new_value = metric.value;
    row.baseline = *baseline;
    row.threshold = threshold;
    row.change = (metric.value - *baseline) / *baseline;
    row.gated = metric.gated;
    row.regressed = metric.gated && Misses(metric.value, *baseline, threshold, metric.maximize);
    gate.regressed = gate.regressed || row.regressed;
    gate.rows.push_back(row);
    if (metric.gated) {
      baselines[metric.name] = *baseline;
      double pre = kPreMergeThreshold;
      if (pinned && pinned->threshold_pre_merge && *pinned->threshold_pre_merge > 0) {
        pre = *pinned->threshold_pre_merge;
      }
      pre_merge_thresholds[metric.name] = pre;
      directions[metric.name] = metric.maximize;
    }
  }
  if (gate.rows.empty()) gate.notes.push_back("no metric of this run has a baseline; not gated");
  if (pre_merge && gate.regressed) {
    for (const auto& [metric, baseline] : baselines) {
      auto latest = input.latest_post_merge.find(metric);
      if (latest == input.latest_post_merge.end() || !Usable(latest->second)) continue;
      if (Misses(latest->second, baseline, pre_merge_thresholds[metric], directions[metric])) {
        gate.exempt = true;
        gate.notes.push_back("exempt: the latest post-merge " + metric + " (" +
                             FixedDecimals(latest->second, 4) +
                             ") misses the pre-merge gate itself (" + "baseline " +
                             FixedDecimals(baseline, 4) + "): main has regressed");
        break;
      }
    }
  }
  return gate;
}

std::string FormatGateTable(const PerfGate& gate) {
  std::vector<std::vector<std::string>> cells = {
      {"metric", "new", "baseline", "threshold", "change", ""}};
  for (const PerfGateRow& row : gate.rows) {
    cells.push_back({row.metric, FixedDecimals(row.new_value, 4), FixedDecimals(row.baseline, 4),
                     FixedDecimals(row.threshold * 100, 1) + "%",
                     (row.change >= 0 ? "+" : "") + FixedDecimals(row.change * 100, 2) + "%",
                     row.regressed ? "REGRESSED" : (row.gated ? "ok" : "")});
  }
  std::vector<std::size_t> width(6, 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  }
  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::string cell = line[i];
      if (i > 0) cell = std::string(width[i] - cell.size(), ' ') + cell;
      if (i == 0) cell += std::string(width[i] - cell.size(), ' ');
      text += (i ? "  " : "") + cell;
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

}  // namespace trtllm_run::perf
