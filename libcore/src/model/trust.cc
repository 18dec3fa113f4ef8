#include "model/trust.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include "model/request_field_table.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// ssh_config(5) keywords that only tune how ssh connects to the host it was given and how
// it checks that host. Everything else is refused: keywords added to ssh later included.
const std::vector<std::string>& AllowedSshOptions() {
  static const std::vector<std::string> keys = {
      "AddressFamily",
      "BatchMode",
      "CheckHostIP",
      "Ciphers",
      "Compression",
      "ConnectionAttempts",
      "ConnectTimeout",
      "FingerprintHash",
      "GlobalKnownHostsFile",
      "GSSAPIAuthentication",
      "HashKnownHosts",
      "HostKeyAlgorithms",
      "HostKeyAlias",
      "IdentitiesOnly",
      "IdentityFile",
      "IPQoS",
      "KbdInteractiveAuthentication",
      "KexAlgorithms",
      "LogLevel",
      "MACs",
      "NumberOfPasswordPrompts",
      "PasswordAuthentication",
      "Port",
      "PreferredAuthentications",
      "PubkeyAcceptedAlgorithms",
      "PubkeyAuthentication",
      "RekeyLimit",
      "ServerAliveCountMax",
      "ServerAliveInterval",
      "StrictHostKeyChecking",
      "TCPKeepAlive",
      "UpdateHostKeys",
      "User",
      "UserKnownHostsFile",
      "VerifyHostKeyDNS",
      "VisualHostKey",
  };
  return keys;
}

// Request keys a checkout's config may set (see RepoConfigKeys).
const std::set<std::string>& RepoConfigKeySet() {
  static const std::set<std::string> keys = {
      "required_devices",
      "total_required_devices",
      "required_devices_per_node",
      "monitor_timeout",
      "max_pending",
      "silence_timeout",
      "node_count",
      "partition",
      "account",
      "time_limit",
      "alloc_time_limit",
      "models_path",
      "llm_models_root",
      "docker_pull",
      "docker_memory",
  };
  return keys;
}

}  // namespace

bool LooksLikeSecretName(std::string_view name) {
  std::string lower;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') continue;  // api-key, api_key, api.key: apikey
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  for (const char* word :
       {"password", "passwd", "passphrase", "secret", "token", "credential", "apikey"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

Status CheckUntrustedSshOption(const std::string& option, const std::string& what) {
  const std::size_t eq = option.find('=');
  const std::string key = option.substr(0, eq);
  const bool word = eq != std::string::npos && eq > 0 &&
                    std::all_of(key.begin(), key.end(),
                                [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  std::string allowed;
  for (const std::string& name : AllowedSshOptions()) {
    if (word && AsciiLower(name) == AsciiLower(key)) return Status::Ok();
    allowed += (allowed.empty() ? "" : ", ") + name;
  }
  return Status::InvalidInput(
      what + " '" + EscapeControl(option) + "' is not allowed",
      "give Key=Value with a key that runs, loads, forwards and sends nothing: " + allowed +
          " (a person can give any other with trtllm-run --ssh-option or in ~/.ssh/config)");
}

const std::vector<std::string>& RepoConfigKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const FieldDef& def : FieldTable()) {
      if (RepoConfigKeySet().count(def.name)) out.push_back(def.name);
    }
    return out;
  }();
  return keys;
}

bool RepoConfigMaySet(const std::string& field) { return RepoConfigKeySet().count(field) > 0; }

}  // namespace trtllm_run
