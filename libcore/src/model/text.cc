// Joining, trimming, integer parsing, shell quoting and splitting, durations, model names and
// atomic files.
#include "trtllm_run/sdk/text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>
#include <set>

#include "model/utf8.h"
#include "trtllm_run/sdk/input_limits.h"

namespace trtllm_run {
namespace {

bool IsShellSafe(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '_':
    case '@':
    case '%':
    case '+':
    case '=':
    case ':':
    case ',':
    case '.':
    case '/':
    case '-':
      return true;
    default:
      return false;
  }
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Parses a run of decimal digits; false on overflow beyond INT_MAX.
bool ParseDigits(std::string_view s, long long* out) {
  std::optional<long long> value = ParseInteger(s, 0, INT_MAX);
  if (!value) return false;
  *out = *value;
  return true;
}

std::string ErrnoText(int err) { return std::strerror(err); }

std::string ParentDir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Creates a new, empty temporary file beside `path` (".<name>.tmp.<pid>.<n>", O_EXCL: never
// an existing file or a symlink) with mode 0666 less the umask, as open(O_CREAT) gives a
// plain file: the kernel applies the umask, so it is never read (the alternative,
// mkstemp's 0600 plus fchmod, needs it, and umask(2) cannot be queried without setting
// it). The descriptor, or -1 with errno set; *temp is the name.
int CreateTempBeside(const std::string& path, std::string* temp) {
  static std::atomic<unsigned long> counter{0};
  const std::string prefix =
      ParentDir(path) + "/." + BaseName(path) + ".tmp." + std::to_string(getpid()) + ".";
  for (int attempt = 0; attempt < 100; ++attempt) {  // a name left by an earlier process
    *temp = prefix + std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    const int fd = open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno: EEXIST
}

// Whether this process created `path` with WriteFileAtomic without syncing it; with
// `add`, records that it did.
bool CreatedUnsynced(const std::string& path, bool add) {
  static std::mutex mutex;
  static std::set<std::string> paths;
  std::lock_guard<std::mutex> lock(mutex);
  if (add) return paths.insert(path).second;
  return paths.count(path) != 0;
}

}  // namespace

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string joined;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) joined += separator;
    joined += items[i];
  }
  return joined;
}

std::vector<std::string> SplitWhitespace(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

bool IsShellIdentifier(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsBlank(std::string_view text) {
  for (char c : text) {
    if (!IsBlank(c)) return false;
  }
  return true;
}

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kWhitespace = " \t\n\v\f\r";
  std::size_t begin = text.find_first_not_of(kWhitespace);
  if (begin == std::string_view::npos) return text.substr(text.size());
  return text.substr(begin, text.find_last_not_of(kWhitespace) - begin + 1);
}

std::optional<long long> ParseInteger(std::string_view text, long long minimum, long long maximum) {
  if (text.empty() || (text.front() == '-' && minimum >= 0)) return std::nullopt;
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || value < minimum || value > maximum) {
    return std::nullopt;
  }
  return value;
}

std::string ShellQuote(std::string_view word) {
  if (word.empty()) return "''";
  bool safe = true;
  for (char c : word) {
    if (!IsShellSafe(c)) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;  // an empty quoted string ('' or "") still makes a word
  size_t i = 0;
  auto unterminated = [&](const char* what, size_t start) {
    return Status::InvalidInput("unterminated " + std::string(what) + " starting at character " +
                                    std::to_string(start + 1) + " of: " + std::string(text),
                                "close the quote, or escape it with a backslash");
  };
  while (i < text.size()) {
    char c = text[i];
    if (IsBlank(c)) {
      if (in_word) {
        words.push_back(std::move(current));
        current.clear();
        in_word = false;
      }
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= text.size()) {  // a trailing backslash stays literal, as in bash
        current += '\\';
        in_word = true;
        ++i;
      } else if (text[i + 1] == '\n') {  // line continuation
        i += 2;
      } else {
        current += text[i + 1];
        in_word = true;
        i += 2;
      }
    } else if (c == '\'') {
      size_t close = text.find('\'', i + 1);
      if (close == std::string_view::npos) return unterminated("single quote", i);
      current.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      size_t start = i++;
      in_word = true;
      bool closed = false;
      while (i < text.size()) {
        char d = text[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < text.size()) {
          char e = text[i + 1];
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            current += e;
            i += 2;
            continue;
          }
          if (e == '\n') {
            i += 2;
            continue;
          }
        }
        current += d;
        ++i;
      }
      if (!closed) return unterminated("double quote", start);
    } else {
      current += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

Result<std::vector<EnvVar>> ParseEnvAssignments(std::string_view text, std::string_view field) {
  const std::string hint =
      "expected space-separated KEY=VALUE pairs, e.g. BATCH_SIZE=32 NUM_WORKERS=4; quote values "
      "with spaces: MSG='hello world'";
  Result<std::vector<std::string>> words = SplitShellWords(text);
  if (!words.ok()) {
    return Status::InvalidInput("invalid " + std::string(field) + ": " + words.status().message(),
                                hint);
  }
  std::vector<EnvVar> vars;
  for (const std::string& word : words.value()) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidInput(
          "invalid " + std::string(field) + ": '" + word + "' is not a KEY=VALUE assignment", hint);
    }
    std::string name = word.substr(0, eq);
    if (!IsShellIdentifier(name)) {
      return Status::InvalidInput("invalid " + std::string(field) + ": '" + word + "': '" + name +
                                      "' is not a valid variable name",
                                  "names match [A-Za-z_][A-Za-z0-9_]*; " + hint);
    }
    vars.push_back(EnvVar{std::move(name), word.substr(eq + 1)});
  }
  return vars;
}

