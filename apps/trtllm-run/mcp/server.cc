#include "server.h"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

#include "schemas.h"
#include "trtllm_run/version.h"

namespace trtllm_run::mcp {
namespace {

// JSON-RPC 2.0 and MCP error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kServerBusy = -32000;  // implementation-defined range
constexpr int kUnsupportedProtocolVersion = -32022;

constexpr char kVersionKey[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kLatestLegacyVersion[] = "2025-11-25";
// How long clients may cache the tool list: it changes only with the binary.
constexpr int kListTtlMs = 3600 * 1000;

const char kInstructions[] =
    "trtllm-run runs one TensorRT-LLM case (pytest, trtllm-bench, trtllm-eval, perf-sanity or "
    "any command) locally, in Docker or on Slurm and returns a verdict: PASSED, FAILED, "
    "SKIPPED, TIMEOUT, HANG_DETECTED, OUT_OF_MEMORY, CANCELLED or ERROR. plan_case checks a "
    "case without running it; run_case starts it and returns a handle at once; call "
    "wait_case with the handle (at most 100 s per call) until finished is true. No call "
    "blocks for the life of a job; cases outlive this server.";

bool IsLegacy(const std::string& version) {
  return version == "2025-11-25" || version == "2025-06-18";
}

// Deepest nesting of arrays/objects in the text (strings skipped), stopping past `limit`.
int Nesting(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// JSON-RPC ids are strings or integers. A string id must be valid UTF-8: the answer
// echoes it, and an answer is JSON text (RFC 8259 section 8.1), never raw bytes.
bool ValidId(const Value& id) {
  if (id.IsString()) {
    std::string_view text(id.GetString(), id.GetStringLength());
    return ValidUtf8(text) == text;
  }
  return id.IsInt64() || id.IsUint64();
}

}  // namespace

const std::vector<std::string>& SupportedVersions() {
  static const std::vector<std::string> versions = {kModernVersion, "2025-11-25", "2025-06-18"};
  return versions;
}

// One tools/call in flight.
struct Server::Call {
  Document holder;  // owns id, arguments and the progress token
  Value id;
  std::string key;
  std::string tool;
  Value arguments;
  Value progress_token;  // null: no progress wanted
  std::string version;
  std::mutex mu;
  std::condition_variable wake;
  bool cancelled = false;  // notifications/cancelled: send nothing more
  bool ending = false;     // shutdown: answer with what there is
  double last_progress = -1;
};

class Server::Context : public CallContext {
 public:
  Context(Server* server, Call* call) : server_(server), call_(call) {}
  bool Sleep(double seconds) override {
    std::unique_lock<std::mutex> lock(call_->mu);
    call_->wake.wait_for(lock, std::chrono::duration<double>(std::max(0.0, seconds)),
                         [&] { return call_->cancelled || call_->ending; });
    return !call_->cancelled && !call_->ending;
  }
  bool cancelled() const override {
    std::lock_guard<std::mutex> lock(call_->mu);
    return call_->cancelled;
  }
  void Progress(double progress, std::optional<double> total, const std::string& message) override {
    {
      std::lock_guard<std::mutex> lock(call_->mu);
      if (call_->progress_token.IsNull() || call_->cancelled || progress <= call_->last_progress) {
        return;
      }
      call_->last_progress = progress;
    }
    Document note(rapidjson::kObjectType);
    Allocator& a = note.GetAllocator();
    SetStr(&note, "jsonrpc", "2.0", a);
    SetStr(&note, "method", "notifications/progress", a);
    Value params(rapidjson::kObjectType);
    Set(&params, "progressToken", Value(call_->progress_token, a), a);
    Set(&params, "progress", Value(progress), a);
    if (total) Set(&params, "total", Value(*total), a);
    SetStr(&params, "message", message, a);
    Set(&note, "params", params, a);
    server_->Send(note);
  }

 private:
  Server* server_;
  Call* call_;
};

Server::Server(Runtime* runtime, ServerOptions options, Sink sink)
    : tools_(runtime, options.tools), options_(std::move(options)), sink_(std::move(sink)) {}

Server::~Server() { Shutdown(); }

void Server::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  shutting_down_ = true;
  for (auto& [key, call] : calls_) {
    std::lock_guard<std::mutex> call_lock(call->mu);
    call->ending = true;
    call->wake.notify_all();
  }
  calls_done_.wait(lock, [&] { return running_ == 0; });
}

void Server::Send(const Value& message) {
  std::string line = ToJson(message);
  if (options_.verbose) std::cerr << "trtllm-run mcp: -> " << line.substr(0, 300) << "\n";
  sink_(line);
}

Value Server::ServerInfo(Allocator& a) const {
  Value info(rapidjson::kObjectType);
  SetStr(&info, "name", "trtllm-run", a);
  SetStr(&info, "title", "trtllm-run: TensorRT-LLM cases with verdicts", a);
  SetStr(&info, "version", Version(), a);
  return info;
}

void Server::SendResult(const Value& id, Value result, Allocator& a, const std::string& version) {
  if (version == kModernVersion) {
    SetStr(&result, "resultType", "complete", a);
    Value meta(rapidjson::kObjectType);
    Set(&meta, "io.modelcontextprotocol/serverInfo", ServerInfo(a), a);
    Set(&result, "_meta", meta, a);
  }
  Value response(rapidjson::kObjectType);
  SetStr(&response, "jsonrpc", "2.0", a);
  Set(&response, "id", Value(id, a), a);
  Set(&response, "result", result, a);
  Send(response);
}

void Server::SendError(const Value* id, int code, const std::string& message, Value data,
                       Allocator& a) {
  Value error(rapidjson::kObjectType);
  Set(&error, "code", Value(code), a);
  SetStr(&error, "message", message, a);
  if (!data.IsNull()) Set(&error, "data", data, a);
  Value response(rapidjson::kObjectType);
  SetStr(&response, "jsonrpc", "2.0", a);
  Set(&response, "id", id && ValidId(*id) ? Value(*id, a) : Value(), a);
  Set(&response, "error", error, a);
  Send(response);
}

void Server::SendError(const Value* id, int code, const std::string& message) {
  Document doc;
  SendError(id, code, message, Value(), doc.GetAllocator());
}

void Server::HandleOversized(std::size_t bytes, std::size_t limit) {
  SendError(nullptr, kInvalidRequest,
            "message of " + std::to_string(bytes) + " bytes refused: the limit is " +
                std::to_string(limit) + " bytes (trtllm-run mcp --max-message-bytes)");
}

void Server::HandleMessage(const std::string& text) {
  if (options_.verbose) std::cerr << "trtllm-run mcp: <- " << text.substr(0, 300) << "\n";
  if (Nesting(text, kMaxNesting) > kMaxNesting) {
    SendError(nullptr, kInvalidRequest,
              "message nested deeper than " + std::to_string(kMaxNesting) + " levels refused");
    return;
  }
  Document message;
  message.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
  if (message.HasParseError()) {
    SendError(nullptr, kParseError,
              std::string("parse error: ") + rapidjson::GetParseError_En(message.GetParseError()) +
                  " (at byte " + std::to_string(message.GetErrorOffset()) + ")");
    return;
  }
  if (message.IsArray()) {
    SendError(nullptr, kInvalidRequest,
              "JSON-RPC batches are not supported by MCP: send one message per line");
    return;
  }
  if (!message.IsObject()) {
    SendError(nullptr, kInvalidRequest, "a JSON-RPC message must be an object");
    return;
  }
  const Value* id = Member(message, "id");
  const Value* jsonrpc = Member(message, "jsonrpc");
  const Value* method = Member(message, "method");
  if (id && !ValidId(*id)) {
    SendError(nullptr, kInvalidRequest, "\"id\" must be an integer or a string of valid UTF-8");
    return;
  }
  if (!jsonrpc || !jsonrpc->IsString() || std::string(jsonrpc->GetString()) != "2.0") {
    SendError(id, kInvalidRequest, "\"jsonrpc\" must be \"2.0\"");
    return;
  }
  if (!method) {
    if (Member(message, "result") || Member(message, "error")) return;  // a response: ignored
    SendError(id, kInvalidRequest, "a request needs \"method\"");
    return;
  }
  if (!method->IsString()) {
    SendError(id, kInvalidRequest, "\"method\" must be a string");
    return;
  }
  const Value* params = Member(message, "params");
  if (params && !params->IsObject()) {
    if (id) SendError(id, kInvalidParams, "\"params\" must be an object");
    return;
  }
  std::string name(method->GetString(), method->GetStringLength());
  if (id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (shutting_down_) return;
    }
    HandleRequest(message, name);
  } else {
    HandleNotification(message, name);
  }
}

void Server::HandleNotification(const Document& message, const std::string& method) {
  if (method != "notifications/cancelled") return;  // initialized, roots/list_changed, ...
  const Value* params = Member(message, "params");
  const Value* request_id = params ? Member(*params, "requestId") : nullptr;
  if (!request_id || !ValidId(*request_id)) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(ToJson(*request_id));
  if (it == calls_.end()) return;  // finished already, or never ours
  std::lock_guard<std::mutex> call_lock(it->second->mu);
  it->second->cancelled = true;
  it->second->wake.notify_all();
}

void Server::HandleRequest(const Document& message, const std::string& method) {
  const Value& id = message["id"];
  const Value* params = Member(message, "params");
  const Value* meta = params ? Member(*params, "_meta") : nullptr;
  if (meta && !meta->IsObject()) {
    SendError(&id, kInvalidParams, "params._meta must be an object");
    return;
  }
  const Value* requested = meta ? Member(*meta, kVersionKey) : nullptr;
  Document reply;
  Allocator& a = reply.GetAllocator();
  if (requested && !requested->IsString()) {
    SendError(&id, kInvalidParams,
              std::string("params._meta[\"") + kVersionKey + "\"] must be a string");
    return;
  }
  std::string version;
  if (method == "initialize") {
    const Value* asked = params ? Member(*params, "protocolVersion") : nullptr;
    std::string wanted = asked && asked->IsString() ? asked->GetString() : "";
    version = IsLegacy(wanted) ? wanted : kLatestLegacyVersion;
    {
      std::lock_guard<std::mutex> lock(mu_);
      legacy_version_ = version;
    }
    Value result(rapidjson::kObjectType);
    SetStr(&result, "protocolVersion", version, a);
    Value capabilities(rapidjson::kObjectType);
    Value tools(rapidjson::kObjectType);
    Set(&tools, "listChanged", Value(false), a);
    Set(&capabilities, "tools", tools, a);
    Set(&result, "capabilities", capabilities, a);
    Set(&result, "serverInfo", ServerInfo(a), a);
    SetStr(&result, "instructions", kInstructions, a);
    SendResult(id, std::move(result), a, version);
    return;
  }
  if (requested) {
    version = requested->GetString();
    const auto& supported = SupportedVersions();
    if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
      Value data(rapidjson::kObjectType);
      Set(&data, "supported", StrArray(supported, a), a);
      SetStr(&data, "requested", version, a);
      SendError(&id, kUnsupportedProtocolVersion, "Unsupported protocol version", std::move(data),
                a);
      return;
    }
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    version = legacy_version_;
  }
  if (method == "server/discover") {
    Value result(rapidjson::kObjectType);
    Set(&result, "supportedVersions", StrArray(SupportedVersions(), a), a);
    Value capabilities(rapidjson::kObjectType);
    Set(&capabilities, "tools", Value(rapidjson::kObjectType), a);
    Set(&result, "capabilities", capabilities, a);
    SetStr(&result, "instructions", kInstructions, a);
    Set(&result, "ttlMs", Value(kListTtlMs), a);
    SetStr(&result, "cacheScope", "public", a);
    SendResult(id, std::move(result), a, kModernVersion);
    return;
  }
  if (method == "ping") {
    SendResult(id, Value(rapidjson::kObjectType), a, version);
    return;
  }
  if (version.empty()) {
    SendError(&id, kInvalidRequest,
              std::string("no protocol version: give params._meta[\"") + kVersionKey +
                  "\"] (2026-07-28), or send initialize first (2025-11-25, 2025-06-18)");
    return;
  }
  if (method == "tools/list") {
    const Value* cursor = params ? Member(*params, "cursor") : nullptr;
    if (cursor && !(cursor->IsString() && cursor->GetStringLength() == 0)) {
      SendError(&id, kInvalidParams, "invalid cursor: the tool list has one page");
      return;
    }
    Value result(rapidjson::kObjectType);
    Set(&result, "tools", Value(ToolList(), a), a);
    if (version == kModernVersion) {
      Set(&result, "ttlMs", Value(kListTtlMs), a);
      SetStr(&result, "cacheScope", "public", a);
    }
    SendResult(id, std::move(result), a, version);
    return;
  }
  if (method == "tools/call") {
    StartToolCall(message, version);
    return;
  }
  SendError(
      &id, kMethodNotFound,
      "method '" + method + "' not found: this server offers tools only (tools/list, tools/call)");
}

