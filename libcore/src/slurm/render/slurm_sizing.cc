// Sizing a resolved Slurm job against its partition (slurm_sizing.h).
#include "slurm/render/slurm_sizing.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "model/slurm_time.h"
#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/sdk/slurm/records.h"

namespace trtllm_run::internal {
namespace {

// A partition's MaxTime in seconds; nullopt for infinite (or not known).
std::optional<int> MaxTimeSeconds(const SlurmPartition& partition) {
  return ParseSlurmDuration(partition.time_limit);
}

// GPUs per node of a partition with GPU GRES; nullopt without.
std::optional<int> PartitionGpus(const SlurmPartition& partition) {
  if (partition.gpus_per_node) return partition.gpus_per_node;
  return GpusPerNodeFromGres(partition.gres);
}

bool HasGpuGres(const SlurmPartition& partition) {
  return partition.requires_gres || GresRequiresGpu(partition.gres) ||
         partition.gpus_per_node.has_value();
}

// The up partitions that pass `fits`, with `describe`'s words: for hints.
template <typename Fits, typename Describe>
std::string PartitionsThat(const SlurmEnv& env, Fits fits, Describe describe) {
  std::vector<std::string> names;
  for (const SlurmPartition& partition : env.partitions) {
    if (partition.state == "up" && fits(partition)) names.push_back(describe(partition));
  }
  return names.empty() ? "none on this cluster" : JoinWith(names, ", ");
}

// Where the job's GPU count came from, for messages: the flag, else the workflow's words.
std::string DevicesSource(const CaseRequest& request, const JobPlan& plan) {
  if (request.required_devices) {
    return "--required-devices " + std::to_string(*request.required_devices);
  }
  if (request.required_devices_per_node) {
    return "--required-devices-per-node " + std::to_string(*request.required_devices_per_node);
  }
  if (request.total_required_devices) {
    return "--total-required-devices " + std::to_string(*request.total_required_devices);
  }
  if (!plan.launch.gpu_count_source.empty()) return plan.launch.gpu_count_source;
  return plan.workflow_type + " workflow";
}

// The flag (or command option) that brings the job down to `gpus` GPUs per node.
std::string FewerGpusHint(const CaseRequest& request, const JobPlan& plan, int gpus) {
  const std::string n = std::to_string(gpus);
  if (request.required_devices) return "give --required-devices " + n + " or fewer";
  if (request.required_devices_per_node)
    return "give --required-devices-per-node " + n + " or fewer";
  std::string hint = plan.launch.fewer_gpus_hint;
  if (hint.empty()) return "give --required-devices " + n + " or fewer";
  const std::string placeholder = "{gpus}";
  for (size_t at = hint.find(placeholder); at != std::string::npos;
       at = hint.find(placeholder, at + n.size())) {
    hint.replace(at, placeholder.size(), n);
  }
  return hint;
}

// The GPUs per node the job asks for against each partition: a partition without GPU
// GRES, or with fewer GPUs per node, cannot run an asked-for count (kInvalidInput naming
// both and the flags that fix it). The default of 1 GPU (nothing asked) runs there
// without --gres, as the spec renders a partition whose gres is (null), with a note.
// `gpus`: per node. Sets params.gres when every partition has GPU GRES and gpus > 0.
Status CheckGpus(const CaseRequest& request, int gpus, ResolvedSlurmJob* job) {
  const JobPlan& plan = job->plan;
  SlurmParams& p = job->params;
  if (gpus <= 0) return Status::Ok();
  bool all_gres = job->partition_facts;
  for (const SlurmPartition& partition : job->partitions) {
    if (!job->partition_facts) break;
    const std::string asked =
        std::to_string(gpus) + " GPU(s) per node (" + DevicesSource(request, plan) + ")";
    if (!HasGpuGres(partition)) {
      all_gres = false;
      if (!plan.devices_requested) {
        job->notes.push_back("partition " + partition.name + " has no GPU GRES (gres " +
                             partition.gres +
                             "): the job runs without --gres, as no GPU count was asked for "
                             "(--required-devices N asks for N, --required-devices 0 says CPU "
                             "only)");
        continue;
      }
      return Status::InvalidInput(
          "the job asks for " + asked + ", but partition " + partition.name +
              " has no GPU GRES (gres " + partition.gres + ")",
          "give a --partition with GPUs (" +
              PartitionsThat(
                  job->env,
                  [&](const SlurmPartition& candidate) {
                    std::optional<int> has = PartitionGpus(candidate);
                    return HasGpuGres(candidate) && (!has || *has >= gpus);
                  },
                  [](const SlurmPartition& candidate) { return candidate.name; }) +
              ")" +
              (plan.launch.runs_without_gpus
                   ? ", or --required-devices 0 for work that needs no GPU"
                   : ""));
    }
    std::optional<int> has = PartitionGpus(partition);
    if (has && gpus > *has) {
      return Status::InvalidInput(
          "the job asks for " + asked + ", but partition " + partition.name + " has " +
              std::to_string(*has) + " GPUs per node (gres " + partition.gres + ")",
          FewerGpusHint(request, plan, *has) + ", or a --partition with at least " +
              std::to_string(gpus) + " GPUs per node (" +
              PartitionsThat(
                  job->env,
                  [&](const SlurmPartition& candidate) {
                    std::optional<int> count = PartitionGpus(candidate);
                    return count && *count >= gpus;
                  },
                  [](const SlurmPartition& candidate) { return candidate.name; }) +
              ")");
    }
  }
  if (all_gres) p.gres = "gpu:" + std::to_string(gpus);
  return Status::Ok();
}

// nodes, ntasks and ntasks-per-node by the plan's task layout; returns the GPUs per node.
int LayTasks(const JobPlan& plan, SlurmParams* p) {
  const int required = plan.required_devices;
  switch (plan.launch.task_layout) {
    case TaskLayout::kTaskPerDeviceOnEachNode:
      p->nodes = plan.node_count;
      p->ntasks = p->nodes * plan.required_devices_per_node;
      p->ntasks_per_node = plan.required_devices_per_node;
      return plan.required_devices_per_node;
    case TaskLayout::kOneTask:
      p->nodes = 1;
      p->ntasks = 1;
      p->ntasks_per_node = 1;
      return required;
    case TaskLayout::kTaskPerDevice:
      p->nodes = 1;
      p->ntasks = required;
      p->ntasks_per_node = required;
      return required;
    case TaskLayout::kAsPlanned:
      break;
  }
  p->nodes = std::max(1, plan.node_count);
  p->ntasks = std::max(1, plan.total_required_devices);
  p->ntasks_per_node = std::max(1, p->ntasks / p->nodes);
  return plan.required_devices_per_node;
}

}  // namespace

Status CheckTimeLimit(const CaseRequest& request, ResolvedSlurmJob* job) {
  const JobPlan& plan = job->plan;
  const SlurmPartition* tightest = nullptr;
  for (const SlurmPartition& partition : job->partitions) {
    std::optional<int> max = MaxTimeSeconds(partition);
    if (max && (tightest == nullptr || *max < *MaxTimeSeconds(*tightest))) tightest = &partition;
  }
  std::optional<int> seconds = ParseSlurmDuration(job->time_limit);  // nullopt: UNLIMITED
  if (!request.time_limit && !request.monitor_timeout && seconds &&
      plan.monitor_timeout_seconds > *seconds) {
    // The workflow's own limit (a test's TIMEOUT (N) plus the install step) is above the
    // default time limit: the job gets that long (a partition's MaxTime still caps it).
    job->notes.push_back("time_limit " + FormatSlurmTime(plan.monitor_timeout_seconds) +
                         ": the job's monitor_timeout, above the default " + job->time_limit +
                         " (give --time-limit to choose)");
    job->time_limit = FormatSlurmTime(plan.monitor_timeout_seconds);
    seconds = plan.monitor_timeout_seconds;
  }
  if (tightest != nullptr) {
    const int max = *MaxTimeSeconds(*tightest);
    const std::string max_text = FormatSlurmTime(max);
    if (!seconds || *seconds > max) {
      if (request.time_limit) {
        const std::optional<int> wanted = seconds;
        return Status::InvalidInput(
            "time_limit " + job->time_limit + " (--time-limit) is above the MaxTime " + max_text +
                " of partition " + tightest->name,
            "give --time-limit " + max_text + " or less, or a --partition that allows " +
                job->time_limit + " (" +
                PartitionsThat(
                    job->env,
                    [&](const SlurmPartition& p) {
                      std::optional<int> limit = MaxTimeSeconds(p);
                      return !limit || (wanted && *limit >= *wanted);
                    },
                    [](const SlurmPartition& p) { return p.name + " MaxTime " + p.time_limit; }) +
                ")");
      }
      job->notes.push_back("time_limit " + max_text + ": the MaxTime of partition " +
                           tightest->name + " (the default 02:00:00 is above it; give " +
                           "--time-limit to choose)");
      job->time_limit = max_text;
      seconds = max;
    }
  }
  if (seconds && plan.monitor_timeout_seconds > *seconds) {
    job->notes.push_back(
        "note: monitor_timeout " + FormatSlurmTime(plan.monitor_timeout_seconds) +
        (request.monitor_timeout ? " (--monitor-timeout)" : " (default)") +
        " is longer than the job's time limit " + FormatSlurmTime(*seconds) +
        (request.time_limit ? " (--time-limit)" : "") +
        ": once the job runs, Slurm ends it at its time limit (TIMEOUT); the rest of "
        "monitor_timeout, which counts from submission, only covers the wait in the queue. "
        "Give --time-limit " +
        FormatSlurmTime(plan.monitor_timeout_seconds) + " to let it run that long");
  }
  return Status::Ok();
}

Status ApplyPlacement(const Placement& placement, ResolvedSlurmJob* job) {
  // With a partition list, its smallest member.
  for (const SlurmPartition& member : job->partitions) {
    std::optional<int> gpus = member.gpus_per_node;
    if (gpus && (!job->gpus_per_node || *gpus < *job->gpus_per_node)) job->gpus_per_node = gpus;
  }
  if (!job->gpus_per_node && placement.cluster && placement.cluster->gpus_per_node > 0) {
    job->gpus_per_node = placement.cluster->gpus_per_node;
  }
  bool gpu_partition = !job->partition_facts;
  for (const SlurmPartition& member : job->partitions) gpu_partition |= HasGpuGres(member);
  if (!job->gpus_per_node && gpu_partition) {
    job->notes.push_back("gpus_per_node unknown for partition " + job->partition +
                         ": the single-node limits were not checked");
  }
  // Copied: the hook may replace the plan's launch facts, itself included.
  const AfterPlacementHook hook = job->plan.launch.after_placement;
  if (!hook) return Status::Ok();
  PlacementFacts facts;
  facts.partition = job->partition;
  facts.gpus_per_node = job->gpus_per_node;
  const size_t known_notes = job->plan.notes.size();
  TRTLLM_RUN_RETURN_IF_ERROR(hook(facts, &job->plan));
  for (size_t i = known_notes; i < job->plan.notes.size(); ++i) {
    job->notes.push_back(job->plan.notes[i]);
  }
  return Status::Ok();
}

Status CheckPerfInputs(ResolvedSlurmJob* job) {
  const PerfSubmitPlan& perf = job->plan.launch.perf;
  if (!perf.enabled) return Status::Ok();
  job->submit_py = job->plan.repo_root + "/jenkins/scripts/perf/local/submit.py";
  struct stat info {};
  if (::stat(job->submit_py.c_str(), &info) != 0) {
    return Status::InvalidInput(
        "the perf-sanity path needs the repo's submit.py, and '" + job->submit_py +
            "' does not exist",
        "give --repo-root of a TensorRT-LLM checkout that has jenkins/scripts/perf/local/");
  }
  if (job->llm_models_root.empty()) {
    return Status::InvalidInput(
        "the perf-sanity path needs llm_models_root (submit.py "
        "--llm-models-root)",
        "give --llm-models-root DIR");
  }
  if (!perf.incomplete.ok()) return perf.incomplete;
  if (job->runtime == "none") {
    job->notes.push_back(
        "warning: container_runtime none: submit.py's launch script still uses "
        "pyxis container flags");
  }
  return Status::Ok();
}

Status SizeSlurmJob(const CaseRequest& request, ResolvedSlurmJob* job) {
  const JobPlan& plan = job->plan;
  SlurmParams& p = job->params;
  p.partition = job->partition;
  p.account = job->account;
  p.time_limit = job->time_limit;
  const int gpus = LayTasks(plan, &p);
  p.gpus_per_node = gpus;
  TRTLLM_RUN_RETURN_IF_ERROR(CheckGpus(request, gpus, job));
  p.mpi_plugin = job->env.pmix_preferred.value_or("pmix");
  if (!job->env.pmix_preferred) {
    job->notes.push_back("mpi plugin pmix: slurm_env has no pmix.preferred (the bare name)");
  }

  const std::string& stem = plan.model_name;
  job->kind = plan.launch.job_kind.empty() ? plan.workflow_type : plan.launch.job_kind;
  job->container_name = stem + "_" + job->kind;
  job->job_name = (job->account.empty() ? "" : job->account + ".") + stem + "_" + job->kind;
  job->script_name =
      plan.launch.perf.enabled ? "slurm_launch.sh" : stem + "_" + job->kind + ".slurm";
  job->log_file_pattern = plan.launch.log_file_pattern.empty() ? stem + "_" + job->kind + "_%j.out"
                                                               : plan.launch.log_file_pattern;
  return Status::Ok();
}

}  // namespace trtllm_run::internal
