#include "trtllm_run/catalog.h"

#include <pwd.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "model/yaml_util.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

namespace fs = std::filesystem;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiLower(a) == AsciiLower(b);
}

const char* const kPlaceholders[] = {"{user}", "{slurm_user}", "{cluster}"};

// Checks that every {...} in `text` is a known placeholder.
Status CheckPlaceholders(const std::string& text, const std::string& where,
                         const std::string& key) {
  size_t pos = 0;
  while ((pos = text.find('{', pos)) != std::string::npos) {
    size_t close = text.find('}', pos);
    if (close == std::string::npos) {
      return Status::InvalidInput(where + ": '" + key + "' has an unclosed '{' in '" + text + "'",
                                  "placeholders: {user}, {slurm_user}, {cluster}");
    }
    std::string placeholder = text.substr(pos, close - pos + 1);
    if (std::find(std::begin(kPlaceholders), std::end(kPlaceholders), placeholder) ==
        std::end(kPlaceholders)) {
      return Status::InvalidInput(
          where + ": '" + key + "' uses unknown placeholder " + placeholder,
          "placeholders: {user} (user name), {slurm_user} (login name on the cluster), "
          "{cluster} (cluster name)");
    }
    pos = close + 1;
  }
  return Status::Ok();
}

// Reads one key of a cluster mapping (or of `defaults`) into `entry`.
Status SetEntryKey(const std::string& origin, const std::string& key, const YAML::Node& key_node,
                   const YAML::Node& value, ClusterEntry* entry) {
  std::string where = YamlWhere(origin, key_node.Mark());
  auto scalar = [&](std::string* out) -> Status {
    if (!value.IsScalar()) {
      return Status::InvalidInput(where + ": '" + key + "' must be a single value, got " +
                                  YamlNodeKind(value));
    }
    *out = value.Scalar();
    return Status::Ok();
  };
  auto list = [&](std::vector<std::string>* out) -> Status {
    out->clear();
    if (value.IsScalar()) {  // a single item
      out->push_back(value.Scalar());
      return Status::Ok();
    }
    if (!value.IsSequence()) {
      return Status::InvalidInput(where + ": '" + key + "' must be a list of strings, got " +
                                  YamlNodeKind(value));
    }
    for (const YAML::Node& item : value) {
      if (!item.IsScalar()) {
        return Status::InvalidInput(YamlWhere(origin, item.Mark()) + ": items of '" + key +
                                    "' must be single values, got " + YamlNodeKind(item));
      }
      out->push_back(item.Scalar());
    }
    return Status::Ok();
  };
  auto boolean = [&](bool* out) -> Status {
    if (!value.IsScalar() || !YAML::convert<bool>::decode(value, *out)) {
      return Status::InvalidInput(
          where + ": '" + key + "' must be true or false, got " +
          (value.IsScalar() ? "'" + value.Scalar() + "'" : std::string(YamlNodeKind(value))));
    }
    return Status::Ok();
  };

  if (key == "name") return scalar(&entry->name);
  if (key == "ssh_host") return scalar(&entry->ssh_host);
  if (key == "ssh_host_pattern") {
    TRTLLM_RUN_RETURN_IF_ERROR(scalar(&entry->ssh_host_pattern));
    return CheckPlaceholders(entry->ssh_host_pattern, where, key);
  }
  if (key == "mfa_style") {
    bool mfa = false;
    TRTLLM_RUN_RETURN_IF_ERROR(boolean(&mfa));
    entry->mfa_style = mfa;
    return Status::Ok();
  }
  if (key == "mfa_user_suffix") return scalar(&entry->mfa_user_suffix);
  if (key == "slurm_user") return scalar(&entry->slurm_user);
  if (key == "gpus_per_node") {
    std::string text;
    TRTLLM_RUN_RETURN_IF_ERROR(scalar(&text));
    int gpus = 0;
    if (!YAML::convert<int>::decode(value, gpus) || gpus <= 0) {
      return Status::InvalidInput(where + ": 'gpus_per_node' must be a positive integer, got '" +
                                  text + "'");
    }
    entry->gpus_per_node = gpus;
    return Status::Ok();
  }
  if (key == "device_types") return list(&entry->device_types);
  if (key == "arch") {
    TRTLLM_RUN_RETURN_IF_ERROR(scalar(&entry->arch));
    if (entry->arch != "x86_64" && entry->arch != "aarch64") {
      return Status::InvalidInput(where + ": 'arch' must be x86_64 or aarch64, got '" +
                                  entry->arch + "'");
    }
    return Status::Ok();
  }
  if (key == "default_account") return scalar(&entry->default_account);
  if (key == "default_partition") return scalar(&entry->default_partition);
  if (key == "models_repo_host") return scalar(&entry->models_repo_host);
  if (key == "container_models_root") return scalar(&entry->container_models_root);
  if (key == "user_root_dir") {
    TRTLLM_RUN_RETURN_IF_ERROR(scalar(&entry->user_root_dir));
    return CheckPlaceholders(entry->user_root_dir, where, key);
  }
  if (key == "mounts") {
    TRTLLM_RUN_RETURN_IF_ERROR(list(&entry->mounts));
    for (const std::string& mount : entry->mounts) {
      if (mount.find(':') == std::string::npos) {
        return Status::InvalidInput(where + ": mount '" + mount + "' is not host:container",
                                    "write each mount as /host/path:/container/path");
      }
      TRTLLM_RUN_RETURN_IF_ERROR(CheckPlaceholders(mount, where, key));
    }
    return Status::Ok();
  }
  if (key == "enroot_registry_rewrite") {
    bool rewrite = false;
    TRTLLM_RUN_RETURN_IF_ERROR(boolean(&rewrite));
    entry->enroot_registry_rewrite = rewrite ? "true" : "";
    return Status::Ok();
  }
  if (key == "container_runtime") {
    TRTLLM_RUN_RETURN_IF_ERROR(scalar(&entry->container_runtime));
    if (entry->container_runtime != "pyxis" && entry->container_runtime != "none") {
      return Status::InvalidInput(where + ": 'container_runtime' must be pyxis or none, got '" +
                                  entry->container_runtime + "'");
    }
    return Status::Ok();
  }
  return Status::Internal("unhandled cluster key " + key);
}

