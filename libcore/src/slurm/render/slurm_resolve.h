// The resolution of a Slurm job shared by ValidateSlurmJob and PrepareSlurmJob (the
// local_slurm and remote_slurm executors): every value the batch script or submit.py's
// launch script needs, from the request, the plan, the placement and slurm_env. Not
// installed.
#ifndef TRTLLM_RUN_SLURM_RENDER_SLURM_RESOLVE_H_
#define TRTLLM_RUN_SLURM_RENDER_SLURM_RESOLVE_H_

#include <optional>
#include <string>
#include <vector>

#include "placement/mounts.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/slurm/render.h"

namespace trtllm_run::internal {

struct ResolvedSlurmJob {
  // The plan as the workflow left it after placement (JobPlan::launch.after_placement).
  JobPlan plan;
  SlurmEnv env;
  // The partition, or each member of sbatch's list, as slurm_env describes it; one
  // entry with only the name when slurm_env lists no partitions (facts unknown).
  std::vector<SlurmPartition> partitions;
  bool partition_facts = false;  // slurm_env described the partitions
  std::string partition;         // as given (a list: as given)
  std::string account;
  std::string time_limit;
  std::string runtime;
  std::string device_type;
  std::string arch;
  std::string image;      // canonical; empty with container_runtime none
  std::string job_image;  // as --container-image takes it
  std::string llm_models_root;
  std::string models_root_export;  // LLM_MODELS_ROOT in the job
  std::string home, project, log_dir;
  std::string remote_repo_path, remote_work_dir, remote_cwd;
  std::string custom_script;         // absolute local path of the plan's host script, if any
  std::string custom_script_remote;  // where the job finds it (remote_slurm)
  std::string command;               // the plan's command, with remote paths
  MountResolution mounts;
  std::optional<int> gpus_per_node;  // of the partition (or the cluster)
  std::string submit_py;             // the perf-sanity path's submit.py
  SlurmParams params;
  std::string kind, job_name, container_name, script_name, log_file_pattern;
  std::vector<std::string> notes;
};

// items joined with `separator`.
std::string JoinWith(const std::vector<std::string>& items, const std::string& separator);

// Resolves everything ValidateSlurmJob and PrepareSlurmJob need, in the order of the
// checks of render_slurm.h's ValidateSlurmJob contract, and reports the first problem. Writes
// nothing. `work_dir`: the local work dir (its name makes remote_work_dir).
Result<ResolvedSlurmJob> ResolveSlurmJob(const CaseRequest& request, const JobPlan& plan,
                                         const Placement& placement, const SlurmJobOptions& options,
                                         const std::string& work_dir);

// The slurm_env and the partition of a job (env, partition, partition_facts, partitions)
// as ResolveSlurmJob resolves them, and nothing else: what the after_placement hook needs.
Status ResolveEnvAndPartition(const CaseRequest& request, const Placement& placement,
                              const SlurmJobOptions& options, ResolvedSlurmJob* job);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_RENDER_SLURM_RESOLVE_H_
