// trtllm-run env: the one-pass Slurm probe (slurm_env.json) of this host or of a remote
// login node (one SSH connection), or with --env-check the host's env-check facts.
// Exit status (README "Verdicts and exit codes"): 0 no errors, 2 errors listed or bad input, 3 the
// probe could not run: no Slurm client tools on the target, SSH failed. --env-check: 0
// whenever the facts were collected (no Slurm there is a fact, not an error).
#include <iostream>
#include <sstream>

#include "cli.h"
#include "os/ssh.h"
#include "placement/env_check.h"
#include "placement/routing.h"
#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/catalog.h"
#include "trtllm_run/sdk/text.h"

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
  options.add_options()(
      "format", po::value<std::string>()->value_name("FORMAT")->default_value("json"),
      "json or text")("json", po::bool_switch(),
                      "the same as --format json; bad input then prints an error object on stdout")(
      "output", po::value<std::string>()->value_name("PATH"),
      "also save the document to PATH (atomically)")(
      "partitions", po::value<std::vector<std::string>>()->value_name("NAMES")->composing(),
      "probe hardware and access only for these partitions (comma-separated, repeatable)")(
      "no-access-check", "skip the sbatch --test-only checks (default partition: sinfo's)")(
      "timeout", DurationValue("60s"), "the limit of each query on the target")(
      "env-check", "print the env-check facts (GPUs, Docker, Slurm, arch) instead")(
      "account,A", po::value<std::string>()->value_name("NAME"),
      "validate this account as a run would (exit 2 naming the valid ones)")(
      "partition,p", po::value<std::string>()->value_name("NAME"),
      "validate this partition as a run would (exit 2 naming the valid ones)");
  options.add(SshFlagOptions());
  po::options_description site("Site");
  site.add_options()("clusters", po::value<std::string>()->value_name("FILE"),
                     "the cluster catalog (clusters.yaml)");
  options.add(site);
  return options;
}

// The env-check facts as "key: value" lines, as SlurmEnvToText writes the probe's.
std::string EnvFactsToText(const EnvFacts& facts) {
  std::ostringstream out;
  auto flag = [](bool value) { return value ? "true" : "false"; };
  out << "gpu_count: " << facts.gpu_count << "\n"
      << "gpu_name: " << (facts.gpu_name.empty() ? "(none)" : facts.gpu_name) << "\n"
      << "device_type: " << (facts.device_type.empty() ? "(none)" : facts.device_type) << "\n"
      << "gpus_per_node: " << facts.gpus_per_node << "\n"
      << "docker_available: " << flag(facts.docker_available) << "\n";
  if (!facts.docker_error.empty()) out << "docker_error: " << facts.docker_error << "\n";
  out << "nvidia_runtime: " << flag(facts.nvidia_runtime) << "\n"
      << "slurm_available: " << flag(facts.slurm_available) << "\n"
      << "cluster_name: " << facts.cluster_name.value_or("(none)") << "\n"
      << "arch: " << facts.arch << "\n"
      << "default_models_repo: " << facts.default_models_repo.value_or("(none)") << "\n"
      << "notes:" << (facts.notes.empty() ? " (none)" : "") << "\n";
  for (const std::string& note : facts.notes) out << "  - " << note << "\n";
  return out.str();
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
  const bool json = vm["json"].as<bool>();
  if (json && format == "text") return UsageError(kName, "give --json or --format text, not both");
  Result<double> timeout = DurationFlag(vm, "timeout");
  if (!timeout.ok()) return Fail(kName, timeout.status());
  if (timeout.value() <= 0) return UsageError(kName, "--timeout must be positive");

  Result<std::optional<ClusterCatalog>> catalog = LoadDefaultClusterCatalog(Get(vm, "clusters"));
  if (!catalog.ok()) return Fail(kName, catalog.status());
  const ClusterCatalog* catalog_ptr = catalog.value() ? &*catalog.value() : nullptr;

  // The SSH flags are request fields, read as run and plan read them.
  Result<CaseRequest> from_flags = RequestFromOptions(vm);
  if (!from_flags.ok()) return Fail(kName, from_flags.status());
  CaseRequest request = from_flags.value();

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
                                           "$TRTLLM_RUN_CLUSTERS (see " +
                                               ExampleCatalogPath() + ")"));
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
    if (request.ssh_port || request.identity || request.ssh_config_file ||
        !request.ssh_option.empty() || vm.count("password-file")) {
      return UsageError(kName,
                        "--ssh-port, --identity, --ssh-config-file, --ssh-option and "
                        "--password-file need --ssh-host or --slurm-cluster");
    }
    scenario = MakeLocalScenario();
  } else {
    SshOptions ssh;
    ssh.destination = destination;
    ssh.port = request.ssh_port.value_or(0);
    // With a catalog cluster the user is part of the destination; else --slurm-user is -l.
    if (!request.slurm_cluster && request.slurm_user) ssh.user = *request.slurm_user;
    ssh.identity_file = request.identity.value_or("");
    ssh.ssh_config_file = request.ssh_config_file.value_or("");
    ssh.extra_options = request.ssh_option;
    if (request.slurm_password) {
      ssh.password = *request.slurm_password;
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
    document = format == "json" ? EnvFactsToJson(facts.value()) : EnvFactsToText(facts.value());
  } else {
    ProbeOptions options;
    if (vm.count("partitions")) {
      options.partitions = SplitList(vm["partitions"].as<std::vector<std::string>>());
    }
    options.check_access = vm.count("no-access-check") == 0;
    options.command_timeout_seconds = static_cast<int>(timeout.value());
    Result<SlurmEnv> env = ProbeSlurm(*scenario, options);
    if (!env.ok()) return Fail(kName, env.status());
    if (cluster != nullptr) MergePolicyFields(cluster, request, /*remote=*/true, &env.value());
    exit_status = SlurmProbeExitStatus(env.value());
    if (exit_status == 1) exit_status = kExitError;  // no Slurm client tools: nothing to probe
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
        if (!json) std::cout << document;  // --json: stdout holds the error object alone
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
  if (exit_status == kExitError) {
    std::cerr << "trtllm-run env: error: no Slurm client tools (sinfo, scontrol, sbatch) on the "
              << (destination.empty() ? "PATH of this host" : "PATH of " + destination)
              << "; nothing to probe\n"
              << "  hint: run on a Slurm login node, give --ssh-host or --slurm-cluster, or "
                 "check the host with `trtllm-run env --env-check`\n";
  }
  return exit_status;
}

}  // namespace trtllm_run::cli
