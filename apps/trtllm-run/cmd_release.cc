// trtllm-run release: ends the Slurm allocations that persistent mode holds for later
// runs (slurm_run.h, "Held allocations").
#include <algorithm>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/slurm_run.h"
#include "trtllm_run/ssh.h"

namespace trtllm_run::cli {

namespace {

std::string Describe(const HeldAllocation& a) {
  long long now = static_cast<long long>(std::time(nullptr));
  std::string where = a.host.empty() ? "this host" : a.host;
  return "allocation " + a.job_id + " on " + where + " (" + a.key + ", --time " + a.time_limit +
         ", idle " + std::to_string(now - a.last_used_at) + "s of " +
         std::to_string(a.idle_limit_seconds) + "s)";
}

}  // namespace

int ReleaseMain(int argc, char** argv) {
  po::options_description options("Release");
  options.add_options()("list", po::bool_switch(), "only list the held allocations")(
      "idle", po::bool_switch(), "release only the allocations idle past their idle limit")(
      "job-id", po::value<std::vector<std::string>>(),
      "release only this allocation (repeatable; default: all)");
  po::variables_map vm;
  if (std::optional<int> done = Parse("release", argc, argv, options, &vm)) return *done;
  std::vector<HeldAllocation> held = ListHeldAllocations();
  if (vm["list"].as<bool>()) {
    if (held.empty()) std::cout << "no held allocations (" << AllocationStateDir() << ")\n";
    for (const HeldAllocation& a : held) std::cout << Describe(a) << "\n";
    return 0;
  }
  std::vector<std::string> only;
  if (vm.count("job-id")) only = vm["job-id"].as<std::vector<std::string>>();
  long long now = static_cast<long long>(std::time(nullptr));
  int failures = 0, released = 0;
  for (const HeldAllocation& a : held) {
    if (!only.empty() && std::find(only.begin(), only.end(), a.job_id) == only.end()) continue;
    if (vm["idle"].as<bool>() && now - a.last_used_at <= a.idle_limit_seconds) continue;
    std::unique_ptr<Scenario> scenario;
    if (a.host.empty()) {
      scenario = MakeLocalScenario();
    } else {
      JobSpec connection;
      connection.work_dir = "(release)";
      connection.ssh_host = a.host;
      connection.slurm_user = a.user;
      if (!a.ssh_config_file.empty()) connection.extra["ssh_config_file"] = a.ssh_config_file;
      Result<SshOptions> ssh_options = SshOptionsForSpec(connection);
      Result<std::unique_ptr<SshScenario>> ssh =
          ssh_options.ok() ? MakeSshScenario(ssh_options.value())
                           : Result<std::unique_ptr<SshScenario>>(ssh_options.status());
      if (!ssh.ok()) {
        std::cerr << "trtllm-run release: error: " << Describe(a) << ": " << ssh.status().ToString()
                  << "\n";
        ++failures;
        continue;
      }
      scenario = std::move(ssh.value());
    }
    Status status = ReleaseHeldAllocation(a, scenario.get());
    if (status.ok()) {
      std::cout << "released " << Describe(a) << "\n";
      ++released;
    } else {
      std::cerr << "trtllm-run release: error: " << status.ToString() << "\n";
      ++failures;
    }
  }
  if (released == 0 && failures == 0) std::cout << "nothing to release\n";
  return failures == 0 ? 0 : 3;
}

}  // namespace trtllm_run::cli