// Reads a mapping of cluster keys. `section` names it in errors ("clusters[2]").
Status ReadEntry(const std::string& origin, const YAML::Node& node, const std::string& section,
                 bool allow_name, ClusterEntry* entry) {
  if (!node.IsMap()) {
    return Status::InvalidInput(YamlWhere(origin, node.Mark()) + ": " + section +
                                " must be a mapping of cluster keys, got " + YamlNodeKind(node));
  }
  std::map<std::string, int> seen;
  for (const auto& item : node) {
    const YAML::Node& key_node = item.first;
    std::string where = YamlWhere(origin, key_node.Mark());
    if (!key_node.IsScalar()) {
      return Status::InvalidInput(where + ": " + section + " has a key that is not a name");
    }
    std::string key = key_node.Scalar();
    const std::vector<std::string>& keys = ClusterEntryKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end() || (!allow_name && key == "name")) {
      std::vector<std::string> valid;
      for (const std::string& k : keys) {
        if (allow_name || k != "name") valid.push_back(k);
      }
      return Status::InvalidInput(where + ": unknown key '" + key + "' in " + section,
                                  "valid keys: " + Join(valid, ", "));
    }
    auto [it, inserted] = seen.emplace(key, key_node.Mark().line + 1);
    if (!inserted) {
      return Status::InvalidInput(where + ": key '" + key + "' is given twice in " + section +
                                  " (first on line " + std::to_string(it->second) + ")");
    }
    if (item.second.IsNull()) {
      return Status::InvalidInput(where + ": key '" + key + "' has no value",
                                  "give a value or remove the line");
    }
    TRTLLM_RUN_RETURN_IF_ERROR(SetEntryKey(origin, key, key_node, item.second, entry));
  }
  return Status::Ok();
}

