// The MCP server's tools through the real binary (mcp_test_client.h): progress while
// waiting, notifications/cancelled, cases that outlive the server, exit-2 texts naming
// arguments as tool errors, bounds, run_cases, and SSH through a ControlMaster a person opened.
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "mcp_test_client.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/workdir.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::string RunArgs(const std::string& repo, const std::string& command, const std::string& model) {
  return "{\"custom_cmd\":" + Quoted(command) +
         ",\"scenario\":\"local_direct\",\"model_name\":" + Quoted(model) +
         ",\"repo_root\":" + Quoted(repo) + "}";
}

std::string HandleArg(const std::string& handle, const std::string& extra = "") {
  return "{\"handle\":" + Quoted(handle) + (extra.empty() ? "" : "," + extra) + "}";
}

// Kills what a test left running if an assertion stopped it early.
struct MarkerCleanup {
  std::string marker;
  ~MarkerCleanup() { KillProcessesWithMarker(marker); }
};

}  // namespace

TEST_CASE("mcp: wait_case sends monotonic progress notifications only when given a token",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_progress")};
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document run = server.Call(
      1, "run_case", RunArgs(repo.path(), "echo " + cleanup.marker + "; sleep 8", "progress"));
  std::string handle = Str(Structured(run), "handle");
  std::vector<rapidjson::Document> seen;
  rapidjson::Document wait = server.Call(2, "wait_case", HandleArg(handle, "\"timeout_s\":4.5"),
                                         "{\"progressToken\":\"tok-1\"}", 30, &seen);
  CHECK(Str(Structured(wait), "status") == "running");
  CHECK(Structured(wait)["waited_s"].GetDouble() >= 4.4);
  REQUIRE(seen.size() >= 2);
  double last = -1;
  for (const rapidjson::Document& note : seen) {
    INFO(JsonText(note));
    REQUIRE(Str(note, "method") == "notifications/progress");
    CHECK(Str(note["params"], "progressToken") == "tok-1");
    CHECK(note["params"]["progress"].GetDouble() > last);
    last = note["params"]["progress"].GetDouble();
    CHECK(note["params"]["total"].GetDouble() == 4.5);
    CHECK_THAT(Str(note["params"], "message"), Catch::Contains("running"));
  }
  // An integer token is echoed as it is; no token, no notifications.
  seen.clear();
  server.Call(3, "wait_case", HandleArg(handle, "\"timeout_s\":1"), "{\"progressToken\":7}", 30,
              &seen);
  REQUIRE_FALSE(seen.empty());
  CHECK(seen[0]["params"]["progressToken"].GetInt() == 7);
  seen.clear();
  rapidjson::Document quiet =
      server.Call(4, "wait_case", HandleArg(handle, "\"timeout_s\":2.5"), "", 30, &seen);
  CHECK(seen.empty());
  // The case still runs to its verdict.
  rapidjson::Document done = server.Call(5, "wait_case", HandleArg(handle, "\"timeout_s\":30"));
  CHECK(Str(Structured(done), "status") == "PASSED");
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: notifications/cancelled ends a wait without an answer, other requests go on",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_cancelled")};
  McpProcess server(repo.path());
  rapidjson::Document run = server.Call(
      1, "run_case", RunArgs(repo.path(), "echo " + cleanup.marker + "; sleep 6", "cancelled"),
      Meta());
  std::string handle = Str(Structured(run), "handle");
  std::string wait =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"wait_case\","
      "\"arguments\":" +
      HandleArg(handle, "\"timeout_s\":60") +
      ",\"_meta\":" + Meta(kModern, "\"progressToken\":\"p\"") + "}}";
  REQUIRE(server.SendLine(wait));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  // While it waits, other requests are answered.
  rapidjson::Document status = server.Call(3, "case_status", HandleArg(handle), Meta(), 10);
  CHECK(Str(Structured(status), "status") == "running");
  server.SendLine(
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
      "cancelled\",\"params\":{\"requestId\":2,\"reason\":\"moved on\"}}");
  auto cancelled_at = std::chrono::steady_clock::now();
  // Nothing more for request 2: no response, no progress.
  rapidjson::Document ping = server.Request(4, "ping", "", 10);
  CHECK(ping["result"].IsObject());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::vector<rapidjson::Document> seen;
  server.Request(5, "ping", "", 10, &seen);
  for (const rapidjson::Document& message : seen) {
    INFO(JsonText(message));
    CHECK_FALSE(message.HasMember("id"));
    CHECK(std::chrono::steady_clock::now() - cancelled_at <
          std::chrono::seconds(1) + std::chrono::milliseconds(1600));
  }
  for (const std::string& line : server.lines()) CHECK(line.find("\"id\":2,") == std::string::npos);
  // The case was not touched: it still ends PASSED.
  rapidjson::Document done =
      server.Call(6, "wait_case", HandleArg(handle, "\"timeout_s\":30"), Meta());
  CHECK(Str(Structured(done), "status") == "PASSED");
  CheckOnlyMessages(server);
}

