// Reading and appending the job files the Slurm client fetches and the watcher follows
// (slurm_client.cc, slurm_watch_end.cc, slurm_watch_output.cc): byte ranges, lines.
#ifndef TRTLLM_RUN_SLURM_CLIENT_JOB_FILE_IO_H_
#define TRTLLM_RUN_SLURM_CLIENT_JOB_FILE_IO_H_

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

namespace trtllm_run {
namespace internal {

// Up to `max` bytes of `path` from `offset`; "" when it cannot be read.
inline std::string ReadRange(const std::string& path, std::uint64_t offset, std::size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string data(max, '\0');
  std::size_t got = 0;
  while (got < max) {
    ssize_t n = ::pread(fd, &data[got], max - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  data.resize(got);
  return data;
}

// The lines of `text` (a trailing \r dropped), at most `max_lines` of them.
inline std::vector<std::string> SplitLines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size() && lines.size() < max_lines) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// Appends `bytes` to `path` (created 0644; emptied first when `truncate`); false when
// it cannot be opened or written.
inline bool AppendFile(const std::string& path, const std::string& bytes, bool truncate) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return true;
}

}  // namespace internal
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_CLIENT_JOB_FILE_IO_H_