// Fields of `defaults` that `entry` did not set itself.
void ApplyDefaults(const ClusterEntry& defaults, const YAML::Node& node, ClusterEntry* entry) {
  auto has = [&](const char* key) { return static_cast<bool>(node[key]); };
  auto copy = [&](const char* key, auto member) {
    if (!has(key)) entry->*member = defaults.*member;
  };
  copy("ssh_host", &ClusterEntry::ssh_host);
  copy("ssh_host_pattern", &ClusterEntry::ssh_host_pattern);
  copy("mfa_style", &ClusterEntry::mfa_style);
  copy("mfa_user_suffix", &ClusterEntry::mfa_user_suffix);
  copy("slurm_user", &ClusterEntry::slurm_user);
  copy("gpus_per_node", &ClusterEntry::gpus_per_node);
  copy("device_types", &ClusterEntry::device_types);
  copy("arch", &ClusterEntry::arch);
  copy("default_account", &ClusterEntry::default_account);
  copy("default_partition", &ClusterEntry::default_partition);
  copy("models_repo_host", &ClusterEntry::models_repo_host);
  copy("container_models_root", &ClusterEntry::container_models_root);
  copy("user_root_dir", &ClusterEntry::user_root_dir);
  copy("mounts", &ClusterEntry::mounts);
  copy("enroot_registry_rewrite", &ClusterEntry::enroot_registry_rewrite);
  copy("container_runtime", &ClusterEntry::container_runtime);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

}  // namespace

const std::vector<std::string>& ClusterEntryKeys() {
  static const std::vector<std::string> keys = {"name",
                                                "ssh_host",
                                                "ssh_host_pattern",
                                                "mfa_style",
                                                "mfa_user_suffix",
                                                "slurm_user",
                                                "gpus_per_node",
                                                "device_types",
                                                "arch",
                                                "default_account",
                                                "default_partition",
                                                "models_repo_host",
                                                "container_models_root",
                                                "user_root_dir",
                                                "mounts",
                                                "enroot_registry_rewrite",
                                                "container_runtime"};
  return keys;
}

const ClusterEntry* ClusterCatalog::FindByName(std::string_view name) const {
  for (const ClusterEntry& entry : clusters) {
    if (EqualsIgnoreCase(entry.name, name)) return &entry;
  }
  return nullptr;
}

std::vector<const ClusterEntry*> ClusterCatalog::FindByDevice(std::string_view device_type,
                                                              int gpus_per_node) const {
  std::vector<const ClusterEntry*> found;
  for (const ClusterEntry& entry : clusters) {
    if (entry.gpus_per_node <= 0 || entry.gpus_per_node < gpus_per_node) continue;
    for (const std::string& type : entry.device_types) {
      if (EqualsIgnoreCase(type, device_type)) {
        found.push_back(&entry);
        break;
      }
    }
  }
  return found;
}

std::string ClusterCatalog::Describe() const {
  std::vector<std::string> parts;
  for (const ClusterEntry& entry : clusters) {
    std::string types =
        entry.device_types.empty() ? "no device_types" : Join(entry.device_types, ",");
    std::string gpus = entry.gpus_per_node > 0 ? " x" + std::to_string(entry.gpus_per_node) : " x?";
    parts.push_back(entry.name + " (" + types + gpus + ")");
  }
  return parts.empty() ? "(none)" : Join(parts, ", ");
}

std::vector<std::string> ClusterCatalog::Names() const {
  std::vector<std::string> names;
  for (const ClusterEntry& entry : clusters) names.push_back(entry.name);
  return names;
}

