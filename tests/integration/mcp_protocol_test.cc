// `trtllm-run mcp` at the protocol level, driven over pipes by a hand-written client
// (mcp_test_client.h): both eras (initialize; server/discover and per-request _meta),
// version errors, malformed and oversized messages, stdout cleanliness, and that the
// tools' arguments are the CLI's case flags. The tools themselves: mcp_tools_test.cc.
#include <fstream>
#include <set>
#include <sstream>

#include "mcp_test_client.h"

using namespace trtllm_run_test;

namespace {

// VmHWM (peak resident set) of a process, in KiB.
long PeakRssKib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

TEST_CASE(
    "mcp: legacy initialize negotiates 2025-11-25 or 2025-06-18, results have no modern fields",
    "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  for (const auto& [asked, expected] :
       std::vector<std::pair<std::string, std::string>>{{"2025-11-25", "2025-11-25"},
                                                        {"2025-06-18", "2025-06-18"},
                                                        {"2024-11-05", "2025-11-25"}}) {
    McpProcess server(repo.path());
    rapidjson::Document init = server.Initialize(asked);
    INFO(JsonText(init));
    REQUIRE(init.HasMember("result"));
    CHECK(Str(init["result"], "protocolVersion") == expected);
    CHECK(Str(init["result"]["serverInfo"], "name") == "trtllm-run");
    CHECK(init["result"]["capabilities"].HasMember("tools"));
    CHECK_FALSE(init["result"].HasMember("resultType"));
    rapidjson::Document tools = server.Request(1, "tools/list");
    REQUIRE(tools.HasMember("result"));
    CHECK(tools["result"]["tools"].Size() == 13);
    CHECK_FALSE(tools["result"].HasMember("resultType"));
    CHECK_FALSE(tools["result"].HasMember("ttlMs"));
    rapidjson::Document ping = server.Request(2, "ping");
    CHECK(ping["result"].IsObject());
    CheckOnlyMessages(server);
  }
}

