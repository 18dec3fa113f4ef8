// The metrics a perf case's log prints (docs/perf.md "Metrics"): perf-sanity's
// benchmark_serving summary and trtllm-bench's PERFORMANCE OVERVIEW, by the names of
// TensorRT-LLM's CI (test_perf_sanity.py PERF_METRIC_LOG_QUERIES), and the case's CI
// match key.
#ifndef TRTLLM_RUN_PERF_PERF_METRICS_H_
#define TRTLLM_RUN_PERF_PERF_METRICS_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/result.h"

namespace trtllm_run::perf {

// The most of a case's log read for its metrics (the summary blocks are at its end).
inline constexpr std::size_t kMaxPerfLogBytes = 64u << 20;

// One metric line a tool prints: `label` then optional blanks, ':', blanks, the number.
struct MetricLine {
  const char* label;  // as printed, e.g. "Total Token throughput (tok/s)"
  const char* name;   // CI's name, e.g. "total_token_throughput"
  const char* unit;
  bool maximize;
  bool gated;  // gated by default (token throughputs; acceptance length when printed)
};

// Every metric line known, perf-sanity's first.
const std::vector<MetricLine>& KnownMetricLines();

// The direction, unit and default gating of a metric name ("#k" block suffix ignored);
// nullopt for a name no tool prints.
std::optional<MetricLine> MetricInfo(std::string_view name);

// `line` without ANSI escape sequences (CSI, OSC, two-byte ESC) and without what a
// carriage return overwrote (the text after the last '\r' that is followed by text).
std::string CleanLogLine(std::string_view line);

// Every metric of `log`, in order. A label may stand anywhere in its line (after a rank or
// time prefix, as CI's re.search finds it); the first label of a line wins. A metric seen
// again starts a new block (a perf-sanity case with several client configs): the metrics
// of block k >= 2 are named "<name>#<k>".
std::vector<PerfMetric> ParsePerfMetrics(std::string_view log);

// The CI match key of a perf case: model, gpu_type, workflow and the configuration its
// command names (bench: benchmark, tp, pp, ep, concurrency, num_requests, max_batch_size,
// max_num_tokens, backend, dataset, server_config; perf-sanity: test_id). Keys with no
// value are left out.
std::map<std::string, std::string> MatchKeyOf(const RunResult& result, const std::string& gpu_type);

// The key's canonical text (compact JSON, keys sorted): the history's match_key column.
std::string MatchKeyText(const std::map<std::string, std::string>& key);

}  // namespace trtllm_run::perf

#endif  // TRTLLM_RUN_PERF_PERF_METRICS_H_
