// Slurm jobs: the batch script of Categories 2, 3, 5 and 6, the submit.py call of
// Category 4, and the resolution shared by the local_slurm and remote_slurm executors.
#include <sys/stat.h>
#include <sys/utsname.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "perf_submit.h"
#include "trtllm_run/image.h"
#include "trtllm_run/input_limits.h"
#include "trtllm_run/mounts.h"
#include "trtllm_run/render.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/slurm_job.h"
#include "trtllm_run/slurm_probe.h"
#include "trtllm_run/text.h"
#include "trtllm_run/version.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

// A value on an #SBATCH line: sbatch splits on blanks, so values with blanks are quoted.
std::string SbatchValue(const std::string& value) {
  return value.find_first_of(" \t") == std::string::npos ? value : "\"" + value + "\"";
}

std::string Flag(const std::string& name, const std::string& value) {
  return ShellQuote("--" + name + "=" + value);
}

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < items.size(); ++i) joined += (i ? separator : "") + items[i];
  return joined;
}

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

// The bash -c payload of a step (everything but the custom run step).
std::string StepPayload(const SlurmScriptInputs& in, const PlanStep& step) {
  std::string payload;
  if (step.name == "install") {
    return "cd " + ShellQuote(in.project_path) + " || exit 1\n" + step.command;
  }
  bool shows_gpus =
      step.name == "run" && (in.workflow_type == "pytest" || in.workflow_type == "eval");
  if (shows_gpus) payload += "if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi; fi\n";
  if (!step.use_mpi) {
    // pytest keeps only the rank; bench and eval also the local rank (spec-notes).
    std::vector<std::string> keep = {"SLURM_PROCID"};
    if (in.workflow_type != "pytest") keep.push_back("SLURM_LOCALID");
    payload += MpiCleanupSnippet(keep);
  }
  if (!in.llm_models_root.empty()) {
    payload += "export LLM_MODELS_ROOT=" + ShellQuote(in.llm_models_root) + "\n";
  }
  payload += "cd " + ShellQuote(in.project_path) + " || exit 1\n";
  if (step.name == "run" && !in.run_working_dir.empty()) {
    payload += "cd " + ShellQuote(in.run_working_dir) + " || exit 1\n";
  }
  payload += step.command;
  return payload;
}

// The srun command of a step, one option per element.
std::vector<std::string> StepSrun(const SlurmScriptInputs& in, const PlanStep& step) {
  const SlurmParams& p = in.params;
  std::vector<std::string> argv = {"srun", "-l"};
  if (step.name == "install") {
    // One task per node: every node's container gets the install.
    argv.push_back(Flag("nodes", std::to_string(p.nodes)));
    argv.push_back(Flag("ntasks", std::to_string(p.nodes)));
    argv.push_back(Flag("ntasks-per-node", "1"));
  } else {
    int tasks = std::max(1, step.tasks);
    int nodes = std::max(1, std::min(p.nodes, tasks));
    argv.push_back(Flag("nodes", std::to_string(nodes)));
    argv.push_back(Flag("ntasks", std::to_string(tasks)));
    if (tasks % nodes == 0) argv.push_back(Flag("ntasks-per-node", std::to_string(tasks / nodes)));
  }
  bool custom = in.workflow_type == "custom";
  std::string workdir = custom && !in.custom_workdir.empty() ? in.custom_workdir : in.project_path;
  if (in.container_runtime == "none") {
    argv.push_back(Flag("chdir", workdir));
  } else {
    argv.push_back(Flag("container-image", in.container_image));
    argv.push_back(Flag("container-name", in.container_name));
    if (!in.container_mounts.empty()) argv.push_back(Flag("container-mounts", in.container_mounts));
    argv.push_back(Flag("container-workdir", workdir));
  }
  argv.push_back("--kill-on-bad-exit=1");
  if (step.use_mpi) argv.push_back(Flag("mpi", p.mpi_plugin.empty() ? "pmix" : p.mpi_plugin));
  if (custom && step.name == "run") {
    argv.push_back("bash");
    argv.push_back(ShellQuote(in.run_script));
  } else {
    argv.push_back("bash");
    argv.push_back("-c");
    argv.push_back(ShellQuote(StepPayload(in, step)));
  }
  return argv;
}

}  // namespace