TEST_CASE("mcp: modern server/discover and per-request _meta: resultType, ttlMs, cacheScope",
          "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  McpProcess server(repo.path());
  rapidjson::Document discover = server.Request(1, "server/discover", "{\"_meta\":" + Meta() + "}");
  INFO(JsonText(discover));
  REQUIRE(discover.HasMember("result"));
  const rapidjson::Value& found = discover["result"];
  std::vector<std::string> versions;
  for (const auto& v : found["supportedVersions"].GetArray()) versions.push_back(v.GetString());
  CHECK(versions == std::vector<std::string>{"2026-07-28", "2025-11-25", "2025-06-18"});
  CHECK(Str(found, "resultType") == "complete");
  CHECK(found["ttlMs"].GetInt() >= 0);
  CHECK(Str(found, "cacheScope") == "public");
  CHECK(found["capabilities"].HasMember("tools"));
  CHECK(Str(found["_meta"]["io.modelcontextprotocol/serverInfo"], "name") == "trtllm-run");

  // No handshake: every request carries its version.
  rapidjson::Document tools = server.Request(2, "tools/list", "{\"_meta\":" + Meta() + "}");
  REQUIRE(tools.HasMember("result"));
  CHECK(Str(tools["result"], "resultType") == "complete");
  CHECK(tools["result"]["ttlMs"].IsInt());
  CHECK(Str(tools["result"], "cacheScope") == "public");
  CHECK(tools["result"]["tools"].Size() == 13);
  rapidjson::Document plan =
      server.Call(3, "plan_case",
                  "{\"custom_cmd\":\"echo modern\",\"scenario\":\"local_direct\",\"repo_root\":" +
                      Quoted(repo.path()) + "}",
                  Meta(kModern, "\"io.modelcontextprotocol/clientCapabilities\":{}"));
  CHECK(Str(plan["result"], "resultType") == "complete");
  CHECK(Str(Structured(plan), "scenario") == "local_direct");

  // Neither a version nor initialize: refused, naming both ways.
  rapidjson::Document bare = server.Request(4, "tools/list");
  CHECK(ErrorCode(bare) == -32600);
  CHECK_THAT(Str(bare["error"], "message"),
             Catch::Contains("protocolVersion") && Catch::Contains("initialize"));
  // ping needs no version.
  CHECK(server.Request(5, "ping")["result"].IsObject());
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: an unsupported protocol version is -32022 with data.supported and data.requested",
          "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  McpProcess server(repo.path());
  int id = 1;
  for (const char* method : {"tools/list", "server/discover", "tools/call", "ping"}) {
    rapidjson::Document reply = server.Request(
        id++, method, "{\"name\":\"case_status\",\"_meta\":" + Meta("2030-01-01") + "}");
    INFO(method << ": " << JsonText(reply));
    REQUIRE(ErrorCode(reply) == -32022);
    CHECK(Str(reply["error"]["data"], "requested") == "2030-01-01");
    CHECK(reply["error"]["data"]["supported"].Size() == 3);
    CHECK(std::string(reply["error"]["data"]["supported"][0].GetString()) == kModern);
  }
  // _meta that is not an object, a version that is not a string: invalid params.
  CHECK(ErrorCode(server.Request(id++, "tools/list", "{\"_meta\":[]}")) == -32602);
  CHECK(ErrorCode(server.Request(
            id++, "tools/list",
            "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":20260728}}")) == -32602);
  // A legacy version in _meta is served (without the modern result fields).
  rapidjson::Document legacy =
      server.Request(id++, "tools/list", "{\"_meta\":" + Meta("2025-06-18") + "}");
  REQUIRE(legacy.HasMember("result"));
  CHECK_FALSE(legacy["result"].HasMember("resultType"));
  CheckOnlyMessages(server);
}

TEST_CASE("mcp: malformed messages get JSON-RPC errors and the server goes on", "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  McpProcess server(repo.path());
  struct Bad {
    std::string line;
    int code;
    bool null_id;
  };
  const std::vector<Bad> bad = {
      {"this is not json", -32700, true},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", -32700, true},
      {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, true},
      {"\"a string\"", -32600, true},
      {"{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}", -32600, false},
      {"{\"id\":3,\"method\":\"ping\"}", -32600, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}", -32600, true},
      {"{\"jsonrpc\":\"2.0\",\"id\":4}", -32600, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":42}", -32600, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\",\"params\":[1]}", -32602, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"no/such/method\",\"params\":{\"_meta\":" +
           Meta() + "}}",
       -32601, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"_meta\":" + Meta() +
           "}}",
       -32602, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
       "call\",\"params\":{\"name\":\"rm_rf\",\"_meta\":" +
           Meta() + "}}",
       -32602, false},
      {"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/"
       "call\",\"params\":{\"name\":\"case_status\",\"arguments\":[],\"_meta\":" +
           Meta() + "}}",
       -32602, false},
      {std::string(100000, '[') + std::string(100000, ']'), -32600, true},
  };
  for (const Bad& message : bad) {
    INFO("sent: " << message.line.substr(0, 200));
    REQUIRE(server.SendLine(message.line));
    rapidjson::Document reply = server.ReadMessage(10);
    INFO("got: " << JsonText(reply).substr(0, 400));
    REQUIRE(reply.IsObject());
    CHECK(ErrorCode(reply) == message.code);
    CHECK(reply["id"].IsNull() == message.null_id);
    CHECK_FALSE(Str(reply["error"], "message").empty());
  }
  // Notifications (unknown ones too) and responses get no answer; the server still serves.
  server.SendLine("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}");
  server.SendLine("{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}");
  server.SendLine("   ");
  rapidjson::Document ping = server.Request(11, "ping");
  CHECK(ping["result"].IsObject());
  CHECK(server.lines().size() == bad.size() + 1);
  // Invalid UTF-8 and NUL inside arguments reach the CLI's checks, and the answers are
  // valid UTF-8.
  rapidjson::Document bytes = server.Call(
      12, "plan_case",
      "{\"custom_cmd\":\"echo \xff\xfe\",\"repo_root\":" + Quoted(repo.path()) + "}", Meta());
  CHECK_THAT(ToolErrorText(bytes), Catch::Contains("not valid UTF-8"));
  rapidjson::Document nul = server.Call(
      13, "plan_case",
      "{\"custom_cmd\":\"echo a\\u0000b\",\"repo_root\":" + Quoted(repo.path()) + "}", Meta());
  CHECK_THAT(ToolErrorText(nul), Catch::Contains("NUL byte"));
  CheckOnlyMessages(server);
  server.CloseStdin();
  REQUIRE(server.Wait(10));
  CHECK(WIFEXITED(server.status()));
  CHECK(WEXITSTATUS(server.status()) == 0);
}

TEST_CASE("mcp: a request id of invalid UTF-8 is refused with a null id, never echoed raw",
          "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  McpProcess server(repo.path());
  // Each line must be UTF-8 a strict JSON parser accepts (RapidJSON's validating mode).
  auto strict_json = [](const std::string& line) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(line.c_str(), line.size());
    return !doc.HasParseError();
  };
  for (const std::string& id : {std::string("\xff\xfe"), std::string("ok\xc3"),
                                std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    INFO("id bytes: " << id.size());
    REQUIRE(server.SendLine("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"ping\"}"));
    std::optional<std::string> line = server.ReadLine(10);
    REQUIRE(line);
    INFO("got: " << *line);
    CHECK(line->find(id) == std::string::npos);
    CHECK(strict_json(*line));
    rapidjson::Document reply;
    reply.Parse(line->c_str());
    REQUIRE(reply.IsObject());
    CHECK(ErrorCode(reply) == -32600);
    CHECK(reply["id"].IsNull());
    CHECK_THAT(Str(reply["error"], "message"), Catch::Contains("UTF-8"));
  }
  // A cancellation naming such an id is a notification: no answer.
  REQUIRE(server.SendLine(
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
      "\"\xff\"}}"));
  // A valid non-ASCII id is echoed exactly.
  const std::string accented = "r\xc3\xa9ponse-\xe2\x9c\x93";
  REQUIRE(server.SendLine("{\"jsonrpc\":\"2.0\",\"id\":\"" + accented + "\",\"method\":\"ping\"}"));
  std::optional<std::string> line = server.ReadLine(10);
  REQUIRE(line);
  CHECK(strict_json(*line));
  rapidjson::Document pong;
  pong.Parse(line->c_str());
  REQUIRE(pong.IsObject());
  REQUIRE(pong["id"].IsString());
  CHECK(std::string(pong["id"].GetString()) == accented);
  CHECK(pong["result"].IsObject());
  CHECK(server.lines().size() == 5);
  server.CloseStdin();
  REQUIRE(server.Wait(10));
}

TEST_CASE("mcp: an oversized message is refused without being held whole, the next is served",
          "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  McpProcess server(repo.path());
  REQUIRE(server.Request(1, "ping")["result"].IsObject());
  long before = PeakRssKib(server.pid());
  // 64 MiB in one line (16 x the 4 MiB default limit), written in pieces as a client would.
  std::string head =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
      "call\",\"params\":{\"name\":\"plan_case\",\"arguments\":{\"custom_cmd\":\"";
  REQUIRE(server.WriteRaw(head));
  std::string piece(1 << 20, 'x');
  for (int i = 0; i < 64; ++i) REQUIRE(server.WriteRaw(piece));
  REQUIRE(server.WriteRaw("\"}}}\n"));
  rapidjson::Document refused = server.ReadMessage(30);
  INFO(JsonText(refused));
  CHECK(ErrorCode(refused) == -32600);
  CHECK(refused["id"].IsNull());
  CHECK_THAT(Str(refused["error"], "message"), Catch::Contains("4194304"));
  long after = PeakRssKib(server.pid());
  INFO("peak RSS before " << before << " KiB, after " << after << " KiB");
  CHECK(after - before < 16 * 1024);  // far less than the 64 MiB sent
  // Nothing of it was planned, and the server goes on.
  CHECK(FindSingleWorkDir(repo.path()).empty());
  CHECK(server.Request(3, "ping")["result"].IsObject());

  // The limit is a flag; a message within it is served.
  McpProcess small(repo.path(), {"--max-message-bytes", "2048"});
  small.SendLine("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" +
                 std::string(4000, 'y') + "\"}}");
  CHECK(ErrorCode(small.ReadMessage(10)) == -32600);
  CHECK(small.Request(2, "ping")["result"].IsObject());
  CheckOnlyMessages(server);
  CheckOnlyMessages(small);
}

TEST_CASE("mcp: stdout holds only protocol messages, warnings and logs go to stderr", "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  // Broken plugins make the runtime warn; --verbose logs every message.
  McpProcess server(repo.path(),
                    {"--plugin-dir", std::string(TEST_PLUGIN_DIR) + "/mixed", "--verbose"});
  server.Initialize();
  server.Request(1, "tools/list");
  rapidjson::Document run = server.Call(2, "run_case",
                                        "{\"custom_cmd\":\"echo job-output-line; echo "
                                        "job-stderr-line >&2\",\"scenario\":\"local_direct\","
                                        "\"repo_root\":" +
                                            Quoted(repo.path()) + "}");
  std::string handle = Str(Structured(run), "handle");
  rapidjson::Document wait =
      server.Call(3, "wait_case", "{\"handle\":" + Quoted(handle) + ",\"timeout_s\":30}");
  CHECK(Str(Structured(wait), "status") == "PASSED");
  server.CloseStdin();
  REQUIRE(server.Wait(10));
  while (server.ReadLine(1)) {
  }
  CheckOnlyMessages(server);
  for (const std::string& line : server.lines()) {
    INFO("stdout line: " << line.substr(0, 3000));
    CHECK(line.find("warning:") == std::string::npos);
  }
  std::string err = server.Stderr();
  CHECK_THAT(err, Catch::Contains("warning:"));
  CHECK_THAT(err, Catch::Contains("trtllm-run mcp: <- "));
  CHECK(ReadTextFile(FindSingleWorkDir(repo.path()) + "/" + "custom_local.log")
            .find("job-output-line") != std::string::npos);
}

TEST_CASE("mcp: plan_case and run_case take exactly the CLI's case flags (one table)", "[mcp]") {
  TempDir repo("trtllm_mcp_proto");
  CliRun help = RunCli({"plan", "--help"});
  REQUIRE(help.exit_code == 0);
  std::set<std::string> flags;
  std::istringstream lines(help.stdout_text);
  bool in_case_group = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Case", 0) == 0) in_case_group = true;
    if (line.rfind("Plan", 0) == 0 || line.rfind("Plugins", 0) == 0) in_case_group = false;
    if (!in_case_group || line.rfind("  --", 0) != 0) continue;
    std::string flag = line.substr(4, line.find_first_of(" \t", 4) - 4);
    for (char& c : flag) c = c == '-' ? '_' : c;
    flags.insert(flag);
  }
  flags.erase("request");  // file input and secrets stay CLI-only
  flags.erase("password_file");
  REQUIRE(flags.size() > 40);
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document tools = server.Request(1, "tools/list");
  for (const auto& tool : tools["result"]["tools"].GetArray()) {
    std::string name = tool["name"].GetString();
    std::set<std::string> properties;
    for (auto it = tool["inputSchema"]["properties"].MemberBegin();
         it != tool["inputSchema"]["properties"].MemberEnd(); ++it) {
      properties.insert(it->name.GetString());
    }
    INFO(name);
    CHECK(tool["inputSchema"]["additionalProperties"].IsFalse());
    CHECK(tool.HasMember("outputSchema"));
    if (name == "plan_case") CHECK(properties == flags);
    if (name == "run_case") {
      properties.erase("handle");
      properties.erase("kill_grace");
      CHECK(properties == flags);
    }
  }
}
