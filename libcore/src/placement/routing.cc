#include "placement/routing.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kPerfSanityWorkflow[] = "perf_sanity";
const char kBenchWorkflow[] = "bench";
const char kLocalDockerExecutor[] = "local_docker";
const char kLocalSlurmExecutor[] = "local_slurm";

namespace {

namespace fs = std::filesystem;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiLower(a) == AsciiLower(b);
}

// `items` joined with `separator`, "(none)" for no items.
std::string JoinOrNone(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out.empty() ? "(none)" : out;
}

bool Contains(const std::vector<std::string>& items, const std::string& value) {
  return std::find(items.begin(), items.end(), value) != items.end();
}

std::string Given(const std::optional<std::string>& value) {
  return value && !value->empty() ? *value : "";
}

std::string CatalogHint() {
  return "create a cluster catalog (--clusters FILE, $TRTLLM_RUN_CLUSTERS or "
         "~/.config/trtllm-run/clusters.yaml; see " +
         ExampleCatalogPath() + ")";
}

// Routing state shared by the rules below.
class Router {
 public:
  Router(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
         const ClusterCatalog* catalog, const std::vector<RoutingCandidate>& executors)
      : request_(request),
        plan_(plan),
        env_(env),
        catalog_(catalog),
        executors_(executors),
        user_name_(EffectiveUserName(request.user_name)) {
    placement_.env = env;
    for (const RoutingCandidate& candidate : executors) executor_names_.push_back(candidate.name);
  }

  Result<Placement> Route() {
    TRTLLM_RUN_RETURN_IF_ERROR(Decide());
    chosen_ = Find(placement_.scenario);
    if (chosen_ == nullptr) {
      return Status::NotFound(
          "routing chose scenario " + placement_.scenario + " but no executor plugin named '" +
              placement_.scenario + "' is loaded",
          "loaded executors: " + JoinOrNone(executor_names_) +
              "; run 'trtllm-run plugins' to see which plugins failed to load, or pick one "
              "with --scenario");
    }
    ResolveModels();
    return placement_;
  }

 private:
  bool Perf() const { return plan_.workflow_type == kPerfSanityWorkflow; }
  bool LocalSlurm() const { return env_.slurm_available && env_.cluster_name.has_value(); }
  void Note(const std::string& line) { placement_.notes.push_back(line); }

  const RoutingCandidate* Find(const std::string& name) const {
    for (const RoutingCandidate& candidate : executors_) {
      if (candidate.name == name) return &candidate;
    }
    return nullptr;
  }

  // The first executor that claims the case (Executor::Claim), with its reason.
  Result<std::optional<std::pair<std::string, std::string>>> FirstClaim() const {
    for (const RoutingCandidate& candidate : executors_) {
      if (!candidate.executor) continue;
      std::optional<RouteClaim> claim;
      try {
        claim = candidate.executor->Claim(request_, env_);
      } catch (const std::exception& e) {
        return Status::PluginError("executor " + candidate.name +
                                   " threw while deciding whether to claim the case: " + e.what());
      } catch (...) {
        return Status::PluginError("executor " + candidate.name +
                                   " threw while deciding whether to claim the case");
      }
      if (claim) {
        return std::make_optional(std::make_pair(
            candidate.name,
            "claimed by the executor" + (claim->why.empty() ? "" : ": " + claim->why)));
      }
    }
    return std::optional<std::pair<std::string, std::string>>();
  }

