// Routing and resolution (spec 000 Steps 2 and 2.5, spec 001 Step 2 rules 3-4): where a
// case runs, with which cluster, account, partition, models root and models mount.
// Pure functions of their inputs: the env check, the Slurm probe and the catalog are
// gathered by the caller (env_check.h, slurm_probe.h, catalog.h).
#ifndef TRTLLM_RUN_PLACEMENT_ROUTING_H_
#define TRTLLM_RUN_PLACEMENT_ROUTING_H_

#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/catalog.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The workflow_type the pytest workflow sets for perf-sanity tests; they need Slurm.
extern const char kPerfSanityWorkflow[];
// The workflow_type of trtllm-bench cases (the bench workflow); with perf-sanity, the perf
// cases whose metrics are read (perf/perf_case.h).
extern const char kBenchWorkflow[];
// Built-in executors that core must name outside routing: the only one that reads
// --docker-memory/--docker-pull, and the one whose jobs' times sacct gives here.
extern const char kLocalDockerExecutor[];
extern const char kLocalSlurmExecutor[];

// What routing knows of one loaded executor.
struct RoutingCandidate {
  std::string name;
  ExecutorTraits traits;
  std::shared_ptr<const Executor> executor;  // asked for claims (Executor::Claim); may be null
};

// Spec 000 Step 2 (RouteAmong). Decides placement.scenario, in this order:
//  1. request.scenario (--scenario): any name in `executors` (third-party ones
//     included); unknown -> kNotFound listing them. perf-sanity refuses executors
//     without the slurm trait. A remote executor needs a cluster (slurm_cluster,
//     device_type or ssh_host).
//  1.5 the first executor (in the given order) whose Claim() claims the case.
//  2. request.slurm_cluster: equal (case-insensitive) to env.cluster_name ->
//     local_slurm; else remote_slurm with that cluster (catalog entry, or the caller's
//     ssh_host when the catalog does not know it; neither -> kInvalidInput listing the
//     catalog's clusters).
//  3. request.device_type differing from env.device_type -> remote_slurm, auto-selected
//     from the catalog by device_type + required_devices_per_node.
//  4. local: Slurm tools and a cluster name -> local_slurm; else docker reachable ->
//     local_docker; else local_direct. "not satisfied" (fewer GPUs than the case needs:
//     this host's GPUs, or the catalog's gpus_per_node of the local cluster) falls to
//     the auto-select of 3 with the wanted (or local) device type. A host without GPUs
//     and no device type to select by runs the case here with local_direct. perf-sanity
//     (plan.workflow_type == kPerfSanityWorkflow) accepts only Slurm.
// The chosen name must be in `executors` (else kNotFound naming it and the loaded
// ones). Fills scenario, notes (one line per decision), env, cluster, arch, ssh_host
// and slurm_user (remote executors), llm_models_root, models_host_path and
// container_image (when the request gives one: used verbatim; else the executor
// resolves it for its target's arch, spec 000 Step 3).
// An auto-select without a match is kInvalidInput naming the device type, the GPUs
// per node and the catalog's clusters.
Result<Placement> RouteAmong(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
                             const ClusterCatalog* catalog,
                             const std::vector<RoutingCandidate>& executors);

// Spec 000 Step 2.5, after the probe: account = request.account -> slurm_env
// default_account -> cluster default_account; partition = request.partition ->
// slurm_env default_partition -> cluster default_partition. Both are validated against
// the probe (accounts[], partitions[].name, and the partition must be up): an unknown
// or unusable value is kInvalidInput listing the valid ones. A partition may be sbatch's
// comma-separated list: each member is validated (the first bad one is named) and all
// must share one arch. When the probe could not read the accounts (accounting disabled,
// or sacctmgr failed) there is nothing to validate against: a given (or catalog default)
// account is used as is and none is needed, each with a note saying why. Sets
// placement->slurm_env (the probe, as given), account, partition, arch (the
// partitions', when probed) and notes.
Status ResolveAccountPartition(const CaseRequest& request, const SlurmEnv& slurm_env,
                               const ClusterEntry* cluster, Placement* placement);

// Spec 000 Step 1 remote paths (remote executors): remote_repo_path = request.remote_repo_path,
// else <user root dir>/<repo dir name of repo_url> (user root dir: request.remote_cwd,
// else the cluster's user_root_dir); remote_work_dir = <remote_repo_path>/work_dirs/
// <basename(work_dir)>. kInvalidInput naming the inputs when no root is known.
Status ResolveRemotePaths(const CaseRequest& request, const std::string& repo_url,
                          const std::string& work_dir, Placement* placement);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_ROUTING_H_