std::string RenderSlurmBatchScript(const SlurmScriptInputs& in) {
  const SlurmParams& p = in.params;
  const std::string kind = SlurmKind(in.workflow_type);
  // sbatch expands %j, %x, %u, ... in --output/--error: a literal % of the directory is %%.
  std::string log_dir;
  for (char c : in.log_dir) log_dir += c == '%' ? std::string("%%") : std::string(1, c);
  const std::string log_base = log_dir + "/" + in.model_name + "_" + kind + "_%j";
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH --job-name=" << SbatchValue(in.job_name) << "\n";
  s << "#SBATCH --output=" << SbatchValue(log_base + ".out") << "\n";
  s << "#SBATCH --error=" << SbatchValue(log_base + ".err") << "\n";
  s << "#SBATCH --nodes=" << p.nodes << "\n";
  s << "#SBATCH --ntasks=" << p.ntasks << "\n";
  s << "#SBATCH --ntasks-per-node=" << p.ntasks_per_node << "\n";
  if (!p.gres.empty()) s << "#SBATCH --gres=" << p.gres << "\n";
  s << "#SBATCH --time=" << SbatchValue(p.time_limit) << "\n";
  s << "#SBATCH --partition=" << SbatchValue(p.partition) << "\n";
  if (!p.account.empty()) s << "#SBATCH --account=" << SbatchValue(p.account) << "\n";
  s << "\n# Generated by trtllm-run " << Version() << ": " << in.workflow_type << " job for "
    << in.model_name << ", container runtime " << in.container_runtime << ".\n"
    << "# The steps run in order; once one fails the rest are skipped and the job exits with\n"
    << "# the failed step's exit code. No errexit: the final line always runs.\n"
    << "set -uo pipefail\n\n";
  s << "echo \"[trtllm-run] job ${SLURM_JOB_ID:-?} on $(hostname) started "
       "$(date -u +%Y-%m-%dT%H:%M:%SZ)\"\n";
  s << "echo \"[trtllm-run] nodes ${SLURM_JOB_NUM_NODES:-?} tasks ${SLURM_NTASKS:-?}\"\n\n";
  if (in.workflow_type == "custom") {
    s << "# Read by " << kCustomRunScriptName << " inside the job.\n";
    s << "export CUSTOM_COMMAND=" << ShellQuote(in.custom_command) << "\n";
    s << "export CUSTOM_ENV=" << ShellQuote(in.custom_env) << "\n";
    s << "export CUSTOM_WORKDIR=" << ShellQuote(in.custom_workdir) << "\n";
    s << "export llmSrcNode=" << ShellQuote(in.project_path) << "\n";
    if (!in.llm_models_root.empty()) {
      s << "export LLM_MODELS_ROOT=" << ShellQuote(in.llm_models_root) << "\n";
    }
    s << "\n";
  }
  s << "exit_code=0\n"
    << "run_step() {\n"
    << "  local name=$1\n"
    << "  shift\n"
    << "  if [ \"$exit_code\" -ne 0 ]; then\n"
    << "    echo \"[trtllm-run] step ${name}: skipped (an earlier step failed)\"\n"
    << "    return 0\n"
    << "  fi\n"
    << "  echo \"[trtllm-run] step ${name}: started\"\n"
    << "  \"$@\"\n"
    << "  exit_code=$?\n"
    << "  echo \"[trtllm-run] step ${name}: exit code ${exit_code}\"\n"
    << "}\n\n";
  for (const PlanStep& step : in.steps) {
    std::vector<std::string> argv = StepSrun(in, step);
    s << "run_step " << ShellQuote(step.name);
    // Options on continuation lines for people; the payload last.
    for (size_t i = 0; i < argv.size(); ++i) {
      bool option = argv[i].rfind("--", 0) == 0 || argv[i].rfind("'--", 0) == 0;
      bool payload_start = argv[i] == "bash" && i > 0;
      s << ((option || payload_start) && i >= 2 ? " \\\n    " : " ") << argv[i];
    }
    s << "\n";
  }
  s << "\necho \"[trtllm-run] job finished with exit code ${exit_code}\"\n"
    << "exit \"$exit_code\"\n";
  return s.str();
}

std::vector<std::string> PerfSubmitArgv(const PerfSubmitInputs& in) {
  std::vector<std::string> argv = {in.python, in.submit_py};
  if (!in.test_list.empty()) {
    argv.insert(argv.end(), {"--test-list", in.test_list});
  } else {
    argv.insert(argv.end(), {"--config-file", in.config_file});
    if (!in.test_name.empty()) argv.insert(argv.end(), {"--test-name", in.test_name});
    if (!in.benchmark_mode.empty()) {
      argv.insert(argv.end(), {"--benchmark-mode", in.benchmark_mode});
    }
  }
  argv.insert(argv.end(),
              {"--partition",      in.partition,  "--account",  in.account, "--job-name",
               in.job_name,        "--image",     in.image,     "--mounts", in.mounts,
               "--work-dir",       in.work_dir,   "--llm-src",  in.llm_src, "--llm-models-root",
               in.llm_models_root, "--launch-sh", in.launch_sh, "--time",   in.time_limit});
  return argv;
}

std::string EvalPerfServerName(const EvalArgs& eval, const std::string& model_name) {
  return model_name + "_tp" + std::to_string(eval.tp_size) + "_pp" + std::to_string(eval.pp_size);
}

std::string RenderEvalPerfConfig(const EvalArgs& eval, const std::string& model_name,
                                 int gpus_per_node, const std::string& eval_cmd) {
  YAML::Emitter out;
  out << YAML::Comment(
      "Generated by trtllm-run: a multi-node trtllm-eval runs on the perf-sanity path");
  out << YAML::BeginMap;
  out << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "model_name" << YAML::Value << model_name;
  out << YAML::Key << "source_eval_cmd" << YAML::Value << YAML::DoubleQuoted << eval_cmd;
  out << YAML::EndMap;
  out << YAML::Key << "hardware" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gpus_per_node" << YAML::Value << gpus_per_node;
  out << YAML::EndMap;
  out << YAML::Key << "server_configs" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << EvalPerfServerName(eval, model_name);
  out << YAML::Key << "model_name" << YAML::Value << model_name;
  if (eval.model) out << YAML::Key << "model_path" << YAML::Value << *eval.model;
  out << YAML::Key << "tensor_parallel_size" << YAML::Value << eval.tp_size;
  out << YAML::Key << "pipeline_parallel_size" << YAML::Value << eval.pp_size;
  out << YAML::Key << "client_configs" << YAML::Value << YAML::BeginSeq << YAML::EndSeq;
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "accuracy" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "enable_accuracy_test" << YAML::Value << true;
  out << YAML::Key << "tasks" << YAML::Value << (eval.task.empty() ? "gsm8k" : eval.task);
  out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

// ---- Resolution shared by ValidateSlurmJob and PrepareSlurmJob ----

namespace {

struct ResolvedJob {
  SlurmEnv env;
  // The partition, or each member of sbatch's list, as slurm_env describes it; one
  // entry with only the name when slurm_env lists no partitions (facts unknown).
  std::vector<SlurmPartition> partitions;
  bool partition_facts = false;  // slurm_env described the partitions
  std::string account;
  std::string time_limit;
  std::string runtime;
  std::string device_type;
  std::string arch;
  std::string image;      // canonical
  std::string job_image;  // as --container-image takes it
  std::string llm_models_root;
  std::string models_root_export;  // LLM_MODELS_ROOT in the job
  std::string home, project, log_dir;
  std::string remote_repo_path, remote_work_dir, remote_cwd;
  std::string custom_script;         // absolute local path of custom_script, if any
  std::string custom_script_remote;  // where the job finds it (remote_slurm)
  std::string command;               // the plan's command, with remote paths
  MountResolution mounts;
  std::optional<int> gpus_per_node;  // of the partition (or the cluster)
  bool perf = false;
  bool eval_fallback = false;
  EvalArgs eval;
  std::optional<PerfSanityId> perf_id;
  std::string submit_py;
  SlurmParams params;
  std::string kind, job_name, container_name, script_name;
  WorkflowPatterns patterns;
  std::vector<std::string> notes;
};

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
  return names.empty() ? "(none)" : Join(names, ", ");
}

// A duration as Slurm writes it: HH:MM:SS, or D-HH:MM:SS from a day on.
std::string SlurmTimeText(int seconds) {
  char text[32];
  int days = seconds / 86400, rest = seconds % 86400;
  if (days > 0) {
    std::snprintf(text, sizeof(text), "%d-%02d:%02d:%02d", days, rest / 3600, rest / 60 % 60,
                  rest % 60);
  } else {
    std::snprintf(text, sizeof(text), "%02d:%02d:%02d", rest / 3600, rest / 60 % 60, rest % 60);
  }
  return text;
}

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
  return names.empty() ? "none on this cluster" : Join(names, ", ");
}