  Status Decide() {
    std::string slurm_cluster = Given(request_.slurm_cluster);
    std::string device_type = Given(request_.device_type);
    if (request_.scenario) {
      return Override(*request_.scenario,
                      "requested (--scenario, or scenario: in the request file)");
    }
    Result<std::optional<std::pair<std::string, std::string>>> claim = FirstClaim();
    if (!claim.ok()) return claim.status();
    if (claim.value()) return Override(claim.value()->first, claim.value()->second);

    if (!slurm_cluster.empty()) {
      if (env_.cluster_name && EqualsIgnoreCase(*env_.cluster_name, slurm_cluster)) {
        Local("local_slurm", "slurm_cluster " + slurm_cluster +
                                 " is the cluster this host is on (scontrol ClusterName " +
                                 *env_.cluster_name + ")");
        return Status::Ok();
      }
      std::string why = env_.cluster_name ? "this host is on cluster " + *env_.cluster_name
                                          : "this host is on no Slurm cluster";
      return RemoteNamed(slurm_cluster, "slurm_cluster " + slurm_cluster + " given; " + why);
    }

    if (!device_type.empty() && !EqualsIgnoreCase(device_type, env_.device_type)) {
      std::string local =
          env_.gpu_count > 0 ? std::to_string(env_.gpu_count) + " x " + env_.device_type : "no GPU";
      return AutoSelect(device_type,
                        "device_type " + device_type + " wanted, this host has " + local);
    }

    // Local choices: is the host (or its cluster) able to run the case?
    int per_node = plan_.required_devices_per_node;
    bool satisfied;
    std::string capacity;
    if (LocalSlurm()) {
      satisfied = env_.gpus_per_node <= 0 || env_.gpus_per_node >= per_node;
      capacity = env_.gpus_per_node > 0
                     ? "cluster " + *env_.cluster_name + " has " +
                           std::to_string(env_.gpus_per_node) + " GPUs per node"
                     : "cluster " + *env_.cluster_name + " (GPUs per node checked by the probe)";
    } else {
      satisfied = env_.gpu_count >= plan_.total_required_devices;
      capacity = "this host has " + (env_.gpu_count > 0
                                         ? std::to_string(env_.gpu_count) + " x " + env_.device_type
                                         : std::string("no GPU"));
    }
    std::string need = "the case needs " + std::to_string(plan_.total_required_devices) +
                       " GPU(s), " + std::to_string(per_node) + " per node";
    if (satisfied && Perf() && !LocalSlurm()) {
      satisfied = false;
      capacity = "perf-sanity tests run only on Slurm and this host has no Slurm cluster";
    }
    if (satisfied) {
      if (LocalSlurm()) {
        Local("local_slurm", need + "; " + capacity);
      } else if (env_.docker_available) {
        Local("local_docker", need + "; " + capacity + "; Docker engine reachable");
      } else {
        Local("local_direct",
              need + "; " + capacity + "; no Slurm, no Docker (" + env_.docker_error + ")");
      }
      return Status::Ok();
    }
    std::string reason = "not satisfied here: " + need + "; " + capacity;
    std::string select_type = device_type.empty() ? env_.device_type : device_type;
    if (!select_type.empty()) return AutoSelect(select_type, reason);
    if (!Perf() && env_.gpu_count == 0 && !LocalSlurm()) {
      Local("local_direct",
            need +
                ", but this host has no GPU and no device_type says which cluster could run "
                "it: running here anyway (give --device-type or --slurm-cluster to run "
                "elsewhere)");
      return Status::Ok();
    }
    return Status::InvalidInput(reason,
                                "give --device-type (to auto-select a cluster from the catalog) or "
                                "--slurm-cluster NAME, or ask for fewer devices");
  }

  // --scenario (or a claim): any loaded executor.
  Status Override(const std::string& scenario, const std::string& why) {
    const RoutingCandidate* candidate = Find(scenario);
    if (candidate == nullptr) {
      return Status::NotFound("unknown scenario '" + scenario + "' (--scenario)",
                              "loaded executors: " + JoinOrNone(executor_names_));
    }
    if (Perf() && !candidate->traits.slurm) {
      return Status::InvalidInput(
          "perf-sanity tests run only on Slurm; --scenario " + scenario + " cannot run them",
          "use --scenario local_slurm or remote_slurm, or leave --scenario out");
    }
    if (!candidate->traits.remote) {
      Local(scenario, why);
      return Status::Ok();
    }
    std::string slurm_cluster = Given(request_.slurm_cluster);
    std::string device_type = Given(request_.device_type);
    if (!slurm_cluster.empty()) return RemoteNamed(slurm_cluster, why, scenario);
    if (!device_type.empty()) return AutoSelect(device_type, why, scenario);
    if (!Given(request_.ssh_host).empty()) return Remote(nullptr, "", why, scenario);
    return Status::InvalidInput(
        "--scenario " + scenario + " needs a cluster",
        "give --slurm-cluster NAME (from the catalog), --device-type (auto-select) or --ssh-host");
  }

