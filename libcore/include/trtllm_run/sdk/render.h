// The pieces every renderer of spec 001/002 Step 4 shares (render_common.cc): the install
// command, the MPI cleanup snippet, the shipped data files, and the job_spec.json fields
// every executor copies from the plan. The Slurm renderer is sdk/slurm/render.h; the
// local_docker executor renders its own `docker run` (plugins/executors/local_docker).
#ifndef TRTLLM_RUN_SDK_RENDER_H_
#define TRTLLM_RUN_SDK_RENDER_H_

#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The install step's command, run in the project directory: the repo installed editable
// and its dev requirements (plus examples/trtllm-eval/requirements.txt when it exists,
// for eval), printing the last lines of pip's output; fails when pip fails.
TRTLLM_RUN_API std::string InstallCommand(bool eval_requirements);

// Bash that unsets every PMI*, PMIX*, MPI*, OMPI* and SLURM* variable except `keep`, so
// that a single-process step does not initialise MPI against srun's PMI (MPI_ERR_SPAWN).
TRTLLM_RUN_API std::string MpiCleanupSnippet(const std::vector<std::string>& keep);

// Data files shipped with libcore: <dir of libtrtllm_run_core>/<rel>/share/trtllm-run, the
// build tree's copy in a build and the installed one after install.
TRTLLM_RUN_API std::string DataDirectory();

// The in-container run script of Category 3, shipped in DataDirectory(); a workflow
// names it in LaunchFacts::run_script. It runs the command under the custom workflow's
// shell options (nounset, pipefail), which it spells out itself.
inline constexpr char kCustomRunScriptName[] = "slurm_run_custom.sh";
TRTLLM_RUN_API std::string CustomRunScriptPath();

// The job_spec.json fields every executor copies from the plan as they are: workflow,
// model, repo root, working dir, shell options, env, the monitor and silence timeouts,
// the patterns and the device counts. Each executor sets the rest (its command, node
// count, image, ...).
TRTLLM_RUN_API void CopyPlanToSpec(const JobPlan& plan, JobSpec* spec);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_RENDER_H_
