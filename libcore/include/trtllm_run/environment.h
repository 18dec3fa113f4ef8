// What trtllm-run knows about where a case can run: this host (env check), a Slurm
// cluster (the one-pass probe, slurm_env.json), the site's cluster catalog
// (clusters.yaml), and the Placement that routing and resolution derive from them.
#ifndef TRTLLM_RUN_ENVIRONMENT_H_
#define TRTLLM_RUN_ENVIRONMENT_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// This host, as the env check sees it (replaces the exec-env-check skill).
struct EnvFacts {
  int gpu_count = 0;        // 0 when nvidia-smi is absent: not an error
  std::string gpu_name;     // "NVIDIA H100 80GB HBM3"
  std::string device_type;  // "H100", "B200", "GB200", ... ; empty without GPUs
  int gpus_per_node = 0;    // = gpu_count on a workstation; from the catalog on clusters
  bool docker_available = false;
  std::string docker_error;                        // why not, when not
  bool nvidia_runtime = false;                     // docker reports the nvidia runtime
  bool slurm_available = false;                    // sbatch, squeue, sinfo, scontrol on PATH
  std::optional<std::string> cluster_name;         // scontrol show config ClusterName, or catalog
  std::string arch;                                // uname -m: x86_64, aarch64
  std::optional<std::string> default_models_repo;  // host path of the models repo
  std::vector<std::string> notes;                  // how each fact was found
};

// One partition of slurm_env.json (spec-notes "The one-pass Slurm probe").
struct SlurmPartition {
  std::string name;
  std::string state;                // up, down, drain, inact, ...
  std::string time_limit;           // sinfo %l
  std::string nodes;                // sinfo %D, as text
  std::optional<std::string> arch;  // null when not probed or not found
  std::string gres = "(null)";
  std::optional<int> gpus_per_node;
  bool requires_gres = false;
};

// slurm_env.json: the probe's document plus the policy fields merged from the catalog.
struct SlurmEnv {
  std::string user;
  std::optional<std::string> default_account;
  std::vector<std::string> accounts;
  std::optional<std::string> default_partition;
  std::vector<SlurmPartition> partitions;
  std::vector<std::string> pmix_available;
  std::optional<std::string> pmix_preferred;
  std::vector<std::string> errors;

  // Policy fields (spec 000 Step 2.5 "Merge cluster YAML policy fields"); null = absent.
  std::optional<std::string> cluster_name;
  std::optional<std::vector<std::string>> mounts;
  std::optional<std::string> ssh_host;
  std::optional<std::string> slurm_user;
  std::optional<std::string> remote_cwd;
  std::optional<bool> mfa_style;
  // True once the policy fields were merged (or read back): slurm_env.json then carries
  // the six policy keys, null where absent. False: the probe's document alone.
  bool policy_merged = false;

  const SlurmPartition* FindPartition(const std::string& name) const {
    for (const SlurmPartition& partition : partitions) {
      if (partition.name == name) return &partition;
    }
    return nullptr;
  }
};

// slurm_env.json text (pretty, stable key order) and back. Reading names `origin`.
TRTLLM_RUN_API std::string SlurmEnvToJson(const SlurmEnv& env);
TRTLLM_RUN_API Result<SlurmEnv> SlurmEnvFromJson(const std::string& text,
                                                 const std::string& origin);

// One cluster of the catalog (replaces the internal-env-info skill). See
// examples/clusters.yaml for the documented file format.
struct ClusterEntry {
  std::string name;
  std::string ssh_host;           // full destination, or empty when built from the pattern
  std::string ssh_host_pattern;   // e.g. "{slurm_user}@login-{cluster}.example.com"
  std::optional<bool> mfa_style;  // MFA clusters: slurm_user gets the site's suffix
  std::string mfa_user_suffix;    // appended to user_name when mfa_style is true
  std::string slurm_user;         // login name on this cluster, used verbatim when set
  int gpus_per_node = 0;
  std::vector<std::string> device_types;  // "H100", "GB200", ...
  std::string arch;                       // x86_64 or aarch64 (derived from GB/GH if empty)
  std::string default_account;
  std::string default_partition;
  std::string models_repo_host;         // host path of the models repo (default_models_repo_host)
  std::string container_models_root;    // llm_models_root inside the container
  std::string user_root_dir;            // may contain {user}: the remote user's root dir
  std::vector<std::string> mounts;      // "host:container" entries
  std::string enroot_registry_rewrite;  // "host/path" -> "host#path" when "true"; empty: none
  std::string container_runtime;        // pyxis (default) or none
};

// Where and how one case runs, as routing and resolution decided (spec 000 Steps 2-3).
// Executors read it in Prepare; it is never re-derived downstream. container_image is
// set by routing when the request gives one (executors with the container trait); empty:
// the executor resolves it for its target's arch (spec 000 Step 3, image.h).
struct Placement {
  std::string scenario;                     // executor name
  std::vector<std::string> notes;           // one line per decision, for the summary
  EnvFacts env;                             // this host
  std::optional<ClusterEntry> cluster;      // the catalog entry used, if any
  std::optional<SlurmEnv> slurm_env;        // Slurm scenarios: the probe (+ policy fields)
  std::string account;                      // Slurm scenarios: validated against slurm_env
  std::string partition;                    // Slurm scenarios: validated against slurm_env
  std::string container_image;              // canonical (no enroot rewrite)
  std::string arch;                         // of the target nodes
  std::string llm_models_root;              // inside the container
  std::string models_host_path;             // host side of the models mount, if resolved
  std::string container_runtime = "pyxis";  // pyxis or none

  // remote_slurm only.
  std::string ssh_host;
  std::string slurm_user;
  std::string remote_repo_path;  // <user_root_dir>/<repo dir name>
  std::string remote_work_dir;   // <remote_repo_path>/work_dirs/<basename(work_dir)>
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_ENVIRONMENT_H_
