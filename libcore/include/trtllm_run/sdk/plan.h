// JobPlan: what a Workflow derives from a request, before any scheduler or container
// syntax is chosen. Executors render a plan for their target.
#ifndef TRTLLM_RUN_SDK_PLAN_H_
#define TRTLLM_RUN_SDK_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/status.h"

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

struct JobPlan;

// How an executor that lays tasks out itself (Slurm) sizes the job from the plan's counts.
enum class TaskLayout {
  kAsPlanned,      // node_count nodes, total_required_devices tasks spread evenly over them
  kOneTask,        // one node, one task that drives all required_devices GPUs (pytest)
  kTaskPerDevice,  // one node, one task per GPU of required_devices (trtllm-bench, trtllm-eval)
  kTaskPerDeviceOnEachNode,  // node_count nodes of required_devices_per_node tasks (perf-sanity)
};

// The job's inputs for the repo's perf-sanity submit.py (spec 001 Step 4 Category 4), which
// writes the launch script itself. Exactly one of test_list, config_file and config_text
// is set when enabled.
struct PerfSubmitPlan {
  bool enabled = false;     // the job runs through submit.py instead of a batch script
  std::string test_list;    // --test-list: the test id string of the command
  std::string config_file;  // --config-file: an absolute path
  std::string config_text;  // a config the executor writes to <work_dir>/<config_file_name>
  std::string config_file_name;
  std::string test_name;       // --test-name (aggregated configs), or empty
  std::string benchmark_mode;  // --benchmark-mode (disaggregated configs), or empty
  // Not OK: the inputs are incomplete; reported after the path's own checks (submit.py
  // exists, llm_models_root given), so that those come first.
  Status incomplete;
  // Written into job_spec.json as they are (e.g. what the run can promise).
  std::vector<std::pair<std::string, std::string>> spec_extra;
};

// What the Slurm preparation knows about the partition once it is placed, for the
// decisions a workflow can only make then.
struct PlacementFacts {
  std::string partition;             // as routing chose it (a list: as given)
  std::optional<int> gpus_per_node;  // its smallest member's, else the cluster's; unknown: none
};

// A workflow's decision that needs the partition: may refuse the job (kInvalidInput, the
// message naming the partition and the fix) or change the plan (counts, launch facts,
// patterns, notes). Code of the workflow's plugin, which stays loaded while its registry
// lives. Called once per case: core calls it after placement for an executor with the
// slurm trait and hands the plan as the hook left it (hook cleared) to Validate and
// Prepare; ValidateSlurmJob/PrepareSlurmJob call it themselves for a plan that still has
// one. Null: nothing to decide.
using AfterPlacementHook = std::function<Status(const PlacementFacts&, JobPlan*)>;

// What the workflow decides about launching its job, so that executors render every
// workflow the same way (no executor knows a workflow by name).
struct LaunchFacts {
  // The job kind in file names: <model>_<kind>.slurm, <model>_<kind>_%j.out. Empty: the
  // workflow_type.
  std::string job_kind;
  TaskLayout task_layout = TaskLayout::kAsPlanned;
  // The Slurm variables a non-MPI step keeps when the rest of srun's MPI/Slurm variables
  // are unset (MpiCleanupSnippet).
  std::vector<std::string> keep_env = {"SLURM_PROCID", "SLURM_LOCALID"};
  bool run_shows_gpus = false;             // the run step prints nvidia-smi first, when present
  std::vector<std::string> shell_options;  // bash OPTIONS -c COMMAND, on every executor
  // Lines run in the command's own shell just before it, on every executor that runs the
  // command with bash -c (the custom workflow's ERR and EXIT traps); empty: none.
  std::string command_prelude;
  // The Slurm log name, %j the job id; empty: <model>_<job kind>_%j.out.
  std::string log_file_pattern;
  // The run step runs this data file of the installation (DataDirectory()) with
  // CUSTOM_COMMAND, CUSTOM_ENV, CUSTOM_WORKDIR exported, instead of `bash -c` (Category 3).
  std::string run_script;
  // A script of this host that the command runs as `bash <host_script>` (absolute): remote
  // executors copy it and run the copy, local ones mount its directory.
  std::string host_script;
  // Whether the repo is built from source before the job, where the executor builds,
  // when the request does not say (build_project): the workflow's default.
  bool build_project = true;
  // For messages about the GPU count: where it came from when no flag gave it ("the test's
  // GPU marker"; empty: "<workflow_type> workflow"), and how to ask for fewer, with
  // {gpus} for the count (empty: "give --required-devices {gpus} or fewer").
  std::string gpu_count_source;
  std::string fewer_gpus_hint;
  bool runs_without_gpus = false;  // may run CPU-only (--required-devices 0): named in hints
  // Whether the command reads models (LLM_MODELS_ROOT). False: on an executor without a
  // container, routing resolves no models root or models mount unless the request gives
  // --llm-models-root (the custom workflow: an arbitrary command).
  bool uses_models_root = true;
  PerfSubmitPlan perf;
  AfterPlacementHook after_placement;
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
  // No new byte of the job's output for this long stops it (HANG_DETECTED); 0: off.
  int silence_timeout_seconds = 0;
  std::string repo_root;  // absolute

  LaunchFacts launch;

  // Whether the plan has a step of that name ("install": the repo is installed first).
  bool HasStep(const std::string& name) const {
    for (const PlanStep& step : steps) {
      if (step.name == name) return true;
    }
    return false;
  }

  // One line per derivation decision ("model_name from --model: llama_3_1_8b"), for the summary.
  std::vector<std::string> notes;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_PLAN_H_
