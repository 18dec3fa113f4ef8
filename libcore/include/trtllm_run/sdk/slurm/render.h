// The Slurm renderer of spec 001/002 Step 4 (Categories 2-6) and the shared preparation of
// Slurm jobs (local_slurm, remote_slurm). The Render* functions are pure: resolved inputs
// in, script text out. PrepareSlurmJob resolves the inputs from the request, plan and
// placement, renders, and writes the work dir.
#ifndef TRTLLM_RUN_SDK_SLURM_RENDER_H_
#define TRTLLM_RUN_SDK_SLURM_RENDER_H_

#include <string>
#include <vector>

#include "trtllm_run/environment.h"
#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// ---- Categories 2, 3, 5, 6: the Slurm batch script (render_slurm.cc) ----

struct SlurmScriptInputs {
  std::string workflow_type;  // named in the script's header comment
  std::string job_kind;       // the file-name kind (LaunchFacts::job_kind resolved)
  std::string model_name;
  std::string job_name;  // <account>.<detail>
  std::string log_dir;   // #SBATCH --output/--error go to <log_dir>/<model>_<kind>_%j.{out,err}
  SlurmParams params;    // partition, account, time, nodes, ntasks, gres, mpi_plugin
  std::string container_runtime = "pyxis";  // pyxis: container flags; none: --chdir only
  std::string container_image;              // as --container-image takes it (enroot form)
  std::string container_name;
  std::string container_mounts;
  std::string project_path;     // the repo as the job sees it; steps cd there
  std::string run_working_dir;  // relative to project_path: the run step cds there too
  std::string llm_models_root;  // exported as LLM_MODELS_ROOT; empty: not exported
  std::vector<PlanStep> steps;  // install / prepare / run, in order
  std::vector<std::string> keep_env = {"SLURM_PROCID", "SLURM_LOCALID"};  // non-MPI steps
  bool run_shows_gpus = false;  // the run step prints nvidia-smi first
  // A run step that runs a run script (Category 3) instead of bash -c.
  std::string run_script;  // the run script as the job sees it; empty: none
  std::string custom_command;
  std::string custom_env;  // KEY=VALUE pairs, values shell-quoted (safe to eval)
  std::string custom_workdir;
  // The token of the script's end marker (sdk/slurm/records.h EndMarkerEcho); "": a new one.
  std::string end_marker_token;
};

// The batch script: #SBATCH lines, strict mode without errexit, one `srun -l` per step
// (container flags, --kill-on-bad-exit=1, --mpi only for MPI steps), each step skipped
// once one failed, and a final line and exit status carrying the first failing step's
// real exit code. Commands reach the step's shell byte for byte.
TRTLLM_RUN_API std::string RenderSlurmBatchScript(const SlurmScriptInputs& in);

// ---- Category 4: perf-sanity through the repo's submit.py (render_slurm.cc) ----

struct PerfSubmitInputs {
  std::string python = "python3";
  std::string submit_py;  // <repo_root>/jenkins/scripts/perf/local/submit.py (local)
  std::string test_list;  // --test-list; or empty and config_file set
  std::string config_file;
  std::string test_name;       // --test-name (aggregated config files)
  std::string benchmark_mode;  // --benchmark-mode (disaggregated config files)
  std::string partition, account, job_name, image, mounts;
  std::string work_dir;  // as the job sees it (remote_work_dir for remote_slurm)
  std::string llm_src;   // as the job sees it (remote_repo_path for remote_slurm)
  std::string llm_models_root;
  std::string launch_sh;  // local path of the launch script submit.py writes
  std::string time_limit;
};

// The argv that runs submit.py with spec 001 Step 4 Category 4's flags.
TRTLLM_RUN_API std::vector<std::string> PerfSubmitArgv(const PerfSubmitInputs& in);

// ---- Slurm jobs for the local_slurm and remote_slurm executors (render_slurm.cc) ----

struct SlurmJobOptions {
  std::string executor;  // the executor's name, named in errors
  bool remote = false;   // remote paths, no persistent-mode fields, custom_script copied
};

// Runs the plan's after_placement hook once, with the facts ValidateSlurmJob and
// PrepareSlurmJob would give it (the partition from the placement, else the request, else
// slurm_env's default; gpus_per_node its smallest member's, else the cluster's), and
// clears it, so that Validate and Prepare get the plan as the hook left it: core calls it
// once per case for an executor with the slurm trait. Appends the hook's notes to `notes`.
// The hook's refusal, or a partition slurm_env does not know, is returned; OK and nothing
// changed when the plan has no hook.
TRTLLM_RUN_API Status ApplyAfterPlacementHook(const CaseRequest& request,
                                              const Placement& placement,
                                              const SlurmJobOptions& options, JobPlan* plan,
                                              std::vector<std::string>* notes);

// Resolves everything Prepare would (slurm_env, account, partition, image, mounts, limits,
// Slurm parameters) and reports the first problem. Writes nothing. When the placement
// carries no slurm_env, request.slurm_env_file is read; partition and account come from
// the placement, else the request, else slurm_env's defaults, and must exist there (a
// partition list: each member); no account is needed when slurm_env shows the accounts
// could not be read (no accounting). The plan's after_placement hook, when it still has one
// (ApplyAfterPlacementHook), then decides what
// needs the partition (its refusal is returned). Sizing against each partition: GPUs asked for
// (plan.devices_requested) where there is no GPU GRES, more GPUs per node than it has, or
// a request.time_limit above its MaxTime are kInvalidInput naming the flag that fixes
// them; the default time limit is lowered to the MaxTime and a monitor_timeout longer
// than the time limit is a note.
TRTLLM_RUN_API Status ValidateSlurmJob(const CaseRequest& request, const JobPlan& plan,
                                       const Placement& placement, const SlurmJobOptions& options);

// Fills `spec` (spec->work_dir set, the directory exists and is empty) and writes into the
// work dir: the script (<model>_<kind>.slurm, or slurm_launch.sh from submit.py for
// perf-sanity), the plan's run script, slurm_env.json, job_spec.json.
TRTLLM_RUN_API Status PrepareSlurmJob(const CaseRequest& request, const JobPlan& plan,
                                      const Placement& placement, const SlurmJobOptions& options,
                                      JobSpec* spec);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_RENDER_H_
