// The perf-sanity sub-type of the `pytest` workflow: a test_cmd naming test_e2e[<id>] or
// the perf-sanity test file, or a request with perf_config_yaml. The job is sized from the
// perf config's matching server config and hardware.gpus_per_node, as the repo's
// submit.py sizes it, and runs through submit.py (LaunchFacts::perf).
#ifndef TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PERF_SANITY_PLAN_H_
#define TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PERF_SANITY_PLAN_H_

#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/plan.h"

namespace trtllm_run {

// The plan of a perf-sanity request (workflow_type perf_sanity). kInvalidInput for a
// config that is missing or does not size the job; may throw YAML::Exception for a config
// of the wrong shape (the caller converts it).
Result<JobPlan> PlanPerfSanity(const CaseRequest& request);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLUGINS_WORKFLOWS_PYTEST_PERF_SANITY_PLAN_H_
