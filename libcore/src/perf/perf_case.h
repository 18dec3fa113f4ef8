// A perf case's metrics and gate, applied to its verdict before result.json is written
// (RunOptions::finalize): metrics from the log, the match key, the baseline from the
// history store or a pinned file, the verdict, the new points recorded (docs/perf.md).
#ifndef TRTLLM_RUN_PERF_PERF_CASE_H_
#define TRTLLM_RUN_PERF_PERF_CASE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/history_store.h"
#include "perf/perf_gate.h"
#include "trtllm_run/result.h"

namespace trtllm_run::perf {

// One entry of a --perf-baseline file: it applies to a case whose match key holds every
// key-value of `match_key` (an empty one applies to every case).
struct BaselineEntry {
  std::map<std::string, std::string> match_key;
  std::map<std::string, PinnedMetric> metrics;
};

struct BaselineFile {
  std::string path;
  std::vector<BaselineEntry> entries;
};

// Reads a --perf-baseline file (docs/perf.md "Pinned baseline"):
//   {"version": 1, "entries": [{"match_key": {...}, "metrics": {"NAME": {"baseline": X,
//     "threshold_pre_merge": F, "threshold_post_merge": F}}}]}
// kInvalidInput naming the file, the place and what is valid for anything else (unknown
// keys, a metric no tool prints, a non-positive number, a threshold >= 1).
Result<BaselineFile> LoadBaselineFile(const std::string& path);

// "pre-merge", "post-merge", "warn", "off"; kInvalidInput naming the valid ones otherwise.
Status CheckGateMode(const std::string& mode);

struct PerfOptions {
  std::string gate_mode = "off";
  std::optional<BaselineFile> baseline;    // --perf-baseline
  history::HistoryStore* store = nullptr;  // null: no history (nothing read or recorded)
  std::string now;                         // "" : the current time
};

// True for the cases whose logs carry perf metrics: workflow bench or perf_sanity.
bool IsPerfCase(const RunResult& result);

// For a perf case: reads its log's metrics into result->perf with the match key; with a
// gate mode other than "off", the gate's table and verdict (a PASSED case whose gated
// metric regressed becomes FAILED with diagnosis "perf_regression: ..." in pre-merge and
// post-merge modes, unless exempt; "warn" adds a note only); then records the new points
// in the store when the case's own verdict was PASSED. Problems with the store are notes,
// never a verdict. Other cases are left as they are.
void ApplyPerf(RunResult* result, const PerfOptions& options);

}  // namespace trtllm_run::perf

#endif  // TRTLLM_RUN_PERF_PERF_CASE_H_
