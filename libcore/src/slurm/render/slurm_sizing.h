// Sizing a resolved Slurm job against its partition: the time limit, the workflow's
// decisions that need the partition, the perf-sanity path's inputs, and the Slurm
// parameters with the GPU checks. Not installed.
#ifndef TRTLLM_RUN_SLURM_RENDER_SLURM_SIZING_H_
#define TRTLLM_RUN_SLURM_RENDER_SLURM_SIZING_H_

#include "slurm/render/slurm_resolve.h"
#include "trtllm_run/request.h"
#include "trtllm_run/status.h"

namespace trtllm_run::internal {

// The job's time limit against each partition's MaxTime (sbatch refuses a job over the
// limit of a listed partition under EnforcePartLimits=ALL, and leaves it pending
// otherwise). A --time-limit above it is kInvalidInput; the default is lowered to it.
// A monitor_timeout longer than the time limit is a note, not an error: it counts from
// submission, so the surplus is time the job may wait in the queue.
Status CheckTimeLimit(const CaseRequest& request, ResolvedSlurmJob* job);

// Sets job->gpus_per_node (the smallest of the partition's members, else the cluster's)
// and hands the placement to the plan's after_placement hook, whose refusal is returned
// and whose new notes join the job's.
Status ApplyPlacement(const Placement& placement, ResolvedSlurmJob* job);

// The perf-sanity path (plan.launch.perf.enabled): the repo's submit.py must exist and
// llm_models_root be given, then the plan's own refusal (perf.incomplete), if any.
Status CheckPerfInputs(ResolvedSlurmJob* job);

// The Slurm parameters (spec 001 Step 3, "Common Slurm parameters") by the plan's task
// layout, checked against each partition's GPUs (kInvalidInput naming both and the flags
// that fix it), the MPI plugin, and the job's names and log pattern.
Status SizeSlurmJob(const CaseRequest& request, ResolvedSlurmJob* job);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_RENDER_SLURM_SIZING_H_
