// The resolution of a Slurm job shared by ValidateSlurmJob and PrepareSlurmJob
// (slurm_resolve.h): slurm_env, account and partition, time limit, container runtime and
// image, paths as the job sees them, mounts; then the sizing of slurm_sizing.h.
#include "slurm/render/slurm_resolve.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "model/slurm_time.h"
#include "placement/image.h"
#include "slurm/probe/slurm_probe.h"
#include "slurm/render/slurm_sizing.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::internal {

std::string JoinWith(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < items.size(); ++i) joined += (i ? separator : "") + items[i];
  return joined;
}

namespace {

namespace fs = std::filesystem;

constexpr char kNoImageNote[] =
    "container image: none (container_runtime none runs without a container)";

std::string BaseName(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  size_t slash = trimmed.find_last_of('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

std::string ParentDir(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  size_t slash = trimmed.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : trimmed.substr(0, slash);
}

std::string HostArch() {
  struct utsname info {};
  if (::uname(&info) != 0) return "x86_64";
  return info.machine;
}

bool IsUnlimitedTime(const std::string& value) {
  return value == "UNLIMITED" || value == "infinite";
}

bool IsSlurmTime(const std::string& value) {
  if (IsUnlimitedTime(value)) return true;
  if (!ParseSlurmDuration(value)) return false;
  if (value.empty()) return false;
  for (char c : value) {
    if (!(c >= '0' && c <= '9') && c != ':' && c != '-') return false;
  }
  return value.front() != ':' && value.back() != ':' && value.front() != '-';
}

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string PartitionNames(const SlurmEnv& env) {
  std::vector<std::string> names;
  for (const SlurmPartition& p : env.partitions) names.push_back(p.name);
  return names.empty() ? "(none)" : JoinWith(names, ", ");
}

Status CheckPathForScript(const std::string& what, const std::string& path) {
  if (path.find_first_of("\"\n\\") != std::string::npos) {
    return Status::InvalidInput(what + " '" + path +
                                    "' contains a quote, backslash or newline, which "
                                    "#SBATCH lines cannot carry",
                                "use a directory without such characters");
  }
  return Status::Ok();
}

Result<SlurmEnv> LoadSlurmEnv(const CaseRequest& request, const Placement& placement,
                              const std::string& executor, std::vector<std::string>* notes) {
  if (placement.slurm_env) return *placement.slurm_env;
  if (!request.slurm_env_file) {
    return Status::InvalidInput(
        executor + " needs the cluster's Slurm facts (slurm_env.json), and none were probed",
        "give --slurm-env FILE (a saved slurm_env.json, e.g. from an earlier work dir)");
  }
  Result<std::string> text =
      ReadFileLimited(*request.slurm_env_file, kMaxRequestFileBytes, "slurm_env file");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput(
        "cannot read slurm_env file '" + *request.slurm_env_file + "': " + text.status().message(),
        "give the path of a slurm_env.json written by the Slurm probe");
  }
  Result<SlurmEnv> env = SlurmEnvFromJson(text.value(), *request.slurm_env_file);
  if (!env.ok()) return env.status();
  notes->push_back("slurm_env: read from " + *request.slurm_env_file);
  return env;
}
// Account (spec 000 Step 2.5): the placement's, the request's or slurm_env's default,
// validated against the probe's accounts.
Status ResolveAccount(const CaseRequest& request, const Placement& placement,
                      ResolvedSlurmJob* job) {
  job->account = !placement.account.empty()
                     ? placement.account
                     : request.account.value_or(job->env.default_account.value_or(""));
  const std::string accounts =
      job->env.accounts.empty() ? "(none)" : JoinWith(job->env.accounts, ", ");
  const SlurmAccounting accounting = SlurmAccountingState(job->env);
  const bool accounts_unread =
      accounting == SlurmAccounting::kDisabled || accounting == SlurmAccounting::kUnreadable;
  if (job->account.empty() && !accounts_unread) {
    return Status::InvalidInput(
        "no Slurm account: --account was not given and slurm_env has no "
        "default_account",
        "give --account; accounts of user '" + job->env.user + "': " + accounts);
  }
  if (job->account.empty()) {
    job->notes.push_back(std::string("account: none, no #SBATCH --account line (") +
                         (accounting == SlurmAccounting::kDisabled
                              ? "accounting is disabled on this cluster)"
                              : "the cluster's accounts could not be read)"));
  }
  if (!job->env.accounts.empty() && !Contains(job->env.accounts, job->account)) {
    return Status::InvalidInput("account '" + job->account + "' is not one of user '" +
                                    job->env.user + "''s Slurm accounts",
                                "valid accounts: " + accounts);
  }
  return Status::Ok();
}

// Partition (spec 000 Step 2.5): each member of a list must exist when slurm_env
// describes the partitions.
Status ResolvePartition(const CaseRequest& request, const Placement& placement,
                        ResolvedSlurmJob* job) {
  const std::string partition =
      !placement.partition.empty()
          ? placement.partition
          : request.partition.value_or(job->env.default_partition.value_or(""));
  if (partition.empty()) {
    return Status::InvalidInput(
        "no Slurm partition: --partition was not given and slurm_env has no default_partition",
        "give --partition; partitions: " + PartitionNames(job->env));
  }
  job->partition = partition;
  job->partition_facts = !job->env.partitions.empty();
  const std::vector<std::string> members = SplitPartitionList(partition);
  for (const std::string& member : members) {
    if (member.empty()) {
      return Status::InvalidInput("partition list '" + partition + "' has an empty name",
                                  "give partition names separated by single commas");
    }
    if (const SlurmPartition* found = job->env.FindPartition(member)) {
      job->partitions.push_back(*found);
    } else if (job->partition_facts) {
      return Status::InvalidInput(
          "partition '" + member + "'" +
              (members.size() > 1 ? " (in '" + partition + "')" : std::string()) +
              " does not exist on this cluster",
          "valid partitions: " + PartitionNames(job->env));
    } else {
      SlurmPartition unknown;
      unknown.name = member;
      job->partitions.push_back(unknown);
    }
    const SlurmPartition& added = job->partitions.back();
    if (!added.state.empty() && added.state != "up") {
      job->notes.push_back("warning: partition " + member + " is " + added.state);
    }
  }
  return Status::Ok();
}

Status ResolveTimeLimit(const CaseRequest& request, ResolvedSlurmJob* job) {
  job->time_limit = request.time_limit.value_or("02:00:00");
  if (!IsSlurmTime(job->time_limit)) {
    return Status::InvalidInput(
        "time_limit '" + job->time_limit + "' is not a Slurm time",
        "use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (default 02:00:00)");
  }
  return CheckTimeLimit(request, job);
}

// The image (spec 000 Step 3): the placement's, the request's, or the repo's tags file;
// and as --container-image takes it.
Status ResolveImageReference(const CaseRequest& request, const Placement& placement,
                             ResolvedSlurmJob* job) {
  if (!placement.container_image.empty()) {
    job->image = placement.container_image;
  } else {
    Result<ImageResolution> image = ResolveContainerImage(
        request.container_image.value_or(""), job->plan.repo_root, job->device_type, job->arch);
    if (!image.ok()) return image.status();
    job->image = image->image;
    job->notes.push_back(image->note);
  }
  bool rewrite = !placement.cluster || placement.cluster->enroot_registry_rewrite == "true";
  job->job_image = job->runtime == "pyxis" && rewrite ? EnrootImage(job->image) : job->image;
  return Status::Ok();
}

// Container runtime, device type, arch and image (spec 000 Step 3); no image without a
// container, unless the job runs through submit.py (whose launch script uses one).
Status ResolveImage(const CaseRequest& request, const Placement& placement,
                    const SlurmJobOptions& options, ResolvedSlurmJob* job) {
  job->runtime = request.container_runtime.value_or(
      placement.container_runtime.empty() ? "pyxis" : placement.container_runtime);
  if (job->runtime != "pyxis" && job->runtime != "none") {
    return Status::InvalidInput("container_runtime '" + job->runtime + "' is not known",
                                "use pyxis (srun --container-* flags, the default) or none (no "
                                "container, for clusters without pyxis)");
  }
  job->device_type = request.device_type.value_or(placement.env.device_type);
  if (!placement.arch.empty()) {
    job->arch = placement.arch;
  } else if (job->partitions.front().arch) {
    job->arch = *job->partitions.front().arch;
  } else if (options.remote) {
    job->arch = "x86_64";
    job->notes.push_back("arch x86_64: partition " + job->partition +
                         " has no arch in slurm_env (default)");
  } else {
    job->arch = placement.env.arch.empty() ? HostArch() : placement.env.arch;
    job->notes.push_back("arch " + job->arch + ": this host (partition " + job->partition +
                         " has no arch in slurm_env)");
  }
  if (job->runtime == "none" && !job->plan.launch.perf.enabled) {
    // No container: no image is needed, looked up or shown.
    job->notes.push_back(kNoImageNote);
  } else {
    TRTLLM_RUN_RETURN_IF_ERROR(ResolveImageReference(request, placement, job));
  }
  job->llm_models_root =
      !placement.llm_models_root.empty()
          ? placement.llm_models_root
          : request.llm_models_root.value_or(
                placement.cluster ? placement.cluster->container_models_root : "");
  return Status::Ok();
}

// remote_repo_path, remote_work_dir and remote_cwd of a remote job (spec 001 Step 5's
// remote fields), and the plan's host script as the job finds it there.
Status ResolveRemotePaths(const CaseRequest& request, const Placement& placement,
                          const std::string& work_dir, ResolvedSlurmJob* job) {
  const JobPlan& plan = job->plan;
  job->remote_cwd = request.remote_cwd.value_or(job->env.remote_cwd.value_or(""));
  if (!placement.remote_repo_path.empty()) {
    job->remote_repo_path = placement.remote_repo_path;
  } else if (request.remote_repo_path) {
    job->remote_repo_path = *request.remote_repo_path;
  } else if (!job->remote_cwd.empty()) {
    std::string repo_dir = BaseName(plan.repo_root);
    if (request.repo_url) {
      repo_dir = BaseName(*request.repo_url);
      if (repo_dir.size() > 4 && repo_dir.compare(repo_dir.size() - 4, 4, ".git") == 0) {
        repo_dir.resize(repo_dir.size() - 4);
      }
    }
    job->remote_repo_path = job->remote_cwd + "/" + repo_dir;
    job->notes.push_back("remote_repo_path " + job->remote_repo_path + ": remote_cwd + repo name");
  } else {
    return Status::InvalidInput(
        "remote_slurm needs the TensorRT-LLM checkout's path on the cluster (remote_repo_path)",
        "give --remote-repo-path DIR, or --remote-cwd DIR (the repo is then DIR/<repo name>), "
        "or set user_root_dir for the cluster in clusters.yaml");
  }
  job->remote_work_dir = !placement.remote_work_dir.empty()
                             ? placement.remote_work_dir
                             : job->remote_repo_path + "/work_dirs/" + BaseName(work_dir);
  job->home = job->remote_cwd.empty() ? "" : ParentDir(job->remote_cwd);
  job->project = job->remote_repo_path;
  job->log_dir = job->remote_work_dir;
  if (!job->custom_script.empty()) {
    job->custom_script_remote = job->remote_work_dir + "/scripts/" + BaseName(job->custom_script);
    job->command = "bash " + ShellQuote(job->custom_script_remote);
  }
  return Status::Ok();
}

// Paths as the job sees them (spec 001 Step 2 and Step 5's remote fields).
Status ResolvePaths(const CaseRequest& request, const Placement& placement,
                    const SlurmJobOptions& options, const std::string& work_dir,
                    ResolvedSlurmJob* job) {
  job->command = job->plan.command;
  if (!job->plan.launch.host_script.empty()) {
    std::error_code error;
    job->custom_script =
        fs::absolute(job->plan.launch.host_script, error).lexically_normal().string();
  }
  if (options.remote) {
    TRTLLM_RUN_RETURN_IF_ERROR(ResolveRemotePaths(request, placement, work_dir, job));
  } else {
    const char* home = std::getenv("HOME");
    job->home = home ? home : "";
    job->project = job->plan.repo_root;
    job->log_dir = work_dir;
  }
  return CheckPathForScript("the log directory", job->log_dir);
}

// The container mounts (spec 001 Step 2) and LLM_MODELS_ROOT as the job sees it.
Status ResolveJobMounts(const CaseRequest& request, const Placement& placement,
                        const SlurmJobOptions& options, ResolvedSlurmJob* job) {
  MountInputs in;
  in.home = job->home;
  in.project = job->project;
  in.llm_models_root = job->llm_models_root;
  in.checkpoint_path = request.checkpoint_path;
  in.models_path = request.models_path;
  in.cluster_mounts = job->env.mounts;
  if (!placement.models_host_path.empty()) {
    in.default_models_repo = placement.models_host_path;
  } else if (placement.env.default_models_repo) {
    in.default_models_repo = *placement.env.default_models_repo;
  } else if (placement.cluster) {
    in.default_models_repo = placement.cluster->models_repo_host;
  }
  if (!job->custom_script.empty() && !options.remote) in.extra_dir = ParentDir(job->custom_script);
  Result<MountResolution> mounts = ResolveMounts(in);
  if (mounts.ok()) {
    job->mounts = std::move(mounts.value());
    job->notes.insert(job->notes.end(), job->mounts.notes.begin(), job->mounts.notes.end());
  } else if (job->runtime == "pyxis") {
    return mounts.status();
  } else {
    job->notes.push_back("mounts: none (container_runtime none runs without a container)");
  }
  if (job->runtime == "none") {
    // No container: the job reads the models where they are on the host (the host side
    // of rules 1, 2 and 4), else at llm_models_root.
    if (in.checkpoint_path && !in.checkpoint_path->empty()) {
      job->models_root_export = ParentDir(*in.checkpoint_path);
    } else if (in.models_path && !in.models_path->empty()) {
      job->models_root_export = *in.models_path;
    } else if (!in.default_models_repo.empty() &&
               !(in.cluster_mounts && !in.cluster_mounts->empty())) {
      job->models_root_export = in.default_models_repo;
    } else {
      job->models_root_export = job->llm_models_root;
    }
  } else {
    job->models_root_export = job->llm_models_root;
  }
  if (job->models_root_export.empty()) {
    job->notes.push_back("LLM_MODELS_ROOT: not exported (no llm_models_root)");
  }
  return Status::Ok();
}

}  // namespace

Status ResolveEnvAndPartition(const CaseRequest& request, const Placement& placement,
                              const SlurmJobOptions& options, ResolvedSlurmJob* job) {
  Result<SlurmEnv> env = LoadSlurmEnv(request, placement, options.executor, &job->notes);
  if (!env.ok()) return env.status();
  job->env = std::move(env.value());
  return ResolvePartition(request, placement, job);
}

Result<ResolvedSlurmJob> ResolveSlurmJob(const CaseRequest& request, const JobPlan& plan,
                                         const Placement& placement, const SlurmJobOptions& options,
                                         const std::string& work_dir) {
  ResolvedSlurmJob job;
  job.plan = plan;
  Result<SlurmEnv> env = LoadSlurmEnv(request, placement, options.executor, &job.notes);
  if (!env.ok()) return env.status();
  job.env = std::move(env.value());
  for (const std::string& error : job.env.errors) job.notes.push_back("slurm_env error: " + error);
  TRTLLM_RUN_RETURN_IF_ERROR(ResolveAccount(request, placement, &job));
  TRTLLM_RUN_RETURN_IF_ERROR(ResolvePartition(request, placement, &job));
  TRTLLM_RUN_RETURN_IF_ERROR(ResolveTimeLimit(request, &job));
  TRTLLM_RUN_RETURN_IF_ERROR(ResolveImage(request, placement, options, &job));
  TRTLLM_RUN_RETURN_IF_ERROR(ResolvePaths(request, placement, options, work_dir, &job));
  TRTLLM_RUN_RETURN_IF_ERROR(ResolveJobMounts(request, placement, options, &job));
  // The workflow's limits against the partition (spec 001 Step 3), then the sizing.
  TRTLLM_RUN_RETURN_IF_ERROR(ApplyPlacement(placement, &job));
  if (job.image.empty() && job.plan.launch.perf.enabled) {  // the workflow chose submit.py
    job.notes.erase(std::remove(job.notes.begin(), job.notes.end(), kNoImageNote), job.notes.end());
    TRTLLM_RUN_RETURN_IF_ERROR(ResolveImageReference(request, placement, &job));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckPerfInputs(&job));
  TRTLLM_RUN_RETURN_IF_ERROR(SizeSlurmJob(request, &job));
  return job;
}

}  // namespace trtllm_run::internal
