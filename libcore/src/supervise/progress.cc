// Progress lines (progress.h).
#include "trtllm_run/sdk/supervise/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace trtllm_run {
namespace {

constexpr double kLiveRedrawSeconds = 0.25;
constexpr std::size_t kDefaultWidth = 80;
// Columns the live line leaves free at the right: the terminal echoes Ctrl-C as "^C"
// after it, and an echo that reaches past the last column wraps the cursor to a new line,
// so "\r\033[K" would clear that one and leave the status line standing above the
// interrupted summary. One more column because writing the last one wraps on some
// terminals.
constexpr std::size_t kEchoRoom = 3;

int FdOf(const std::ostream* stream) {
  if (stream == &std::cout) return STDOUT_FILENO;
  if (stream == &std::cerr || stream == &std::clog) return STDERR_FILENO;
  return -1;
}

}  // namespace

std::size_t TerminalWidth(const std::ostream* stream) {
  int fd = FdOf(stream);
  struct winsize size {};
  if (fd >= 0 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return kDefaultWidth;
}

namespace {

std::string Duration(double seconds) {
  long long total = seconds > 0 ? static_cast<long long>(seconds) : 0;
  char buffer[48];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm%02llds", total / 3600, total % 3600 / 60,
                  total % 60);
  } else if (total >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", total);
  }
  return buffer;
}

// Drops control characters and ANSI escape sequences, so the line cannot move the cursor.
std::string Printable(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0x1B) {  // ESC [ ... final byte
      if (i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7E)) ++i;
      }
      continue;
    }
    if (c == '\t') {
      out += ' ';
    } else if (c >= 0x20 && c != 0x7F) {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Cuts `text` to at most `width` display columns, counting a UTF-8 sequence as one column
// and never splitting one.
std::string Cut(const std::string& text, std::size_t width) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    if (columns == width) return text.substr(0, i);
    ++columns;
  }
  return text;
}

}  // namespace

bool IsTerminalStream(const std::ostream* stream) {
  int fd = FdOf(stream);
  if (fd < 0 || !::isatty(fd)) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string FormatProgressLine(const std::string& name, const ProgressSnapshot& snapshot,
                               std::size_t width, const std::string& job) {
  std::string line = "[" + name + "] " + snapshot.state + " " + Duration(snapshot.elapsed_seconds);
  if (snapshot.time_limit_seconds > 0) {
    line += " / " + Duration(snapshot.time_limit_seconds) + " limit";
  }
  if (!job.empty()) line += " | " + Printable(job);
  std::string last = Printable(snapshot.last_line);
  if (!last.empty()) line += " | " + last;
  return width > 0 ? Cut(line, width) : line;
}

ProgressReporter::ProgressReporter(std::ostream* out, bool live, std::string name,
                                   double heartbeat_seconds)
    : out_(out),
      live_(live && out != nullptr),
      name_(std::move(name)),
      heartbeat_seconds_(heartbeat_seconds) {}

ProgressReporter::~ProgressReporter() { Clear(); }

void ProgressReporter::Update(const ProgressSnapshot& snapshot) {
  if (out_ == nullptr) return;
  Clock::time_point now = Clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  bool changed = snapshot.state != last_state_;
  if (live_) {
    if (drawn_once_ && !changed && since < kLiveRedrawSeconds) return;
    std::size_t width = TerminalWidth(out_);
    *out_ << "\r\033[K"
          << FormatProgressLine(name_, snapshot, width > kEchoRoom ? width - kEchoRoom : width,
                                job_)
          << std::flush;
    shown_ = true;
  } else {
    if (drawn_once_ && !changed && since < heartbeat_seconds_) return;
    *out_ << FormatProgressLine(name_, snapshot, 0, job_) << std::endl;
  }
  drawn_once_ = true;
  last_draw_ = now;
  last_state_ = snapshot.state;
}

void ProgressReporter::Message(const std::string& line) {
  if (out_ == nullptr) return;
  Clear();
  *out_ << "[" << name_ << "] " << line << std::endl;
  if (live_) drawn_once_ = false;  // redraw at the next Update
}

void ProgressReporter::Clear() {
  if (!live_ || !shown_) return;
  *out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace trtllm_run