  void Local(const std::string& scenario, const std::string& why) {
    placement_.scenario = scenario;
    placement_.arch = env_.arch;
    Note("scenario " + scenario + ": " + why);
    if (catalog_ != nullptr && env_.cluster_name) {
      if (const ClusterEntry* entry = catalog_->FindByName(*env_.cluster_name)) {
        placement_.cluster = *entry;
        Note("cluster " + entry->name + ": this host's cluster, from the catalog " +
             catalog_->path);
      }
    }
  }

  // A remote executor (remote_slurm unless named) on the cluster named by the caller.
  Status RemoteNamed(const std::string& name, const std::string& why,
                     const std::string& scenario = "remote_slurm") {
    const ClusterEntry* entry = catalog_ ? catalog_->FindByName(name) : nullptr;
    if (entry == nullptr && Given(request_.ssh_host).empty()) {
      if (catalog_ == nullptr) {
        return Status::InvalidInput(
            "unknown cluster '" + name + "' (slurm_cluster): no cluster catalog was found",
            "give --ssh-host for it, or " + CatalogHint());
      }
      return Status::InvalidInput(
          "unknown cluster '" + name + "' (slurm_cluster): not in the catalog " + catalog_->path,
          "clusters: " + JoinOrNone(catalog_->Names()) + "; or give --ssh-host for it");
    }
    return Remote(entry, name, why, scenario);
  }

  // A remote executor (remote_slurm unless named), cluster auto-selected by device type
  // and GPUs per node.
  Status AutoSelect(const std::string& device_type, const std::string& why,
                    const std::string& scenario = "remote_slurm") {
    int per_node = plan_.required_devices_per_node;
    std::string wanted =
        "device_type " + device_type + " with " + std::to_string(per_node) + " GPU(s) per node";
    if (catalog_ == nullptr) {
      return Status::InvalidInput(why + "; auto-selecting a cluster for " + wanted +
                                      " needs a cluster catalog and none was found",
                                  "give --slurm-cluster NAME with --ssh-host, or " + CatalogHint());
    }
    std::vector<const ClusterEntry*> matches = catalog_->FindByDevice(device_type, per_node);
    if (matches.empty()) {
      return Status::InvalidInput(
          why + "; no cluster in the catalog " + catalog_->path + " has " + wanted,
          "clusters: " + catalog_->Describe());
    }
    std::string others;
    for (size_t i = 1; i < matches.size(); ++i)
      others += (others.empty() ? "" : ", ") + matches[i]->name;
    return Remote(matches.front(), matches.front()->name,
                  why + "; auto-selected the first catalog cluster with " + wanted +
                      (others.empty() ? "" : " (also matching: " + others + ")"),
                  scenario);
  }

  Status Remote(const ClusterEntry* entry, const std::string& name, const std::string& why,
                const std::string& scenario) {
    placement_.scenario = scenario;
    std::string label = name.empty() ? Given(request_.ssh_host) : name;
    Note("scenario " + scenario + " on " + label + ": " + why);
    if (entry != nullptr) {
      placement_.cluster = *entry;
      placement_.slurm_user = SlurmUserFor(*entry, user_name_, request_.slurm_user);
      placement_.ssh_host = Given(request_.ssh_host).empty()
                                ? SshHostFor(*entry, placement_.slurm_user, user_name_)
                                : *request_.ssh_host;
      placement_.arch = ClusterArch(*entry);
      Note("slurm_user " + placement_.slurm_user +
           (request_.slurm_user ? " (--slurm-user)"
            : entry->mfa_style.value_or(false)
                ? " (user " + user_name_ + " + MFA suffix of " + entry->name + ")"
                : " (from the catalog entry " + entry->name + ")"));
    } else {
      placement_.slurm_user = request_.slurm_user.value_or(user_name_);
      placement_.ssh_host = Given(request_.ssh_host);
      std::string type = AsciiLower(Given(request_.device_type));
      placement_.arch = type.rfind("gb", 0) == 0 || type.rfind("gh", 0) == 0 ? "aarch64" : "x86_64";
      Note("cluster " + label + ": not in the catalog; connection fields from the request");
    }
    if (placement_.ssh_host.empty()) {
      return Status::InvalidInput(scenario + " on " + label + " needs an SSH destination",
                                  "give --ssh-host, or set ssh_host or ssh_host_pattern for " +
                                      label + " in clusters.yaml");
    }
    Note("ssh_host " + placement_.ssh_host +
         (Given(request_.ssh_host).empty() ? " (catalog)" : " (--ssh-host)"));
    return Status::Ok();
  }