TEST_CASE(
    "mcp: the server survives its client vanishing mid-wait, the case goes on, a new "
    "server's wait_case gets the verdict",
    "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_orphan")};
  std::string handle;
  {
    McpProcess first(repo.path());
    first.Initialize();
    rapidjson::Document run = first.Call(
        1, "run_case",
        RunArgs(repo.path(), "echo " + cleanup.marker + "; sleep 8; echo survived", "orphan"));
    handle = Str(Structured(run), "handle");
    first.SendLine(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
        "call\",\"params\":{\"name\":\"wait_case\",\"arguments\":" +
        HandleArg(handle, "\"timeout_s\":60") + "}}");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // The client disappears: both pipes close under the waiting call.
    first.CloseStdout();
    first.CloseStdin();
    REQUIRE(first.Wait(15));
    INFO(first.Stderr());
    CHECK(WIFEXITED(first.status()));
    CHECK(WEXITSTATUS(first.status()) == 0);
  }
  CHECK(ProcessWithMarkerAlive(cleanup.marker));
  // A server killed outright (as a host may) leaves the case alone too.
  {
    McpProcess second(repo.path());
    second.Initialize();
    CHECK(Str(Structured(second.Call(1, "case_status", HandleArg(handle))), "status") == "running");
    ::kill(second.pid(), SIGKILL);
    REQUIRE(second.Wait(5));
  }
  CHECK(ProcessWithMarkerAlive(cleanup.marker));
  McpProcess third(repo.path());
  third.Initialize();
  rapidjson::Document done = third.Call(1, "wait_case", HandleArg(handle, "\"timeout_s\":30"));
  const rapidjson::Value& state = Structured(done);
  CHECK(Str(state, "status") == "PASSED");
  CHECK(state["exit_code"].GetInt() == 0);
  CHECK(state["result"]["status"] == "PASSED");
  CHECK(ReadTextFile(Str(state, "log_file")).find("survived") != std::string::npos);
}

