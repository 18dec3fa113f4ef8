// trtllm-run env: the one-pass Slurm probe (slurm_env.json) of this host or of a remote
// login node (one SSH connection), or with --env-check the host's env-check facts.
// Exit status as the original probe: 0 no errors, 2 errors listed (or bad input), 1 the
// Slurm client tools are missing; 3 when the probe could not run (e.g. SSH failed).
#include <iostream>
#include <sstream>

#include "cli.h"
#include "trtllm_run/catalog.h"
#include "trtllm_run/env_check.h"
#include "trtllm_run/routing.h"
#include "trtllm_run/slurm_probe.h"
#include "trtllm_run/ssh.h"
#include "trtllm_run/text.h"

namespace trtllm_run::cli {

namespace {

const char kName[] = "env";

std::vector<std::string> SplitList(const std::vector<std::string>& values) {
  std::vector<std::string> items;
  for (const std::string& value : values) {
    std::stringstream stream(value);
    std::string item;
    while (std::getline(stream, item, ',')) {
      if (!item.empty()) items.push_back(item);
    }
  }
  return items;
}

po::options_description EnvOptions() {
  po::options_description options("Env");
  options.add_options()("format", po::value<std::string>()->default_value("json"), "json or text")(
      "output", po::value<std::string>(), "also save the document to FILE (atomically)")(
      "partitions", po::value<std::vector<std::string>>()->composing(),
      "probe hardware and access only for these partitions (comma-separated, repeatable)")(
      "no-access-check", "skip the sbatch --test-only checks (default partition: sinfo's)")(
      "timeout", po::value<int>()->default_value(60), "seconds per query on the target")(
      "env-check", "print the env-check facts (GPUs, Docker, Slurm, arch) instead")(
      "account", po::value<std::string>(),
      "validate this account as a run would (exit 2 naming the valid ones)")(
      "partition", po::value<std::string>(),
      "validate this partition as a run would (exit 2 naming the valid ones)");
  po::options_description remote("Remote login node (one SSH connection)");
  remote.add_options()("ssh-host", po::value<std::string>(),
                       "run on DEST (host or user@host) over SSH")(
      "ssh-port", po::value<int>(), "SSH port")("slurm-user", po::value<std::string>(),
                                                "login name on the cluster")(
      "identity", po::value<std::string>(), "SSH private key file")(
      "ssh-option", po::value<std::vector<std::string>>()->composing(),
      "extra ssh -o Key=Value (repeatable)")(
      "password-file", po::value<std::string>(),
      "read the SSH password from FILE (else $TRTLLM_RUN_SLURM_PASSWORD when set)")(
      "slurm-cluster", po::value<std::string>(),
      "the catalog cluster NAME: its ssh host, user rule and policy fields")(
      "user-name", po::value<std::string>(), "user name for the catalog's user rules")(
      "clusters", po::value<std::string>(), "the cluster catalog (clusters.yaml)");
  options.add(remote);
  return options;
}

std::string Get(const po::variables_map& vm, const char* key) {
  return vm.count(key) ? vm[key].as<std::string>() : std::string();
}

}  // namespace

int EnvMain(int argc, char** argv) {
  po::variables_map vm;
  if (std::optional<int> done = Parse(kName, argc, argv, EnvOptions(), &vm)) return *done;
  std::string format = Get(vm, "format");
  if (format != "json" && format != "text") {
    return UsageError(kName, "--format must be json or text, not '" + format + "'");
  }
  if (vm["timeout"].as<int>() <= 0) return UsageError(kName, "--timeout must be positive");

  Result<std::optional<ClusterCatalog>> catalog = LoadDefaultClusterCatalog(Get(vm, "clusters"));
  if (!catalog.ok()) return Fail(kName, catalog.status());
  const ClusterCatalog* catalog_ptr = catalog.value() ? &*catalog.value() : nullptr;

  CaseRequest request;  // the fields the catalog's rules read
  if (vm.count("slurm-user")) request.slurm_user = Get(vm, "slurm-user");
  if (vm.count("user-name")) request.user_name = Get(vm, "user-name");
  if (vm.count("ssh-host")) request.ssh_host = Get(vm, "ssh-host");
  if (vm.count("slurm-cluster")) request.slurm_cluster = Get(vm, "slurm-cluster");

  const ClusterEntry* cluster = nullptr;
  std::string destination = Get(vm, "ssh-host");
  if (request.slurm_cluster) {
    cluster = catalog_ptr ? catalog_ptr->FindByName(*request.slurm_cluster) : nullptr;
    if (cluster == nullptr) {
      return Fail(kName, Status::InvalidInput(
                             "unknown cluster '" + *request.slurm_cluster + "' (--slurm-cluster)",
                             catalog_ptr ? "clusters in " + catalog_ptr->path + ": " +
                                               catalog_ptr->Describe()
                                         : "no cluster catalog was found: give --clusters FILE or "
                                           "$TRTLLM_RUN_CLUSTERS (see examples/clusters.yaml)"));
    }
    if (destination.empty()) {
      std::string user_name = EffectiveUserName(request.user_name);
      destination =
          SshHostFor(*cluster, SlurmUserFor(*cluster, user_name, request.slurm_user), user_name);
      if (destination.empty()) {
        return Fail(kName, Status::InvalidInput(
                               "cluster " + cluster->name + " has no ssh_host or ssh_host_pattern",
                               "give --ssh-host, or set one in " + catalog_ptr->path));
      }
    }
  }

  std::unique_ptr<Scenario> scenario;
  if (destination.empty()) {
    if (vm.count("ssh-port") || vm.count("identity") || vm.count("password-file")) {
      return UsageError(kName,
                        "--ssh-port, --identity and --password-file need --ssh-host or "
                        "--slurm-cluster");
    }
    scenario = MakeLocalScenario();
  } else {
    SshOptions ssh;
    ssh.destination = destination;
    if (vm.count("ssh-port")) ssh.port = vm["ssh-port"].as<int>();
    // With a catalog cluster the user is part of the destination; else --slurm-user is -l.
    if (!request.slurm_cluster && request.slurm_user) ssh.user = *request.slurm_user;
    ssh.identity_file = Get(vm, "identity");
    if (vm.count("ssh-option")) ssh.extra_options = vm["ssh-option"].as<std::vector<std::string>>();
    if (vm.count("password-file")) {
      Result<std::string> password = ReadFile(Get(vm, "password-file"));
      if (!password.ok()) return Fail(kName, password.status().WithContext("--password-file"));
      ssh.password = password.value();
      while (!ssh.password.empty() &&
             (ssh.password.back() == '\n' || ssh.password.back() == '\r')) {
        ssh.password.pop_back();
      }
    } else if (const char* env = std::getenv("TRTLLM_RUN_SLURM_PASSWORD"); env && *env) {
      ssh.password_env = "TRTLLM_RUN_SLURM_PASSWORD";
    }
    Result<std::unique_ptr<SshScenario>> ssh_scenario = MakeSshScenario(ssh);
    if (!ssh_scenario.ok()) return Fail(kName, ssh_scenario.status());
    scenario = std::move(ssh_scenario.value());
  }

  std::string document;
  int exit_status = 0;
  if (vm.count("env-check")) {
    Result<EnvFacts> facts = CheckEnvironment(*scenario, catalog_ptr);
    if (!facts.ok()) return Fail(kName, facts.status());
    document = EnvFactsToJson(facts.value());
  } else {
    ProbeOptions options;
    if (vm.count("partitions")) {
      options.partitions = SplitList(vm["partitions"].as<std::vector<std::string>>());
    }
    options.check_access = vm.count("no-access-check") == 0;
    options.command_timeout_seconds = vm["timeout"].as<int>();
    Result<SlurmEnv> env = ProbeSlurm(*scenario, options);
    if (!env.ok()) return Fail(kName, env.status());
    if (cluster != nullptr) MergePolicyFields(cluster, request, /*remote=*/true, &env.value());
    exit_status = SlurmProbeExitStatus(env.value());
    document = format == "json" ? SlurmEnvToJson(env.value()) : SlurmEnvToText(env.value());
    for (const std::string& error : env.value().errors) {
      std::cerr << "trtllm-run env: warning: " << error << "\n";
    }
    if (vm.count("account") || vm.count("partition")) {
      request.account =
          vm.count("account") ? std::optional<std::string>(Get(vm, "account")) : std::nullopt;
      request.partition =
          vm.count("partition") ? std::optional<std::string>(Get(vm, "partition")) : std::nullopt;
      Placement placement;
      Status resolved = ResolveAccountPartition(request, env.value(), cluster, &placement);
      if (!resolved.ok()) {
        std::cout << document;
        return Fail(kName, resolved);
      }
      for (const std::string& note : placement.notes) {
        if (note.rfind("slurm probe: ", 0) != 0) std::cerr << "trtllm-run env: " << note << "\n";
      }
    }
  }
  if (vm.count("output")) {
    Status saved = WriteFileAtomic(Get(vm, "output"), document);
    if (!saved.ok()) return Fail(kName, saved);
  }
  std::cout << document;
  return exit_status;
}

}  // namespace trtllm_run::cli
