// A hand-written MCP client for the protocol tests: runs `trtllm-run mcp` with pipes on
// its stdin and stdout (stderr to a file), writes raw lines, reads messages with a
// timeout and keeps every stdout line, so a test can check that each one is a JSON-RPC
// message. Header-only: the integration binary globs *_test.cc.
#ifndef TRTLLM_RUN_TESTS_INTEGRATION_MCP_TEST_CLIENT_H_
#define TRTLLM_RUN_TESTS_INTEGRATION_MCP_TEST_CLIENT_H_

#include <fcntl.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_harness.h"

extern char** environ;

namespace trtllm_run_test {

inline constexpr char kModern[] = "2026-07-28";

// `{"io.modelcontextprotocol/protocolVersion": version}` (plus `extra` members, JSON text).
inline std::string Meta(const std::string& version = kModern, const std::string& extra = "") {
  return "{\"io.modelcontextprotocol/protocolVersion\":\"" + version + "\"" +
         (extra.empty() ? "" : "," + extra) + "}";
}

inline std::string JsonText(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// A JSON string literal for `text` (quotes and escapes added).
inline std::string Quoted(const std::string& text) {
  rapidjson::Value value(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  return JsonText(value);
}

class McpProcess {
 public:
  // Starts `trtllm-run mcp <args>` in `cwd`, with `env` added to this environment.
  explicit McpProcess(const std::string& cwd, std::vector<std::string> args = {},
                      std::vector<std::pair<std::string, std::string>> env = {})
      : stderr_dir_("trtllm_mcp_stderr") {
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    stderr_path_ = stderr_dir_.path() + "/stderr";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT, 0644);
    std::vector<std::string> argv = {TRTLLM_RUN_BIN, "mcp"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (std::string& arg : argv) c_argv.push_back(arg.data());
    c_argv.push_back(nullptr);
    std::vector<std::string> envs;
    for (char** e = environ; *e != nullptr; ++e) envs.emplace_back(*e);
    for (auto& [name, value] : env) envs.push_back(name + "=" + value);
    std::vector<char*> c_env;
    for (std::string& entry : envs) c_env.push_back(entry.data());
    c_env.push_back(nullptr);
    posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    int rc = ::posix_spawn(&pid_, TRTLLM_RUN_BIN, &actions, nullptr, c_argv.data(), c_env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    REQUIRE(rc == 0);
    in_ = in[1];
    out_ = out[0];
  }

  ~McpProcess() {
    CloseStdin();
    CloseStdout();
    if (pid_ > 0 && !Wait(10)) {
      ::kill(pid_, SIGKILL);
      Wait(5);
    }
  }

  int pid() const { return pid_; }
  std::string Stderr() const { return ReadTextFile(stderr_path_); }
  const std::vector<std::string>& lines() const { return lines_; }

  // Writes `text` and a newline (a message must be one line).
  bool SendLine(const std::string& text) { return WriteRaw(text + "\n"); }
  bool WriteRaw(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(in_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // The next stdout line, or nullopt after `seconds` or at EOF.
  std::optional<std::string> ReadLine(double seconds) {
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    while (true) {
      std::size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        lines_.push_back(line);
        return line;
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      end - std::chrono::steady_clock::now())
                                      .count());
      if (left <= 0 || out_ < 0) return std::nullopt;
      pollfd fd{out_, POLLIN, 0};
      if (::poll(&fd, 1, left) <= 0) continue;
      char chunk[65536];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) {
        if (!buffer_.empty()) lines_.push_back(buffer_);  // an unterminated last line
        return std::nullopt;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The next message (parsed), or a document with HasParseError() after `seconds`.
  rapidjson::Document ReadMessage(double seconds = 30) {
    rapidjson::Document doc;
    std::optional<std::string> line = ReadLine(seconds);
    doc.Parse(line ? line->c_str() : "");
    return doc;
  }

  // Sends a request with `id` and returns its response; notifications (and other
  // responses) read meanwhile go to `seen`.
  rapidjson::Document Request(int id, const std::string& method, const std::string& params = "",
                              double seconds = 60,
                              std::vector<rapidjson::Document>* seen = nullptr) {
    std::string line = "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
                       ",\"method\":" + Quoted(method) +
                       (params.empty() ? "" : ",\"params\":" + params) + "}";
    REQUIRE(SendLine(line));
    return ResponseTo(id, seconds, seen);
  }

  rapidjson::Document ResponseTo(int id, double seconds,
                                 std::vector<rapidjson::Document>* seen = nullptr) {
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<int>(seconds * 1000));
    while (std::chrono::steady_clock::now() < end) {
      double left = std::chrono::duration<double>(end - std::chrono::steady_clock::now()).count();
      rapidjson::Document message = ReadMessage(left);
      if (message.HasParseError()) break;
      if (message.IsObject() && message.HasMember("id") && message["id"].IsInt() &&
          message["id"].GetInt() == id) {
        return message;
      }
      if (seen) seen->push_back(std::move(message));
    }
    rapidjson::Document none;
    none.Parse("");
    return none;
  }

  // A tools/call; returns the response (result or error).
  rapidjson::Document Call(int id, const std::string& tool, const std::string& arguments,
                           const std::string& meta = "", double seconds = 120,
                           std::vector<rapidjson::Document>* seen = nullptr) {
    std::string params = "{\"name\":" + Quoted(tool) + ",\"arguments\":" + arguments +
                         (meta.empty() ? "" : ",\"_meta\":" + meta) + "}";
    return Request(id, "tools/call", params, seconds, seen);
  }

  // Legacy handshake; returns the initialize result.
  rapidjson::Document Initialize(const std::string& version = "2025-11-25") {
    rapidjson::Document reply =
        Request(0, "initialize",
                "{\"protocolVersion\":\"" + version +
                    "\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}");
    SendLine("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return reply;
  }

  void CloseStdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }
  void CloseStdout() {
    if (out_ >= 0) ::close(out_);
    out_ = -1;
  }

  // Waits up to `seconds` for the server to end; true once it has (exit_status() then).
  bool Wait(double seconds) {
    if (exited_) return true;
    for (int i = 0; i < seconds * 20; ++i) {
      int status = 0;
      pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        exited_ = true;
        status_ = status;
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  int status() const { return status_; }

 private:
  TempDir stderr_dir_;
  std::string stderr_path_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  std::vector<std::string> lines_;
  bool exited_ = false;
  int status_ = 0;
};

// Every stdout line was one JSON-RPC 2.0 message (an object with "jsonrpc": "2.0").
inline void CheckOnlyMessages(const McpProcess& server) {
  for (const std::string& line : server.lines()) {
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    INFO("stdout line: " << line.substr(0, 400));
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc.IsObject());
    REQUIRE(doc.HasMember("jsonrpc"));
    CHECK(std::string(doc["jsonrpc"].GetString()) == "2.0");
  }
}

// The structuredContent of a successful tools/call response (fails the test otherwise).
inline const rapidjson::Value& Structured(const rapidjson::Document& response) {
  INFO(JsonText(response).substr(0, 2000));
  REQUIRE(response.IsObject());
  REQUIRE(response.HasMember("result"));
  REQUIRE_FALSE(response["result"].HasMember("isError"));
  REQUIRE(response["result"].HasMember("structuredContent"));
  return response["result"]["structuredContent"];
}

// The text of a tool error (fails the test when the call did not fail as a tool).
inline std::string ToolErrorText(const rapidjson::Document& response) {
  INFO(JsonText(response).substr(0, 2000));
  REQUIRE(response.IsObject());
  REQUIRE(response.HasMember("result"));
  REQUIRE(response["result"].HasMember("isError"));
  CHECK(response["result"]["isError"].GetBool());
  return response["result"]["content"][0]["text"].GetString();
}

inline int ErrorCode(const rapidjson::Document& response) {
  INFO(JsonText(response).substr(0, 2000));
  REQUIRE(response.IsObject());
  REQUIRE(response.HasMember("error"));
  return response["error"]["code"].GetInt();
}

inline std::string Str(const rapidjson::Value& object, const char* key) {
  return object.HasMember(key) && object[key].IsString() ? object[key].GetString() : "";
}

}  // namespace trtllm_run_test

#endif  // TRTLLM_RUN_TESTS_INTEGRATION_MCP_TEST_CLIENT_H_
