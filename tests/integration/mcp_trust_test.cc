// What an agent may not make the MCP server do (model/trust.h): ssh options outside the
// one allow-list, on every tool that takes them; arguments that name a secret, in any
// case. And the CLI never repeats a secret-named executor option's value.
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_harness.h"
#include "mcp_test_client.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

// Options that run or load code, read another config, pick another host, or send and
// forward what the login node should not get.
const std::vector<std::string> kRefusedSshOptions = {
    "ProxyCommand=touch MARKER",
    "proxycommand=touch MARKER",
    "LocalCommand=touch MARKER",
    "PermitLocalCommand=yes",
    "KnownHostsCommand=/bin/sh -c 'touch MARKER'",
    "RemoteCommand=touch MARKER",
    "Match=exec \"touch MARKER\"",
    "PKCS11Provider=/tmp/MARKER.so",
    "SecurityKeyProvider=/tmp/MARKER.so",
    "XAuthLocation=/tmp/MARKER",
    "Include=/tmp/MARKER",
    "ProxyJump=MARKER",
    "Hostname=MARKER",
    "SendEnv=TRTLLM_RUN_*",
    "SetEnv=X=MARKER",
    "ForwardAgent=yes",
    "IdentityAgent=/tmp/MARKER",
    "ControlPath=/tmp/MARKER",
    "LocalForward=9999 MARKER:22",
    "ProxyCommand touch MARKER",  // ssh also takes "Key Value"
};

std::string WithMarker(std::string option, const std::string& marker) {
  std::size_t at = option.find("MARKER");
  while (at != std::string::npos) {
    option.replace(at, 6, marker);
    at = option.find("MARKER", at + marker.size());
  }
  return option;
}

}  // namespace

TEST_CASE("mcp trust: ssh options outside the allow-list are refused by every tool", "[mcp]") {
  TempDir repo("trtllm_mcp_trust");
  const std::string marker = repo.path() + "/ran";
  McpProcess server(repo.path());
  server.Initialize();
  int id = 1;
  for (const std::string& pattern : kRefusedSshOptions) {
    const std::string option = WithMarker(pattern, marker);
    INFO(option);
    const std::string run_args =
        "{\"custom_cmd\":\"echo hi\",\"scenario\":\"remote_slurm\",\"ssh_host\":\"127.0.0.1\","
        "\"partition\":\"batch\",\"repo_root\":" +
        Quoted(repo.path()) + ",\"ssh_option\":[" + Quoted(option) + "]}";
    for (const char* tool : {"plan_case", "run_case"}) {
      INFO(tool);
      CHECK_THAT(ToolErrorText(server.Call(id++, tool, run_args)),
                 Catch::Contains("is not allowed") && Catch::Contains("UserKnownHostsFile"));
    }
    CHECK_THAT(ToolErrorText(server.Call(
                   id++, "probe_slurm",
                   "{\"ssh_host\":\"127.0.0.1\",\"ssh_options\":[" + Quoted(option) + "]}")),
               Catch::Contains("is not allowed"));
  }
  // run_cases: the shared fields and each case of the file the agent names.
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases,
                "- custom_cmd: echo hi\n  scenario: remote_slurm\n  ssh_host: 127.0.0.1\n"
                "  partition: batch\n  ssh_option: [\"ProxyCommand=touch " +
                    marker + "\"]\n");
  CHECK_THAT(ToolErrorText(server.Call(id++, "run_cases",
                                       "{\"cases_file\":" + Quoted(cases) +
                                           ",\"repo_root\":" + Quoted(repo.path()) + "}")),
             Catch::Contains("cases.yaml:1") && Catch::Contains("is not allowed"));
  CHECK_FALSE(fs::exists(marker));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  // An allowed option still plans (any case of the key).
  rapidjson::Document planned =
      server.Call(id++, "plan_case",
                  "{\"custom_cmd\":\"echo hi\",\"scenario\":\"local_direct\",\"repo_root\":" +
                      Quoted(repo.path()) + ",\"ssh_option\":[\"serveraliveinterval=15\"]}");
  INFO(JsonText(planned));
  REQUIRE(planned.HasMember("result"));
  CHECK_FALSE(planned["result"].HasMember("isError"));
  CheckOnlyMessages(server);
}

TEST_CASE("mcp trust: an argument that names a secret is refused in any case, never echoed",
          "[mcp]") {
  TempDir repo("trtllm_mcp_trust");
  McpProcess server(repo.path());
  server.Initialize();
  int id = 1;
  for (const char* name : {"Password", "PASSWORD", "db_Passwd", "Slurm_Password", "api-Token",
                           "ssh_passphrase", "Client_Secret"}) {
    INFO(name);
    const std::string args = "{\"custom_cmd\":\"echo hi\",\"scenario\":\"local_direct\",\"" +
                             std::string(name) +
                             "\":\"s3cret-value\",\"repo_root\":" + Quoted(repo.path()) + "}";
    CHECK_THAT(ToolErrorText(server.Call(id++, "run_case", args)),
               Catch::Contains("never tool arguments"));
  }
  // As an executor option too: refused before anything is stored.
  CHECK_THAT(ToolErrorText(
                 server.Call(id++, "plan_case",
                             "{\"custom_cmd\":\"echo hi\",\"scenario\":\"local_direct\","
                             "\"executor_option\":[\"DB_PASSWORD=s3cret-value\"],\"repo_root\":" +
                                 Quoted(repo.path()) + "}")),
             Catch::Contains("names a secret"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  for (const std::string& line : server.lines()) CHECK(line.find("s3cret") == std::string::npos);
  CheckOnlyMessages(server);
}

TEST_CASE("cli: an executor option's value is never repeated in an error", "[cli]") {
  TempDir repo("trtllm_exec_option");
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--executor-option", "password=hunter2"}, "executor option 'password' names a secret"},
      {{"--executor-option", "DB_Passwd=hunter2"}, "executor option 'DB_Passwd' names a secret"},
      {{"--executor-option", "queue=hunter2"},
       "executor option 'queue' (executor_options): the local_direct executor takes no"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"plan",         "--repo-root",  repo.path(), "--scenario",
                                     "local_direct", "--custom-cmd", "echo hi"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CliRun run = RunCli(args);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(c.expected));
    CHECK(run.stderr_text.find("hunter2") == std::string::npos);
    CHECK(run.stdout_text.find("hunter2") == std::string::npos);
  }
  // A request file's executor_options and a secret-named key, in any case.
  const std::string request = repo.path() + "/request.yaml";
  WriteTextFile(request,
                "custom_cmd: echo hi\nscenario: local_direct\nexecutor_options:\n"
                "  Api_Token: hunter2\n");
  CliRun from_file = RunCli({"plan", "--repo-root", repo.path(), "--request", request});
  INFO(from_file.Describe());
  CHECK(from_file.exit_code == 2);
  CHECK_THAT(from_file.stderr_text, Catch::Contains("request.yaml:4"));
  CHECK(from_file.stderr_text.find("hunter2") == std::string::npos);
  WriteTextFile(request, "custom_cmd: echo hi\nSlurm_Password: hunter2\n");
  CliRun key = RunCli({"plan", "--repo-root", repo.path(), "--request", request});
  INFO(key.Describe());
  CHECK(key.exit_code == 2);
  CHECK_THAT(key.stderr_text, Catch::Contains("Slurm_Password") && Catch::Contains("not allowed"));
  CHECK(key.stderr_text.find("hunter2") == std::string::npos);
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}
