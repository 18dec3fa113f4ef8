// FileFollowStream: one long-lived command on the cluster's side (a bash loop over the SSH
// master, no python assumed) that follows a fixed set of files and prints, framed, what
// each one gained, a few times a second; the watcher reads the frames as they arrive
// instead of asking for the files' tails once per log interval, at no round trip per poll.
//
// The stream (kFileFollowScript's output) is, in this order:
//   "S <files>\n"                                  once, first: the follower runs
//   "F <index> <offset> <size> <count>\n" + count bytes
//        the bytes of file <index> (argument order) from <offset>; <size>: the file's
//        size when it was read. A file found shorter than what was sent of it (truncated
//        or replaced) is sent again from offset 0; a missing file sends nothing.
//   "H\n"                                          about once a second (liveness)
// Anything else breaks the framing: the stream is then dropped and restarted by its
// owner from the offsets it holds, never read on.
#ifndef TRTLLM_RUN_SDK_SLURM_FILE_FOLLOW_STREAM_H_
#define TRTLLM_RUN_SDK_SLURM_FILE_FOLLOW_STREAM_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

class ChildProcess;

// The follower: bash -c kFileFollowScript NAME TICK_SECONDS MAX_CHUNK PATH OFFSET ...
TRTLLM_RUN_API extern const char kFileFollowScript[];

struct FollowFrame {
  enum class Kind { kStart, kChunk, kBeat };
  Kind kind = Kind::kBeat;
  std::size_t index = 0;     // kChunk: the file (argument order); kStart: how many
  std::uint64_t offset = 0;  // kChunk: where `bytes` start in the file
  std::uint64_t size = 0;    // kChunk: the file's size when it was read
  std::string bytes;
};

// Splits the follower's output into frames, across reads cut anywhere.
class TRTLLM_RUN_API FollowFrameParser {
 public:
  // `files`: how many files the follower was given; `max_chunk`: the most bytes a frame
  // may carry (its MAX_CHUNK argument).
  FollowFrameParser(std::size_t files, std::size_t max_chunk);

  // Appends stream bytes and moves every complete frame to `frames`. False once the
  // stream broke the framing (an unknown or malformed header, an index out of range, a
  // count over max_chunk, a first frame other than "S <files>"): error() says how, and
  // every later call returns false without reading.
  bool Feed(const char* data, std::size_t size, std::vector<FollowFrame>* frames);

  const std::string& error() const { return error_; }
  // Bytes received that do not make a complete frame yet.
  std::size_t pending() const { return buffer_.size() - pos_; }

 private:
  bool Fail(const std::string& why);

  std::size_t files_;
  std::size_t max_chunk_;
  bool started_ = false;
  std::string buffer_;
  std::size_t pos_ = 0;
  std::string error_;
};

// One file to follow and how much of it is held already.
struct FollowedFile {
  std::string path;
  std::uint64_t offset = 0;
};

// Starts a long-lived command on the cluster's side (its argv, as Scenario::Run takes it),
// its stdout streaming back through the returned process's output pipe (nothing else
// written to that pipe).
using StreamStarter =
    std::function<Result<std::unique_ptr<ChildProcess>>(const std::vector<std::string>& argv)>;

// One running follower. Not thread-safe.
class TRTLLM_RUN_API FileFollowStream {
 public:
  static constexpr char kTickSeconds[] = "0.2";      // how often the follower looks
  static constexpr std::size_t kMaxChunk = 1 << 20;  // the most bytes of a frame

  // Starts the follower of `files` (non-empty) through `start`.
  static Result<std::unique_ptr<FileFollowStream>> Start(const StreamStarter& start,
                                                         const std::vector<FollowedFile>& files);
  ~FileFollowStream();  // ends the follower (and its ssh client)
  FileFollowStream(const FileFollowStream&) = delete;
  FileFollowStream& operator=(const FileFollowStream&) = delete;

  // The pipe to poll() for new frames; -1 once the stream ended.
  int fd() const;

  // Reads what arrived without blocking and moves the complete frames to `frames`. False
  // when the stream ended or broke its framing (problem() says how); frames complete
  // before that are still returned.
  bool Read(std::vector<FollowFrame>* frames);

  bool started() const { return started_; }  // the "S" frame arrived
  std::chrono::steady_clock::time_point started_at() const { return spawned_; }
  std::chrono::steady_clock::time_point last_frame() const { return last_frame_; }
  const std::string& problem() const { return problem_; }

 private:
  FileFollowStream(std::unique_ptr<ChildProcess> process, std::size_t files);

  std::unique_ptr<ChildProcess> process_;
  FollowFrameParser parser_;
  bool started_ = false;
  std::chrono::steady_clock::time_point spawned_;
  std::chrono::steady_clock::time_point last_frame_;
  std::string problem_;
};

// The follower's argv for `files`.
TRTLLM_RUN_API std::vector<std::string> FileFollowArgv(const std::vector<FollowedFile>& files);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_FILE_FOLLOW_STREAM_H_
