// The eval workflow's decision once the partition is known (spec 001 Step 3, Eval): a
// trtllm-eval that needs more than one node of the partition runs on the perf-sanity
// path through the repo's submit.py, with an aggregated perf config written for it, and
// only when the request opts in (eval_perf_fallback).
#ifndef TRTLLM_RUN_PLUGINS_WORKFLOWS_EVAL_EVAL_FALLBACK_H_
#define TRTLLM_RUN_PLUGINS_WORKFLOWS_EVAL_EVAL_FALLBACK_H_

#include <string>

#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/plan.h"

namespace trtllm_run {

// The aggregated perf config of the fallback: one server config sized tp x pp,
// hardware.gpus_per_node, and accuracy.enable_accuracy_test: true with the eval task.
std::string RenderEvalPerfConfig(const EvalArgs& eval, const std::string& model_name,
                                 int gpus_per_node, const std::string& eval_cmd);
std::string EvalPerfServerName(const EvalArgs& eval, const std::string& model_name);

// The after_placement hook of an eval plan of `eval_cmd` (parsed: `eval`): leaves a job
// that fits one node as it is; otherwise refuses it unless `fallback_allowed`, else turns
// the plan onto the perf-sanity path (perf inputs, task layout, kind, patterns, sizes).
AfterPlacementHook EvalFallbackHook(const EvalArgs& eval, const std::string& eval_cmd,
                                    bool fallback_allowed);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLUGINS_WORKFLOWS_EVAL_EVAL_FALLBACK_H_
