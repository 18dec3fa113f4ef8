// Which config file may set what, and when a config file is read at all (README,
// "Security model", "Who may set what").
//
// A repo's config comes with a clone and may set only the harmless defaults of
// RepoConfigKeys() (model/trust.h: partition, account, time limits, models paths,
// timeouts, sizes); any other key there is kInvalidInput naming it, its file:line and
// where to give it instead (a flag, a --request/--cases file, the user's config). The
// user's config may set every config key. Any config key that names a secret (any case)
// is refused. Either file is read only when it is a regular file (opened non-blocking:
// a FIFO never waits), owned by the caller (effective uid) or root, and writable by
// neither group nor others; the repo's is not followed through a symlink, the user's may
// be (its target is what is checked).
#ifndef TRTLLM_RUN_RUNTIME_CONFIG_TRUST_H_
#define TRTLLM_RUN_RUNTIME_CONFIG_TRUST_H_

#include <optional>
#include <string>

#include "trtllm_run/status.h"
#include "trtllm_run/user_config.h"

namespace trtllm_run {

// Who wrote a config file, as far as trtllm-run can tell: the user (their config dir) or
// a checkout (which may have come from anyone).
enum class ConfigSource { kUser, kRepo };

// nullopt when `path` does not exist; every problem of the file at once otherwise.
Result<std::optional<ConfigFile>> LoadConfigFile(const std::string& path, ConfigSource source);
Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& origin,
                                   ConfigSource source);
// The text of the config file at `path` when the rules above let it be read; nullopt when
// there is none; kInvalidInput with the reason otherwise.
Result<std::optional<std::string>> ReadOwnConfigFile(const std::string& path, ConfigSource source);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_CONFIG_TRUST_H_
