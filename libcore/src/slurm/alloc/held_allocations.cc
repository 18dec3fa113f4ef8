#include "slurm/alloc/slurm_alloc.h"
#include "slurm/submit/ssh_settings.h"
#include "trtllm_run/sdk/slurm/held.h"
#include "trtllm_run/sdk/slurm/remote.h"

#include <algorithm>
#include <ctime>
#include <memory>

#include "os/ssh.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace trtllm_run {
namespace {

std::string Describe(const HeldAllocation& a) {
  long long now = static_cast<long long>(std::time(nullptr));
  std::string where = a.host.empty() ? "this host" : a.host;
  return "allocation " + a.job_id + " on " + where + " (" + a.key + ", --time " + a.time_limit +
         ", idle " + std::to_string(now - a.last_used_at) + "s of " +
         std::to_string(a.idle_limit_seconds) + "s)";
}

// Where the allocation lives: this host, or its SSH destination as recorded.
Result<std::unique_ptr<Scenario>> ScenarioFor(const HeldAllocation& a) {
  if (a.host.empty()) return MakeLocalScenario();
  JobSpec connection;
  connection.work_dir = "(release)";
  connection.ssh_host = a.host;
  connection.slurm_user = a.user;
  const std::pair<const char*, const std::string*> connection_extras[] = {
      {"ssh_config_file", &a.ssh_config_file},
      {"ssh_port", &a.ssh_port},
      {"ssh_identity_file", &a.ssh_identity_file},
      {"ssh_options", &a.ssh_options}};
  for (const auto& [key, value] : connection_extras) {
    if (!value->empty()) connection.extra[key] = *value;
  }
  Result<SshOptions> options = SshOptionsForSpec(connection);
  if (!options.ok()) return options.status();
  Result<std::unique_ptr<SshScenario>> ssh = MakeSshScenario(options.value());
  if (!ssh.ok()) return ssh.status();
  return std::unique_ptr<Scenario>(std::move(ssh.value()));
}

}  // namespace

std::vector<HeldResource> HeldSlurmAllocations(bool remote) {
  std::vector<HeldResource> held;
  for (const HeldAllocation& a : ListHeldAllocations()) {
    if (a.host.empty() == remote) continue;
    held.push_back(HeldResource{a.job_id, Describe(a), a.last_used_at, a.idle_limit_seconds});
  }
  std::sort(held.begin(), held.end(),
            [](const HeldResource& x, const HeldResource& y) { return x.id < y.id; });
  return held;
}

Status ReleaseHeldSlurmAllocation(const std::string& job_id, bool remote) {
  for (const HeldAllocation& a : ListHeldAllocations()) {
    if (a.job_id != job_id || a.host.empty() == remote) continue;
    Result<std::unique_ptr<Scenario>> scenario = ScenarioFor(a);
    if (!scenario.ok()) return scenario.status().WithContext(Describe(a));
    return ReleaseHeldAllocation(a, scenario.value().get());
  }
  return Status::NotFound("no held allocation " + job_id + " is recorded in " +
                          AllocationStateDir());
}

}  // namespace trtllm_run