TEST_CASE(
    "mcp: bad input is a tool error naming the argument as the agent gave it, nothing is "
    "planned",
    "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  McpProcess server(repo.path());
  server.Initialize();
  // Each bad request as tool arguments and as the CLI's flags: the tool's text names
  // arguments (an agent has no flags), the CLI keeps its own wording with the flag.
  struct Case {
    std::string arguments;
    std::vector<std::string> flags;
    std::string tool_text;  // the whole tool error, exactly
    std::string cli_has;    // what the CLI's exit-2 text still says
  };
  const std::string executors =
      "  hint: loaded executors: local_direct, local_docker, "
      "local_slurm, remote_slurm";
  const std::vector<Case> cases = {
      {"{\"custom_cmd\":\"echo x\",\"test_cmd\":\"pytest a.py\"}",
       {"--custom-cmd", "echo x", "--test-cmd", "pytest a.py"},
       "trtllm-run plan: error: conflicting commands: custom_cmd and test_cmd given; give exactly "
       "one of test_cmd, bench_cmd, eval_cmd, custom_cmd/custom_script",
       "conflicting commands"},
      {"{\"custom_cmd\":\"echo x\",\"scenario\":\"moon\"}",
       {"--custom-cmd", "echo x", "--scenario", "moon"},
       "trtllm-run plan: error: unknown scenario 'moon' (argument 'scenario')\n" + executors,
       "unknown scenario 'moon' (--scenario)"},
      {"{\"custom_cmd\":\"echo x\",\"monitor_timeout\":\"soon\"}",
       {"--custom-cmd", "echo x", "--monitor-timeout", "soon"},
       "trtllm-run plan: error: invalid monitor_timeout 'soon': expected a duration like 1h, 30m, "
       "3600s, 01:00:00 or a number of seconds\n  hint: use whole numbers each followed by its "
       "unit, h, m or s in that order (2h, 90s, 1h30m); a bare number is seconds",
       "invalid monitor_timeout 'soon'"},
      {"{\"custom_cmd\":\"echo x\",\"skip_install\":\"maybe\"}",
       {"--custom-cmd", "echo x", "--skip-install", "maybe"},
       "trtllm-run plan: error: skip_install must be true or false, got 'maybe'\n  hint: "
       "accepted: true/false, yes/no, 1/0, on/off",
       "got 'maybe' (from --skip-install)"},
      {"{\"custom_cmd\":\"echo x\",\"model_name\":\"" + std::string(101, 'm') + "\"}",
       {"--custom-cmd", "echo x", "--model-name", std::string(101, 'm')},
       "trtllm-run plan: error: model_name is 101 characters; the limit is 100\n  hint: it names "
       "the work dir, the job and the container: give a shorter argument 'model_name'",
       "give a shorter --model-name"},
      {"{\"custom_cmd\":\"echo x\",\"partition\":\"a\\nb\",\"scenario\":\"local_slurm\"}",
       {"--custom-cmd", "echo x", "--partition", "a\nb", "--scenario", "local_slurm"},
       "trtllm-run plan: error: partition 'a\\nb' holds a control character\n  hint: values are "
       "rendered into job scripts (#SBATCH lines, exports, docker arguments) and cannot carry "
       "newlines or other control characters; fix argument 'partition'",
       "fix --partition"},
      {"{\"custom_cmd\":\"echo x\",\"total_required_devices\":0}",
       {"--custom-cmd", "echo x", "--total-required-devices", "0"},
       "trtllm-run plan: error: total_required_devices must be a positive integer, got '0'",
       "got '0' (from --total-required-devices)"},
      {"{\"custom_cmd\":\"echo x\",\"scenario\":\"local_direct\",\"partition\":\"batch\","
       "\"max_pending\":\"1h\"}",
       {"--custom-cmd", "echo x", "--scenario", "local_direct", "-p", "batch", "--max-pending",
        "1h"},
       "trtllm-run plan: error: argument 'max_pending', argument 'partition' are not used by "
       "scenario local_direct (used by local_slurm, remote_slurm)\n  route: routing chose "
       "local_direct: requested (argument 'scenario', or scenario: in the request file)\n  hint: "
       "leave them out to run on local_direct, or run where they apply: argument 'scenario' "
       "local_slurm, argument 'scenario' remote_slurm",
       "--max-pending, -p/--partition are not used by scenario local_direct"},
      {"{\"custom_cmd\":\"echo x\",\"executor_option\":[\"novalue\"]}",
       {"--custom-cmd", "echo x", "--executor-option", "novalue"},
       "trtllm-run plan: error: argument 'executor_option': 'novalue' is not KEY=VALUE\n  hint: "
       "give argument 'executor_option' KEY=VALUE, e.g. argument 'executor_option' queue=fast",
       "give --executor-option KEY=VALUE"},
  };
  int id = 1;
  for (const Case& c : cases) {
    std::string arguments = c.arguments.substr(0, c.arguments.size() - 1) +
                            ",\"repo_root\":" + Quoted(repo.path()) + "}";
    std::string text = ToolErrorText(server.Call(id++, "plan_case", arguments));
    CHECK(text == c.tool_text);
    std::vector<std::string> args = {"plan", "--repo-root", repo.path()};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CliRun cli = RunCli(args);
    INFO(cli.Describe());
    CHECK(cli.exit_code == 2);
    CHECK_THAT(cli.stderr_text, Catch::Contains(c.cli_has));
  }
  // An unknown name: named as given, the nearest of the tool's own argument names (a
  // request field, a tool option or, for tools without request fields, its few names),
  // never every request field (before: "(from --scenaro)" and all 48 keys).
  CHECK(ToolErrorText(server.Call(id++, "plan_case", "{\"custom_cmd\":\"x\",\"scenaro\":\"a\"}")) ==
        "trtllm-run plan: error: unknown argument 'scenaro' of tool plan_case\n  hint: did you "
        "mean 'scenario'? the tool's inputSchema lists its arguments");
  CHECK(ToolErrorText(server.Call(id++, "run_case", "{\"custom_cmd\":\"x\",\"kill_grac\":3}")) ==
        "trtllm-run run: error: unknown argument 'kill_grac' of tool run_case\n  hint: did you "
        "mean 'kill_grace'? the tool's inputSchema lists its arguments");
  CHECK(ToolErrorText(server.Call(id++, "wait_case", "{\"handel\":\"/x\"}")) ==
        "trtllm-run attach: error: unknown argument 'handel' of wait_case\n  hint: did you mean "
        "'handle'? its arguments are: handle, log_lines, timeout_s");
  // Passwords are never arguments; wrong JSON types and unknown names are named.
  CHECK_THAT(ToolErrorText(server.Call(id++, "run_case",
                                       "{\"custom_cmd\":\"x\",\"slurm_password\":\"s3cret\"}")),
             Catch::Contains("never tool arguments"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "probe_slurm", "{\"password\":\"s3cret\"}")),
             Catch::Contains("unknown argument 'password'"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "wait_case", "{\"handle\":3}")),
             Catch::Contains("'handle' must be a string"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "wait_case", "{}")),
             Catch::Contains("needs the argument 'handle'"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "wait_case", "{\"handle\":\"/x\",\"timeout_s\":101}")),
             Catch::Contains("between 0 and 100"));
  CHECK_THAT(
      ToolErrorText(server.Call(id++, "case_log", "{\"handle\":\"/x\",\"max_bytes\":300000}")),
      Catch::Contains("between 1 and 262144"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "case_status", "{\"handle\":\"/no/such/dir\"}")),
             Catch::Contains("'/no/such/dir' does not exist"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "case_status", HandleArg(repo.path()))),
             Catch::Contains("is not a trtllm-run work dir"));
  CHECK_THAT(ToolErrorText(server.Call(id++, "probe_slurm", "{\"ssh_host\":\"-oProxyCommand=x\"}")),
             Catch::Contains("starts with '-'"));
  CHECK_THAT(
      ToolErrorText(server.Call(id++, "probe_slurm",
                                "{\"ssh_host\":\"h\",\"ssh_options\":[\"ProxyCommand=sh -c x\"]}")),
      Catch::Contains("is not allowed"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
  for (const std::string& line : server.lines()) CHECK(line.find("s3cret") == std::string::npos);
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: what run_case starts never inherits trtllm-run's secrets from the server",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_secret")};
  const std::string secret = "TRTLLM_RUN_SLURM_PASSWORD=mcp-test-secret";
  McpProcess server(repo.path(), {}, {{"TRTLLM_RUN_SLURM_PASSWORD", "mcp-test-secret"}});
  server.Initialize();
  rapidjson::Document run = server.Call(
      1, "run_case",
      RunArgs(repo.path(),
              "echo " + cleanup.marker + "; env | grep -c TRTLLM_RUN_SLURM || true; sleep 2",
              "secret"));
  const rapidjson::Value& started = Structured(run);
  REQUIRE(started["supervisor_pid"].IsInt());
  CHECK(trtllm_run::ProcessEnvironmentHas(server.pid(), secret));  // the server has it ...
  CHECK_FALSE(trtllm_run::ProcessEnvironmentHas(started["supervisor_pid"].GetInt(),
                                                secret));  // ... not these
  CHECK(trtllm_run::ProcessesWithEnvironment(secret) == std::vector<int>{server.pid()});
  rapidjson::Document done =
      server.Call(2, "wait_case", HandleArg(Str(started, "handle"), "\"timeout_s\":30"));
  const rapidjson::Value& state = Structured(done);
  CHECK(Str(state, "status") == "PASSED");
  CHECK_THAT(ReadTextFile(Str(state, "log_file")), Catch::Contains("\n0\n"));  // grep -c: none
}

TEST_CASE("mcp: custom_env values reach the job literally: quotes, spaces, no substitution",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  const std::string touched = repo.path() + "/substituted";
  const std::string dollar = "$(touch " + touched + ")";
  const std::string quotes = "it's \"quoted\"  and spaced; echo no";
  const std::string backtick = "`touch " + touched + "2` \\ $HOME";
  McpProcess server(repo.path());
  server.Initialize();
  const std::string args =
      "{\"custom_cmd\":" + Quoted("printf '[%s]\\n' \"$MCP_A\" \"$MCP_B\" \"$MCP_C\" \"$MCP_D\"") +
      ",\"scenario\":\"local_direct\",\"model_name\":\"envq\",\"repo_root\":" +
      Quoted(repo.path()) + ",\"custom_env\":{\"MCP_A\":" + Quoted(dollar) +
      ",\"MCP_B\":" + Quoted(quotes) + ",\"MCP_C\":" + Quoted(backtick) + ",\"MCP_D\":7}}";
  rapidjson::Document run = server.Call(1, "run_case", args);
  const std::string handle = Str(Structured(run), "handle");
  rapidjson::Document done = server.Call(2, "wait_case", HandleArg(handle, "\"timeout_s\":30"));
  const rapidjson::Value& state = Structured(done);
  CHECK(Str(state, "status") == "PASSED");
  const std::string log = ReadTextFile(Str(state, "log_file"));
  INFO(log);
  CHECK_THAT(log, Catch::Contains("[" + dollar + "]\n"));
  CHECK_THAT(log, Catch::Contains("[" + quotes + "]\n"));
  CHECK_THAT(log, Catch::Contains("[" + backtick + "]\n"));
  CHECK_THAT(log, Catch::Contains("[7]\n"));
  CHECK_FALSE(fs::exists(touched));
  CHECK_FALSE(fs::exists(touched + "2"));
}

TEST_CASE("mcp: plan_case then run_case on its handle, one run per work dir, case_log pages",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  McpProcess server(repo.path());
  server.Initialize();
  std::string command = "for i in $(seq 1 300); do echo \"line $i: äöü\"; done";
  rapidjson::Document plan = server.Call(1, "plan_case", RunArgs(repo.path(), command, "paged"));
  std::string handle = Str(Structured(plan), "handle");
  CHECK(Str(Structured(server.Call(2, "case_status", HandleArg(handle))), "status") ==
        "not_started");
  rapidjson::Document run = server.Call(3, "run_case", HandleArg(handle));
  CHECK(Str(Structured(run), "handle") == handle);
  rapidjson::Document done = server.Call(4, "wait_case", HandleArg(handle, "\"timeout_s\":30"));
  CHECK(Str(Structured(done), "status") == "PASSED");
  CHECK_THAT(ToolErrorText(server.Call(5, "run_case", HandleArg(handle))),
             Catch::Contains("already started"));
  // Pages of 1000 bytes (cut at character boundaries) put the log back together.
  std::string whole = ReadTextFile(Str(Structured(done), "log_file"));
  std::string joined;
  std::uint64_t offset = 0;
  for (int id = 6; id < 100; ++id) {
    rapidjson::Document page = server.Call(
        id, "case_log",
        HandleArg(handle, "\"offset\":" + std::to_string(offset) + ",\"max_bytes\":1000"));
    const rapidjson::Value& chunk = Structured(page);
    CHECK(chunk["offset"].GetUint64() == offset);
    joined += Str(chunk, "text");
    offset = chunk["next_offset"].GetUint64();
    if (chunk["eof"].GetBool()) break;
  }
  CHECK(joined == whole);
  rapidjson::Document tail = server.Call(100, "case_log", HandleArg(handle, "\"offset\":-30"));
  CHECK_THAT(Str(Structured(tail), "text"), Catch::EndsWith("line 300: äöü\n"));
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: cancel_case stops a running case as trtllm-run cancel does", "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_cancel")};
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document run =
      server.Call(1, "run_case",
                  RunArgs(repo.path(), "echo " + cleanup.marker + "; sleep 300; true", "cancel"));
  std::string handle = Str(Structured(run), "handle");
  server.Call(2, "wait_case", HandleArg(handle, "\"timeout_s\":1"));
  rapidjson::Document cancelled = server.Call(3, "cancel_case", HandleArg(handle));
  const rapidjson::Value& state = Structured(cancelled);
  CHECK(Str(state, "status") == "CANCELLED");
  CHECK(state["exit_code"].GetInt() == 6);
  CHECK_THAT(Str(state, "cancel_output"), Catch::Contains("cancelled"));
  CHECK(WaitNoProcessWithMarker(cleanup.marker, 10));
  rapidjson::Document again = server.Call(4, "cancel_case", HandleArg(handle));
  CHECK_THAT(Str(Structured(again), "cancel_output"), Catch::Contains("nothing to cancel"));
}

TEST_CASE("mcp: run_cases starts a cases file under one handle, wait_case has every verdict",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases,
                "- {name: good, custom_cmd: 'sleep 1; echo good'}\n"
                "- {name: bad, custom_cmd: 'echo bad; exit 3'}\n");
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document bad_file =
      server.Call(1, "run_cases", "{\"cases_file\":" + Quoted(repo.path() + "/none.yaml") + "}");
  CHECK_THAT(ToolErrorText(bad_file), Catch::Contains("none.yaml"));
  rapidjson::Document started =
      server.Call(2, "run_cases",
                  "{\"cases_file\":" + Quoted(cases) +
                      ",\"scenario\":\"local_direct\",\"repo_root\":" + Quoted(repo.path()) + "}");
  std::string handle = Str(Structured(started), "handle");
  CHECK(Str(Structured(started), "kind") == "cases");
  rapidjson::Document done;
  for (int id = 3; id < 10; ++id) {
    done = server.Call(id, "wait_case", HandleArg(handle, "\"timeout_s\":20"));
    if (Structured(done)["finished"].GetBool()) break;
  }
  const rapidjson::Value& state = Structured(done);
  CHECK(Str(state, "status") == "FAILED");
  CHECK(state["exit_code"].GetInt() == 1);
  REQUIRE(state["cases"].Size() == 2);
  CHECK(Str(state["cases"][0], "status") == "PASSED");
  CHECK(Str(state["cases"][1], "status") == "FAILED");
  rapidjson::Document one =
      server.Call(20, "case_status", HandleArg(Str(state["cases"][1], "handle")));
  CHECK(Str(Structured(one), "status") == "FAILED");
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: cancel_case on a run_cases handle cancels every case of the run", "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_cases_cancel")};
  std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases, "- {name: long, custom_cmd: 'echo " + cleanup.marker +
                           "; sleep 300; true'}\n"
                           "- {name: later, custom_cmd: 'echo never'}\n");
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document started =
      server.Call(1, "run_cases",
                  "{\"cases_file\":" + Quoted(cases) +
                      ",\"scenario\":\"local_direct\",\"repo_root\":" + Quoted(repo.path()) + "}");
  std::string handle = Str(Structured(started), "handle");
  for (int i = 0; i < 100 && !ProcessWithMarkerAlive(cleanup.marker); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(ProcessWithMarkerAlive(cleanup.marker));
  rapidjson::Document cancelled = server.Call(2, "cancel_case", HandleArg(handle, "\"wait_s\":60"));
  const rapidjson::Value& state = Structured(cancelled);
  INFO(JsonText(state));
  CHECK(Str(state, "status") == "CANCELLED");
  CHECK(state["finished"].GetBool());
  REQUIRE(state["cases"].Size() == 2);
  CHECK(Str(state["cases"][0], "status") == "CANCELLED");
  CHECK(Str(state["cases"][1], "status") == "CANCELLED");
  CHECK(WaitNoProcessWithMarker(cleanup.marker, 10));
}

