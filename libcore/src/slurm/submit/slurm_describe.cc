#include "trtllm_run/sdk/slurm/describe.h"

#include <memory>

#include "os/ssh.h"
#include "slurm/submit/ssh_settings.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace trtllm_run {
namespace {

constexpr int kQueryTimeoutSeconds = 20;  // the one scontrol; ssh adds its connect timeout

}  // namespace

JobDescription DescribeSlurmJob(const JobSpec& spec, const RunState* state, Scenario* local) {
  JobDescription description;
  if (state == nullptr || state->job_id.empty()) return description;
  const std::string& job_id = state->job_id;
  if (!IsSlurmJobId(job_id)) {
    description.problem = "the job id '" + job_id +
                          "' recorded in run_state.json is not a Slurm job id; the controller "
                          "was not asked";
    return description;
  }
  std::unique_ptr<Scenario> own;
  std::unique_ptr<SshScenario> ssh;
  Scenario* scenario = local;
  if (!spec.ssh_host.empty()) {
    Result<SshOptions> options = SshOptionsForSpec(spec);
    Status trusted = options.ok()
                         ? CheckRecordedSshSettings(
                               options.value(), spec,
                               "status asks the cluster only through SSH settings you control")
                         : options.status();
    Result<std::unique_ptr<SshScenario>> made = trusted.ok()
                                                    ? MakeSshScenario(options.value())
                                                    : Result<std::unique_ptr<SshScenario>>(trusted);
    if (!made.ok()) {
      description.problem =
          "the cluster was not asked about Slurm job " + job_id + ": " + made.status().ToString();
      return description;
    }
    ssh = std::move(made.value());
    scenario = ssh.get();
  } else if (scenario == nullptr || scenario->IsRemote()) {
    own = MakeLocalScenario();
    scenario = own.get();
  }
  SlurmClientOptions client_options;
  client_options.command_timeout_seconds = kQueryTimeoutSeconds;
  SlurmClient client(scenario, client_options);
  Result<SlurmClient::JobsSnapshot> snapshot = client.QueryJobs({job_id});
  if (ssh) ssh->Close().IgnoreError();
  if (!snapshot.ok()) {
    description.problem = "the controller could not be asked about Slurm job " + job_id + ": " +
                          snapshot.status().ToString();
    return description;
  }
  if (!snapshot->unknown.empty()) {
    description.scheduler_state = "UNKNOWN";
    description.scheduler_reason = "the controller no longer knows the job";
  }
  for (const SlurmJobRecord& record : snapshot->records) {
    if (record.job_id != job_id) continue;
    description.scheduler_state = record.state;
    description.scheduler_reason = record.reason;
  }
  if (!description.scheduler_state.empty()) {
    const std::string& reason = description.scheduler_reason;
    description.facts.emplace_back(
        "slurm state", description.scheduler_state +
                           (reason.empty() || reason == "None" ? "" : " (" + reason + ")"));
  }
  return description;
}

}  // namespace trtllm_run
