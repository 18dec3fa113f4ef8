// The cluster catalog, clusters.yaml: what the site knows about its Slurm clusters
// (replaces the internal-env-info skill). examples/clusters.yaml documents the format.
//
// Location, first match wins: an explicit path (--clusters FILE), $TRTLLM_RUN_CLUSTERS,
// $XDG_CONFIG_HOME/trtllm-run/clusters.yaml ($XDG_CONFIG_HOME defaults to ~/.config).
// An explicit or $TRTLLM_RUN_CLUSTERS path must exist; the XDG file is optional.
#ifndef TRTLLM_RUN_CATALOG_H_
#define TRTLLM_RUN_CATALOG_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/environment.h"
#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct ClusterCatalog {
  std::string path;                    // the file it was read from ("" when built in code)
  std::vector<ClusterEntry> clusters;  // file order

  // Case-insensitive lookup by name; null when absent.
  TRTLLM_RUN_API const ClusterEntry* FindByName(std::string_view name) const;

  // Catalog mode: clusters whose device_types contain `device_type` (case-insensitive)
  // and whose gpus_per_node is at least `gpus_per_node`, in file order. Clusters that
  // do not declare gpus_per_node never match.
  TRTLLM_RUN_API std::vector<const ClusterEntry*> FindByDevice(std::string_view device_type,
                                                               int gpus_per_node) const;

  // "eos (H100 x8), oberon (GB200 x4)" for error messages; "(none)" when empty.
  TRTLLM_RUN_API std::string Describe() const;
  TRTLLM_RUN_API std::vector<std::string> Names() const;
};

// Every key a cluster entry (and the `defaults` section) accepts, in documented order.
TRTLLM_RUN_API const std::vector<std::string>& ClusterEntryKeys();

// Parses clusters.yaml text. `origin` names the file in errors. Syntax errors, unknown
// keys, wrong types, duplicate names and bad ssh_host_pattern placeholders are
// kInvalidInput naming "origin:line", the key and the valid keys or values.
TRTLLM_RUN_API Result<ClusterCatalog> ParseClusterCatalog(const std::string& text,
                                                          const std::string& origin);

// The documented sample catalog as installed (share/trtllm-run/examples/clusters.yaml;
// the build tree mirrors it), named by hints about the catalog.
TRTLLM_RUN_API std::string ExampleCatalogPath();

// Reads and parses one file (kNotFound when it does not exist).
TRTLLM_RUN_API Result<ClusterCatalog> LoadClusterCatalog(const std::string& path);

// The catalog path per the location rule above, or "" when no catalog applies.
// `explicit_path` empty: not given.
TRTLLM_RUN_API std::string ClusterCatalogPath(const std::string& explicit_path);

// Finds (ClusterCatalogPath) and loads the catalog. nullopt when there is none; an
// explicit or $TRTLLM_RUN_CLUSTERS path that does not exist is kNotFound.
TRTLLM_RUN_API Result<std::optional<ClusterCatalog>> LoadDefaultClusterCatalog(
    const std::string& explicit_path);

// The user name trtllm-run acts for: `requested` when not empty, else $USER, else the
// login name of this process.
TRTLLM_RUN_API std::string EffectiveUserName(const std::optional<std::string>& requested);

// The Slurm/SSH login name on `cluster`: `explicit_slurm_user` when given, else the
// entry's slurm_user, else `user_name` plus mfa_user_suffix when mfa_style is true,
// else `user_name`.
TRTLLM_RUN_API std::string SlurmUserFor(const ClusterEntry& cluster, const std::string& user_name,
                                        const std::optional<std::string>& explicit_slurm_user);

// Placeholders in ssh_host_pattern, user_root_dir and mounts: {user} (the user name,
// request user_name or $USER), {slurm_user} (SlurmUserFor) and {cluster} (the name).
TRTLLM_RUN_API std::string ExpandClusterPlaceholders(const std::string& text,
                                                     const ClusterEntry& cluster,
                                                     const std::string& slurm_user,
                                                     const std::string& user_name);

// The SSH destination: the entry's ssh_host, else its ssh_host_pattern expanded; ""
// when the entry has neither.
TRTLLM_RUN_API std::string SshHostFor(const ClusterEntry& cluster, const std::string& slurm_user,
                                      const std::string& user_name);

// user_root_dir expanded; "" when unset.
TRTLLM_RUN_API std::string UserRootDirFor(const ClusterEntry& cluster,
                                          const std::string& slurm_user,
                                          const std::string& user_name);

// The entry's arch, else aarch64 when a device type starts with GB/GH, else x86_64.
TRTLLM_RUN_API std::string ClusterArch(const ClusterEntry& cluster);

// Spec 000 Step 2.5 "Merge cluster YAML policy fields": sets cluster_name, mounts,
// ssh_host, slurm_user, remote_cwd, mfa_style on `env` and marks it merged. Request
// fields (slurm_user, ssh_host, remote_cwd) win over the entry; with no entry, only
// request fields are set and the rest stay null. `remote` false leaves ssh_host,
// slurm_user and remote_cwd null (they are remote_slurm only).
TRTLLM_RUN_API void MergePolicyFields(const ClusterEntry* cluster, const CaseRequest& request,
                                      bool remote, SlurmEnv* env);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_CATALOG_H_
