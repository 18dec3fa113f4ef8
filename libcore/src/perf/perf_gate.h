// The perf gate of TensorRT-LLM's CI (tests/integration/defs/perf/
// README_perf_regression_system.md), offline: the baseline from the post-merge history of
// a match key, the thresholds, the pre-merge exemption (docs/perf.md "Gate").
#ifndef TRTLLM_RUN_PERF_PERF_GATE_H_
#define TRTLLM_RUN_PERF_PERF_GATE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/result.h"

namespace trtllm_run::perf {

constexpr double kPostMergeThreshold = 0.05;
constexpr double kPreMergeThreshold = 0.10;
constexpr int kHistoryDays = 90;

// One measured value and when (ISO 8601 UTC; its first 10 characters are its day).
struct TimedValue {
  std::string at;
  double value = 0;
};

// The p-th percentile (0..100) with linear interpolation between closest ranks (numpy's
// default); 0 for no values.
double Percentile(std::vector<double> values, double p);

// CI's calculate_baseline_metrics for one metric: the values grouped by day (the first 10
// characters of `at`) and averaged per day, in day order; a trailing rolling mean of 3
// days (fewer at the start); then P95 when larger is better, P5 when smaller is better.
// nullopt for no values.
std::optional<double> Baseline(const std::vector<TimedValue>& values, bool maximize);

// A pinned baseline of one metric (--perf-baseline FILE): each part optional.
struct PinnedMetric {
  std::optional<double> baseline;
  std::optional<double> threshold_pre_merge;
  std::optional<double> threshold_post_merge;
};

struct GateInput {
  std::string mode;                  // "pre-merge", "post-merge", "warn"
  std::vector<PerfMetric> measured;  // the new measurement
  std::string measured_at;           // its time (joins the baseline, as in CI)
  // The match key's post-merge points of the last kHistoryDays, per metric, oldest first.
  std::map<std::string, std::vector<TimedValue>> history;
  // The latest post-merge measurement's values, per metric (the exemption's record).
  std::map<std::string, double> latest_post_merge;
  std::map<std::string, PinnedMetric> pinned;  // from --perf-baseline; may be empty
  bool pinned_file = false;                    // a --perf-baseline entry matched
};

// The gate's table and verdict. Without history and without a pinned baseline there is
// nothing to compare with: no rows, not regressed, a note says so (CI: no regression
// check for a case without history). A metric's baseline is the pinned one when > 0, else
// Baseline(history + the new value); a metric without one (or <= 0) has no row. Its
// threshold is the pinned one of the mode when > 0, else 10 % (pre-merge) or 5 %
// (post-merge, warn). A gated metric regresses when new < baseline * (1 - threshold)
// (maximize) or new > baseline * (1 + threshold) (minimize). Pre-merge only: the case is
// exempt when some gated metric of the latest post-merge measurement, usable (finite,
// > 0), would itself miss that metric's baseline at the pre-merge threshold.
PerfGate EvaluateGate(const GateInput& input);

// The table as text: metric, new, baseline, threshold, change, one row a line.
std::string FormatGateTable(const PerfGate& gate);

}  // namespace trtllm_run::perf

#endif  // TRTLLM_RUN_PERF_PERF_GATE_H_
