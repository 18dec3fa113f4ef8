// JobSpec: the manifest an executor writes into the work dir (job_spec.json) and reads
// back to run, re-attach to or cancel a job. The file is the contract between planning
// and execution: everything an executor needs later is in it.
#ifndef TRTLLM_RUN_SDK_JOB_SPEC_H_
#define TRTLLM_RUN_SDK_JOB_SPEC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// slurm_params of spec 001 Step 5.
struct SlurmParams {
  std::string partition;
  std::string account;
  std::string time_limit;
  int nodes = 1;
  int ntasks = 1;
  int ntasks_per_node = 1;
  std::optional<int> gpus_per_node;
  std::string gres;        // "gpu:4", or empty when the partition has no GPU gres
  std::string mpi_plugin;  // resolved pmix plugin, e.g. "pmix_v4"; empty: none
  bool operator==(const SlurmParams& o) const {
    return partition == o.partition && account == o.account && time_limit == o.time_limit &&
           nodes == o.nodes && ntasks == o.ntasks && ntasks_per_node == o.ntasks_per_node &&
           gpus_per_node == o.gpus_per_node && gres == o.gres && mpi_plugin == o.mpi_plugin;
  }
};

struct JobSpec {
  std::string scenario;       // executor name: local_direct, local_slurm, ...
  std::string workflow_type;  // custom, bench, eval, pytest
  std::string model_name;
  std::string work_dir;    // absolute
  std::string log_file;    // absolute
  std::string repo_root;   // absolute
  std::string direct_cmd;  // local_direct: the command, run with bash -c
  // Where the command runs, relative to repo_root (JobPlan::working_dir); empty: repo_root.
  std::string working_dir;
  // The bash options the command runs under (JobPlan launch.shell_options): bash OPTIONS
  // -c direct_cmd. In job_spec.json only when not empty.
  std::vector<std::string> shell_options;
  // Lines bash runs in the command's own shell just before it (JobPlan
  // launch.command_prelude): bash OPTIONS -c "PRELUDE<newline>direct_cmd". In job_spec.json
  // only when not empty.
  std::string command_prelude;
  std::vector<EnvVar> custom_env;
  int monitor_timeout_seconds = 3600;
  int max_pending_seconds = 0;  // Slurm: the longest wait in the queue; 0: no bound
  // No new byte of job output (every node's and step's) for this long stops the job as a
  // hang (HANG_DETECTED); on Slurm counted from when it runs. 0: off.
  int silence_timeout_seconds = 0;
  std::vector<std::string> success_patterns;
  std::vector<std::string> failure_patterns;

  int required_devices = 1;
  int total_required_devices = 1;
  int required_devices_per_node = 1;
  int node_count = 1;
  std::string job_name;
  std::string container_image;
  bool build_project = true;
  bool skip_install = false;
  std::string script_path;  // rendered script, when the executor writes one

  // Rendered jobs (spec 001/002 Step 5). Empty strings and an absent slurm_params mean
  // "not used by this scenario".
  std::string script_name;
  std::string log_file_pattern;          // "<model>_<kind>_%j.out"; %j = the Slurm job id
  std::vector<std::string> extra_files;  // copied next to the script for remote runs
  std::optional<SlurmParams> slurm_params;
  std::string slurm_env_json;  // the slurm_env object, embedded verbatim (a JSON object)
  std::string docker_cmd;      // local_docker: the whole docker run command
  std::string container_name;
  std::string container_mounts;   // comma-separated host:container entries
  std::string container_runtime;  // pyxis or none (Slurm), docker (local_docker)
  bool persistent_mode = false;   // local_slurm only
  std::string device_type;
  std::string llm_models_root;
  std::string partition;
  std::string account;
  std::string time_limit;

  // remote_slurm.
  std::string slurm_cluster;
  std::string ssh_host;
  std::string slurm_user;
  std::string remote_cwd;
  std::string remote_repo_path;
  std::string remote_work_dir;
  std::string repo_url;
  std::string repo_branch;

  // The request's executor_options (CaseRequest::executor_options), set by the runtime
  // before Executor::Prepare; job_spec.json key "executor_options" (an object of strings),
  // written only when there are some.
  std::map<std::string, std::string> executor_options;

  // Executor-specific string fields, written as top-level keys. Third-party executors
  // keep their own state here; keys must not collide with the fields above.
  std::map<std::string, std::string> extra;
};

// Serializes `spec` as a JSON object (pretty-printed, stable key order).
TRTLLM_RUN_API std::string JobSpecToJson(const JobSpec& spec);

// Parses job_spec.json text. `origin` (a path) is named in errors. Unknown keys that hold
// strings land in `extra`; missing required keys (scenario, work_dir) are errors.
TRTLLM_RUN_API Result<JobSpec> JobSpecFromJson(const std::string& text, const std::string& origin);

// Writes <spec.work_dir>/job_spec.json atomically (temp file + fsync + rename).
TRTLLM_RUN_API Status WriteJobSpec(const JobSpec& spec);

// Reads <work_dir>/job_spec.json.
TRTLLM_RUN_API Result<JobSpec> ReadJobSpec(const std::string& work_dir);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_JOB_SPEC_H_