TEST_CASE("mcp: a forged supervisor record cannot make cancel_case signal another process",
          "[mcp]") {
  TempDir repo("trtllm_mcp_tools");
  MarkerCleanup cleanup{UniqueMarker("mcp_forged")};
  McpProcess server(repo.path());
  server.Initialize();
  std::string handle = Str(
      Structured(server.Call(1, "plan_case", RunArgs(repo.path(), "echo x", "forged"))), "handle");
  // Someone writes a record naming an unrelated process, with its true start time.
  Shell("bash -c 'sleep 60; : " + cleanup.marker + "' >/dev/null 2>&1 &");
  std::vector<int> pids;
  for (int i = 0; i < 50 && pids.empty(); ++i) {
    pids = PidsWithMarker(cleanup.marker);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(pids.size() == 1);
  WriteTextFile(
      handle + "/mcp_exec.json",
      "{\"supervisor_pid\": " + std::to_string(pids[0]) +
          ", \"supervisor_start_time\": " + std::to_string(trtllm_run::ProcessStartTime(pids[0])) +
          ", \"started_at\": \"2026-01-01T00:00:00Z\", \"argv\": [\"sleep\", \"60\"]}\n");
  rapidjson::Document cancelled = server.Call(2, "cancel_case", HandleArg(handle, "\"wait_s\":2"));
  INFO(JsonText(cancelled));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(ProcessWithMarkerAlive(cleanup.marker));
  CHECK(Str(Structured(server.Call(3, "case_status", HandleArg(handle))), "status") == "abandoned");
}

TEST_CASE(
    "mcp: probe_slurm over SSH rides a ControlMaster a person opened (password user, no "
    "password given to trtllm-run)",
    "[sshd]") {
  EnsureSshd();
  const std::string dir = "/run/trtllm-test-sshd";
  TempDir control("mcp_cm");  // the socket path must stay short
  TempDir scratch("mcp_askpass");
  std::string askpass = scratch.path() + "/askpass";
  WriteTextFile(askpass, "#!/bin/sh\necho trtllm-test-pw\n");
  ::chmod(askpass.c_str(), 0700);
  std::string log = dir + "/sshd.log";
  auto logins = [&] {
    std::string text = ReadTextFile(log);
    int n = 0;
    for (std::size_t at = 0;
         (at = text.find("Accepted password for slurmpw", at)) != std::string::npos; ++at)
      ++n;
    return n;
  };
  std::string ssh_opts =
      " -p 2222 -o UserKnownHostsFile=" + dir + "/known_hosts -o StrictHostKeyChecking=yes ";
  // What the skill tells a person to run once (here the password comes from askpass).
  int status = 0;
  Shell("SSH_ASKPASS=" + askpass +
            " SSH_ASKPASS_REQUIRE=force setsid -w ssh -fNM -o ControlPath=" + control.path() +
            "/%C -o ControlPersist=120" + ssh_opts + "slurmpw@127.0.0.1 </dev/null",
        &status);
  REQUIRE(status == 0);
  struct EndMaster {  // whatever the test's outcome
    std::string command;
    ~EndMaster() { Shell(command); }
  } end_master{"ssh -O exit -o ControlPath=" + control.path() + "/%C" + ssh_opts +
               "slurmpw@127.0.0.1 2>/dev/null"};
  int before = logins();
  TempDir repo("trtllm_mcp_tools");
  McpProcess server(repo.path(), {}, {{"TRTLLM_RUN_SSH_CONTROL_DIR", control.path()}});
  server.Initialize();
  std::string args =
      "{\"ssh_host\":\"slurmpw@127.0.0.1\",\"ssh_port\":2222,\"partitions\":[\"batch\"],"
      "\"ssh_options\":[\"UserKnownHostsFile=" +
      dir + "/known_hosts\",\"StrictHostKeyChecking=yes\"]}";
  rapidjson::Document probe = server.Call(1, "probe_slurm", args);
  const rapidjson::Value& found = Structured(probe);
  CHECK(found["exit_status"].GetInt() == 0);
  CHECK(Str(found["slurm_env"], "user") == "slurmpw");
  CHECK(logins() == before);  // no new login: the person's connection was used
  Shell("ssh -O check -o ControlPath=" + control.path() + "/%C" + ssh_opts +
            "slurmpw@127.0.0.1 2>/dev/null",
        &status);
  CHECK(status == 0);  // and left running
  // Without it, SSH never prompts: a clear tool error.
  McpProcess alone(repo.path(), {}, {{"TRTLLM_RUN_SSH_CONTROL_DIR", ""}});
  alone.Initialize();
  std::string text = ToolErrorText(alone.Call(1, "probe_slurm", args));
  CHECK_THAT(text, Catch::Contains("ControlMaster"));
  Shell("ssh -O exit -o ControlPath=" + control.path() + "/%C" + ssh_opts +
        "slurmpw@127.0.0.1 2>/dev/null");
}
