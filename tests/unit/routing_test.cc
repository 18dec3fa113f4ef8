// Routing (spec 000 Step 2) as a table, account/partition resolution (Step 2.5) on
// probe documents from a real cluster, and the remote paths.
#include "placement/routing.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "slurm/probe/slurm_probe.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

const std::vector<std::string> kExecutors = {"local_direct", "local_docker", "local_slurm",
                                             "my_executor", "remote_slurm"};

// The executors named, with the traits their plugins declare (the built-in plugins of this
// build, loaded once); a name no plugin has (my_executor) declares none. Nothing claims.
std::vector<RoutingCandidate> Candidates(const std::vector<std::string>& names) {
  static Registry* const builtins = [] {
    auto* registry = new Registry();
    registry->LoadDirectory(BuiltinPluginDirectory());
    return registry;
  }();
  std::vector<RoutingCandidate> candidates;
  for (const std::string& name : names) {
    Result<ExecutorTraits> traits = builtins->ExecutorTraitsOf(name);
    candidates.push_back({name, traits.ok() ? traits.value() : ExecutorTraits{}, nullptr});
  }
  return candidates;
}

Result<Placement> Route(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
                        const ClusterCatalog* catalog, const std::vector<std::string>& names) {
  return RouteAmong(request, plan, env, catalog, Candidates(names));
}

ClusterCatalog Catalog() {
  Result<ClusterCatalog> catalog = ParseClusterCatalog(R"(
clusters:
  - name: eos
    ssh_host_pattern: "{slurm_user}@login-{cluster}"
    gpus_per_node: 8
    device_types: [H100]
    container_models_root: /models
    models_repo_host: /lustre/models
    default_account: research
    default_partition: batch
    user_root_dir: "/lustre/{slurm_user}"
  - name: oberon
    ssh_host_pattern: "{slurm_user}@{cluster}"
    mfa_style: true
    mfa_user_suffix: "-mfa"
    gpus_per_node: 4
    device_types: [GB200]
    mounts: ["/data:/data"]
  - name: h100-small
    ssh_host: small.example.com
    gpus_per_node: 2
    device_types: [H100]
)",
                                                       "clusters.yaml");
  REQUIRE(catalog.ok());
  return catalog.value();
}

EnvFacts Workstation(int gpus, const std::string& type, bool docker) {
  EnvFacts env;
  env.gpu_count = gpus;
  env.gpus_per_node = gpus;
  env.device_type = type;
  env.gpu_name = type.empty() ? "" : "NVIDIA " + type;
  env.docker_available = docker;
  env.docker_error = docker ? "" : "docker not found on PATH";
  env.arch = "x86_64";
  return env;
}

EnvFacts LoginNode(const std::string& cluster, int gpus_per_node = 0) {
  EnvFacts env = Workstation(0, "", true);
  env.slurm_available = true;
  env.cluster_name = cluster;
  env.gpus_per_node = gpus_per_node;
  return env;
}

JobPlan Plan(int per_node, int total = 0, const std::string& workflow = "custom") {
  JobPlan plan;
  plan.workflow_type = workflow;
  plan.required_devices = total > 0 ? total : per_node;
  plan.total_required_devices = total > 0 ? total : per_node;
  plan.required_devices_per_node = per_node;
  return plan;
}

CaseRequest Request() {
  CaseRequest request;
  request.user_name = "alice";
  return request;
}

Placement RouteOk(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
                  const ClusterCatalog* catalog) {
  Result<Placement> placement = Route(request, plan, env, catalog, kExecutors);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  CHECK_FALSE(placement.value().notes.empty());
  CHECK(placement.value().notes.front().find("scenario " + placement.value().scenario) == 0);
  return placement.value();
}

Status RouteError(const CaseRequest& request, const JobPlan& plan, const EnvFacts& env,
                  const ClusterCatalog* catalog) {
  Result<Placement> placement = Route(request, plan, env, catalog, kExecutors);
  REQUIRE_FALSE(placement.ok());
  return placement.status();
}

bool Mentions(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

SlurmEnv ProbeFixture(const std::string& name) {
  fs::path path = fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "slurm" / name;
  Result<std::string> text = ReadFile(path.string());
  REQUIRE(text.ok());
  Result<ProbeOutput> output = ParseProbeStream(text.value(), "@@fixture@@");
  REQUIRE(output.ok());
  return SlurmEnvFromProbe(output.value(), {});
}

}  // namespace

