// sdk_slurm: a third-party executor that declares the Slurm traits. Core probes the
// cluster, validates account and partition and hands it slurm_env in the placement;
// the executor takes two executor_options of its own, copies the plan into the job spec
// (CopyPlanToSpec), renders a batch script with the SDK's end marker, and runs the job
// with the public Slurm kit as the built-in Slurm executors do: SlurmClient::Submit
// (sbatch), one SlurmWatcher (the controller's record, the job's output, monitor timeout,
// hang and silence, scancel on cancellation) and its verdict (JudgeSlurmJob). Built out of
// tree by sdk_executor_test.sh against the installed package, with the plugin SDK
// headers only.
#include <sys/stat.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/watch.h"
#include "trtllm_run/sdk/text.h"

namespace {

using trtllm_run::Status;

// Where this executor's facts land in job_spec.json.
constexpr const char* kPartitionsKey = "sdk_probed_partitions";
constexpr const char* kLabelKey = "sdk_label";
constexpr const char* kNiceKey = "sdk_nice";
constexpr const char* kEndTokenKey = "sdk_end_marker_token";

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
    // What every executor copies from the plan (model, repo, env, timeouts, patterns, ...).
    trtllm_run::CopyPlanToSpec(plan, spec);
    spec->direct_cmd = plan.command;
    spec->partition = placement.partition;
    spec->account = placement.account;
    spec->job_name = "sdk_" + OptionOr(request.executor_options, "label", "job");
    spec->extra[kPartitionsKey] = std::to_string(placement.slurm_env->partitions.size());
    spec->extra[kLabelKey] = OptionOr(request.executor_options, "label", "");
    spec->extra[kNiceKey] = OptionOr(request.executor_options, "nice", "");
    // The end marker: the watcher reads the job's exit code from it, with a token the
    // payload never sees.
    const std::string token = trtllm_run::NewEndMarkerToken();
    spec->extra[kEndTokenKey] = token;
    spec->script_path = spec->work_dir + "/sdk_slurm.sh";
    std::string script = "#!/bin/bash\ncd " + trtllm_run::ShellQuote(plan.repo_root) + "\n";
    script += "bash -c " + trtllm_run::ShellQuote(plan.command) + "\n";
    script += "exit_code=$?\n" + trtllm_run::EndMarkerEcho(token) + "\nexit $exit_code\n";
    TRTLLM_RUN_RETURN_IF_ERROR(trtllm_run::WriteFileAtomic(spec->script_path, script));
    ::chmod(spec->script_path.c_str(), 0755);
    return trtllm_run::WriteJobSpec(*spec);
  }

  // sbatch through the public client, then one watcher to the verdict: it scancels the
  // job on context.cancel, at the monitor timeout, on "hang detected" or silence, and
  // judges from the controller's record, accounting and the job's output.
  trtllm_run::RunResult Execute(const trtllm_run::JobSpec& spec,
                                const trtllm_run::ExecContext& context) override {
    trtllm_run::RunResult result;
    const std::string started_at = trtllm_run::NowIso8601();
    result.started_at = started_at;
    trtllm_run::SlurmClient client(context.scenario);
    std::vector<std::string> args = {"--time=5", "--partition=" + spec.partition,
                                     "--job-name=" + spec.job_name, "--output=" + spec.log_file,
                                     "--chdir=" + spec.repo_root};
    if (!spec.account.empty()) args.push_back("--account=" + spec.account);
    const std::string nice = spec.extra.count(kNiceKey) ? spec.extra.at(kNiceKey) : "";
    if (!nice.empty()) args.push_back("--nice=" + nice);
    trtllm_run::Result<std::string> job_id = client.Submit(spec.script_path, spec.work_dir, args);
    if (!job_id.ok()) {
      result.finished_at = trtllm_run::NowIso8601();
      result.status = trtllm_run::RunStatus::kError;
      result.reason = "sbatch refused the job: " + job_id.status().ToString();
      return result;
    }

    trtllm_run::SlurmWatchOptions options;
    options.progress = context.progress;
    options.terminal = context.terminal;
    options.kill_grace_seconds = context.kill_grace_seconds;
    options.progress_prefix = "[sdk_slurm]";
    trtllm_run::SlurmWatcher watcher(&client, options);
    trtllm_run::SlurmWatchJob job;
    job.job_id = *job_id;
    job.out_path = spec.log_file;  // this host's cluster: read in place
    job.local_out = spec.log_file;
    job.success_patterns = spec.success_patterns;
    job.failure_patterns = spec.failure_patterns;
    job.end_marker_token = spec.extra.count(kEndTokenKey) ? spec.extra.at(kEndTokenKey) : "";
    job.monitor_timeout_seconds = spec.monitor_timeout_seconds;
    job.silence_timeout_seconds = spec.silence_timeout_seconds;
    job.workflow_type = spec.workflow_type;
    job.scenario = Name();
    job.time_limit = "5";
    job.echo_output = context.terminal != nullptr;
    job.on_ending = context.job_ending;
    watcher.Add(job);
    watcher.Run(context.cancel,
                [&result](trtllm_run::SlurmVerdict verdict) { result = verdict.result; });
    if (result.started_at.empty()) result.started_at = started_at;
    if (result.finished_at.empty()) result.finished_at = trtllm_run::NowIso8601();
    result.details["job_id"] = *job_id;
    result.details["sdk_client_controller_queries"] =
        std::to_string(client.stats().controller_queries);
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
