// The MCP stdio transport's framing: one JSON-RPC message per line (newline-delimited,
// no embedded newline). A line longer than the limit is refused without being held in
// memory whole: its bytes are counted and dropped up to its newline.
#ifndef TRTLLM_RUN_APPS_MCP_TRANSPORT_H_
#define TRTLLM_RUN_APPS_MCP_TRANSPORT_H_

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace trtllm_run::mcp {

// The default limit of one message (`trtllm-run mcp --max-message-bytes`).
inline constexpr std::size_t kDefaultMaxMessageBytes = 4 * 1024 * 1024;

class LineReader {
 public:
  enum class Event {
    kLine,       // *line holds one message (without its newline and a trailing '\r')
    kOversized,  // a line of *oversized_bytes (> the limit) was dropped
    kEof,        // the peer closed the stream (a last unterminated line is returned first)
    kStopped,    // stop_fd became readable
    kError,      // read() failed
  };

  // Reads from `fd` (not owned). Holds at most max_line_bytes plus one read's worth.
  LineReader(int fd, std::size_t max_line_bytes);

  // Blocks until one of the events. `stop_fd` (-1: none) ends the wait when readable.
  Event Next(std::string* line, std::size_t* oversized_bytes, int stop_fd);

 private:
  // Takes a complete line out of buffer_ (or drops it when discarding); true when an
  // event is ready.
  bool TakeLine(std::string* line, std::size_t* oversized_bytes, Event* event);

  int fd_;
  std::size_t max_;
  std::string buffer_;  // bytes after the last newline seen
  bool discarding_ = false;
  std::size_t discarded_ = 0;
  bool eof_ = false;
};

// Writes messages as lines to `fd` (not owned), one writer at a time. After a failed
// write (the peer is gone: EPIPE) every later Write() returns false at once.
class LineWriter {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  bool Write(std::string_view message);
  bool broken() const;

 private:
  mutable std::mutex mu_;
  int fd_;
  bool broken_ = false;
};

}  // namespace trtllm_run::mcp

#endif  // TRTLLM_RUN_APPS_MCP_TRANSPORT_H_
