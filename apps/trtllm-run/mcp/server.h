// The MCP server: JSON-RPC 2.0 messages in, messages out, for both eras of the protocol.
//
//   legacy (2025-11-25, 2025-06-18): `initialize` negotiates the version for this
//     process; later requests carry none.
//   modern (2026-07-28): no handshake; every request carries
//     params._meta["io.modelcontextprotocol/protocolVersion"], every result has
//     resultType (and list results ttlMs/cacheScope); `server/discover` advertises the
//     versions. A version the server does not support is error -32022 with
//     data.supported and data.requested.
//
// tools/call runs on a thread of its own, so that notifications/cancelled and other
// requests are read while a wait_case waits; a cancelled call sends nothing more. The
// transport (transport.h) and the tools (tools.h) are separate: the server only sees
// whole messages and hands each answer to the sink as one line of JSON.
#ifndef TRTLLM_RUN_APPS_MCP_SERVER_H_
#define TRTLLM_RUN_APPS_MCP_SERVER_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "json.h"
#include "tools.h"

namespace trtllm_run::mcp {

inline constexpr char kModernVersion[] = "2026-07-28";

// Every version the server speaks, newest first: the modern one, then the legacy ones.
const std::vector<std::string>& SupportedVersions();

// Nesting deeper than this is refused before parsing (-32600): no message needs it, and
// it bounds the recursion of everything that later walks a message.
inline constexpr int kMaxNesting = 64;

struct ServerOptions {
  ToolsOptions tools;
  int max_in_flight = 16;  // tool calls running at once; more are refused (-32000)
  bool verbose = false;    // one stderr line per message
};

class Server {
 public:
  // Receives one message (no newline); false when the peer is gone.
  using Sink = std::function<bool(const std::string&)>;

  // `runtime` is not owned and must outlive the server.
  Server(Runtime* runtime, ServerOptions options, Sink sink);
  ~Server();  // Shutdown()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // One message as read from the transport (any bytes: bad JSON is answered -32700).
  void HandleMessage(const std::string& text);

  // A message of `bytes` (> `limit`) that the transport dropped unread: -32600.
  void HandleOversized(std::size_t bytes, std::size_t limit);

  // In-flight calls end early (a wait answers with the state so far) and this blocks
  // until every call has finished. Later messages are refused. Idempotent.
  void Shutdown();

 private:
  struct Call;
  class Context;

  void HandleRequest(const Document& message, const std::string& method);
  void HandleNotification(const Document& message, const std::string& method);
  void StartToolCall(const Document& message, const std::string& version);
  void RunToolCall(std::shared_ptr<Call> call);

  // Adds resultType and serverInfo for a modern `version`; sends {"result": result}.
  void SendResult(const Value& id, Value result, Allocator& alloc, const std::string& version);
  void SendError(const Value* id, int code, const std::string& message, Value data,
                 Allocator& alloc);
  void SendError(const Value* id, int code, const std::string& message);
  void Send(const Value& message);

  Value ServerInfo(Allocator& alloc) const;

  Tools tools_;
  ServerOptions options_;
  Sink sink_;
  std::mutex mu_;
  std::condition_variable calls_done_;
  std::map<std::string, std::shared_ptr<Call>> calls_;  // by the id's JSON text
  int running_ = 0;                                     // call threads alive
  std::string legacy_version_;                          // negotiated by initialize; "" before it
  bool shutting_down_ = false;
};

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_SERVER_H_