// Where the job's GPU count came from, for messages: the flag, else the derivation.
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
  if (plan.workflow_type == "pytest") return "the test's GPU marker";
  if (plan.workflow_type == "perf_sanity") return "the perf config";
  if (plan.workflow_type == "bench" || plan.workflow_type == "eval") {
    return "tp x pp of the " + plan.workflow_type + " command";
  }
  return plan.workflow_type + " workflow";
}

// The flag (or command option) that brings the job down to `gpus` GPUs per node.
std::string FewerGpusHint(const CaseRequest& request, const JobPlan& plan, int gpus) {
  const std::string n = std::to_string(gpus);
  const std::string& wf = plan.workflow_type;
  if (request.required_devices) return "give --required-devices " + n + " or fewer";
  if (request.required_devices_per_node)
    return "give --required-devices-per-node " + n + " or fewer";
  if (wf == "eval") {
    return "use --tp_size x --pp_size of at most " + n + " in --eval-cmd (or its --gpus_per_node " +
           n + ")";
  }
  if (wf == "bench") return "use --tp x --pp of at most " + n + " in --bench-cmd";
  if (wf == "perf_sanity") {
    return "use a perf config (--perf-config-yaml) whose hardware.gpus_per_node is at most " + n;
  }
  return "give --required-devices " + n + " or fewer";
}

// The job's time limit against each partition's MaxTime (sbatch refuses a job over the
// limit of a listed partition under EnforcePartLimits=ALL, and leaves it pending
// otherwise). A --time-limit above it is kInvalidInput; the default is lowered to it.
// A monitor_timeout longer than the time limit is a note, not an error: it counts from
// submission, so the surplus is time the job may wait in the queue.
Status CheckTimeLimit(const CaseRequest& request, const JobPlan& plan, ResolvedJob* job) {
  const SlurmPartition* tightest = nullptr;
  for (const SlurmPartition& partition : job->partitions) {
    std::optional<int> max = MaxTimeSeconds(partition);
    if (max && (tightest == nullptr || *max < *MaxTimeSeconds(*tightest))) tightest = &partition;
  }
  std::optional<int> seconds = ParseSlurmDuration(job->time_limit);  // nullopt: UNLIMITED
  if (tightest != nullptr) {
    const int max = *MaxTimeSeconds(*tightest);
    const std::string max_text = SlurmTimeText(max);
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
        "note: monitor_timeout " + SlurmTimeText(plan.monitor_timeout_seconds) +
        (request.monitor_timeout ? " (--monitor-timeout)" : " (default)") +
        " is longer than the job's time limit " + SlurmTimeText(*seconds) +
        (request.time_limit ? " (--time-limit)" : "") +
        ": once the job runs, Slurm ends it at its time limit (TIMEOUT); the rest of "
        "monitor_timeout, which counts from submission, only covers the wait in the queue. "
        "Give --time-limit " +
        SlurmTimeText(plan.monitor_timeout_seconds) + " to let it run that long");
  }
  return Status::Ok();
}