Result<ClusterCatalog> ParseClusterCatalog(const std::string& text, const std::string& origin) {
  if (text.size() > kMaxRequestFileBytes) {
    return TooLarge("cluster catalog", origin, text.size(), kMaxRequestFileBytes);
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput(YamlWhere(origin, e.mark) + ": not valid YAML: " + e.msg);
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, origin));
  const std::string layout =
      "clusters.yaml is a mapping with 'clusters:' (a list of cluster mappings) and an "
      "optional 'defaults:' mapping; see " +
      ExampleCatalogPath();
  if (root.IsNull()) {
    return Status::InvalidInput(origin + ": the file is empty", layout);
  }
  if (!root.IsMap()) {
    return Status::InvalidInput(YamlWhere(origin, root.Mark()) +
                                    ": expected a mapping at the top, got " + YamlNodeKind(root),
                                layout);
  }
  ClusterCatalog catalog;
  catalog.path = origin;
  ClusterEntry defaults;
  YAML::Node defaults_node;
  YAML::Node clusters_node;
  for (const auto& item : root) {
    std::string key = item.first.IsScalar() ? item.first.Scalar() : "";
    std::string where = YamlWhere(origin, item.first.Mark());
    if (key == "version") {
      if (!item.second.IsScalar() || item.second.Scalar() != "1") {
        return Status::InvalidInput(where + ": 'version' must be 1");
      }
    } else if (key == "defaults") {
      defaults_node = item.second;
      TRTLLM_RUN_RETURN_IF_ERROR(
          ReadEntry(origin, defaults_node, "defaults", /*allow_name=*/false, &defaults));
    } else if (key == "clusters") {
      clusters_node = item.second;
    } else {
      return Status::InvalidInput(where + ": unknown top-level key '" + key + "'",
                                  "valid top-level keys: version, defaults, clusters");
    }
  }
  if (!clusters_node) {
    return Status::InvalidInput(origin + ": no 'clusters:' list", layout);
  }
  if (!clusters_node.IsSequence()) {
    return Status::InvalidInput(YamlWhere(origin, clusters_node.Mark()) +
                                    ": 'clusters' must be a list of cluster mappings, got " +
                                    YamlNodeKind(clusters_node),
                                layout);
  }
  std::map<std::string, int> names;
  for (size_t i = 0; i < clusters_node.size(); ++i) {
    const YAML::Node& node = clusters_node[i];
    std::string section = "clusters[" + std::to_string(i) + "]";
    ClusterEntry entry;
    TRTLLM_RUN_RETURN_IF_ERROR(ReadEntry(origin, node, section, /*allow_name=*/true, &entry));
    ApplyDefaults(defaults, node, &entry);
    if (entry.container_runtime.empty()) entry.container_runtime = "pyxis";
    std::string where = YamlWhere(origin, node.Mark());
    if (entry.name.empty()) {
      return Status::InvalidInput(where + ": " + section + " has no 'name'",
                                  "every cluster needs a name: the value of --slurm-cluster");
    }
    auto [it, inserted] = names.emplace(AsciiLower(entry.name), node.Mark().line + 1);
    if (!inserted) {
      return Status::InvalidInput(where + ": cluster name '" + entry.name +
                                  "' is used twice (first on line " + std::to_string(it->second) +
                                  "; names are compared case-insensitively)");
    }
    catalog.clusters.push_back(std::move(entry));
  }
  return catalog;
}

std::string ExampleCatalogPath() { return DataDirectory() + "/examples/clusters.yaml"; }

Result<ClusterCatalog> LoadClusterCatalog(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    return Status::NotFound("cluster catalog '" + path + "' does not exist",
                            "give an existing clusters.yaml (see " + ExampleCatalogPath() + ")");
  }
  Result<std::string> text = ReadFileLimited(path, kMaxRequestFileBytes, "cluster catalog");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput("cluster catalog: " + text.status().message(),
                                "give a readable clusters.yaml (see " + ExampleCatalogPath() + ")");
  }
  return ParseClusterCatalog(text.value(), path);
}

std::string ClusterCatalogPath(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  const char* env = std::getenv("TRTLLM_RUN_CLUSTERS");
  if (env != nullptr && *env != '\0') return env;
  std::string config_home;
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') {
    config_home = xdg;
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') return "";
    config_home = std::string(home) + "/.config";
  }
  std::string path = config_home + "/trtllm-run/clusters.yaml";
  std::error_code error;
  return fs::exists(path, error) ? path : "";
}

Result<std::optional<ClusterCatalog>> LoadDefaultClusterCatalog(const std::string& explicit_path) {
  std::string path = ClusterCatalogPath(explicit_path);
  if (path.empty()) return std::optional<ClusterCatalog>();
  Result<ClusterCatalog> catalog = LoadClusterCatalog(path);
  if (!catalog.ok()) {
    if (explicit_path.empty() && catalog.status().code() == StatusCode::kNotFound) {
      return catalog.status().WithContext("$TRTLLM_RUN_CLUSTERS");
    }
    return catalog.status();
  }
  return std::optional<ClusterCatalog>(std::move(catalog.value()));
}