  // Spec 001 Step 2 rules 1, 2 and 4 (rule 3, slurm_env.mounts, is the catalog's
  // mounts), the container models root, image and runtime.
  void ResolveModels() {
    const ExecutorTraits& traits = chosen_->traits;
    if (traits.container && !Given(request_.container_image).empty()) {
      placement_.container_image = *request_.container_image;
      Note("container_image " + placement_.container_image + ": given (--container-image)");
    }
    // A command that reads no models, without a container, uses neither (no
    // LLM_MODELS_ROOT): saying they are unresolved would only be noise.
    if (!traits.container && !plan_.launch.uses_models_root &&
        Given(request_.llm_models_root).empty()) {
      return;
    }
    const ClusterEntry* entry = placement_.cluster ? &*placement_.cluster : nullptr;
    if (!Given(request_.llm_models_root).empty()) {
      placement_.llm_models_root = *request_.llm_models_root;
      Note("llm_models_root " + placement_.llm_models_root + " (--llm-models-root)");
    } else if (entry != nullptr && !entry->container_models_root.empty()) {
      placement_.llm_models_root = entry->container_models_root;
      Note("llm_models_root " + placement_.llm_models_root + " (container_models_root of " +
           entry->name + ")");
    } else {
      Note(
          "llm_models_root: not resolved (give --llm-models-root or container_models_root in "
          "clusters.yaml)");
    }

    bool remote = traits.remote;
    if (!Given(request_.checkpoint_path).empty()) {
      std::string path = *request_.checkpoint_path;
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      placement_.models_host_path = fs::path(path).parent_path().string();
      Note("models mount from " + placement_.models_host_path + " (parent of checkpoint_path)");
    } else if (!Given(request_.models_path).empty()) {
      placement_.models_host_path = *request_.models_path;
      Note("models mount from " + placement_.models_host_path + " (models_path)");
    } else if (traits.slurm && entry != nullptr && !entry->mounts.empty()) {
      Note("models mount: the mounts of cluster " + entry->name + " (slurm_env.mounts), verbatim");
    } else if (remote && entry != nullptr && !entry->models_repo_host.empty()) {
      placement_.models_host_path = entry->models_repo_host;
      Note("models mount from " + placement_.models_host_path + " (models_repo_host of " +
           entry->name + ")");
    } else if (!remote && env_.default_models_repo) {
      placement_.models_host_path = *env_.default_models_repo;
      Note("models mount from " + placement_.models_host_path + " (env check default_models_repo)");
    } else {
      Note(
          "models mount: not resolved (give --checkpoint-path or --models-path, set "
          "$TRTLLM_RUN_MODELS_REPO, or models_repo_host in clusters.yaml)");
    }

    if (!Given(request_.container_runtime).empty()) {
      placement_.container_runtime = *request_.container_runtime;
    } else if (entry != nullptr && !entry->container_runtime.empty()) {
      placement_.container_runtime = entry->container_runtime;
    }
  }

  const CaseRequest& request_;
  const JobPlan& plan_;
  const EnvFacts& env_;
  const ClusterCatalog* catalog_;
  const std::vector<RoutingCandidate>& executors_;
  std::vector<std::string> executor_names_;
  const RoutingCandidate* chosen_ = nullptr;  // set once Decide() chose a loaded executor
  std::string user_name_;
  Placement placement_;
};

