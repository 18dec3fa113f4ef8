// Incremental log watching: a streaming multi-pattern scanner and a follower that reads
// only what was appended to a log file since its last poll. Executors use them to detect
// "hang detected", OOM messages and the workflow's success/failure patterns in job logs
// of any size, at a cost proportional to the new bytes.
#ifndef TRTLLM_RUN_SDK_SUPERVISE_LOG_FOLLOWER_H_
#define TRTLLM_RUN_SDK_SUPERVISE_LOG_FOLLOWER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The first occurrence of one pattern in a stream.
struct PatternMatch {
  std::size_t pattern_index = 0;  // into the scanner's patterns
  std::string pattern;            // as given
  std::uint64_t offset = 0;       // stream offset of the match's first byte
  // The line that contains the match, without its line end. Long lines are cut to about
  // 2 KiB on each side of the match. When the rest of the line has not arrived yet, the
  // line grows as later chunks complete it (line_complete false until then).
  std::string line;
  bool line_complete = false;
};

// Finds ASCII case-insensitive patterns in a stream fed in chunks of any size, also when
// a pattern is split across chunks: it keeps only the last (longest pattern - 1) bytes of
// the previous chunk, never the stream. Records the first match of each pattern; a
// pattern found once is not searched again. Patterns should not contain '\n'.
class TRTLLM_RUN_API PatternScanner {
 public:
  // Empty patterns never match.
  explicit PatternScanner(std::vector<std::string> patterns = {});

  // Scans the next bytes of the stream.
  void Feed(std::string_view chunk);

  // The stream starts over (the file was truncated): forgets the carried bytes and the
  // partial line; matches already found are kept, and offsets continue to grow.
  void Restart();

  const std::vector<std::string>& patterns() const { return patterns_; }

  // Matches found so far, in stream order, at most one per pattern.
  const std::vector<PatternMatch>& matches() const { return matches_; }

  // The earliest match, or null.
  const PatternMatch* first_match() const;

  // The match of pattern `index`, or null when it was not seen (yet).
  const PatternMatch* FindMatch(std::size_t index) const;

  bool all_found() const { return matches_.size() == active_patterns_; }
  std::uint64_t bytes_scanned() const { return bytes_scanned_; }

 private:
  void UpdateLineState(std::string_view chunk);
  void CompletePendingLines(std::string_view chunk);
  void RecordMatch(std::size_t index, std::uint64_t offset, std::string_view chunk);

  std::vector<std::string> patterns_;
  std::vector<std::string> lowered_;  // patterns_, ASCII lower-cased
  std::vector<bool> found_;
  std::size_t active_patterns_ = 0;  // non-empty patterns
  std::size_t max_length_ = 0;
  std::string carry_;         // last max_length_ - 1 bytes fed
  std::string partial_line_;  // bytes after the last '\n' fed (capped)
  std::vector<PatternMatch> matches_;
  std::uint64_t bytes_scanned_ = 0;
};

// What one LogFollower::Poll() did.
struct LogPoll {
  bool exists = false;          // the file exists (it may appear later)
  std::uint64_t new_bytes = 0;  // bytes read by this call
  bool restarted = false;       // the file shrank or was replaced: read again from byte 0
  std::string note;             // for people, when restarted
};

// Follows one log file: each Poll() reads only the bytes appended since the previous
// poll (pread from a stored offset, up to the size seen when the poll starts), feeds them
// to a PatternScanner and keeps the last lines. A missing file is not an error (the job
// may not have created it yet). A file that shrinks below the offset (truncated, or
// rotated by copy-and-truncate) or is replaced by a new file under the same path is read
// again from byte 0, and the poll says so. Not thread-safe; the writer may be another
// process or thread.
class TRTLLM_RUN_API LogFollower {
 public:
  LogFollower(std::string path, std::vector<std::string> patterns, std::size_t tail_lines = 20);
  ~LogFollower();
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;

  // Reads what is new. kIoError naming the path when the file exists but cannot be
  // opened or read.
  Result<LogPoll> Poll();

  const std::string& path() const { return path_; }
  const PatternScanner& scanner() const { return scanner_; }

  // Total bytes read from the file by all polls (restarts read bytes again).
  std::uint64_t bytes_read() const { return bytes_read_; }
  // The file's size when last polled (0 while it does not exist).
  std::uint64_t bytes_seen() const { return bytes_seen_; }
  // The next byte to read.
  std::uint64_t offset() const { return offset_; }
  int restarts() const { return restarts_; }

  // The last tail_lines lines read, oldest first, without line ends; the last one may be
  // an unterminated line. Lines longer than 4 KiB keep their last 4 KiB.
  std::vector<std::string> Tail() const;

 private:
  void Restart(std::string note, LogPoll* poll);
  void UpdateTail(std::string_view chunk);

  std::string path_;
  PatternScanner scanner_;
  std::size_t tail_lines_;
  int fd_ = -1;
  std::uint64_t dev_ = 0;
  std::uint64_t ino_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_seen_ = 0;
  int restarts_ = 0;
  std::deque<std::string> tail_;
  std::string tail_partial_;
  std::string buffer_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SUPERVISE_LOG_FOLLOWER_H_
