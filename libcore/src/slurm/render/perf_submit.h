// Running the repo's submit.py (spec 001/002 Step 4 Category 4) hermetically: its Slurm
// queries are answered from the slurm_env being planned against, its run time is
// bounded, and the launch script it writes is checked against the plan. Not installed.
#ifndef TRTLLM_RUN_SLURM_RENDER_PERF_SUBMIT_H_
#define TRTLLM_RUN_SLURM_RENDER_PERF_SUBMIT_H_

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/environment.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/status.h"

namespace trtllm_run::internal {

// The environment variable that bounds submit.py's run time, in seconds.
inline constexpr char kSubmitTimeoutVariable[] = "TRTLLM_RUN_SUBMIT_TIMEOUT";
inline constexpr int kDefaultSubmitTimeoutSeconds = 60;

// $TRTLLM_RUN_SUBMIT_TIMEOUT as whole seconds (1 to 86400), or the default when it is
// unset or empty; kInvalidInput naming the value otherwise.
Result<int> SubmitTimeoutSeconds();

// The Slurm client tools that get a stand-in while submit.py runs.
const std::vector<std::string>& SlurmToolNames();

// Writes into the existing directory `dir` one executable /bin/sh stand-in per
// SlurmToolNames() entry. `sinfo` answers -h/--noheader, -a/--all, -p/--partition and
// -o/--format with %P %R %a %l %D %G from env's partitions; `scontrol` answers
// `show config` (ClusterName, when env has a cluster_name) and `show partition [NAME]`.
// Everything else, and every other tool, fails at once (exit 1, a message on stderr
// naming the cluster). Each call is appended to <dir>/queries.log; those that were not
// answered also to <dir>/unanswered.log.
Status WriteSlurmToolStandIns(const std::string& dir, const SlurmEnv& env);

// The sizing a launch script asks sbatch for: the values of its #SBATCH directives (the
// lines before the first command, as sbatch reads them); nullopt where absent.
struct LaunchSizing {
  std::optional<std::string> nodes;            // --nodes, -N
  std::optional<std::string> ntasks;           // --ntasks, -n
  std::optional<std::string> ntasks_per_node;  // --ntasks-per-node
  std::optional<std::string> gpus_per_node;    // --gpus-per-node
  std::optional<std::string> gres;             // --gres
};
LaunchSizing ReadLaunchSizing(const std::string& script);

// What the launch script must agree with: the plan's Slurm parameters, made from the
// partition's facts in slurm_env.
struct PerfSubmitTarget {
  SlurmParams params;        // nodes, ntasks, ntasks_per_node, gres as planned
  SlurmPartition partition;  // the partition's slurm_env entry
  std::string cluster;       // named in messages; empty: slurm_env's cluster_name
};

// Ok when `sizing` asks for what `target` planned: the same --nodes and --ntasks-per-node
// (both must be present), --ntasks when present, and the same number of GPUs through
// --gres (none when the partition has no GPU gres) and --gpus-per-node when present.
// Otherwise kInvalidInput naming the directive, the script's value and the plan's.
Status CheckLaunchSizing(const LaunchSizing& sizing, const PerfSubmitTarget& target,
                         const std::string& script_path);

// Runs submit.py (PerfSubmitArgv(inputs)) with the stand-ins of WriteSlurmToolStandIns
// for `env` first on PATH (in a temporary directory, removed afterwards) and
// SLURM_CLUSTER_NAME set to env's cluster_name (empty when unknown); stops it and its
// children after `timeout_seconds`; then checks the launch script it wrote. Every
// failure is kInvalidInput (nothing was submitted). Appends a note naming the Slurm
// queries submit.py made and how they were answered to `notes`.
Status RunPerfSubmit(const PerfSubmitInputs& inputs, const SlurmEnv& env,
                     const PerfSubmitTarget& target, int timeout_seconds,
                     std::vector<std::string>* notes);

// `text` with every occurrence of the path `from` that ends where a path component ends
// (followed by '/', a quote, a blank, ':', ',', '=' or the end of the text; never by more
// of a name: /a/TRT does not match in /a/TRT-2) replaced by `to`.
std::string ReplacePathPrefix(const std::string& text, const std::string& from,
                              const std::string& to);

// remote_slurm without a shared filesystem: submit.py ran on this host against the local
// checkout and work dir. Every regular file of `work_dir` not in `before` (what submit.py
// wrote: the launch script, its test list, ...) gets each (local, remote) path of
// `mapping` replaced, in order (put the work dir before a checkout that contains it), its
// permissions kept; each but `launch_script` is appended to `extra_files` (copied to the
// remote work dir with it).
Status MapPerfFilesToRemote(const std::string& work_dir, const std::set<std::string>& before,
                            const std::vector<std::pair<std::string, std::string>>& mapping,
                            const std::string& launch_script,
                            std::vector<std::string>* extra_files);

}  // namespace trtllm_run::internal

#endif  // TRTLLM_RUN_SLURM_RENDER_PERF_SUBMIT_H_