// Why the account cannot be checked against the probe, for a cluster whose accounts
// were not read: accounting is off, or sacctmgr failed.
std::string UncheckedAccountsReason(const SlurmEnv& env, SlurmAccounting accounting) {
  if (accounting == SlurmAccounting::kDisabled) {
    return "accounting is disabled on this cluster (sacctmgr: no supported "
           "accounting_storage plugin)";
  }
  std::vector<std::string> sacctmgr;
  for (const std::string& error : env.errors) {
    if (error.rfind("'sacctmgr show assoc'", 0) == 0) sacctmgr.push_back(error);
  }
  return "the cluster's accounts could not be read (" + JoinOrNone(sacctmgr, "; ") + ")";
}

}  // namespace

Result<Placement> RouteAmong(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
                             const ClusterCatalog* catalog,
                             const std::vector<RoutingCandidate>& executors) {
  return Router(request, plan, env, catalog, executors).Route();
}

Status ResolveAccountPartition(const CaseRequest& request, const SlurmEnv& slurm_env,
                               const ClusterEntry* cluster, Placement* placement) {
  if (SlurmProbeExitStatus(slurm_env) == 1) {
    return Status::InvalidInput(
        "the Slurm probe found no Slurm client tools (sacctmgr, sinfo) for user " + slurm_env.user,
        "run on a Slurm login node, or pick another scenario with --scenario");
  }
  std::vector<std::string> notes;

  // Account.
  std::string account;
  std::string account_source;
  if (!Given(request.account).empty()) {
    account = *request.account;
    account_source = "--account";
  } else if (slurm_env.default_account) {
    account = *slurm_env.default_account;
    account_source = "the user's default account (probe)";
  } else if (cluster != nullptr && !cluster->default_account.empty()) {
    account = cluster->default_account;
    account_source = "default_account of cluster " + cluster->name;
  }
  const SlurmAccounting accounting = SlurmAccountingState(slurm_env);
  if (accounting == SlurmAccounting::kAccounts) {
    if (account.empty()) {
      return Status::InvalidInput(
          "no Slurm account for user " + slurm_env.user,
          "give --account; valid accounts: " + JoinOrNone(slurm_env.accounts));
    }
    if (!Contains(slurm_env.accounts, account)) {
      return Status::InvalidInput("account '" + account + "' (" + account_source +
                                      ") is not one of user " + slurm_env.user +
                                      "'s Slurm accounts",
                                  "valid accounts: " + JoinOrNone(slurm_env.accounts));
    }
    notes.push_back("account " + account + " (" + account_source + "; validated)");
  } else if (accounting == SlurmAccounting::kDisabled ||
             accounting == SlurmAccounting::kUnreadable) {
    // Nothing to validate against: a given account goes to sbatch as is (Slurm ignores
    // it without accounting), and none is needed.
    const std::string why = UncheckedAccountsReason(slurm_env, accounting);
    if (!account.empty()) {
      notes.push_back("account " + account + " (" + account_source +
                      ") used as is, not validated: " + why);
    } else {
      notes.push_back("account: none needed, submitting without --account: " + why);
    }
  } else {
    return Status::InvalidInput(
        "user " + slurm_env.user + " has no Slurm account association on this cluster",
        "ask the cluster's administrators for one (sacctmgr add user " + slurm_env.user +
            " Account=...), or run as a user that has one");
  }

  // Partition.
  std::vector<std::string> names, up;
  for (const SlurmPartition& partition : slurm_env.partitions) {
    names.push_back(partition.name);
    if (partition.state == "up") up.push_back(partition.name);
  }
  std::string partition;
  std::string partition_source;
  if (!Given(request.partition).empty()) {
    partition = *request.partition;
    partition_source = "--partition";
  } else if (slurm_env.default_partition) {
    partition = *slurm_env.default_partition;
    partition_source = "the probe's default partition";
  } else if (cluster != nullptr && !cluster->default_partition.empty()) {
    partition = cluster->default_partition;
    partition_source = "default_partition of cluster " + cluster->name;
  }
  if (partition.empty()) {
    return Status::InvalidInput("no Slurm partition",
                                "give --partition; partitions: " + JoinOrNone(names));
  }
  // One partition or sbatch's list of them: every member must exist and be up.
  const std::vector<std::string> members = SplitPartitionList(partition);
  const bool list = members.size() > 1;
  std::optional<std::string> arch;
  std::string arch_from;
  for (const std::string& member : members) {
    const std::string what =
        list ? "partition '" + member + "' (in '" + partition + "', " + partition_source + ")"
             : "partition '" + partition + "' (" + partition_source + ")";
    if (member.empty()) {
      return Status::InvalidInput(
          "partition list '" + partition + "' (" + partition_source + ") has an empty name",
          "give partition names separated by single commas, e.g. " + JoinOrNone(up, ","));
    }
    const SlurmPartition* found = slurm_env.FindPartition(member);
    if (found == nullptr) {
      return Status::InvalidInput(
          what + " does not exist on this cluster",
          "partitions: " + JoinOrNone(names) + " (up: " + JoinOrNone(up) + ")");
    }
    if (found->state != "up") {
      return Status::InvalidInput(what + " is " + found->state + ", not up",
                                  "partitions that are up: " + JoinOrNone(up));
    }
    if (!found->arch) continue;
    if (arch && *arch != *found->arch) {
      return Status::InvalidInput("partitions " + arch_from + " (" + *arch + ") and " + member +
                                      " (" + *found->arch + ") in '" + partition +
                                      "' have different architectures; the container image "
                                      "is chosen for one",
                                  "list partitions of one architecture in --partition");
    }
    if (!arch) arch_from = member;
    arch = found->arch;
  }
  notes.push_back("partition " + partition + " (" + partition_source + "; validated" +
                  (list ? ", each of the list" : "") + ")");
  if (arch) {
    placement->arch = *arch;
    notes.push_back("arch " + placement->arch + " (partition " + arch_from + ", scontrol)");
  } else if (!placement->arch.empty()) {
    notes.push_back("arch " + placement->arch + " (partition arch unknown; from " +
                    (placement->cluster ? "the catalog" : "this host") + ")");
  }
  for (const std::string& error : slurm_env.errors) notes.push_back("slurm probe: " + error);

  placement->slurm_env = slurm_env;
  placement->account = account;
  placement->partition = partition;
  placement->notes.insert(placement->notes.end(), notes.begin(), notes.end());
  return Status::Ok();
}

