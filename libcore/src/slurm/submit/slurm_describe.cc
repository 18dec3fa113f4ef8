#include "slurm/submit/slurm_describe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "model/trust.h"
#include "os/ssh.h"
#include "slurm/client/slurm_client.h"
#include "slurm/submit/slurm_run.h"

namespace trtllm_run {
namespace {

constexpr int kQueryTimeoutSeconds = 20;  // the one scontrol; ssh adds its connect timeout

// OK when the work dir's SSH settings may be used without the person having chosen them
// now (see DescribeSlurmJob).
Status CheckRecordedSshSettings(const SshOptions& options, const JobSpec& spec) {
  const std::string where = "job_spec.json of " + spec.work_dir;
  if (!options.destination.empty() && options.destination[0] == '-') {
    return Status::InvalidInput(where + ": ssh_host starts with '-'");
  }
  for (const std::string& option : options.extra_options) {
    TRTLLM_RUN_RETURN_IF_ERROR(CheckUntrustedSshOption(option, where + ": ssh_options"));
  }
  if (!options.ssh_config_file.empty()) {
    struct stat st {};
    const std::string& file = options.ssh_config_file;
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidInput(where + ": ssh_config_file '" + file + "' is no regular file");
    }
    if ((st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & 022) != 0) {
      return Status::InvalidInput(
          where + ": ssh_config_file '" + file +
              "' is not owned by you or root, or is writable by group or others",
          "status asks the cluster only through SSH settings you control");
    }
  }
  return Status::Ok();
}

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
    Status trusted =
        options.ok() ? CheckRecordedSshSettings(options.value(), spec) : options.status();
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
