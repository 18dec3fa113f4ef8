// `trtllm-run perf evaluate FILE`: CI's gate on given data, for checking the algorithm
// (docs/perf.md "Compare").
#ifndef TRTLLM_RUN_PERF_PERF_EVALUATE_H_
#define TRTLLM_RUN_PERF_PERF_EVALUATE_H_

#include <string>

#include "trtllm_run/status.h"

namespace trtllm_run::perf {

// Reads FILE: {"mode", "measured_at", "metrics": [{"name", "value", "direction", "gated"}],
// "history": {METRIC: [[TIME, VALUE], ...]}, "latest_post_merge": {METRIC: VALUE},
// "pinned": {METRIC: {"baseline", "threshold_pre_merge", "threshold_post_merge"}}}, runs
// EvaluateGate and returns result.json's perf section of it. kInvalidInput for a bad file.
Result<std::string> EvaluateGateFile(const std::string& path);

}  // namespace trtllm_run::perf

#endif  // TRTLLM_RUN_PERF_PERF_EVALUATE_H_
