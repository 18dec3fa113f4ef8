// `--repeat N` statistics (repeat_stats.h).
#include "history/repeat_stats.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "history/history_query.h"
#include "model/decimal.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::history {
namespace {

std::string Percent(double rate) { return FixedDecimals(rate * 100, 1) + "%"; }

void Key(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key) { w.Key(key); }

void String(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::string& text) {
  w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
}

// Rounded to a millionth, so the JSON does not print 0.48100000000000004.
double Round6(double value) { return std::round(value * 1e6) / 1e6; }

}  // namespace

Interval WilsonInterval(std::int64_t passed, std::int64_t runs, double z) {
  if (runs <= 0) return {0, 1};
  const double n = static_cast<double>(runs);
  const double p = static_cast<double>(std::clamp<std::int64_t>(passed, 0, runs)) / n;
  const double z2 = z * z;
  const double denominator = 1 + z2 / n;
  const double center = (p + z2 / (2 * n)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

RepeatSummary SummarizeRepeat(const std::string& name, std::vector<RepeatRun> runs,
                              std::optional<double> required_pass_rate) {
  std::sort(runs.begin(), runs.end(),
            [](const RepeatRun& a, const RepeatRun& b) { return a.index < b.index; });
  RepeatSummary summary;
  summary.name = name;
  summary.required_pass_rate = required_pass_rate;
  summary.runs = static_cast<int>(runs.size());
  std::vector<double> durations;
  std::map<std::string, std::vector<int>> failures;
  for (const RepeatRun& run : runs) {
    durations.push_back(run.duration_seconds);
    if (!run.nodes.empty() &&
        std::find(summary.nodes.begin(), summary.nodes.end(), run.nodes) == summary.nodes.end()) {
      summary.nodes.push_back(run.nodes);
    }
    if (run.verdict == "PASSED") {
      ++summary.passed;
    } else {
      failures[run.signature.empty() ? run.verdict : run.signature].push_back(run.index);
    }
  }
  if (summary.runs > 0) {
    summary.pass_rate = static_cast<double>(summary.passed) / summary.runs;
    summary.min_seconds = *std::min_element(durations.begin(), durations.end());
    summary.max_seconds = *std::max_element(durations.begin(), durations.end());
    summary.median_seconds = Percentile(durations, 50).value_or(0);
  }
  summary.interval = WilsonInterval(summary.passed, summary.runs);
  for (auto& [signature, indexes] : failures) summary.failures.push_back({signature, indexes});
  std::stable_sort(
      summary.failures.begin(), summary.failures.end(),
      [](const RepeatFailure& a, const RepeatFailure& b) { return a.runs.size() > b.runs.size(); });
  summary.accepted =
      summary.runs > 0 && (summary.passed == summary.runs ||
                           (required_pass_rate && summary.pass_rate >= *required_pass_rate));
  summary.each = std::move(runs);
  return summary;
}

std::string FormatRepeatSummary(const RepeatSummary& s) {
  std::string text = "repeat " + EscapeControl(s.name) + ": " + std::to_string(s.passed) + "/" +
                     std::to_string(s.runs) + " passed (" + Percent(s.pass_rate) + ", Wilson 95% " +
                     Percent(s.interval.low) + ".." + Percent(s.interval.high) + ")";
  if (s.required_pass_rate) text += ", required " + Percent(*s.required_pass_rate);
  text += ": " + std::string(s.accepted ? "PASSED" : "FAILED") + "\n";
  text += "  duration " + FixedDecimals(s.min_seconds, 1) + " s / " +
          FixedDecimals(s.median_seconds, 1) + " s / " + FixedDecimals(s.max_seconds, 1) +
          " s (min/median/max)\n";
  if (!s.nodes.empty()) {
    text += "  ran on " + std::to_string(s.nodes.size()) + " node list(s): ";
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      text += (i ? ", " : "") + EscapeControl(s.nodes[i]);
    }
    text += "\n";
  }
  for (const RepeatFailure& failure : s.failures) {
    text += "  " + std::to_string(failure.runs.size()) + "x " + EscapeControl(failure.signature) +
            " (run";
    for (std::size_t i = 0; i < failure.runs.size(); ++i) {
      text += (i ? ", " : " ") + std::to_string(failure.runs[i]);
    }
    text += ")\n";
  }
  return text;
}

std::string RepeatSummaryJson(const RepeatSummary& s) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  Key(w, "name");
  String(w, s.name);
  Key(w, "runs");
  w.Int(s.runs);
  Key(w, "passed");
  w.Int(s.passed);
  Key(w, "pass_rate");
  w.Double(Round6(s.pass_rate));
  Key(w, "wilson_95");
  w.StartArray();
  w.Double(Round6(s.interval.low));
  w.Double(Round6(s.interval.high));
  w.EndArray();
  Key(w, "required_pass_rate");
  if (s.required_pass_rate) {
    w.Double(*s.required_pass_rate);
  } else {
    w.Null();
  }
  Key(w, "status");
  String(w, s.accepted ? "PASSED" : "FAILED");
  Key(w, "duration_seconds");
  w.StartObject();
  Key(w, "min");
  w.Double(Round6(s.min_seconds));
  Key(w, "median");
  w.Double(Round6(s.median_seconds));
  Key(w, "max");
  w.Double(Round6(s.max_seconds));
  w.EndObject();
  Key(w, "nodes");
  w.StartArray();
  for (const std::string& nodes : s.nodes) String(w, nodes);
  w.EndArray();
  Key(w, "failures");
  w.StartArray();
  for (const RepeatFailure& failure : s.failures) {
    w.StartObject();
    Key(w, "signature");
    String(w, failure.signature);
    Key(w, "count");
    w.Int(static_cast<int>(failure.runs.size()));
    Key(w, "runs");
    w.StartArray();
    for (int index : failure.runs) w.Int(index);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  Key(w, "each");
  w.StartArray();
  for (const RepeatRun& run : s.each) {
    w.StartObject();
    Key(w, "index");
    w.Int(run.index);
    Key(w, "status");
    String(w, run.verdict);
    Key(w, "duration_seconds");
    w.Double(Round6(run.duration_seconds));
    Key(w, "nodes");
    String(w, run.nodes);
    Key(w, "signature");
    String(w, run.signature);
    Key(w, "work_dir");
    String(w, run.work_dir);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace trtllm_run::history
