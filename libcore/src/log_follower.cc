#include "trtllm_run/log_follower.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <utility>

namespace trtllm_run {

namespace {

constexpr std::size_t kMatchContext = 2048;     // bytes kept on each side of a match
constexpr std::size_t kTailLineMax = 4096;      // bytes kept of one tail line
constexpr std::size_t kReadBlock = 256 * 1024;  // bytes per pread

struct LowerTable {
  std::array<unsigned char, 256> map;
  LowerTable() {
    for (int c = 0; c < 256; ++c) {
      map[c] = static_cast<unsigned char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
};
const LowerTable kLower;

inline unsigned char Lower(char c) { return kLower.map[static_cast<unsigned char>(c)]; }

// The first position of `needle` (already lower-case, non-empty) in `hay`, ignoring ASCII
// case, or npos. Candidates for the first byte are found with memchr for each of its two
// cases; the rest is compared through the table.
std::size_t FindCaseless(std::string_view hay, const std::string& needle) {
  const std::size_t m = needle.size();
  if (hay.size() < m) return std::string_view::npos;
  const unsigned char lo = static_cast<unsigned char>(needle[0]);
  const unsigned char up =
      (lo >= 'a' && lo <= 'z') ? static_cast<unsigned char>(lo - 'a' + 'A') : lo;
  const char* base = hay.data();
  const std::size_t last = hay.size() - m;  // last possible start
  constexpr std::size_t npos = std::string_view::npos;
  auto find = [&](unsigned char c, std::size_t from) -> std::size_t {
    if (from > last) return npos;
    const void* p = ::memchr(base + from, c, last - from + 1);
    return p ? static_cast<std::size_t>(static_cast<const char*>(p) - base) : npos;
  };
  // The next candidate of each case; only the one consumed is searched again.
  std::size_t next_lo = find(lo, 0);
  std::size_t next_up = lo == up ? npos : find(up, 0);
  while (true) {
    std::size_t candidate = std::min(next_lo, next_up);
    if (candidate == npos) return npos;
    std::size_t k = 1;
    while (k < m && Lower(base[candidate + k]) == static_cast<unsigned char>(needle[k])) ++k;
    if (k == m) return candidate;
    if (candidate == next_lo) {
      next_lo = find(lo, candidate + 1);
    } else {
      next_up = find(up, candidate + 1);
    }
  }
}

void StripCarriageReturn(std::string* line) {
  if (!line->empty() && line->back() == '\r') line->pop_back();
}

}  // namespace

// ---------------------------------------------------------------------------------------
// PatternScanner

PatternScanner::PatternScanner(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {
  for (const std::string& pattern : patterns_) {
    std::string lowered(pattern);
    for (char& c : lowered) c = static_cast<char>(Lower(c));
    lowered_.push_back(std::move(lowered));
    found_.push_back(false);
    if (!pattern.empty()) ++active_patterns_;
    max_length_ = std::max(max_length_, pattern.size());
  }
}

const PatternMatch* PatternScanner::first_match() const {
  return matches_.empty() ? nullptr : &matches_.front();
}

const PatternMatch* PatternScanner::FindMatch(std::size_t index) const {
  for (const PatternMatch& match : matches_) {
    if (match.pattern_index == index) return &match;
  }
  return nullptr;
}

void PatternScanner::Restart() {
  carry_.clear();
  partial_line_.clear();
  for (PatternMatch& match : matches_) {
    if (!match.line_complete) {
      StripCarriageReturn(&match.line);
      match.line_complete = true;
    }
  }
}

void PatternScanner::Feed(std::string_view chunk) {
  if (chunk.empty()) return;
  CompletePendingLines(chunk);
  if (!all_found()) {
    const std::uint64_t chunk_start = bytes_scanned_;
    bool recorded = false;
    for (std::size_t i = 0; i < lowered_.size(); ++i) {
      const std::string& needle = lowered_[i];
      if (found_[i] || needle.empty()) continue;
      const std::size_t m = needle.size();
      std::size_t pos = std::string_view::npos;
      std::uint64_t offset = 0;
      // A match that starts in the carried bytes ends in this chunk: search the seam.
      if (m > 1 && !carry_.empty()) {
        std::size_t before = std::min(carry_.size(), m - 1);
        std::size_t after = std::min(chunk.size(), m - 1);
        std::string seam = carry_.substr(carry_.size() - before);
        seam.append(chunk.data(), after);
        pos = FindCaseless(seam, needle);
        if (pos != std::string_view::npos) offset = chunk_start - before + pos;
      }
      if (pos == std::string_view::npos) {
        pos = FindCaseless(chunk, needle);
        if (pos != std::string_view::npos) offset = chunk_start + pos;
      }
      if (pos != std::string_view::npos) {
        RecordMatch(i, offset, chunk);
        recorded = true;
      }
    }
    if (recorded) {
      std::stable_sort(
          matches_.begin(), matches_.end(),
          [](const PatternMatch& a, const PatternMatch& b) { return a.offset < b.offset; });
    }
  }
  UpdateLineState(chunk);
  bytes_scanned_ += chunk.size();
}

void PatternScanner::RecordMatch(std::size_t index, std::uint64_t offset, std::string_view chunk) {
  const std::uint64_t chunk_start = bytes_scanned_;
  PatternMatch match;
  match.pattern_index = index;
  match.pattern = patterns_[index];
  match.offset = offset;

  // `before`: the line from its start to the match. `rest_from`: where, in this chunk,
  // the text from the match onwards continues.
  std::string before;
  std::string rest;
  std::size_t rest_from = 0;
  if (offset >= chunk_start) {
    std::size_t mpos = static_cast<std::size_t>(offset - chunk_start);
    const void* nl = mpos > 0 ? ::memrchr(chunk.data(), '\n', mpos) : nullptr;
    if (nl != nullptr) {
      std::size_t start = static_cast<const char*>(nl) - chunk.data() + 1;
      before.assign(chunk.data() + start, mpos - start);
    } else {
      before = partial_line_;
      before.append(chunk.data(), mpos);
    }
    rest_from = mpos;
  } else {
    // The match began in earlier chunks, i.e. at the end of partial_line_ (a pattern
    // holds no '\n').
    std::size_t back = static_cast<std::size_t>(chunk_start - offset);
    std::size_t split = partial_line_.size() >= back ? partial_line_.size() - back : 0;
    before = partial_line_.substr(0, split);
    rest = partial_line_.substr(split);
    rest_from = 0;
  }
  if (before.size() > kMatchContext) before.erase(0, before.size() - kMatchContext);

  std::string_view tail = chunk.substr(rest_from);
  const void* nl = ::memchr(tail.data(), '\n', tail.size());
  std::size_t take = nl ? static_cast<const char*>(nl) - tail.data() : tail.size();
  rest.append(tail.data(), take);
  match.line_complete = nl != nullptr;
  if (rest.size() >= kMatchContext) {
    rest.resize(kMatchContext);
    match.line_complete = true;  // cut: the rest of a very long line is not needed
  }
  match.line = before + rest;
  if (match.line_complete) StripCarriageReturn(&match.line);
  found_[index] = true;
  matches_.push_back(std::move(match));
}

void PatternScanner::CompletePendingLines(std::string_view chunk) {
  for (PatternMatch& match : matches_) {
    if (match.line_complete) continue;
    const void* nl = ::memchr(chunk.data(), '\n', chunk.size());
    std::size_t take = nl ? static_cast<const char*>(nl) - chunk.data() : chunk.size();
    std::size_t room =
        2 * kMatchContext > match.line.size() ? 2 * kMatchContext - match.line.size() : 0;
    match.line.append(chunk.data(), std::min(take, room));
    if (nl != nullptr || take >= room) {
      match.line_complete = true;
      StripCarriageReturn(&match.line);
    }
  }
}

void PatternScanner::UpdateLineState(std::string_view chunk) {
  const std::size_t keep = max_length_ > 0 ? max_length_ - 1 : 0;
  if (chunk.size() >= keep) {
    carry_.assign(chunk.data() + chunk.size() - keep, keep);
  } else {
    carry_.append(chunk.data(), chunk.size());
    if (carry_.size() > keep) carry_.erase(0, carry_.size() - keep);
  }

  const void* nl = ::memrchr(chunk.data(), '\n', chunk.size());
  std::string_view after = chunk;
  if (nl != nullptr) {
    after = chunk.substr(static_cast<const char*>(nl) - chunk.data() + 1);
    partial_line_.clear();
  }
  if (after.size() >= kMatchContext) {
    partial_line_.assign(after.data() + after.size() - kMatchContext, kMatchContext);
  } else {
    partial_line_.append(after.data(), after.size());
    if (partial_line_.size() > kMatchContext) {
      partial_line_.erase(0, partial_line_.size() - kMatchContext);
    }
  }
}

// ---------------------------------------------------------------------------------------
// LogFollower

LogFollower::LogFollower(std::string path, std::vector<std::string> patterns,
                         std::size_t tail_lines)
    : path_(std::move(path)), scanner_(std::move(patterns)), tail_lines_(tail_lines) {}

LogFollower::~LogFollower() {
  if (fd_ >= 0) ::close(fd_);
}

void LogFollower::Restart(std::string note, LogPoll* poll) {
  offset_ = 0;
  scanner_.Restart();
  tail_.clear();
  tail_partial_.clear();
  ++restarts_;
  poll->restarted = true;
  poll->note = std::move(note);
}

Result<LogPoll> LogFollower::Poll() {
  LogPoll poll;
  struct stat st;
  bool path_exists = ::stat(path_.c_str(), &st) == 0;
  if (!path_exists && errno != ENOENT) {
    return Status::IoError("cannot stat log file " + path_ + ": " + ::strerror(errno));
  }
  if (fd_ >= 0 && path_exists &&
      (static_cast<std::uint64_t>(st.st_dev) != dev_ ||
       static_cast<std::uint64_t>(st.st_ino) != ino_)) {
    // Replaced (renamed away and re-created): follow the new file from its start.
    ::close(fd_);
    fd_ = -1;
    Restart("log file " + path_ + " was replaced by a new file; reading it from the start", &poll);
  }
  if (fd_ < 0) {
    if (!path_exists) {
      bytes_seen_ = 0;
      return poll;
    }
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      if (errno == ENOENT) return poll;  // removed between stat and open
      return Status::IoError("cannot open log file " + path_ + ": " + ::strerror(errno));
    }
    struct stat opened;
    if (::fstat(fd_, &opened) != 0) {
      return Status::IoError("cannot stat log file " + path_ + ": " + ::strerror(errno));
    }
    if (!S_ISREG(opened.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      return Status::IoError("log file " + path_ + " is not a regular file",
                             "give the path of a file the job writes its output to");
    }
    dev_ = static_cast<std::uint64_t>(opened.st_dev);
    ino_ = static_cast<std::uint64_t>(opened.st_ino);
  }
  poll.exists = true;

  // A file removed after we opened it is still read through fd_ (its writer may go on).
  struct stat now;
  if (::fstat(fd_, &now) != 0) {
    return Status::IoError("cannot stat log file " + path_ + ": " + ::strerror(errno));
  }
  std::uint64_t size = static_cast<std::uint64_t>(now.st_size);
  if (size < offset_) {
    Restart("log file " + path_ + " shrank from " + std::to_string(offset_) + " to " +
                std::to_string(size) +
                " bytes (truncated or rotated); reading it again from the start",
            &poll);
  }
  bytes_seen_ = size;

  if (buffer_.size() < kReadBlock) buffer_.resize(kReadBlock);
  while (offset_ < size) {
    std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kReadBlock, size - offset_));
    ssize_t n = ::pread(fd_, &buffer_[0], want, static_cast<off_t>(offset_));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError("cannot read log file " + path_ + " at offset " +
                             std::to_string(offset_) + ": " + ::strerror(errno));
    }
    if (n == 0) break;  // shrank while reading; the next poll notices
    std::string_view chunk(buffer_.data(), static_cast<std::size_t>(n));
    scanner_.Feed(chunk);
    UpdateTail(chunk);
    offset_ += static_cast<std::uint64_t>(n);
    bytes_read_ += static_cast<std::uint64_t>(n);
    poll.new_bytes += static_cast<std::uint64_t>(n);
  }
  return poll;
}

void LogFollower::UpdateTail(std::string_view chunk) {
  if (tail_lines_ == 0) return;
  auto clip = [](std::string line) {
    StripCarriageReturn(&line);
    if (line.size() > kTailLineMax) line.erase(0, line.size() - kTailLineMax);
    return line;
  };
  // Only the last tail_lines_ line ends of a chunk matter: find them from the end, plus
  // one more to know where the earliest of those lines starts.
  std::vector<std::size_t> ends;  // positions of '\n', descending
  std::size_t search_end = chunk.size();
  while (ends.size() < tail_lines_ + 1 && search_end > 0) {
    const void* nl = ::memrchr(chunk.data(), '\n', search_end);
    if (nl == nullptr) break;
    std::size_t pos = static_cast<const char*>(nl) - chunk.data();
    ends.push_back(pos);
    search_end = pos;
  }
  if (ends.empty()) {
    tail_partial_.append(chunk.data(), chunk.size());
    if (tail_partial_.size() > 2 * kTailLineMax) {
      tail_partial_.erase(0, tail_partial_.size() - kTailLineMax);
    }
    return;
  }
  std::reverse(ends.begin(), ends.end());  // ascending
  std::size_t first = 0;
  if (ends.size() == tail_lines_ + 1) {
    // Every kept line lies inside this chunk; older lines are pushed out anyway.
    tail_.clear();
    tail_partial_.clear();
    first = 1;
  }
  std::size_t start = first == 1 ? ends[0] + 1 : 0;
  for (std::size_t i = first; i < ends.size(); ++i) {
    std::string line;
    if (start == 0 && first == 0) {
      line = std::move(tail_partial_);
      tail_partial_.clear();
    }
    line.append(chunk.data() + start, ends[i] - start);
    tail_.push_back(clip(std::move(line)));
    start = ends[i] + 1;
  }
  while (tail_.size() > tail_lines_) tail_.pop_front();
  std::string_view rest = chunk.substr(start);
  if (rest.size() > kTailLineMax) rest = rest.substr(rest.size() - kTailLineMax);
  tail_partial_.assign(rest.data(), rest.size());
}

std::vector<std::string> LogFollower::Tail() const {
  std::vector<std::string> lines(tail_.begin(), tail_.end());
  if (!tail_partial_.empty()) {
    std::string partial = tail_partial_;
    if (partial.size() > kTailLineMax) partial.erase(0, partial.size() - kTailLineMax);
    lines.push_back(std::move(partial));
  }
  if (lines.size() > tail_lines_) lines.erase(lines.begin(), lines.end() - tail_lines_);
  return lines;
}

}  // namespace trtllm_run
