// model/trust.h: the secret-name test, the one ssh option filter for untrusted callers,
// and the keys a checkout's config may set.
#include "model/trust.h"

#include <catch2/catch.hpp>

using namespace trtllm_run;

TEST_CASE("trust: secret names are found in any case and spelling", "[trust]") {
  for (const char* name :
       {"password", "Password", "PASSWORD", "slurm_password", "Slurm-Password", "db_Passwd",
        "ssh_passphrase", "client_secret", "API_TOKEN", "api-key", "ApiKey", "aws.credentials"}) {
    INFO(name);
    CHECK(LooksLikeSecretName(name));
  }
  for (const char* name :
       {"partition", "ssh_option", "queue", "session", "custom_env", "model_name", "pass", "key"}) {
    INFO(name);
    CHECK_FALSE(LooksLikeSecretName(name));
  }
}

TEST_CASE("trust: untrusted ssh options come only from the allow-list", "[trust]") {
  for (const char* option :
       {"UserKnownHostsFile=/tmp/k", "stricthostkeychecking=yes", "ConnectTimeout=5",
        "ServerAliveInterval=15", "IdentitiesOnly=yes", "Port=2222", "BatchMode=yes"}) {
    INFO(option);
    CHECK(CheckUntrustedSshOption(option, "ssh_option").ok());
  }
  for (const char* option : {"ProxyCommand=x",
                             "PROXYCOMMAND=x",
                             "LocalCommand=x",
                             "PermitLocalCommand=yes",
                             "KnownHostsCommand=x",
                             "RemoteCommand=x",
                             "Match=exec x",
                             "PKCS11Provider=/x.so",
                             "SecurityKeyProvider=/x.so",
                             "XAuthLocation=/x",
                             "Include=/x",
                             "ProxyJump=h",
                             "Hostname=h",
                             "SendEnv=*",
                             "SetEnv=A=b",
                             "ForwardAgent=yes",
                             "IdentityAgent=/s",
                             "ControlPath=/s",
                             "ControlMaster=yes",
                             "LocalForward=1 h:2",
                             "RemoteForward=1 h:2",
                             "DynamicForward=1",
                             "Tunnel=yes",
                             "ProxyCommand x",
                             "Proxy Command=x",
                             "=x",
                             "",
                             "UserKnownHostsFile"}) {
    INFO(option);
    Status refused = CheckUntrustedSshOption(option, "ssh_option");
    CHECK(refused.code() == StatusCode::kInvalidInput);
    CHECK_THAT(refused.message(), Catch::Contains("is not allowed"));
  }
}

TEST_CASE("trust: a checkout's config sets only harmless defaults", "[trust]") {
  // Exactly these: a key added here must be one that chooses no host, login, file to read
  // or upload, image, scenario, env file, install/build step or command.
  CHECK(RepoConfigKeys() ==
        std::vector<std::string>{"required_devices", "total_required_devices",
                                 "required_devices_per_node", "monitor_timeout", "max_pending",
                                 "silence_timeout", "node_count", "partition", "account",
                                 "time_limit", "models_path", "llm_models_root", "docker_pull",
                                 "docker_memory", "alloc_time_limit"});
  for (const char* refused :
       {"ssh_host",       "ssh_option",        "ssh_config_file", "ssh_port",
        "identity",       "extra_files",       "scenario",        "container_image",
        "slurm_env_file", "slurm_cluster",     "user_name",       "slurm_user",
        "skip_install",   "build_project",     "repo_url",        "remote_repo_path",
        "device_type",    "container_runtime", "checkpoint_path", "eval_perf_fallback"}) {
    INFO(refused);
    CHECK_FALSE(RepoConfigMaySet(refused));
  }
}
