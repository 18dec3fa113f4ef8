// sdk_slurm: a third-party executor that declares the Slurm traits. Core probes the
// cluster, validates account and partition and hands it slurm_env in the placement;
// the executor takes two executor_options of its own and submits the command with
// `sbatch --wait`. Built out of tree by sdk_executor_test.sh against the installed
// package, with the plugin SDK headers only.
#include <sys/stat.h>

#include <cctype>
#include <map>
#include <string>

#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/text.h"

namespace {

using trtllm_run::Status;

// Where this executor's facts land in job_spec.json.
constexpr const char* kPartitionsKey = "sdk_probed_partitions";
constexpr const char* kLabelKey = "sdk_label";
constexpr const char* kNiceKey = "sdk_nice";

std::string OptionOr(const std::optional<trtllm_run::ExecutorOptions>& options,
                     const std::string& key, const std::string& fallback) {
  if (!options) return fallback;
  auto it = options->find(key);
  return it == options->end() ? fallback : it->second;
}

class SdkSlurmExecutor : public trtllm_run::Executor {
 public:
  std::string Name() const override { return "sdk_slurm"; }

  trtllm_run::ExecutorTraits Traits() const override {
    trtllm_run::ExecutorTraits traits;
    traits.slurm = true;  // probe, validated account/partition, slurm_env
    return traits;
  }

  // label: [A-Za-z0-9_]+ (the job name's suffix); nice: an integer 0..100 (sbatch --nice).
  Status CheckExecutorOptions(const std::map<std::string, std::string>& options) const override {
    for (const auto& [key, value] : options) {
      if (key == "label") {
        bool ok = !value.empty();
        for (char c : value) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!ok) {
          return Status::InvalidInput(
              "executor option label=" + value + " (sdk_slurm) is not a label",
              "give letters, digits and '_', e.g. label=nightly");
        }
      } else if (key == "nice") {
        bool ok = !value.empty() && value.size() <= 3;
        for (char c : value) ok = ok && std::isdigit(static_cast<unsigned char>(c));
        if (!ok || std::stoi(value) > 100) {
          return Status::InvalidInput(
              "executor option nice=" + value + " (sdk_slurm) is not a nice value",
              "give an integer from 0 to 100, e.g. nice=10");
        }
      } else {
        return Status::InvalidInput("unknown executor option '" + key + "' (sdk_slurm)",
                                    "sdk_slurm takes: label, nice");
      }
    }
    return Status::Ok();
  }

  Status Validate(const trtllm_run::CaseRequest& /*request*/, const trtllm_run::JobPlan& /*plan*/,
                  const trtllm_run::Placement& placement) const override {
    if (!placement.slurm_env || placement.slurm_env->partitions.empty() ||
        placement.partition.empty()) {
      return Status::InvalidInput("sdk_slurm: the placement has no probed Slurm environment",
                                  "the runtime should have probed the cluster (slurm trait)");
    }
    return Status::Ok();
  }

  Status Prepare(const trtllm_run::CaseRequest& request, const trtllm_run::JobPlan& plan,
                 const trtllm_run::Placement& placement, trtllm_run::JobSpec* spec) override {
    spec->workflow_type = plan.workflow_type;
    spec->model_name = plan.model_name;
    spec->repo_root = plan.repo_root;
    spec->direct_cmd = plan.command;
    spec->monitor_timeout_seconds = plan.monitor_timeout_seconds;
    spec->partition = placement.partition;
    spec->account = placement.account;
    spec->job_name = "sdk_" + OptionOr(request.executor_options, "label", "job");
    spec->extra[kPartitionsKey] = std::to_string(placement.slurm_env->partitions.size());
    spec->extra[kLabelKey] = OptionOr(request.executor_options, "label", "");
    spec->extra[kNiceKey] = OptionOr(request.executor_options, "nice", "");
    spec->script_path = spec->work_dir + "/sdk_slurm.sh";
    std::string script = "#!/bin/bash\ncd " + trtllm_run::ShellQuote(plan.repo_root) + "\n";
    script += "exec bash -c " + trtllm_run::ShellQuote(plan.command) + "\n";
    TRTLLM_RUN_RETURN_IF_ERROR(trtllm_run::WriteFileAtomic(spec->script_path, script));
    ::chmod(spec->script_path.c_str(), 0755);
    return trtllm_run::WriteJobSpec(*spec);
  }

  // sbatch --wait: the verdict is the job's exit. (A real executor would watch the job
  // and scancel it when context.cancel fires.)
  trtllm_run::RunResult Execute(const trtllm_run::JobSpec& spec,
                                const trtllm_run::ExecContext& context) override {
    trtllm_run::RunResult result;
    result.started_at = trtllm_run::NowIso8601();
    std::vector<std::string> argv = {"sbatch",
                                     "--parsable",
                                     "--wait",
                                     "--time=5",
                                     "--partition=" + spec.partition,
                                     "--job-name=" + spec.job_name,
                                     "--output=" + spec.log_file,
                                     "--chdir=" + spec.repo_root};
    if (!spec.account.empty()) argv.push_back("--account=" + spec.account);
    const std::string nice = spec.extra.count(kNiceKey) ? spec.extra.at(kNiceKey) : "";
    if (!nice.empty()) argv.push_back("--nice=" + nice);
    argv.push_back(spec.script_path);
    trtllm_run::Result<trtllm_run::CommandOutput> out = context.scenario->Run(argv, "");
    result.finished_at = trtllm_run::NowIso8601();
    if (!out.ok()) {
      result.status = trtllm_run::RunStatus::kError;
      result.reason = "sbatch could not start: " + out.status().ToString();
      return result;
    }
    result.exit_code = out->exit_code;
    result.details["job_id"] = out->stdout_text.substr(0, out->stdout_text.find_first_of(";\n"));
    result.status =
        out->exit_code == 0 ? trtllm_run::RunStatus::kPassed : trtllm_run::RunStatus::kFailed;
    result.reason = out->exit_code == 0 ? "the Slurm job exited 0"
                                        : "sbatch --wait exited " + std::to_string(out->exit_code) +
                                              ": " + out->stderr_text;
    return result;
  }

  // `trtllm-run status WORK_DIR`: what this executor recorded for the job.
  trtllm_run::JobDescription DescribeJob(const trtllm_run::JobSpec& spec,
                                         const trtllm_run::RunState* /*state*/) const override {
    trtllm_run::JobDescription description;
    description.facts.emplace_back(
        "sdk job", spec.job_name + " on partition " + spec.partition +
                       (spec.account.empty() ? "" : ", account " + spec.account) + ", " +
                       (spec.extra.count(kPartitionsKey) ? spec.extra.at(kPartitionsKey) : "?") +
                       " partitions probed");
    return description;
  }
};

}  // namespace

TRTLLM_RUN_DECLARE_EXECUTOR_PLUGIN(SdkSlurmExecutor, "sdk_slurm", "1.0",
                                   "Third-party Slurm executor of the SDK test")
