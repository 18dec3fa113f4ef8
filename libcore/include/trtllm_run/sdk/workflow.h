// Workflow: turns a CaseRequest into a JobPlan. A workflow knows the command it runs
// (pytest, trtllm-bench, trtllm-eval, anything) and nothing about Slurm or Docker.
#ifndef TRTLLM_RUN_SDK_WORKFLOW_H_
#define TRTLLM_RUN_SDK_WORKFLOW_H_

#include <cstddef>
#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

class TRTLLM_RUN_API Workflow {
 public:
  virtual ~Workflow();

  // The workflow_type this plugin produces ("custom", "bench", ...).
  virtual std::string Name() const = 0;

  // Registry order: the workflow with the lowest value that Claims() a request gets it
  // (spec order: custom 10, bench 20, eval 30, pytest 40).
  virtual int ClaimOrder() const = 0;

  // True when this workflow handles `request`. Must be cheap and side-effect free.
  virtual bool Claims(const CaseRequest& request) const = 0;

  // Derives the plan. Errors are kInvalidInput naming the field, the value and what
  // would be valid. Reads input files (test sources, configs) but writes nothing.
  // plan.repo_root and plan.monitor_timeout_seconds are filled in by the runtime.
  virtual Result<JobPlan> Plan(const CaseRequest& request) const = 0;

  // Refines the verdict of a job this workflow planned (spec.workflow_type == Name()) from
  // what the job printed, once the executor has judged it from exit codes, scheduler states
  // and patterns: e.g. pytest's own summary (every test skipped -> SKIPPED, no tests
  // collected -> ERROR) and per-test outcomes. `log_tail` is the end of the job's log (at
  // most kJudgeLogBytes, starting at a line boundary; empty when the log is unreadable);
  // spec.direct_cmd is the planned command, also for executors that run a script.
  // Must only use what the log proves; never turns a verdict the executor made from its
  // own action (TIMEOUT, HANG_DETECTED, CANCELLED) or the scheduler's (OUT_OF_MEMORY, ERROR)
  // into another. Default: leaves the result as it is.
  virtual void Judge(const JobSpec& spec, const std::string& log_tail, RunResult* result) const;

  static constexpr std::size_t kJudgeLogBytes = 8 << 20;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_WORKFLOW_H_
