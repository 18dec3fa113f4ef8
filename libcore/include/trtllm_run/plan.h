// JobPlan: what a Workflow derives from a request, before any scheduler or container
// syntax is chosen. Executors render a plan for their target.
#ifndef TRTLLM_RUN_PLAN_H_
#define TRTLLM_RUN_PLAN_H_

#include <string>
#include <utility>
#include <vector>

namespace trtllm_run {

struct EnvVar {
  std::string name;
  std::string value;
  bool operator==(const EnvVar& other) const { return name == other.name && value == other.value; }
};

// One step of a job, e.g. bench = install, prepare-dataset, throughput.
struct PlanStep {
  std::string name;      // "install", "prepare", "run", ...
  std::string command;   // shell command, exactly as the user wrote it
  int tasks = 1;         // processes the step launches
  bool use_mpi = false;  // launched through the cluster's MPI plugin
};

struct JobPlan {
  std::string workflow_type;  // "custom", "bench", "eval", "pytest", ...
  std::string model_name;     // sanitized: [a-z0-9_]+
  std::string command;        // the whole command a direct run executes (direct_cmd)
  std::vector<EnvVar> env;    // exported before the command (custom_env)
  // Where `command` (the "run" step) runs, relative to the repo root as the job sees it;
  // empty: the repo root. E.g. "tests/integration/defs" for TensorRT-LLM's integration
  // tests. Every executor honours it.
  std::string working_dir;
  std::vector<PlanStep> steps;

  int required_devices = 1;
  int total_required_devices = 1;
  int required_devices_per_node = 1;
  int node_count = 1;  // ceil(total / per_node): the single source of truth
  // Whether the GPU count was asked for: given (required_devices, total or per node) or
  // derived from the command (test markers, tp x pp, a perf config). False for the
  // default of 1 GPU: on a Slurm partition without GPU GRES that default runs without
  // --gres (with a note), while an asked-for count is refused. 0 devices: CPU only.
  bool devices_requested = false;

  std::vector<std::string> success_patterns;
  std::vector<std::string> failure_patterns;

  int monitor_timeout_seconds = 3600;
  int max_pending_seconds = 0;  // the longest wait in a scheduler's queue; 0: no bound
  std::string repo_root;        // absolute

  // One line per derivation decision ("model_name from --model: llama_3_1_8b"), for the summary.
  std::vector<std::string> notes;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLAN_H_
