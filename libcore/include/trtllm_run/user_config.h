// Defaults set once: the user's config file ($XDG_CONFIG_HOME/trtllm-run/config.yaml,
// default ~/.config/trtllm-run/config.yaml) and a repo's (<repo_root>/.trtllm-run.yaml).
//
// A config file is a YAML mapping whose keys are request-file keys (request.h; the
// commands, model_name and repo_root excepted: they belong to one case), plus
// `clusters: {<cluster name>: {<request keys>}}` whose values override the top-level ones
// when routing chose that cluster, and (the user's only) `history: PATH|off`, where runs
// are recorded (docs/history.md) (its catalog entry, --slurm-cluster, or this host's
// Slurm cluster). At most kMaxRequestFileBytes, within the YAML budget (input_limits.h).
// Unknown keys, wrong values and a key that names a secret (slurm_password, any
// *password*/*token*/..., any case) are kInvalidInput naming file:line, with a
// did-you-mean.
//
// Trust (docs/security.md "Who may set what"; runtime/config_trust.h): a repo's config may set
// only harmless defaults (partition, account, time limits, models paths, timeouts,
// sizes), the user's any config key; either file is read only when it is a regular file
// owned by the caller or root and writable by neither group nor others. LoadConfigFile
// and ParseConfigText below hold a file to the repo's (stricter) rules.
//
// Precedence of a field: flags > request file > repo config (its cluster section, then
// its top level) > user config (likewise) > the cluster catalog. Each value taken from a
// config file is noted in the plan summary with its file and line.
#ifndef TRTLLM_RUN_USER_CONFIG_H_
#define TRTLLM_RUN_USER_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// One value of a config file: the field, its text (SetRequestField form) and "path:line".
struct ConfigValue {
  std::string field;
  std::string text;
  std::string origin;
};

struct ConfigFile {
  std::string path;
  std::vector<ConfigValue> values;                           // the top level
  std::map<std::string, std::vector<ConfigValue>> clusters;  // by cluster name
  // `history: PATH` or `history: off` (the user's config only): where runs are recorded.
  std::optional<ConfigValue> history;
};

// "$XDG_CONFIG_HOME/trtllm-run/config.yaml", else "$HOME/.config/trtllm-run/config.yaml";
// "" when neither variable is set.
TRTLLM_RUN_API std::string UserConfigPath();
// "<repo_root>/.trtllm-run.yaml".
TRTLLM_RUN_API std::string RepoConfigPath(const std::string& repo_root);

// nullopt when `path` does not exist; every problem of the file at once otherwise.
TRTLLM_RUN_API Result<std::optional<ConfigFile>> LoadConfigFile(const std::string& path);
TRTLLM_RUN_API Result<ConfigFile> ParseConfigText(const std::string& text,
                                                  const std::string& origin);

// The config files of one case, highest precedence first (the repo's, then the user's).
struct ConfigLayers {
  std::vector<ConfigFile> files;
  bool HasCluster(const std::string& cluster) const;
  bool HasAnyCluster() const;
};

// `given` (flags and request file) with every field it does not give taken from the
// layers (for `cluster`: its sections first in each file; "" for none). One note per
// value taken: "config: partition=batch (from /path/config.yaml:3)".
TRTLLM_RUN_API Result<CaseRequest> ApplyConfigLayers(const ConfigLayers& layers,
                                                     const std::string& cluster,
                                                     const CaseRequest& given,
                                                     std::vector<std::string>* notes);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_USER_CONFIG_H_