// The GPUs per node the job asks for against each partition: a partition without GPU
// GRES, or with fewer GPUs per node, cannot run an asked-for count (kInvalidInput naming
// both and the flags that fix it). The default of 1 GPU (nothing asked) runs there
// without --gres, as the spec renders a partition whose gres is (null), with a note.
// `gpus`: per node. Sets params.gres when every partition has GPU GRES and gpus > 0.
Status CheckGpus(const CaseRequest& request, const JobPlan& plan, int gpus, ResolvedJob* job) {
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
              (plan.workflow_type == "custom" || plan.workflow_type == "pytest"
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

// What the multi-node eval fallback can promise. It hands an aggregated perf config with
// accuracy.enable_accuracy_test to the repo's submit.py, and TensorRT-LLM's submit.py
// forwards accuracy settings only for disaggregated configs: with it the job runs the
// perf benchmark and no accuracy test, and its verdict (8_done_) would still be PASSED.
// trtllm-run cannot tell a submit.py that does better from one that does not, so the
// fallback needs the request's explicit eval_perf_fallback; otherwise kInvalidInput
// naming the sizes and the ways to run the evaluation instead.
constexpr char kEvalFallbackAccuracy[] =
    "TensorRT-LLM's submit.py forwards accuracy settings only for disaggregated configs, and "
    "this fallback writes an aggregated one";

Status CheckEvalFallback(const CaseRequest& request, const ResolvedJob& job,
                         const std::string& partition, int required, int per_node) {
  if (request.eval_perf_fallback.value_or(false)) return Status::Ok();
  const int nodes = (required + per_node - 1) / per_node;
  const int one_node = job.gpus_per_node.value_or(per_node);
  return Status::InvalidInput(
      "eval_cmd: world_size " + std::to_string(required) + " (tp_size " +
          std::to_string(job.eval.tp_size) + " x pp_size " + std::to_string(job.eval.pp_size) +
          ") needs " + std::to_string(nodes) + " nodes of " + std::to_string(per_node) +
          " GPUs (partition " + partition +
          "), and trtllm-eval runs on one node; the multi-node fallback through the repo's "
          "submit.py cannot be relied on to run the accuracy test (" +
          kEvalFallbackAccuracy + "), so the job could pass without evaluating anything",
      "run the evaluation on one node (tp_size x pp_size <= " + std::to_string(one_node) +
          " on partition " + partition + ", or a partition with at least " +
          std::to_string(required) +
          " GPUs per node); or run it as a perf-sanity case whose config runs the accuracy "
          "test (--test-cmd 'test_e2e[disagg-...]' or --perf-config-yaml FILE); or, if this "
          "repo's submit.py runs accuracy for aggregated configs, give --eval-perf-fallback "
          "true");
}

std::string EvalFallbackNote(int required, int per_node) {
  const int nodes = (required + per_node - 1) / per_node;
  return "eval: world_size " + std::to_string(required) + " needs " + std::to_string(nodes) +
         " nodes of " + std::to_string(per_node) +
         " GPUs: runs on the perf-sanity path through submit.py with "
         "accuracy.enable_accuracy_test: true (eval_perf_fallback given). The accuracy run is "
         "NOT guaranteed: " +
         kEvalFallbackAccuracy +
         "; unless this repo's submit.py does better, the job runs the perf benchmark only "
         "and its verdict is that benchmark's";
}

Result<ResolvedJob> Resolve(const CaseRequest& request, const JobPlan& plan,
                            const Placement& placement, const SlurmJobOptions& options,
                            const std::string& work_dir) {
  ResolvedJob job;
  const std::string& executor = options.executor;
  const std::string& wf = plan.workflow_type;
  std::vector<std::string>& notes = job.notes;

  Result<SlurmEnv> env = LoadSlurmEnv(request, placement, executor, &notes);
  if (!env.ok()) return env.status();
  job.env = std::move(env.value());
  for (const std::string& error : job.env.errors) notes.push_back("slurm_env error: " + error);

  // Account and partition (spec 000 Step 2.5): validated against the probe.
  job.account = !placement.account.empty()
                    ? placement.account
                    : request.account.value_or(job.env.default_account.value_or(""));
  const std::string accounts = job.env.accounts.empty() ? "(none)" : Join(job.env.accounts, ", ");
  const SlurmAccounting accounting = SlurmAccountingState(job.env);
  const bool accounts_unread =
      accounting == SlurmAccounting::kDisabled || accounting == SlurmAccounting::kUnreadable;
  if (job.account.empty() && !accounts_unread) {
    return Status::InvalidInput(
        "no Slurm account: --account was not given and slurm_env has no "
        "default_account",
        "give --account; accounts of user '" + job.env.user + "': " + accounts);
  }
  if (job.account.empty()) {
    notes.push_back(std::string("account: none, no #SBATCH --account line (") +
                    (accounting == SlurmAccounting::kDisabled
                         ? "accounting is disabled on this cluster)"
                         : "the cluster's accounts could not be read)"));
  }
  if (!job.env.accounts.empty() && !Contains(job.env.accounts, job.account)) {
    return Status::InvalidInput(
        "account '" + job.account + "' is not one of user '" + job.env.user + "''s Slurm accounts",
        "valid accounts: " + accounts);
  }
  std::string partition = !placement.partition.empty()
                              ? placement.partition
                              : request.partition.value_or(job.env.default_partition.value_or(""));
  if (partition.empty()) {
    return Status::InvalidInput(
        "no Slurm partition: --partition was not given and slurm_env has no default_partition",
        "give --partition; partitions: " + PartitionNames(job.env));
  }
  job.partition_facts = !job.env.partitions.empty();
  const std::vector<std::string> members = SplitPartitionList(partition);
  for (const std::string& member : members) {
    if (member.empty()) {
      return Status::InvalidInput("partition list '" + partition + "' has an empty name",
                                  "give partition names separated by single commas");
    }
    if (const SlurmPartition* found = job.env.FindPartition(member)) {
      job.partitions.push_back(*found);
    } else if (job.partition_facts) {
      return Status::InvalidInput(
          "partition '" + member + "'" +
              (members.size() > 1 ? " (in '" + partition + "')" : std::string()) +
              " does not exist on this cluster",
          "valid partitions: " + PartitionNames(job.env));
    } else {
      SlurmPartition unknown;
      unknown.name = member;
      job.partitions.push_back(unknown);
    }
    const SlurmPartition& added = job.partitions.back();
    if (!added.state.empty() && added.state != "up") {
      notes.push_back("warning: partition " + member + " is " + added.state);
    }
  }
  job.time_limit = request.time_limit.value_or("02:00:00");
  if (!IsSlurmTime(job.time_limit)) {
    return Status::InvalidInput(
        "time_limit '" + job.time_limit + "' is not a Slurm time",
        "use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (default 02:00:00)");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckTimeLimit(request, plan, &job));

  job.runtime = request.container_runtime.value_or(
      placement.container_runtime.empty() ? "pyxis" : placement.container_runtime);
  if (job.runtime != "pyxis" && job.runtime != "none") {
    return Status::InvalidInput("container_runtime '" + job.runtime + "' is not known",
                                "use pyxis (srun --container-* flags, the default) or none (no "
                                "container, for clusters without pyxis)");
  }

  // Image (spec 000 Step 3): the placement's, the request's, or the repo's tags file.
  job.device_type = request.device_type.value_or(placement.env.device_type);
  if (!placement.arch.empty()) {
    job.arch = placement.arch;
  } else if (job.partitions.front().arch) {
    job.arch = *job.partitions.front().arch;
  } else if (options.remote) {
    job.arch = "x86_64";
    notes.push_back("arch x86_64: partition " + partition + " has no arch in slurm_env (default)");
  } else {
    job.arch = placement.env.arch.empty() ? HostArch() : placement.env.arch;
    notes.push_back("arch " + job.arch + ": this host (partition " + partition +
                    " has no arch in slurm_env)");
  }
  if (!placement.container_image.empty()) {
    job.image = placement.container_image;
  } else {
    Result<ImageResolution> image = ResolveContainerImage(
        request.container_image.value_or(""), plan.repo_root, job.device_type, job.arch);
    if (!image.ok()) return image.status();
    job.image = image->image;
    notes.push_back(image->note);
  }
  bool rewrite = !placement.cluster || placement.cluster->enroot_registry_rewrite == "true";
  job.job_image = job.runtime == "pyxis" && rewrite ? EnrootImage(job.image) : job.image;

  job.llm_models_root =
      !placement.llm_models_root.empty()
          ? placement.llm_models_root
          : request.llm_models_root.value_or(
                placement.cluster ? placement.cluster->container_models_root : "");

  // Paths as the job sees them (spec 001 Step 2 and Step 5's remote fields).
  job.command = plan.command;
  if (request.custom_script && wf == "custom") {
    std::error_code error;
    job.custom_script = fs::absolute(*request.custom_script, error).lexically_normal().string();
  }
  if (options.remote) {
    job.remote_cwd = request.remote_cwd.value_or(job.env.remote_cwd.value_or(""));
    if (!placement.remote_repo_path.empty()) {
      job.remote_repo_path = placement.remote_repo_path;
    } else if (request.remote_repo_path) {
      job.remote_repo_path = *request.remote_repo_path;
    } else if (!job.remote_cwd.empty()) {
      std::string repo_dir = BaseName(plan.repo_root);
      if (request.repo_url) {
        repo_dir = BaseName(*request.repo_url);
        if (repo_dir.size() > 4 && repo_dir.compare(repo_dir.size() - 4, 4, ".git") == 0) {
          repo_dir.resize(repo_dir.size() - 4);
        }
      }
      job.remote_repo_path = job.remote_cwd + "/" + repo_dir;
      notes.push_back("remote_repo_path " + job.remote_repo_path + ": remote_cwd + repo name");
    } else {
      return Status::InvalidInput(
          "remote_slurm needs the TensorRT-LLM checkout's path on the cluster (remote_repo_path)",
          "give --remote-repo-path DIR, or --remote-cwd DIR (the repo is then DIR/<repo name>), "
          "or set user_root_dir for the cluster in clusters.yaml");
    }
    job.remote_work_dir = !placement.remote_work_dir.empty()
                              ? placement.remote_work_dir
                              : job.remote_repo_path + "/work_dirs/" + BaseName(work_dir);
    job.home = job.remote_cwd.empty() ? "" : ParentDir(job.remote_cwd);
    job.project = job.remote_repo_path;
    job.log_dir = job.remote_work_dir;
    if (!job.custom_script.empty()) {
      job.custom_script_remote = job.remote_work_dir + "/scripts/" + BaseName(job.custom_script);
      job.command = "bash " + ShellQuote(job.custom_script_remote);
    }
  } else {
    const char* home = std::getenv("HOME");
    job.home = home ? home : "";
    job.project = plan.repo_root;
    job.log_dir = work_dir;
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckPathForScript("the log directory", job.log_dir));

  MountInputs mount_inputs;
  mount_inputs.home = job.home;
  mount_inputs.project = job.project;
  mount_inputs.llm_models_root = job.llm_models_root;
  mount_inputs.checkpoint_path = request.checkpoint_path;
  mount_inputs.models_path = request.models_path;
  mount_inputs.cluster_mounts = job.env.mounts;
  if (!placement.models_host_path.empty()) {
    mount_inputs.default_models_repo = placement.models_host_path;
  } else if (placement.env.default_models_repo) {
    mount_inputs.default_models_repo = *placement.env.default_models_repo;
  } else if (placement.cluster) {
    mount_inputs.default_models_repo = placement.cluster->models_repo_host;
  }
  if (!job.custom_script.empty() && !options.remote) {
    mount_inputs.extra_dir = ParentDir(job.custom_script);
  }
  Result<MountResolution> mounts = ResolveMounts(mount_inputs);
  if (mounts.ok()) {
    job.mounts = std::move(mounts.value());
    notes.insert(notes.end(), job.mounts.notes.begin(), job.mounts.notes.end());
  } else if (job.runtime == "pyxis") {
    return mounts.status();
  } else {
    notes.push_back("mounts: none (container_runtime none runs without a container)");
  }
  if (job.runtime == "none") {
    // No container: the job reads the models where they are on the host (the host side
    // of rules 1, 2 and 4), else at llm_models_root.
    if (mount_inputs.checkpoint_path && !mount_inputs.checkpoint_path->empty()) {
      job.models_root_export = ParentDir(*mount_inputs.checkpoint_path);
    } else if (mount_inputs.models_path && !mount_inputs.models_path->empty()) {
      job.models_root_export = *mount_inputs.models_path;
    } else if (!mount_inputs.default_models_repo.empty() &&
               !(mount_inputs.cluster_mounts && !mount_inputs.cluster_mounts->empty())) {
      job.models_root_export = mount_inputs.default_models_repo;
    } else {
      job.models_root_export = job.llm_models_root;
    }
  } else {
    job.models_root_export = job.llm_models_root;
  }
  if (job.models_root_export.empty()) {
    notes.push_back("LLM_MODELS_ROOT: not exported (no llm_models_root)");
  }

  // Workflow limits against the partition (spec 001 Step 3); with a list, its smallest.
  for (const SlurmPartition& member : job.partitions) {
    std::optional<int> gpus = member.gpus_per_node;
    if (gpus && (!job.gpus_per_node || *gpus < *job.gpus_per_node)) job.gpus_per_node = gpus;
  }
  if (job.gpus_per_node) {
    // From the partitions.
  } else if (placement.cluster && placement.cluster->gpus_per_node > 0) {
    job.gpus_per_node = placement.cluster->gpus_per_node;
  }
  const int required = plan.required_devices;
  const std::string gpn_text = job.gpus_per_node ? std::to_string(*job.gpus_per_node) : "";
  bool gpu_partition = !job.partition_facts;
  for (const SlurmPartition& member : job.partitions) gpu_partition |= HasGpuGres(member);
  if (!job.gpus_per_node && gpu_partition) {
    notes.push_back("gpus_per_node unknown for partition " + partition +
                    ": the single-node limits were not checked");
  }
  job.perf = wf == "perf_sanity";
  if (wf == "pytest" && job.gpus_per_node && required > *job.gpus_per_node) {
    return Status::InvalidInput(
        "pytest needs required_devices = " + std::to_string(required) +
            " GPUs on one node, but partition " + partition + " has gpus_per_node = " + gpn_text,
        "pytest does not support multi-node execution: choose a partition with at least " +
            std::to_string(required) + " GPUs per node (--partition), or give --required-devices " +
            gpn_text + " or fewer");
  }
  if (wf == "bench" && job.gpus_per_node && required > *job.gpus_per_node) {
    return Status::InvalidInput(
        "bench_cmd: world_size = " + std::to_string(required) + " (tp x pp) needs more than one " +
            "node of partition " + partition + " (gpus_per_node = " + gpn_text + ")",
        "multi-node trtllm-bench is not supported: use tp x pp <= " + gpn_text +
            " or a partition with more GPUs per node (--partition)");
  }
  if (wf == "custom" && job.gpus_per_node) {
    int nodes = (required + *job.gpus_per_node - 1) / *job.gpus_per_node;
    if (nodes > 1) {
      return Status::InvalidInput(
          "required_devices = " + std::to_string(required) + " requires " + std::to_string(nodes) +
              " nodes (gpus_per_node = " + gpn_text +
              "), but custom commands are limited to 1 node.",
          "Reduce required_devices to at most " + gpn_text + ". (--required-devices " + gpn_text +
              ", or a --partition with at least " + std::to_string(required) + " GPUs per node)");
    }
  }
  int eval_gpn = 0;
  if (wf == "eval") {
    Result<EvalArgs> eval = ParseEvalCommand(request.eval_cmd.value_or(plan.command));
    if (!eval.ok()) return eval.status();
    job.eval = eval.value();
    eval_gpn = job.eval.gpus_per_node.value_or(job.gpus_per_node.value_or(0));
    if (plan.node_count > 1 || (eval_gpn > 0 && required > eval_gpn)) {
      job.eval_fallback = true;
      // Per node: the partition's (or --gpus_per_node's) GPUs, or fewer when the request
      // asked for fewer per node.
      if (eval_gpn <= 0 || plan.required_devices_per_node < eval_gpn) {
        eval_gpn = plan.required_devices_per_node;
      }
      TRTLLM_RUN_RETURN_IF_ERROR(CheckEvalFallback(request, job, partition, required, eval_gpn));
      notes.push_back(EvalFallbackNote(required, eval_gpn));
    }
  }
  if (job.perf || job.eval_fallback) {
    job.submit_py = plan.repo_root + "/jenkins/scripts/perf/local/submit.py";
    struct stat info {};
    if (::stat(job.submit_py.c_str(), &info) != 0) {
      return Status::InvalidInput(
          "the perf-sanity path needs the repo's submit.py, and '" + job.submit_py +
              "' does not exist",
          "give --repo-root of a TensorRT-LLM checkout that has jenkins/scripts/perf/local/");
    }
    if (job.llm_models_root.empty()) {
      return Status::InvalidInput(
          "the perf-sanity path needs llm_models_root (submit.py "
          "--llm-models-root)",
          "give --llm-models-root DIR");
    }
    if (job.perf) {
      Result<std::optional<PerfSanityId>> id = FindPerfSanityId(request.test_cmd.value_or(""));
      if (!id.ok()) return id.status();
      job.perf_id = id.value();
      if (!job.perf_id && !request.perf_config_yaml) {
        return Status::InvalidInput(
            "perf-sanity test_cmd has no test_e2e[<id>] and no perf_config_yaml was given",
            "give the test id, e.g. test_e2e[aggr-<config>-<server config>], or "
            "--perf-config-yaml FILE");
      }
    }
    if (job.runtime == "none") {
      notes.push_back(
          "warning: container_runtime none: submit.py's launch script still uses "
          "pyxis container flags");
    }
  }

  // Slurm parameters (spec 001 Step 3, "Common Slurm parameters").
  SlurmParams& p = job.params;
  p.partition = partition;
  p.account = job.account;
  p.time_limit = job.time_limit;
  int gpus = 1;
  if (job.perf) {
    p.nodes = plan.node_count;
    gpus = plan.required_devices_per_node;
    p.ntasks = p.nodes * gpus;
    p.ntasks_per_node = gpus;
  } else if (job.eval_fallback) {
    gpus = std::min(eval_gpn, required);
    p.nodes = (required + eval_gpn - 1) / eval_gpn;
    p.ntasks = p.nodes * gpus;
    p.ntasks_per_node = gpus;
  } else if (wf == "pytest") {
    if (plan.node_count > 1) {
      return Status::InvalidInput(
          "pytest is always single-node, but node_count = " + std::to_string(plan.node_count),
          "drop --node-count / --required-devices-per-node");
    }
    p.nodes = 1;
    p.ntasks = 1;
    p.ntasks_per_node = 1;
    gpus = required;
  } else if (wf == "eval" || wf == "bench") {
    p.nodes = 1;
    p.ntasks = required;
    p.ntasks_per_node = required;
    gpus = required;
  } else {
    p.nodes = std::max(1, plan.node_count);
    p.ntasks = std::max(1, plan.total_required_devices);
    p.ntasks_per_node = std::max(1, p.ntasks / p.nodes);
    gpus = plan.required_devices_per_node;
  }
  p.gpus_per_node = gpus;
  TRTLLM_RUN_RETURN_IF_ERROR(CheckGpus(request, plan, gpus, &job));
  p.mpi_plugin = job.env.pmix_preferred.value_or("pmix");
  if (!job.env.pmix_preferred) {
    notes.push_back("mpi plugin pmix: slurm_env has no pmix.preferred (the bare name)");
  }

  const std::string effective = job.perf || job.eval_fallback ? "perf_sanity" : wf;
  job.kind = job.perf || job.eval_fallback ? "perf" : SlurmKind(wf);
  job.container_name = plan.model_name + "_" + job.kind;
  job.job_name = (job.account.empty() ? "" : job.account + ".") + plan.model_name + "_" + job.kind;
  job.script_name = job.perf || job.eval_fallback ? "slurm_launch.sh"
                                                  : plan.model_name + "_" + job.kind + ".slurm";
  job.patterns = PatternsFor(effective, plan.model_name);
  return job;
}

// The job's steps as rendered: the plan's, with the remote custom_script path.
std::vector<PlanStep> JobSteps(const JobPlan& plan, const ResolvedJob& job) {
  std::vector<PlanStep> steps = plan.steps;
  for (PlanStep& step : steps) {
    if (step.name == "run" && !job.custom_script_remote.empty()) step.command = job.command;
  }
  return steps;
}

std::string CustomEnvText(const std::vector<EnvVar>& env) {
  std::string text;
  for (const EnvVar& var : env) {
    text += (text.empty() ? "" : " ") + var.name + "=" + ShellQuote(var.value);
  }
  return text;
}

Status WriteExecutable(const std::string& path, const std::string& text) {
  TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(path, text));
  if (::chmod(path.c_str(), 0755) != 0) {
    return Status::IoError("cannot make " + path + " executable");
  }
  return Status::Ok();
}

std::string GitOutput(const std::string& repo_root, const std::vector<std::string>& args) {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  std::vector<std::string> argv = {"git", "-C", repo_root};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> out = local->Run(argv, "");
  if (!out.ok() || out->exit_code != 0) return "";
  std::string text = out->stdout_text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Runs submit.py (Category 4) against the job's slurm_env; it writes the launch script,
// which must ask for what the plan does.
Status RunPerfSubmitFor(const PerfSubmitInputs& submit, ResolvedJob* job) {
  Result<int> timeout = internal::SubmitTimeoutSeconds();
  if (!timeout.ok()) return timeout.status();
  internal::PerfSubmitTarget target;
  target.params = job->params;
  target.partition = job->partitions.front();  // a list: its first member
  return internal::RunPerfSubmit(submit, job->env, target, timeout.value(), &job->notes);
}

}  // namespace

// Every value that reaches a line of the batch script or submit.py's launch script, from
// whatever source (flags, request files, slurm_env.json, clusters.yaml): a control
// character would end the line and start a new one.
Status CheckScriptValues(const ResolvedJob& job) {
  const std::pair<const char*, const std::string*> values[] = {
      {"partition", &job.params.partition},
      {"account", &job.params.account},
      {"time_limit", &job.params.time_limit},
      {"gres", &job.params.gres},
      {"mpi plugin (slurm_env pmix.preferred)", &job.params.mpi_plugin},
      {"job name", &job.job_name},
      {"container image", &job.job_image},
      {"container name", &job.container_name},
      {"llm_models_root", &job.llm_models_root},
      {"LLM_MODELS_ROOT", &job.models_root_export},
      {"the project path", &job.project},
      {"the log directory", &job.log_dir},
      {"remote_repo_path", &job.remote_repo_path},
      {"remote_work_dir", &job.remote_work_dir},
      {"remote_cwd", &job.remote_cwd},
  };
  for (const auto& [what, value] : values) {
    for (char c : *value) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F) {
        return Status::InvalidInput(
            std::string(what) + " '" + EscapeControl(*value) +
                "' holds a control character (from the request, slurm_env.json or clusters.yaml)",
            "a value on a job script line cannot carry newlines or other control characters");
      }
    }
  }
  for (const std::string& entry : job.mounts.entries) {
    if (entry.find_first_of("\r\n") != std::string::npos) {
      return Status::InvalidInput("mount '" + EscapeControl(entry) + "' holds a line break");
    }
  }
  if (!job.job_image.empty() && job.job_image[0] == '-') {
    return Status::InvalidInput("container image '" + job.job_image + "' starts with '-'",
                                "give an image reference such as registry/name:tag");
  }
  return Status::Ok();
}

