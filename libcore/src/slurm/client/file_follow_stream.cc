// FileFollowStream (file_follow_stream.h).
#include "trtllm_run/sdk/slurm/file_follow_stream.h"

#include <algorithm>
#include <optional>

#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

// Arguments: TICK_SECONDS MAX_CHUNK, then PATH OFFSET pairs. Each tick: one `stat` for
// every file that exists; a file that grew (or shrank: then from 0) is copied through a
// temp file so that the frame's count is exact while the file keeps growing. The pause
// is a `read -t` on a private FIFO (no process per tick) where mkfifo works. It ends
// when its output is closed (the watcher or the SSH connection went away): the next
// write fails.
const char kFileFollowScript[] = R"SH(tick=$1 max=$2
shift 2
tmp=$(mktemp) || exit 70
trap 'rm -f "$tmp"' EXIT
trap 'exit 0' HUP TERM PIPE
if mkfifo -m 600 "$tmp.w" 2>/dev/null && exec 3<>"$tmp.w"; then
  rm -f "$tmp.w"
  pause() { read -r -t "$tick" -u 3 _; }
else
  rm -f "$tmp.w"
  pause() { sleep "$tick"; }
fi
paths=() offs=()
while [ $# -ge 2 ]; do
  paths+=("$1") offs+=("$2")
  shift 2
done
n=${#paths[@]}
printf 'S %d\n' "$n" || exit 0
last=$SECONDS
while :; do
  have=() idx=() sizes=()
  for ((i = 0; i < n; i++)); do
    if [ -f "${paths[i]}" ]; then have+=("${paths[i]}") idx+=("$i"); fi
  done
  if [ ${#have[@]} -gt 0 ] && got=$(stat -L -c %s -- "${have[@]}" 2>/dev/null); then
    mapfile -t sizes <<<"$got"
  fi
  if [ ${#sizes[@]} -eq ${#have[@]} ]; then
    for ((k = 0; k < ${#have[@]}; k++)); do
      i=${idx[k]} s=${sizes[k]} off=${offs[i]}
      [ "$s" -lt "$off" ] && off=0
      if [ "$s" -gt "$off" ] || [ "$off" -ne "${offs[i]}" ]; then
        tail -c +$((off + 1)) -- "${paths[i]}" 2>/dev/null | head -c "$max" >"$tmp"
        c=$(stat -c %s -- "$tmp") || exit 71
        printf 'F %d %d %d %d\n' "$i" "$off" "$s" "$c" || exit 0
        cat -- "$tmp" || exit 0
        offs[i]=$((off + c))
      fi
    done
  fi
  if [ "$SECONDS" -ne "$last" ]; then
    printf 'H\n' || exit 0
    last=$SECONDS
  fi
  pause
done
)SH";

namespace {

constexpr std::size_t kMaxHeader = 128;
constexpr std::size_t kMaxReadPerCall = 8 << 20;

bool ParseCount(const std::string& word, std::uint64_t* value) {
  std::optional<long long> parsed = ParseInteger(word, 0, (1LL << 62));
  if (!parsed) return false;
  *value = static_cast<std::uint64_t>(*parsed);
  return true;
}

}  // namespace

FollowFrameParser::FollowFrameParser(std::size_t files, std::size_t max_chunk)
    : files_(files), max_chunk_(max_chunk) {}

bool FollowFrameParser::Fail(const std::string& why) {
  error_ = why;
  buffer_.clear();
  pos_ = 0;
  return false;
}

bool FollowFrameParser::Feed(const char* data, std::size_t size, std::vector<FollowFrame>* frames) {
  if (!error_.empty()) return false;
  buffer_.append(data, size);
  while (pos_ < buffer_.size()) {
    std::size_t nl = buffer_.find('\n', pos_);
    if (nl == std::string::npos) {
      if (buffer_.size() - pos_ > kMaxHeader) return Fail("a frame header without its newline");
      break;
    }
    if (nl - pos_ > kMaxHeader)
      return Fail("a frame header over " + std::to_string(kMaxHeader) + " bytes");
    std::string header = buffer_.substr(pos_, nl - pos_);
    std::vector<std::string> words = SplitWhitespace(header);
    FollowFrame frame;
    std::uint64_t numbers[4] = {0, 0, 0, 0};
    bool numeric = true;
    for (std::size_t i = 1; i < words.size() && i <= 4; ++i) {
      numeric = numeric && ParseCount(words[i], &numbers[i - 1]);
    }
    std::string shown = "\"" + EscapeControl(header.substr(0, 60)) + "\"";
    if (words.empty() || !numeric) return Fail("unexpected frame header " + shown);
    if (!started_) {
      if (words[0] != "S" || words.size() != 2 || numbers[0] != files_) {
        return Fail("the follower did not start with \"S " + std::to_string(files_) + "\" but " +
                    shown);
      }
      started_ = true;
      frame.kind = FollowFrame::Kind::kStart;
      frame.index = static_cast<std::size_t>(numbers[0]);
      pos_ = nl + 1;
    } else if (words[0] == "H" && words.size() == 1) {
      frame.kind = FollowFrame::Kind::kBeat;
      pos_ = nl + 1;
    } else if (words[0] == "F" && words.size() == 5) {
      if (numbers[0] >= files_) return Fail("a frame for file index out of range: " + shown);
      if (numbers[3] > max_chunk_) return Fail("a frame over the chunk limit: " + shown);
      std::size_t count = static_cast<std::size_t>(numbers[3]);
      if (buffer_.size() - (nl + 1) < count) break;  // its bytes are still coming
      frame.kind = FollowFrame::Kind::kChunk;
      frame.index = static_cast<std::size_t>(numbers[0]);
      frame.offset = numbers[1];
      frame.size = numbers[2];
      frame.bytes = buffer_.substr(nl + 1, count);
      pos_ = nl + 1 + count;
    } else {
      return Fail("unexpected frame header " + shown);
    }
    frames->push_back(std::move(frame));
  }
  // Keep only what is not consumed (amortized: compact once half is consumed).
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    pos_ = 0;
  } else if (pos_ > buffer_.size() / 2) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  return true;
}

std::vector<std::string> FileFollowArgv(const std::vector<FollowedFile>& files) {
  std::vector<std::string> argv = {"bash",
                                   "-c",
                                   kFileFollowScript,
                                   "trtllm-run-follow",
                                   FileFollowStream::kTickSeconds,
                                   std::to_string(FileFollowStream::kMaxChunk)};
  for (const FollowedFile& file : files) {
    argv.push_back(file.path);
    argv.push_back(std::to_string(file.offset));
  }
  return argv;
}

FileFollowStream::FileFollowStream(std::unique_ptr<ChildProcess> process, std::size_t files)
    : process_(std::move(process)), parser_(files, kMaxChunk) {
  spawned_ = last_frame_ = std::chrono::steady_clock::now();
}

FileFollowStream::~FileFollowStream() = default;  // ChildProcess kills its group

Result<std::unique_ptr<FileFollowStream>> FileFollowStream::Start(
    const StreamStarter& start, const std::vector<FollowedFile>& files) {
  if (!start) return Status::Internal("no way to start a remote output stream");
  if (files.empty()) return Status::Internal("a remote output stream needs a file to follow");
  Result<std::unique_ptr<ChildProcess>> process = start(FileFollowArgv(files));
  if (!process.ok()) return process.status().WithContext("starting the remote output stream");
  return std::unique_ptr<FileFollowStream>(
      new FileFollowStream(std::move(process.value()), files.size()));
}

int FileFollowStream::fd() const { return process_ ? process_->output_fd() : -1; }

bool FileFollowStream::Read(std::vector<FollowFrame>* frames) {
  if (!problem_.empty()) return false;
  std::size_t before = frames->size();
  std::size_t total = 0;
  std::string chunk;
  bool ended = false;
  while (total < kMaxReadPerCall) {
    chunk.clear();
    Result<ReadState> state = process_->ReadOutput(&chunk, 256 * 1024);
    if (!state.ok()) {
      problem_ = "reading it failed: " + state.status().message();
      return false;
    }
    total += chunk.size();
    if (!chunk.empty() && !parser_.Feed(chunk.data(), chunk.size(), frames)) {
      problem_ = "its output broke the framing: " + parser_.error();
      return false;
    }
    if (state.value() == ReadState::kWouldBlock) break;
    if (state.value() == ReadState::kEof) {
      ended = true;
      break;
    }
  }
  if (frames->size() > before) {
    last_frame_ = std::chrono::steady_clock::now();
    if (!started_) started_ = (*frames)[before].kind == FollowFrame::Kind::kStart;
  }
  if (ended) {
    std::optional<ProcessExit> exit = process_->TryWait();
    problem_ = "it ended (" + (exit ? exit->ToString() : std::string("output closed")) + ")";
    return false;
  }
  return true;
}

}  // namespace trtllm_run