Result<int> ParseDurationSeconds(std::string_view text, std::string_view field) {
  auto invalid = [&](const std::string& why) {
    return Status::InvalidInput("invalid " + std::string(field) + " '" + std::string(text) +
                                    "': expected a duration like 1h, 30m, 3600s, 01:00:00 or a "
                                    "number of seconds",
                                why);
  };
  std::string_view s = text;
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  if (s.empty()) return invalid("the value is empty");

  long long seconds = 0;
  if (s.find(':') != std::string_view::npos) {
    size_t first = s.find(':');
    size_t second = s.find(':', first + 1);
    if (second == std::string_view::npos || s.find(':', second + 1) != std::string_view::npos) {
      return invalid("a clock time must have three parts, HH:MM:SS");
    }
    std::string_view hh = s.substr(0, first);
    std::string_view mm = s.substr(first + 1, second - first - 1);
    std::string_view ss = s.substr(second + 1);
    long long h = 0, m = 0, sec = 0;
    if (mm.size() != 2 || ss.size() != 2 || !ParseDigits(hh, &h) || !ParseDigits(mm, &m) ||
        !ParseDigits(ss, &sec)) {
      return invalid("a clock time is HH:MM:SS with two-digit minutes and seconds");
    }
    if (m >= 60 || sec >= 60) return invalid("minutes and seconds must be below 60");
    seconds = h * 3600 + m * 60 + sec;
  } else if (AllDigits(s)) {
    long long n = 0;
    if (!ParseDigits(s, &n)) return invalid("the value is too large");
    seconds = n;  // a bare number: seconds
  } else {
    // Whole numbers each followed by its unit, h before m before s, each at most once:
    // 2h, 90s, 1h30m, 1h0m30s.
    const std::string_view units = "hms";
    const long long unit_seconds[] = {3600, 60, 1};
    std::size_t next_unit = 0;  // units before this one are used up
    std::string_view rest = s;
    while (!rest.empty()) {
      std::size_t digits = 0;
      while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
      std::size_t unit = digits < rest.size() ? units.find(rest[digits], next_unit) : units.npos;
      if (digits == 0 || unit == units.npos) {
        return invalid(
            "use whole numbers each followed by its unit, h, m or s in that order (2h, 90s, "
            "1h30m); a bare number is seconds");
      }
      long long n = 0;
      if (!ParseDigits(rest.substr(0, digits), &n) || n > INT_MAX) {
        return invalid("the value is too large");
      }
      seconds += n * unit_seconds[unit];
      if (seconds > INT_MAX) return invalid("the value is too large");
      next_unit = unit + 1;
      rest.remove_prefix(digits + 1);
    }
  }
  if (seconds <= 0) return invalid("the duration must be greater than zero");
  if (seconds > INT_MAX) return invalid("the value is too large");
  return static_cast<int>(seconds);
}

std::string SanitizeModelName(std::string_view raw) {
  while (!raw.empty() && raw.back() == '/') raw.remove_suffix(1);
  size_t slash = raw.find_last_of('/');
  if (slash != std::string_view::npos) raw.remove_prefix(slash + 1);
  std::string out;
  bool pending_sep = false;
  for (char c : raw) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (pending_sep && !out.empty()) out += '_';
      pending_sep = false;
      out += c;
    } else {
      pending_sep = true;
    }
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, std::string_view contents) {
  std::string temp;
  int fd = CreateTempBeside(path, &temp);
  if (fd < 0) {
    int err = errno;
    return Status::IoError("cannot write " + path + ": creating a temporary file in " +
                           ParentDir(path) + " failed: " + ErrnoText(err));
  }
  auto fail = [&](const std::string& step, int err) {
    if (fd >= 0) close(fd);
    unlink(temp.c_str());
    return Status::IoError("cannot write " + path + ": " + step + " failed: " + ErrnoText(err));
  };

  size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("writing", errno);
    }
    written += static_cast<size_t>(n);
  }
  // Only a replaced file is synced (contents before the rename, then the directory): an
  // OS crash must not turn a good old version into an empty or missing one. A new file
  // has no old version to lose, nor has a file this process created unsynced (a plan
  // writes job_spec.json twice); syncing those cost a plan most of its time (each fsync
  // waits for a journal commit), so they reach the disk with the next writeback.
  struct stat existing {};
  const bool replaces = lstat(path.c_str(), &existing) == 0 && !CreatedUnsynced(path, false);
  if (replaces && fsync(fd) != 0) return fail("fsync", errno);
  int closed = close(fd);
  fd = -1;
  if (closed != 0) return fail("closing", errno);
  if (rename(temp.c_str(), path.c_str()) != 0) return fail("renaming the temporary file", errno);
  if (!replaces) CreatedUnsynced(path, true);

  if (replaces) {
    // Persist the rename itself; a failure here does not undo the (already visible) write.
    int dir_fd = open(ParentDir(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      fsync(dir_fd);
      close(dir_fd);
    }
  }
  return Status::Ok();
}

Result<std::string> ReadFile(const std::string& path) {
  return ReadFileLimited(path, std::numeric_limits<std::size_t>::max(), "file");
}

std::string NowIso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

std::string EscapeControl(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else if (c >= 0x80) {
      // Keep well-formed multi-byte sequences; escape the rest.
      std::size_t length = Utf8SequenceLength(text, i);
      if (length > 0) {
        out.append(text.substr(i, length));
        i += length - 1;
      } else {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02X", c);
        out += hex;
      }
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace trtllm_run