void Server::StartToolCall(const Document& message, const std::string& version) {
  const Value& id = message["id"];
  const Value* params = Member(message, "params");
  const Value* name = params ? Member(*params, "name") : nullptr;
  if (!name || !name->IsString()) {
    SendError(&id, kInvalidParams, "tools/call needs params.name, the tool's name");
    return;
  }
  if (FindTool(name->GetString()) == nullptr) {
    std::string names;
    for (const Value& tool : ToolList().GetArray()) {
      names += (names.empty() ? "" : ", ") + std::string(tool["name"].GetString());
    }
    SendError(&id, kInvalidParams,
              "unknown tool '" + std::string(name->GetString()) + "'; tools: " + names);
    return;
  }
  const Value* arguments = Member(*params, "arguments");
  if (arguments && !arguments->IsObject()) {
    SendError(&id, kInvalidParams, "params.arguments must be an object");
    return;
  }
  auto call = std::make_shared<Call>();
  Allocator& a = call->holder.GetAllocator();
  call->id.CopyFrom(id, a);
  call->key = ToJson(id);
  call->tool = name->GetString();
  call->arguments = arguments ? Value(*arguments, a) : Value(rapidjson::kObjectType);
  const Value* meta = Member(*params, "_meta");
  const Value* token = meta ? Member(*meta, "progressToken") : nullptr;
  if (token && (token->IsString() || token->IsInt64())) call->progress_token.CopyFrom(*token, a);
  call->version = version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (calls_.count(call->key)) {
      SendError(&id, kInvalidRequest,
                "request id " + call->key + " is already in use by a call in flight");
      return;
    }
    if (static_cast<int>(calls_.size()) >= options_.max_in_flight) {
      SendError(&id, kServerBusy,
                "server busy: " + std::to_string(calls_.size()) + " tool calls in flight");
      return;
    }
    calls_[call->key] = call;
    ++running_;
  }
  std::thread([this, call] { RunToolCall(call); }).detach();
}

