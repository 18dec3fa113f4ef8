// Workflow: turns a CaseRequest into a JobPlan. A workflow knows the command it runs
// (pytest, trtllm-bench, trtllm-eval, anything) and nothing about Slurm or Docker.
#ifndef TRTLLM_RUN_WORKFLOW_H_
#define TRTLLM_RUN_WORKFLOW_H_

#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/plan.h"
#include "trtllm_run/request.h"
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
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_WORKFLOW_H_
