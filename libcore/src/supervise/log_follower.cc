#include "trtllm_run/sdk/supervise/log_follower.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace trtllm_run {

namespace {

constexpr std::size_t kMatchContext = 2048;     // bytes kept on each side of a match
constexpr std::size_t kTailLineMax = 4096;      // bytes kept of one tail line
constexpr std::size_t kReadBlock = 256 * 1024;  // bytes per pread
// The most read buffer a follower keeps between polls: a Slurm watcher holds two followers
// for each of thousands of jobs, most of them printing little.
constexpr std::size_t kKeptBuffer = 16 * 1024;

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

// How common a byte is in job logs (English text, numbers, paths, Python and C++ output),
// letters counted in both cases: roughly the percentage of bytes. The search filters on
// the two rarest bytes of a pattern, so that few positions need a full comparison.
struct ByteCommonness {
  std::array<std::uint8_t, 256> score;
  ByteCommonness() {
    score.fill(3);                                       // other ASCII punctuation
    for (int c = 0; c < 32; ++c) score[c] = 1;           // control bytes
    for (int c = 128; c < 256; ++c) score[c] = 2;        // UTF-8 sequences
    for (int c = '0'; c <= '9'; ++c) score[c] = 40;      // digits
    const char* letters = "etaoinshrdlcumwfgypbvkjxqz";  // English, most common first
    const std::uint8_t letter_score[26] = {127, 91, 82, 75, 70, 67, 63, 61, 60, 43, 40, 28, 28,
                                           24,  24, 22, 20, 20, 19, 15, 10, 8,  2,  2,  1,  1};
    for (int i = 0; i < 26; ++i) {
      score[static_cast<unsigned char>(letters[i])] = letter_score[i];
      score[static_cast<unsigned char>(letters[i] - 'a' + 'A')] = letter_score[i];
    }
    score[' '] = 160;
    for (char c : {'.', '/', '_', '-', ':', ',', '=', '\n'})
      score[static_cast<unsigned char>(c)] = 25;
    for (char c : {'[', ']', '(', ')', '\'', '"', '\t'}) score[static_cast<unsigned char>(c)] = 10;
  }
};
const ByteCommonness kCommonness;

// One byte of a pattern as the filter tests it: a text byte b matches when
// (b | fold) == value. fold is 0x20 for letters (so 'G' and 'g' both give 'g'), else 0.
struct FilterByte {
  std::size_t offset;
  unsigned char fold;
  unsigned char value;
};

FilterByte MakeFilterByte(const std::string& needle, std::size_t offset) {
  unsigned char c = static_cast<unsigned char>(needle[offset]);  // lower-case already
  bool letter = c >= 'a' && c <= 'z';
  return FilterByte{offset, static_cast<unsigned char>(letter ? 0x20 : 0), c};
}

inline bool FilterMatches(const FilterByte& f, const char* at) {
  return (static_cast<unsigned char>(at[f.offset]) | f.fold) == f.value;
}

// needle (lower-case) equals the m bytes at `at`, ignoring ASCII case.
inline bool EqualsCaseless(const char* at, const std::string& needle) {
  for (std::size_t k = 0; k < needle.size(); ++k) {
    if (Lower(at[k]) != static_cast<unsigned char>(needle[k])) return false;
  }
  return true;
}

// The first position of `needle` (already lower-case, non-empty) in `hay`, ignoring ASCII
// case, or npos. Candidates are the positions where the pattern's two rarest bytes (see
// ByteCommonness) both match, 16 positions at a time with SSE2 where available; each
// candidate is then compared in full.
std::size_t FindCaseless(std::string_view hay, const std::string& needle) {
  constexpr std::size_t npos = std::string_view::npos;
  const std::size_t m = needle.size();
  if (hay.size() < m) return npos;
  std::size_t rare1 = 0;
  for (std::size_t k = 1; k < m; ++k) {
    if (kCommonness.score[static_cast<unsigned char>(needle[k])] <
        kCommonness.score[static_cast<unsigned char>(needle[rare1])]) {
      rare1 = k;
    }
  }
  std::size_t rare2 = rare1 == 0 ? (m > 1 ? 1 : 0) : 0;
  for (std::size_t k = 0; k < m; ++k) {
    if (k != rare1 && kCommonness.score[static_cast<unsigned char>(needle[k])] <
                          kCommonness.score[static_cast<unsigned char>(needle[rare2])]) {
      rare2 = k;
    }
  }
  const FilterByte f1 = MakeFilterByte(needle, rare1);
  const FilterByte f2 = MakeFilterByte(needle, rare2);
  const char* base = hay.data();
  const std::size_t last = hay.size() - m;  // last possible start
  std::size_t i = 0;
#if defined(__SSE2__)
  // Block starts i..i+15 are tested at once; the loads read hay[i + offset .. + 15], so
  // blocks run while i + max(offset) + 16 <= hay.size(); the rest is done one by one.
  const std::size_t reach = std::max(f1.offset, f2.offset) + 16;
  if (hay.size() >= reach) {
    const __m128i fold1 = _mm_set1_epi8(static_cast<char>(f1.fold));
    const __m128i value1 = _mm_set1_epi8(static_cast<char>(f1.value));
    const __m128i fold2 = _mm_set1_epi8(static_cast<char>(f2.fold));
    const __m128i value2 = _mm_set1_epi8(static_cast<char>(f2.value));
    auto block_hits = [&](std::size_t at) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + at + f1.offset));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + at + f2.offset));
      return _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(a, fold1), value1),
                           _mm_cmpeq_epi8(_mm_or_si128(b, fold2), value2));
    };
    const std::size_t block_end = hay.size() - reach;  // last block start
    for (; i <= block_end; i += 16) {
      // Two blocks per test while both fit: one branch per 32 positions.
      if (i + 16 <= block_end) {
        __m128i first = block_hits(i);
        __m128i second = block_hits(i + 16);
        if (_mm_movemask_epi8(_mm_or_si128(first, second)) == 0) {
          i += 16;
          continue;
        }
      }
      unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(block_hits(i)));
      while (mask != 0) {
        std::size_t candidate = i + static_cast<std::size_t>(__builtin_ctz(mask));
        if (candidate > last) return npos;
        if (EqualsCaseless(base + candidate, needle)) return candidate;
        mask &= mask - 1;
      }
    }
  }
#endif
  for (; i <= last; ++i) {
    if (FilterMatches(f1, base + i) && FilterMatches(f2, base + i) &&
        EqualsCaseless(base + i, needle)) {
      return i;
    }
  }
  return npos;
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

  while (offset_ < size) {
    std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kReadBlock, size - offset_));
    if (buffer_.size() < want) buffer_.resize(want);
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
  if (buffer_.size() > kKeptBuffer) std::string().swap(buffer_);
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