// A tool call's thread entry: what the tool throws becomes an isError reply.
void Server::RunToolCall(std::shared_ptr<Call> call) {
  Context context(this, call.get());
  ToolOutcome outcome;
  try {
    outcome = tools_.Call(call->tool, call->arguments, context);
  } catch (const std::exception& e) {
    outcome = ToolOutcome{};
    outcome.is_error = true;
    outcome.text = "tool " + call->tool + " failed: " + e.what();
  } catch (...) {
    outcome = ToolOutcome{};
    outcome.is_error = true;
    outcome.text = "tool " + call->tool + " failed: an exception that is not a std::exception";
  }
  bool cancelled = context.cancelled();
  if (!cancelled) {
    Document reply;
    Allocator& a = reply.GetAllocator();
    Value result(rapidjson::kObjectType);
    Value content(rapidjson::kArrayType);
    Value text(rapidjson::kObjectType);
    SetStr(&text, "type", "text", a);
    SetStr(&text, "text", outcome.text, a);
    content.PushBack(text, a);
    Set(&result, "content", content, a);
    if (outcome.structured) Set(&result, "structuredContent", Value(*outcome.structured, a), a);
    if (outcome.is_error) Set(&result, "isError", Value(true), a);
    SendResult(call->id, std::move(result), a, call->version);
  }
  std::lock_guard<std::mutex> lock(mu_);
  calls_.erase(call->key);
  --running_;
  calls_done_.notify_all();
}

}  // namespace trtllm_run::mcp