TEST_CASE("routing: --scenario override", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  request.scenario = "local_direct";
  request.device_type = "B200";       // ignored: the override wins
  JobPlan reads_no_models = Plan(1);  // as the custom workflow plans an arbitrary command
  reads_no_models.launch.uses_models_root = false;
  Placement direct = RouteOk(request, reads_no_models, Workstation(8, "H100", true), &catalog);
  CHECK(direct.scenario == "local_direct");
  CHECK(direct.notes.front() ==
        "scenario local_direct: requested (--scenario, or scenario: in the request file)");
  // A command that reads no models here uses no models root and no container mounts: no
  // notes on them.
  for (const std::string& note : direct.notes)
    CHECK(note.find("not resolved") == std::string::npos);
  auto models_root_noted = [&](const JobPlan& plan) {
    Placement placed = RouteOk(request, plan, Workstation(8, "H100", true), &catalog);
    bool noted = false;
    for (const std::string& note : placed.notes) noted |= note.rfind("llm_models_root", 0) == 0;
    return noted;
  };
  CHECK(models_root_noted(Plan(1, 0, "pytest")));
  // The plan's fact decides, not the workflow's name: a plan named "custom" that reads
  // models is told about its models root.
  CHECK(models_root_noted(Plan(1, 0, "custom")));
  CHECK_FALSE(models_root_noted(reads_no_models));

  request.scenario = "my_executor";  // a third-party plugin
  CHECK(RouteOk(request, Plan(1), Workstation(0, "", false), nullptr).scenario == "my_executor");

  request.scenario = "cloud";
  Status unknown = RouteError(request, Plan(1), Workstation(0, "", false), nullptr);
  CHECK(unknown.code() == StatusCode::kNotFound);
  CHECK(unknown.message() == "unknown scenario 'cloud' (--scenario)");
  CHECK(unknown.hint() ==
        "loaded executors: local_direct, local_docker, local_slurm, my_executor, remote_slurm");

  request.scenario = "local_docker";
  Status perf =
      RouteError(request, Plan(1, 1, kPerfSanityWorkflow), Workstation(8, "H100", true), nullptr);
  CHECK(perf.code() == StatusCode::kInvalidInput);
  CHECK(Mentions(perf.message(), "perf-sanity tests run only on Slurm"));

  request.scenario = "remote_slurm";
  request.device_type.reset();
  request.slurm_cluster = "oberon";
  Placement remote = RouteOk(request, Plan(4), Workstation(0, "", false), &catalog);
  CHECK(remote.scenario == "remote_slurm");
  CHECK(remote.ssh_host == "alice-mfa@oberon");

  request.slurm_cluster.reset();
  Status nowhere = RouteError(request, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(nowhere.message() == "--scenario remote_slurm needs a cluster");
}

TEST_CASE("routing: slurm_cluster", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();

  // Same cluster (case-insensitive) -> local_slurm.
  request.slurm_cluster = "EOS";
  Placement local = RouteOk(request, Plan(8), LoginNode("eos"), &catalog);
  CHECK(local.scenario == "local_slurm");
  REQUIRE(local.cluster);
  CHECK(local.cluster->name == "eos");
  CHECK(local.ssh_host.empty());

  // Another cluster -> remote_slurm with the catalog's user rule and host pattern.
  request.slurm_cluster = "oberon";
  Placement remote = RouteOk(request, Plan(4), LoginNode("eos"), &catalog);
  CHECK(remote.scenario == "remote_slurm");
  CHECK(remote.slurm_user == "alice-mfa");
  CHECK(remote.ssh_host == "alice-mfa@oberon");
  CHECK(remote.arch == "aarch64");
  CHECK(Mentions(remote.notes.front(), "this host is on cluster eos"));

  // Not on any cluster -> remote_slurm.
  request.slurm_cluster = "eos";
  Placement from_laptop = RouteOk(request, Plan(1), Workstation(1, "A100", true), &catalog);
  CHECK(from_laptop.scenario == "remote_slurm");
  CHECK(from_laptop.ssh_host == "alice@login-eos");
  CHECK(from_laptop.arch == "x86_64");

  // An explicit --slurm-user wins over the MFA rule.
  request.slurm_cluster = "oberon";
  request.slurm_user = "svc";
  CHECK(RouteOk(request, Plan(1), Workstation(0, "", false), &catalog).ssh_host == "svc@oberon");
  request.slurm_user.reset();

  // Unknown cluster: an error listing the catalog's clusters, unless --ssh-host says where.
  request.slurm_cluster = "titan";
  Status unknown = RouteError(request, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(unknown.code() == StatusCode::kInvalidInput);
  CHECK(unknown.message() ==
        "unknown cluster 'titan' (slurm_cluster): not in the catalog clusters.yaml");
  CHECK(Mentions(unknown.hint(), "clusters: eos, oberon, h100-small"));
  Status no_catalog = RouteError(request, Plan(1), Workstation(0, "", false), nullptr);
  CHECK(Mentions(no_catalog.message(), "no cluster catalog was found"));
  request.ssh_host = "me@titan-login";
  Placement explicit_host = RouteOk(request, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(explicit_host.scenario == "remote_slurm");
  CHECK(explicit_host.ssh_host == "me@titan-login");
  CHECK_FALSE(explicit_host.cluster);
}

TEST_CASE("routing: device_type auto-selects a cluster", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  request.device_type = "GB200";
  Placement gb = RouteOk(request, Plan(4), Workstation(8, "H100", true), &catalog);
  CHECK(gb.scenario == "remote_slurm");
  REQUIRE(gb.cluster);
  CHECK(gb.cluster->name == "oberon");
  CHECK(Mentions(gb.notes.front(), "device_type GB200 wanted, this host has 8 x H100"));

  // The first cluster with enough GPUs per node: h100-small (2) is too small for 4.
  request.device_type = "h100";
  Placement h100 = RouteOk(request, Plan(4), Workstation(0, "", false), &catalog);
  CHECK(h100.cluster->name == "eos");
  Placement two = RouteOk(request, Plan(2), Workstation(0, "", false), &catalog);
  CHECK(two.cluster->name == "eos");
  CHECK(Mentions(two.notes.front(), "also matching: h100-small"));

  // No match: names the device type, the GPUs per node and the catalog's clusters.
  request.device_type = "B200";
  Status none = RouteError(request, Plan(8), Workstation(0, "", false), &catalog);
  CHECK(none.code() == StatusCode::kInvalidInput);
  CHECK(Mentions(none.message(), "device_type B200 with 8 GPU(s) per node"));
  CHECK(none.hint() == "clusters: eos (H100 x8), oberon (GB200 x4), h100-small (H100 x2)");

  Status no_catalog = RouteError(request, Plan(8), Workstation(0, "", false), nullptr);
  CHECK(Mentions(no_catalog.message(), "needs a cluster catalog and none was found"));

  // The same device type as this host (any case) stays local.
  request.device_type = "h100";
  CHECK(RouteOk(request, Plan(2), Workstation(2, "H100", false), &catalog).scenario ==
        "local_direct");
}

TEST_CASE("routing: local choices", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  Placement slurm = RouteOk(request, Plan(2), LoginNode("eos"), &catalog);
  CHECK(slurm.scenario == "local_slurm");
  CHECK(slurm.cluster->name == "eos");

  Placement docker = RouteOk(request, Plan(2), Workstation(2, "A100", true), &catalog);
  CHECK(docker.scenario == "local_docker");
  CHECK(Mentions(docker.notes.front(), "Docker engine reachable"));

  Placement direct = RouteOk(request, Plan(1), Workstation(1, "A100", false), &catalog);
  CHECK(direct.scenario == "local_direct");
  CHECK(Mentions(direct.notes.front(), "no Slurm, no Docker (docker not found on PATH)"));

  // Slurm tools but no reachable controller (no cluster name): not a Slurm host.
  EnvFacts tools_only = Workstation(1, "A100", true);
  tools_only.slurm_available = true;
  CHECK(RouteOk(request, Plan(1), tools_only, &catalog).scenario == "local_docker");
}

TEST_CASE("routing: not satisfied here falls to auto-select", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  // 2 local H100, the case needs 8 per node: the H100 cluster with 8 per node.
  Placement more = RouteOk(request, Plan(8), Workstation(2, "H100", true), &catalog);
  CHECK(more.scenario == "remote_slurm");
  CHECK(more.cluster->name == "eos");
  CHECK(Mentions(more.notes.front(), "not satisfied here"));

  // The local cluster's nodes are too small (catalog gpus_per_node).
  EnvFacts small = LoginNode("h100-small", 2);
  small.device_type = "H100";
  CHECK(RouteOk(request, Plan(8), small, &catalog).cluster->name == "eos");

  // Not satisfied, nothing to select by, but GPUs here: an error saying what to give.
  Status stuck = RouteError(request, Plan(8), Workstation(2, "A100", true), &catalog);
  CHECK(Mentions(stuck.message(), "the case needs 8 GPU(s)"));
  CHECK(Mentions(stuck.message(), "no cluster in the catalog"));

  // A host without GPUs and no device type: runs here, and says so.
  Placement cpu = RouteOk(request, Plan(1), Workstation(0, "", true), &catalog);
  CHECK(cpu.scenario == "local_direct");
  CHECK(Mentions(cpu.notes.front(), "this host has no GPU"));
}

TEST_CASE("routing: perf-sanity needs Slurm", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  JobPlan perf = Plan(8, 16, kPerfSanityWorkflow);
  CHECK(RouteOk(request, perf, LoginNode("eos"), &catalog).scenario == "local_slurm");
  // A workstation with the right GPUs still goes to a Slurm cluster of that type.
  Placement remote =
      RouteOk(request, Plan(8, 8, kPerfSanityWorkflow), Workstation(8, "H100", true), &catalog);
  CHECK(remote.scenario == "remote_slurm");
  CHECK(Mentions(remote.notes.front(), "perf-sanity tests run only on Slurm"));
  Status no_type = RouteError(request, perf, Workstation(0, "", true), &catalog);
  CHECK(no_type.code() == StatusCode::kInvalidInput);
}

TEST_CASE("routing: the chosen executor must be loaded", "[routing]") {
  Result<Placement> placement = Route(Request(), Plan(1), Workstation(1, "A100", true), nullptr,
                                      {"local_direct", "remote_slurm"});
  REQUIRE_FALSE(placement.ok());
  CHECK(placement.status().code() == StatusCode::kNotFound);
  CHECK(
      placement.status().message() ==
      "routing chose scenario local_docker but no executor plugin named 'local_docker' is loaded");
  CHECK(Mentions(placement.status().hint(), "loaded executors: local_direct, remote_slurm"));
}

TEST_CASE("routing: models root and models mount", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  request.slurm_cluster = "eos";
  Placement from_catalog = RouteOk(request, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(from_catalog.llm_models_root == "/models");
  CHECK(from_catalog.models_host_path == "/lustre/models");

  request.llm_models_root = "/scratch/models";
  request.checkpoint_path = "/ckpt/llama-8b/";
  Placement given = RouteOk(request, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(given.llm_models_root == "/scratch/models");
  CHECK(given.models_host_path == "/ckpt");

  request.checkpoint_path.reset();
  request.models_path = "/my/models";
  CHECK(RouteOk(request, Plan(1), Workstation(0, "", false), &catalog).models_host_path ==
        "/my/models");

  // Rule 3: a cluster with mounts leaves the models mount to them.
  CaseRequest oberon = Request();
  oberon.slurm_cluster = "oberon";
  Placement mounts = RouteOk(oberon, Plan(1), Workstation(0, "", false), &catalog);
  CHECK(mounts.models_host_path.empty());
  bool noted = false;
  for (const std::string& note : mounts.notes) noted = noted || Mentions(note, "slurm_env.mounts");
  CHECK(noted);

  // Local: the env check's default models repo.
  EnvFacts env = Workstation(1, "A100", true);
  env.default_models_repo = "/home/models";
  Placement local = RouteOk(Request(), Plan(1), env, &catalog);
  CHECK(local.models_host_path == "/home/models");
  CHECK(local.llm_models_root.empty());
}

TEST_CASE("account and partition: caller, probe default, catalog, validated", "[routing]") {
  ClusterCatalog catalog = Catalog();
  const ClusterEntry* eos = catalog.FindByName("eos");
  SlurmEnv root = ProbeFixture("root.stream");

  Placement defaults;
  REQUIRE(ResolveAccountPartition(Request(), root, eos, &defaults).ok());
  CHECK(defaults.account == "research");  // DefaultAccount, not the first association
  CHECK(defaults.partition == "batch");
  CHECK(defaults.arch == "x86_64");
  REQUIRE(defaults.slurm_env);
  CHECK(defaults.slurm_env->accounts == root.accounts);

  CaseRequest request = Request();
  request.account = "proj2";
  request.partition = "restricted";
  Placement given;
  REQUIRE(ResolveAccountPartition(request, root, eos, &given).ok());
  CHECK(given.account == "proj2");
  CHECK(given.partition == "restricted");

  request.account = "bogus";
  Placement bad_account;
  Status account = ResolveAccountPartition(request, root, eos, &bad_account);
  CHECK(account.code() == StatusCode::kInvalidInput);
  CHECK(account.message() ==
        "account 'bogus' (--account) is not one of user root's Slurm accounts");
  CHECK(account.hint() == "valid accounts: proj2, research, root");
  CHECK(bad_account.account.empty());  // nothing unvalidated comes back

  request.account.reset();
  request.partition = "gpu";
  Status partition = ResolveAccountPartition(request, root, eos, &bad_account);
  CHECK(partition.message() == "partition 'gpu' (--partition) does not exist on this cluster");
  CHECK(partition.hint() ==
        "partitions: maint, restricted, batch-backfill, debug, batch, cpu (up: restricted, "
        "batch-backfill, debug, batch, cpu)");

  request.partition = "maint";
  Status down = ResolveAccountPartition(request, root, eos, &bad_account);
  CHECK(down.message() == "partition 'maint' (--partition) is down, not up");

  // The catalog's defaults come after the probe's, and are validated too.
  SlurmEnv no_default = root;
  no_default.default_account.reset();
  no_default.default_partition.reset();
  Placement catalog_defaults;
  REQUIRE(ResolveAccountPartition(Request(), no_default, eos, &catalog_defaults).ok());
  CHECK(catalog_defaults.account == "research");
  CHECK(catalog_defaults.partition == "batch");
  Status no_account = ResolveAccountPartition(Request(), no_default, nullptr, &catalog_defaults);
  CHECK(no_account.message() == "no Slurm account for user root");
  CHECK(no_account.hint() == "give --account; valid accounts: proj2, research, root");
  no_default.default_account = "research";
  Status no_partition = ResolveAccountPartition(Request(), no_default, nullptr, &catalog_defaults);
  CHECK(no_partition.message() == "no Slurm partition");
}

TEST_CASE("account and partition: no association, no accounting, no tools", "[routing]") {
  Placement placement;
  Status noassoc =
      ResolveAccountPartition(Request(), ProbeFixture("noassoc.stream"), nullptr, &placement);
  CHECK(noassoc.code() == StatusCode::kInvalidInput);
  CHECK(noassoc.message() == "user noassoc has no Slurm account association on this cluster");

  // Without accounting the job is submitted without an account, or with the given one
  // as is (nothing to validate it against).
  SlurmEnv noacct = ProbeFixture("noacct.stream");
  Placement unaccounted;
  REQUIRE(ResolveAccountPartition(Request(), noacct, nullptr, &unaccounted).ok());
  CHECK(unaccounted.account.empty());
  CHECK(unaccounted.partition == "batch");
  CaseRequest with_account = Request();
  with_account.account = "research";
  Placement as_given;
  REQUIRE(ResolveAccountPartition(with_account, noacct, nullptr, &as_given).ok());
  CHECK(as_given.account == "research");

  SlurmEnv no_tools;
  no_tools.user = "alice";
  no_tools.errors = {kSlurmToolsNotFound};
  Status tools = ResolveAccountPartition(Request(), no_tools, nullptr, &placement);
  CHECK(Mentions(tools.message(), "no Slurm client tools"));
}

TEST_CASE("remote repo and work dir paths", "[routing]") {
  ClusterCatalog catalog = Catalog();
  CaseRequest request = Request();
  request.slurm_cluster = "eos";
  Placement placement = RouteOk(request, Plan(1), Workstation(0, "", false), &catalog);
  REQUIRE(ResolveRemotePaths(request, "https://github.com/NVIDIA/TensorRT-LLM.git",
                             "/home/alice/TensorRT-LLM/work_dirs/llama_20260101_120000/",
                             &placement)
              .ok());
  CHECK(placement.remote_repo_path == "/lustre/alice/TensorRT-LLM");
  CHECK(placement.remote_work_dir == "/lustre/alice/TensorRT-LLM/work_dirs/llama_20260101_120000");

  request.remote_cwd = "/scratch/me/";
  REQUIRE(ResolveRemotePaths(request, "git@github.com:me/trt.git", "/w/x_1", &placement).ok());
  CHECK(placement.remote_repo_path == "/scratch/me/trt");

  request.remote_repo_path = "/exact/repo";
  REQUIRE(ResolveRemotePaths(request, "", "/w/x_1", &placement).ok());
  CHECK(placement.remote_work_dir == "/exact/repo/work_dirs/x_1");

  Placement unknown;
  Status missing = ResolveRemotePaths(Request(), "https://x/y.git", "/w/x_1", &unknown);
  CHECK(missing.message() == "remote_slurm needs the remote repo location");
}
