#include "transport.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace trtllm_run::mcp {

LineReader::LineReader(int fd, std::size_t max_line_bytes) : fd_(fd), max_(max_line_bytes) {}

bool LineReader::TakeLine(std::string* line, std::size_t* oversized_bytes, Event* event) {
  std::size_t newline = buffer_.find('\n');
  if (newline == std::string::npos) {
    if (discarding_) {
      discarded_ += buffer_.size();
      buffer_.clear();
    } else if (buffer_.size() > max_) {
      discarding_ = true;
      discarded_ = buffer_.size();
      buffer_.clear();
    }
    return false;
  }
  std::size_t length = newline;
  if (discarding_) {
    *oversized_bytes = discarded_ + length;
    discarding_ = false;
    discarded_ = 0;
    buffer_.erase(0, newline + 1);
    *event = Event::kOversized;
    return true;
  }
  if (length > 0 && buffer_[length - 1] == '\r') --length;
  if (length > max_) {
    *oversized_bytes = length;
    buffer_.erase(0, newline + 1);
    *event = Event::kOversized;
    return true;
  }
  line->assign(buffer_, 0, length);
  buffer_.erase(0, newline + 1);
  *event = Event::kLine;
  return true;
}

LineReader::Event LineReader::Next(std::string* line, std::size_t* oversized_bytes, int stop_fd) {
  Event event = Event::kLine;
  while (true) {
    if (TakeLine(line, oversized_bytes, &event)) return event;
    if (eof_) {
      if (discarding_) {
        *oversized_bytes = discarded_;
        discarding_ = false;
        return Event::kOversized;
      }
      if (!buffer_.empty()) {  // a last message without its newline
        line->swap(buffer_);
        buffer_.clear();
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return Event::kLine;
      }
      return Event::kEof;
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    int ready = ::poll(fds, stop_fd >= 0 ? 2 : 1, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return Event::kError;
    }
    if (stop_fd >= 0 && (fds[1].revents & POLLIN)) return Event::kStopped;
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Event::kError;
    }
    if (n == 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool LineWriter::Write(std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_) return false;
  std::string line(message);
  line += '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      broken_ = true;  // EPIPE (SIGPIPE is ignored), EBADF, ...: the client is gone
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool LineWriter::broken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

}  // namespace trtllm_run::mcp
