// The job output pump (output_pump.h).
#include "trtllm_run/sdk/supervise/output_pump.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <utility>

namespace trtllm_run {
namespace {

// Writes all of `data` to `fd`; false on error (errno set).
bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

OutputPump::OutputPump(std::string log_path, std::ostream* terminal)
    : log_path_(std::move(log_path)), terminal_(terminal) {}

OutputPump::~OutputPump() { Close(); }

Status OutputPump::Open(bool truncate) {
  Close();
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  log_fd_ = ::open(log_path_.c_str(), flags, 0644);
  if (log_fd_ < 0) {
    return Status::IoError("cannot create the log file " + log_path_ + ": " + ::strerror(errno),
                           "check that the work dir exists and is writable");
  }
  log_failed_ = false;
  return Status::Ok();
}

bool OutputPump::Write(const std::string& bytes) {
  if (bytes.empty()) return !log_failed_;
  if (!log_failed_) {
    if (log_fd_ < 0 || !WriteAll(log_fd_, bytes.data(), bytes.size())) {
      log_failed_ = true;
      errors_.push_back("writing the log file " + log_path_ + " failed: " +
                        (log_fd_ < 0 ? std::string("it is not open") : ::strerror(errno)) +
                        "; later output is missing from it");
    } else {
      log_bytes_written_ += bytes.size();
    }
  }
  if (terminal_ != nullptr && !terminal_failed_) {
    if (before_terminal_) before_terminal_();
    errno = 0;  // an ostream does not keep the OS error: read what the write left
    terminal_->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    terminal_->flush();
    if (!*terminal_) {
      terminal_failed_ = true;
      int err = errno;
      errors_.push_back(std::string("writing the job's output to the terminal failed") +
                        (err != 0 ? std::string(": ") + ::strerror(err) : std::string()) +
                        "; later output is only in the log file " + log_path_);
    }
  }
  return !log_failed_;
}

ReadState OutputPump::Drain(ChildProcess* child) {
  // Bounded rounds: a job that writes without pause cannot starve the supervision loop.
  for (int round = 0; round < 64 && child->output_fd() >= 0; ++round) {
    buffer_.clear();
    Result<ReadState> state = child->ReadOutput(&buffer_);
    if (!state.ok()) {
      errors_.push_back(state.status().ToString());
      child->CloseOutput();
      return ReadState::kEof;
    }
    Write(buffer_);
    if (state.value() != ReadState::kData) return state.value();
  }
  return child->output_fd() >= 0 ? ReadState::kData : ReadState::kEof;
}

void OutputPump::Close() {
  if (log_fd_ >= 0) {
    ::close(log_fd_);
    log_fd_ = -1;
  }
}

}  // namespace trtllm_run