Status ResolveRemotePaths(const CaseRequest& request, const std::string& repo_url,
                          const std::string& work_dir, Placement* placement) {
  std::string repo_path = Given(request.remote_repo_path);
  if (repo_path.empty()) {
    std::string root = Given(request.remote_cwd);
    std::string root_source = "--remote-cwd";
    if (root.empty() && placement->cluster) {
      const ClusterEntry& entry = *placement->cluster;
      std::string user_name = EffectiveUserName(request.user_name);
      root = UserRootDirFor(
          entry, placement->slurm_user.empty() ? user_name : placement->slurm_user, user_name);
      root_source = "user_root_dir of cluster " + entry.name;
    }
    if (root.empty()) {
      return Status::InvalidInput(
          "remote_slurm needs the remote repo location",
          "give --remote-repo-path or --remote-cwd, or set user_root_dir for the cluster in "
          "clusters.yaml");
    }
    std::string url = repo_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (url.size() > 4 && url.compare(url.size() - 4, 4, ".git") == 0) url.resize(url.size() - 4);
    size_t cut = url.find_last_of("/:");
    std::string repo_dir = cut == std::string::npos ? url : url.substr(cut + 1);
    if (repo_dir.empty() && request.repo_root) {
      repo_dir = fs::path(*request.repo_root).filename().string();
    }
    if (repo_dir.empty()) {
      return Status::InvalidInput("cannot name the remote repo directory: no repo_url",
                                  "give --repo-url or --remote-repo-path");
    }
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    repo_path = root + "/" + repo_dir;
    placement->notes.push_back("remote_repo_path " + repo_path + " (" + root_source + " + " +
                               repo_dir + ")");
  } else {
    placement->notes.push_back("remote_repo_path " + repo_path + " (--remote-repo-path)");
  }
  placement->remote_repo_path = repo_path;
  std::string base = work_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  placement->remote_work_dir = repo_path + "/work_dirs/" + fs::path(base).filename().string();
  return Status::Ok();
}

}  // namespace trtllm_run