Status ValidateSlurmJob(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                        const SlurmJobOptions& options) {
  Result<ResolvedJob> job = Resolve(request, plan, placement, options, "<work_dir>");
  return job.ok() ? CheckScriptValues(job.value()) : job.status();
}

Status PrepareSlurmJob(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                       const SlurmJobOptions& options, JobSpec* spec) {
  Result<ResolvedJob> resolved = Resolve(request, plan, placement, options, spec->work_dir);
  if (!resolved.ok()) return resolved.status();
  ResolvedJob& job = resolved.value();
  TRTLLM_RUN_RETURN_IF_ERROR(CheckScriptValues(job));
  const std::string& work_dir = spec->work_dir;

  if (spec->scenario.empty()) spec->scenario = options.executor;
  spec->workflow_type = plan.workflow_type;
  spec->model_name = plan.model_name;
  spec->repo_root = plan.repo_root;
  spec->custom_env = plan.env;
  spec->working_dir = plan.working_dir;
  spec->monitor_timeout_seconds = plan.monitor_timeout_seconds;
  spec->max_pending_seconds = plan.max_pending_seconds;
  spec->success_patterns = job.patterns.success;
  spec->failure_patterns = job.patterns.failure;
  spec->required_devices = plan.required_devices;
  spec->total_required_devices = plan.total_required_devices;
  // The eval fallback spreads the plan's devices over nodes of the partition's size.
  spec->required_devices_per_node =
      job.eval_fallback ? job.params.ntasks_per_node : plan.required_devices_per_node;
  spec->node_count = job.params.nodes;
  spec->job_name = job.job_name;
  spec->container_image = job.image;
  spec->build_project = request.build_project.value_or(true);
  spec->skip_install = request.skip_install.value_or(false);
  spec->script_name = job.script_name;
  spec->script_path = work_dir + "/" + job.script_name;
  spec->log_file_pattern = job.patterns.log_file_pattern;
  spec->log_file = work_dir + "/" + job.patterns.log_file_pattern;
  spec->extra_files = request.extra_files;
  spec->slurm_params = job.params;
  spec->slurm_env_json = SlurmEnvToJson(job.env);
  spec->container_runtime = job.runtime;
  spec->device_type = job.device_type;
  spec->llm_models_root = job.llm_models_root;
  spec->partition = job.params.partition;
  spec->account = job.account;
  spec->time_limit = job.time_limit;
  spec->extra["execution_scenario"] = options.executor;
  spec->extra["docker_image"] = job.image;
  spec->extra["slurm_env_file"] = work_dir + "/slurm_env.json";
  if (!options.remote) {
    // Persistent-mode fields: local_slurm only (spec 001/002 Step 5).
    spec->persistent_mode = true;
    spec->container_name = job.container_name;
    spec->container_mounts = job.mounts.Joined();
  } else {
    spec->slurm_cluster =
        request.slurm_cluster.value_or(placement.cluster ? placement.cluster->name : "");
    spec->ssh_host = !placement.ssh_host.empty()
                         ? placement.ssh_host
                         : request.ssh_host.value_or(job.env.ssh_host.value_or(""));
    spec->slurm_user = !placement.slurm_user.empty()
                           ? placement.slurm_user
                           : request.slurm_user.value_or(job.env.slurm_user.value_or(""));
    spec->remote_cwd = job.remote_cwd;
    spec->remote_repo_path = job.remote_repo_path;
    spec->remote_work_dir = job.remote_work_dir;
    spec->repo_url =
        request.repo_url.value_or(GitOutput(plan.repo_root, {"remote", "get-url", "origin"}));
    spec->repo_branch = request.repo_branch.value_or(
        GitOutput(plan.repo_root, {"rev-parse", "--abbrev-ref", "HEAD"}));
    if (spec->repo_url.empty()) {
      job.notes.push_back("repo_url: unknown (no --repo-url and no git remote 'origin')");
    }
  }

  if (job.perf || job.eval_fallback) {
    PerfSubmitInputs submit;
    submit.submit_py = job.submit_py;
    submit.partition = job.params.partition;
    submit.account = job.account;
    submit.job_name = job.job_name;
    submit.image = job.job_image;
    submit.mounts = job.mounts.Joined();
    submit.work_dir = job.log_dir;
    submit.llm_src = job.project;
    submit.llm_models_root = job.llm_models_root;
    submit.launch_sh = spec->script_path;
    submit.time_limit = job.time_limit;
    if (job.eval_fallback) {
      std::string config = work_dir + "/" + plan.model_name + "_eval_perf_config.yaml";
      TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(
          config, RenderEvalPerfConfig(job.eval, plan.model_name,
                                       job.params.ntasks_per_node >= plan.required_devices
                                           ? plan.required_devices
                                           : job.params.ntasks_per_node,
                                       request.eval_cmd.value_or(plan.command))));
      submit.config_file = config;
      submit.test_name = EvalPerfServerName(job.eval, plan.model_name);
      spec->extra["perf_config_yaml"] = config;
      spec->extra["eval_accuracy_run"] = std::string("not guaranteed: ") + kEvalFallbackAccuracy;
    } else if (request.perf_config_yaml) {
      std::error_code error;
      submit.config_file =
          fs::absolute(*request.perf_config_yaml, error).lexically_normal().string();
      if (job.perf_id) {
        submit.test_name = job.perf_id->select;
        if (job.perf_id->disaggregated_config) submit.benchmark_mode = job.perf_id->mode;
      }
      spec->extra["perf_config_yaml"] = submit.config_file;
    } else {
      submit.test_list = job.perf_id->test_string;
    }
    TRTLLM_RUN_RETURN_IF_ERROR(RunPerfSubmitFor(submit, &job));
    std::vector<std::string> argv = PerfSubmitArgv(submit);
    std::string line;
    for (const std::string& word : argv) line += (line.empty() ? "" : " ") + ShellQuote(word);
    spec->extra["submit_command"] = line;
  } else {
    SlurmScriptInputs in;
    in.workflow_type = plan.workflow_type;
    in.model_name = plan.model_name;
    in.job_name = job.job_name;
    in.log_dir = job.log_dir;
    in.params = job.params;
    in.container_runtime = job.runtime;
    in.container_image = job.job_image;
    in.container_name = job.container_name;
    in.container_mounts = job.mounts.Joined();
    in.project_path = job.project;
    in.run_working_dir = plan.working_dir;
    in.llm_models_root = job.models_root_export;
    in.steps = JobSteps(plan, job);
    if (plan.workflow_type == "custom") {
      const std::string run_script = CustomRunScriptPath();
      Result<std::string> text = ReadFile(run_script);
      if (!text.ok()) {
        return Status::IoError("the custom run script of this installation is missing: " +
                               text.status().message());
      }
      TRTLLM_RUN_RETURN_IF_ERROR(
          WriteExecutable(work_dir + "/" + kCustomRunScriptName, text.value()));
      in.run_script =
          (options.remote ? job.remote_work_dir : work_dir) + "/" + kCustomRunScriptName;
      in.custom_command = job.command;
      in.custom_env = CustomEnvText(plan.env);
      in.custom_workdir = job.project;
      spec->extra_files.push_back(work_dir + "/" + kCustomRunScriptName);
      if (!job.custom_script_remote.empty()) {
        std::error_code error;
        fs::create_directories(work_dir + "/scripts", error);
        Result<std::string> script = ReadFile(job.custom_script);
        if (!script.ok()) return script.status();
        std::string copy = work_dir + "/scripts/" + BaseName(job.custom_script);
        TRTLLM_RUN_RETURN_IF_ERROR(WriteExecutable(copy, script.value()));
        spec->extra_files.push_back(copy);
      }
    }
    TRTLLM_RUN_RETURN_IF_ERROR(WriteExecutable(spec->script_path, RenderSlurmBatchScript(in)));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(work_dir + "/slurm_env.json", spec->slurm_env_json));
  std::string notes;
  for (const std::string& note : job.notes) notes += (notes.empty() ? "" : "\n") + note;
  if (!notes.empty()) spec->extra["resolution_notes"] = notes;
  return WriteJobSpec(*spec);
}

}  // namespace trtllm_run