std::string EffectiveUserName(const std::optional<std::string>& requested) {
  if (requested && !requested->empty()) return *requested;
  const char* user = std::getenv("USER");
  if (user != nullptr && *user != '\0') return user;
  struct passwd* pw = ::getpwuid(::geteuid());
  if (pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
  return std::to_string(::geteuid());
}

std::string SlurmUserFor(const ClusterEntry& cluster, const std::string& user_name,
                         const std::optional<std::string>& explicit_slurm_user) {
  if (explicit_slurm_user && !explicit_slurm_user->empty()) return *explicit_slurm_user;
  if (!cluster.slurm_user.empty()) return cluster.slurm_user;
  if (cluster.mfa_style.value_or(false)) return user_name + cluster.mfa_user_suffix;
  return user_name;
}

std::string ExpandClusterPlaceholders(const std::string& text, const ClusterEntry& cluster,
                                      const std::string& slurm_user, const std::string& user_name) {
  std::string out = Replace(text, "{slurm_user}", slurm_user);
  out = Replace(out, "{user}", user_name);
  return Replace(out, "{cluster}", cluster.name);
}

std::string SshHostFor(const ClusterEntry& cluster, const std::string& slurm_user,
                       const std::string& user_name) {
  if (!cluster.ssh_host.empty()) return cluster.ssh_host;
  if (cluster.ssh_host_pattern.empty()) return "";
  return ExpandClusterPlaceholders(cluster.ssh_host_pattern, cluster, slurm_user, user_name);
}

std::string UserRootDirFor(const ClusterEntry& cluster, const std::string& slurm_user,
                           const std::string& user_name) {
  if (cluster.user_root_dir.empty()) return "";
  return ExpandClusterPlaceholders(cluster.user_root_dir, cluster, slurm_user, user_name);
}

std::string ClusterArch(const ClusterEntry& cluster) {
  if (!cluster.arch.empty()) return cluster.arch;
  for (const std::string& type : cluster.device_types) {
    std::string upper = type;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (upper.rfind("GB", 0) == 0 || upper.rfind("GH", 0) == 0) return "aarch64";
  }
  return "x86_64";
}

void MergePolicyFields(const ClusterEntry* cluster, const CaseRequest& request, bool remote,
                       SlurmEnv* env) {
  env->policy_merged = true;
  std::string user_name = EffectiveUserName(request.user_name);
  std::string slurm_user = cluster ? SlurmUserFor(*cluster, user_name, request.slurm_user)
                                   : request.slurm_user.value_or(user_name);
  auto non_empty = [](const std::string& value) -> std::optional<std::string> {
    if (value.empty()) return std::nullopt;
    return value;
  };
  env->cluster_name.reset();
  if (cluster) {
    env->cluster_name = cluster->name;
  } else if (request.slurm_cluster) {
    env->cluster_name = *request.slurm_cluster;
  }
  env->mounts.reset();
  if (cluster && !cluster->mounts.empty()) {
    std::vector<std::string> mounts;
    for (const std::string& mount : cluster->mounts) {
      mounts.push_back(ExpandClusterPlaceholders(mount, *cluster, slurm_user, user_name));
    }
    env->mounts = mounts;
  }
  env->mfa_style = cluster ? cluster->mfa_style : std::nullopt;
  env->ssh_host.reset();
  env->slurm_user.reset();
  env->remote_cwd.reset();
  if (!remote) return;
  if (request.ssh_host && !request.ssh_host->empty()) {
    env->ssh_host = *request.ssh_host;
  } else if (cluster) {
    env->ssh_host = non_empty(SshHostFor(*cluster, slurm_user, user_name));
  }
  if (cluster || request.slurm_user) env->slurm_user = slurm_user;
  if (request.remote_cwd && !request.remote_cwd->empty()) {
    env->remote_cwd = *request.remote_cwd;
  } else if (cluster) {
    env->remote_cwd = non_empty(UserRootDirFor(*cluster, slurm_user, user_name));
  }
}

}  // namespace trtllm_run
