// The cluster catalog: the documented example, lookups, user and host rules, the
// policy merge, file location, and errors that name the file, line, key and choices.
#include "trtllm_run/catalog.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

std::string ExamplePath() {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "examples" / "clusters.yaml").string();
}

ClusterCatalog Parse(const std::string& text) {
  Result<ClusterCatalog> catalog = ParseClusterCatalog(text, "c.yaml");
  INFO(catalog.status().ToString());
  REQUIRE(catalog.ok());
  return catalog.value();
}

Status ParseError(const std::string& text) {
  Result<ClusterCatalog> catalog = ParseClusterCatalog(text, "c.yaml");
  REQUIRE_FALSE(catalog.ok());
  CHECK(catalog.status().code() == StatusCode::kInvalidInput);
  return catalog.status();
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("the example catalog is valid and means what its comments say", "[catalog]") {
  Result<ClusterCatalog> loaded = LoadClusterCatalog(ExamplePath());
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  const ClusterCatalog& catalog = loaded.value();
  CHECK(catalog.Names() == std::vector<std::string>{"eos", "oberon", "workstation-pool"});

  const ClusterEntry* eos = catalog.FindByName("EOS");  // case-insensitive
  REQUIRE(eos != nullptr);
  CHECK(eos->gpus_per_node == 8);
  CHECK(eos->device_types == std::vector<std::string>{"H100"});
  CHECK(eos->mounts.size() == 2);
  CHECK(eos->enroot_registry_rewrite == "true");
  CHECK(eos->container_models_root == "/models");
  CHECK(SlurmUserFor(*eos, "alice", std::nullopt) == "alice");
  CHECK(SshHostFor(*eos, "alice", "alice") == "alice@login-eos.example.com");
  CHECK(UserRootDirFor(*eos, "alice", "alice") == "/lustre/users/alice");

  const ClusterEntry* oberon = catalog.FindByName("oberon");
  REQUIRE(oberon != nullptr);
  // Defaults fill what the cluster does not set.
  CHECK(oberon->mfa_user_suffix == "-mfa");
  CHECK(oberon->container_models_root == "/models");
  CHECK(SlurmUserFor(*oberon, "alice", std::nullopt) == "alice-mfa");
  CHECK(SlurmUserFor(*oberon, "alice", std::string("bob")) == "bob");  // the caller's wins
  CHECK(SshHostFor(*oberon, "alice-mfa", "alice") == "alice-mfa@oberon-login.example.com");
  CHECK(ClusterArch(*oberon) == "aarch64");  // GB200
  CHECK(ClusterArch(*eos) == "x86_64");

  const ClusterEntry* pool = catalog.FindByName("workstation-pool");
  REQUIRE(pool != nullptr);
  CHECK(SlurmUserFor(*pool, "alice", std::nullopt) == "svc-ci");
  CHECK(SshHostFor(*pool, "svc-ci", "alice") == "pool.example.com");
  CHECK(pool->container_runtime == "none");
  CHECK(eos->container_runtime == "pyxis");
}

TEST_CASE("catalog mode: device type and GPUs per node", "[catalog]") {
  ClusterCatalog catalog = Parse(R"(
clusters:
  - {name: small, device_types: [H100], gpus_per_node: 4}
  - {name: big, device_types: [h100, H200], gpus_per_node: 8}
  - {name: unknown-size, device_types: [H100]}
  - {name: gb, device_types: [GB200], gpus_per_node: 4}
)");
  auto names = [](const std::vector<const ClusterEntry*>& entries) {
    std::vector<std::string> out;
    for (const ClusterEntry* entry : entries) out.push_back(entry->name);
    return out;
  };
  CHECK(names(catalog.FindByDevice("H100", 4)) == std::vector<std::string>{"small", "big"});
  CHECK(names(catalog.FindByDevice("h100", 8)) == std::vector<std::string>{"big"});
  CHECK(names(catalog.FindByDevice("H200", 1)) == std::vector<std::string>{"big"});
  CHECK(catalog.FindByDevice("B200", 1).empty());
  CHECK(catalog.FindByDevice("GB200", 8).empty());
  CHECK(catalog.Describe() ==
        "small (H100 x4), big (h100,H200 x8), unknown-size (H100 x?), gb (GB200 x4)");
  CHECK(catalog.FindByName("nope") == nullptr);
}

TEST_CASE("catalog errors name the file, line, key and the valid choices", "[catalog]") {
  Status unknown = ParseError("clusters:\n  - name: eos\n    gpu_per_node: 8\n");
  CHECK(unknown.message() == "c.yaml:3: unknown key 'gpu_per_node' in clusters[0]");
  CHECK(unknown.hint().find("valid keys: name, ssh_host, ssh_host_pattern, mfa_style") == 0);
  CHECK(unknown.hint().find("gpus_per_node") != std::string::npos);

  Status type = ParseError("clusters:\n  - name: eos\n    gpus_per_node: eight\n");
  CHECK(type.message() == "c.yaml:3: 'gpus_per_node' must be a positive integer, got 'eight'");

  Status mfa = ParseError("clusters:\n  - name: eos\n    mfa_style: sometimes\n");
  CHECK(mfa.message() == "c.yaml:3: 'mfa_style' must be true or false, got 'sometimes'");

  Status list = ParseError("clusters:\n  - name: eos\n    mounts: {a: b}\n");
  CHECK(list.message() == "c.yaml:3: 'mounts' must be a list of strings, got a mapping");

  Status mount = ParseError("clusters:\n  - name: eos\n    mounts: [/only/host]\n");
  CHECK(mount.message() == "c.yaml:3: mount '/only/host' is not host:container");

  Status arch = ParseError("clusters:\n  - name: eos\n    arch: arm64\n");
  CHECK(arch.message() == "c.yaml:3: 'arch' must be x86_64 or aarch64, got 'arm64'");

  Status placeholder =
      ParseError("clusters:\n  - name: eos\n    ssh_host_pattern: \"{username}@eos\"\n");
  CHECK(placeholder.message() ==
        "c.yaml:3: 'ssh_host_pattern' uses unknown placeholder {username}");
  CHECK(placeholder.hint().find("{slurm_user}") != std::string::npos);

  Status duplicate = ParseError("clusters:\n  - name: eos\n  - name: EOS\n");
  CHECK(duplicate.message() ==
        "c.yaml:3: cluster name 'EOS' is used twice (first on line 2; names are compared "
        "case-insensitively)");

  Status twice = ParseError("clusters:\n  - name: eos\n    arch: x86_64\n    arch: aarch64\n");
  CHECK(twice.message() == "c.yaml:4: key 'arch' is given twice in clusters[0] (first on line 3)");

  Status no_name = ParseError("clusters:\n  - gpus_per_node: 8\n");
  CHECK(no_name.message() == "c.yaml:2: clusters[0] has no 'name'");

  Status top = ParseError("cluster:\n  - name: eos\n");
  CHECK(top.message() == "c.yaml:1: unknown top-level key 'cluster'");
  CHECK(top.hint() == "valid top-level keys: version, defaults, clusters");

  Status not_list = ParseError("clusters:\n  eos: {}\n");
  CHECK(not_list.message() ==
        "c.yaml:2: 'clusters' must be a list of cluster mappings, got a mapping");

  Status syntax = ParseError("clusters:\n  - name: [eos\n");
  CHECK(syntax.message().find("c.yaml:") == 0);
  CHECK(syntax.message().find("not valid YAML") != std::string::npos);

  Status name_in_defaults = ParseError("defaults:\n  name: x\nclusters: []\n");
  CHECK(name_in_defaults.message() == "c.yaml:2: unknown key 'name' in defaults");

  Status empty = ParseError("");
  CHECK(empty.message() == "c.yaml: the file is empty");
}

TEST_CASE("catalog location: --clusters, $TRTLLM_RUN_CLUSTERS, XDG", "[catalog]") {
  fs::path dir = fs::temp_directory_path() / ("trtllm_run_catalog_" + std::to_string(::getpid()));
  fs::create_directories(dir / "xdg" / "trtllm-run");
  std::string xdg_file = (dir / "xdg" / "trtllm-run" / "clusters.yaml").string();
  std::ofstream(xdg_file) << "clusters:\n  - name: from-xdg\n";
  std::string env_file = (dir / "env.yaml").string();
  std::ofstream(env_file) << "clusters:\n  - name: from-env\n";
  {
    ScopedEnv clusters("TRTLLM_RUN_CLUSTERS", nullptr);
    ScopedEnv xdg("XDG_CONFIG_HOME", (dir / "xdg").c_str());
    CHECK(ClusterCatalogPath("") == xdg_file);
    CHECK(ClusterCatalogPath("/explicit.yaml") == "/explicit.yaml");
    Result<std::optional<ClusterCatalog>> loaded = LoadDefaultClusterCatalog("");
    REQUIRE(loaded.ok());
    REQUIRE(loaded.value());
    CHECK(loaded.value()->Names() == std::vector<std::string>{"from-xdg"});
    {
      ScopedEnv over("TRTLLM_RUN_CLUSTERS", env_file.c_str());
      CHECK(ClusterCatalogPath("") == env_file);
    }
    {
      ScopedEnv missing("TRTLLM_RUN_CLUSTERS", (dir / "missing.yaml").c_str());
      Result<std::optional<ClusterCatalog>> bad = LoadDefaultClusterCatalog("");
      REQUIRE_FALSE(bad.ok());
      CHECK(bad.status().code() == StatusCode::kNotFound);
      CHECK(bad.status().message().find("$TRTLLM_RUN_CLUSTERS") != std::string::npos);
    }
    Result<std::optional<ClusterCatalog>> explicit_missing =
        LoadDefaultClusterCatalog((dir / "nope.yaml").string());
    REQUIRE_FALSE(explicit_missing.ok());
    CHECK(explicit_missing.status().message().find("nope.yaml' does not exist") !=
          std::string::npos);
  }
  {
    // No file in the XDG location: no catalog, not an error.
    ScopedEnv clusters("TRTLLM_RUN_CLUSTERS", nullptr);
    ScopedEnv xdg("XDG_CONFIG_HOME", (dir / "empty").c_str());
    CHECK(ClusterCatalogPath("").empty());
    Result<std::optional<ClusterCatalog>> none = LoadDefaultClusterCatalog("");
    REQUIRE(none.ok());
    CHECK_FALSE(none.value());
  }
  {
    ScopedEnv clusters("TRTLLM_RUN_CLUSTERS", nullptr);
    ScopedEnv xdg("XDG_CONFIG_HOME", nullptr);
    ScopedEnv home("HOME", (dir / "home").c_str());
    fs::create_directories(dir / "home" / ".config" / "trtllm-run");
    std::string home_file = (dir / "home" / ".config" / "trtllm-run" / "clusters.yaml").string();
    std::ofstream(home_file) << "clusters: []\n";
    CHECK(ClusterCatalogPath("") == home_file);
  }
  fs::remove_all(dir);
}

TEST_CASE("policy fields merged into slurm_env", "[catalog]") {
  ClusterCatalog catalog = Parse(R"(
clusters:
  - name: eos
    ssh_host_pattern: "{slurm_user}@login-{cluster}"
    mfa_style: true
    mfa_user_suffix: "-x"
    user_root_dir: "/home/{slurm_user}"
    mounts: ["/data/{user}:/data"]
)");
  const ClusterEntry* eos = catalog.FindByName("eos");
  CaseRequest request;
  request.user_name = "alice";

  SlurmEnv remote;
  MergePolicyFields(eos, request, /*remote=*/true, &remote);
  CHECK(remote.policy_merged);
  CHECK(remote.cluster_name == std::optional<std::string>("eos"));
  CHECK(remote.slurm_user == std::optional<std::string>("alice-x"));
  CHECK(remote.ssh_host == std::optional<std::string>("alice-x@login-eos"));
  CHECK(remote.remote_cwd == std::optional<std::string>("/home/alice-x"));
  CHECK(remote.mounts == std::optional<std::vector<std::string>>({"/data/alice:/data"}));
  CHECK(remote.mfa_style == std::optional<bool>(true));

  request.slurm_user = "svc";
  request.ssh_host = "gateway";
  request.remote_cwd = "/scratch/svc";
  SlurmEnv overridden;
  MergePolicyFields(eos, request, true, &overridden);
  CHECK(overridden.slurm_user == std::optional<std::string>("svc"));
  CHECK(overridden.ssh_host == std::optional<std::string>("gateway"));
  CHECK(overridden.remote_cwd == std::optional<std::string>("/scratch/svc"));

  SlurmEnv local;
  MergePolicyFields(eos, request, /*remote=*/false, &local);
  CHECK(local.cluster_name == std::optional<std::string>("eos"));
  CHECK_FALSE(local.ssh_host);
  CHECK_FALSE(local.slurm_user);
  CHECK_FALSE(local.remote_cwd);

  SlurmEnv unknown;
  MergePolicyFields(nullptr, CaseRequest{}, true, &unknown);
  CHECK(unknown.policy_merged);
  CHECK_FALSE(unknown.cluster_name);
  CHECK_FALSE(unknown.mounts);
  CHECK_FALSE(unknown.ssh_host);
  CHECK_FALSE(unknown.slurm_user);
  CHECK_FALSE(unknown.mfa_style);
}
