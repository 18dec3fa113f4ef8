// Two runs' perf metrics side by side (`trtllm-run perf compare RUN_A RUN_B`, MCP
// perf_compare; docs/perf.md "Compare").
#ifndef TRTLLM_RUN_PERF_PERF_COMPARE_H_
#define TRTLLM_RUN_PERF_PERF_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/result.h"

namespace trtllm_run::perf {

struct CompareRow {
  std::string metric;
  std::string unit;
  bool maximize = true;
  std::optional<double> a, b;
  std::optional<double> change;  // (b - a) / a, when both are known and a != 0
  std::string verdict;           // "better", "worse", "same", "only in A", "only in B"
};

struct Comparison {
  std::string a, b;  // the work dirs
  std::vector<CompareRow> rows;
};

// The metrics of a work dir: its result.json's perf section, else its log's metric lines
// (a run from before perf sections). kInvalidInput when `work_dir` has no result.json or it
// does not parse; kNotFound when neither holds a metric.
Result<std::vector<PerfMetric>> WorkDirMetrics(const std::string& work_dir);

// A's metrics in A's order, then B's others. "better"/"worse" by the metric's direction;
// "same" for a change below 0.05 %.
Result<Comparison> CompareWorkDirs(const std::string& a, const std::string& b);

// The table: metric, A, B, change, verdict; one row a line, ending with "\n".
std::string FormatComparison(const Comparison& comparison);

// {"a", "b", "rows": [{"metric", "unit", "direction", "a", "b", "change", "verdict"}]};
// unknown numbers are null.
std::string ComparisonJson(const Comparison& comparison);

}  // namespace trtllm_run::perf

#endif  // TRTLLM_RUN_PERF_PERF_COMPARE_H_
