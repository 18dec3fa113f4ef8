// What input that someone else may have written can make trtllm-run do (README,
// "Security model"): the argument names that hold secrets, the ssh options an agent may
// pass, and the request keys a checkout's .trtllm-run.yaml may set.
#ifndef TRTLLM_RUN_MODEL_TRUST_H_
#define TRTLLM_RUN_MODEL_TRUST_H_

#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

// True when `name`, in any case and with '-' or '_', names a secret: it contains
// password, passwd, passphrase, secret, token, credential or apikey/api_key. Such a name
// is refused as an argument, a config key or an executor option, and its value is never
// repeated in a message.
bool LooksLikeSecretName(std::string_view name);

// The one filter for `ssh -o` options that did not come from the person at the
// keyboard (MCP tools: plan_case, run_case, run_cases, probe_slurm): OK only for a
// Key=Value whose key (any case) is on an allow-list of options that neither run nor load
// code (ProxyCommand, LocalCommand, KnownHostsCommand, Match exec, PKCS11Provider,
// SecurityKeyProvider, XAuthLocation), nor read another config (Include), nor pick
// another host or a jump (Hostname, ProxyJump), nor send or forward what the login node
// should not get (SendEnv, SetEnv, ForwardAgent, IdentityAgent, *Forward, ControlPath).
// kInvalidInput "<what> '<option>' is not allowed" with the allowed keys otherwise.
// Flags and files the user names are not filtered: the person chose them.
Status CheckUntrustedSshOption(const std::string& option, const std::string& what);

// The request keys a checkout's .trtllm-run.yaml may set: defaults that choose no host,
// login, file, image, scenario, env file or command (partition, account, time limits,
// models paths, timeouts, sizes, docker_pull/docker_memory), in table order.
const std::vector<std::string>& RepoConfigKeys();
bool RepoConfigMaySet(const std::string& field);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_TRUST_H_
