// Files inside a work dir: opened without following links out of it, read whole or in slices.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/input_limits.h"
#include "model/json_util.h"
#include "model/workdir_files.h"
#include "os/process.h"
#include "runtime/dir_util.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

bool PathIsUnder(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

std::string RealPathOf(const std::string& path) {
  char buffer[PATH_MAX];
  return ::realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

}  // namespace

// `path` as a path inside `dir` (see OpenWorkDirFile), or kInvalidInput naming why not.
// Does not look at the file itself.
Result<std::string> PathInsideWorkDir(const std::string& dir, const std::string& path,
                                      const std::string& recorded_dir) {
  namespace fs = std::filesystem;
  if (path.empty()) return Status::InvalidInput("no file is named");
  std::string base = fs::path(dir).lexically_normal().string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string full = path[0] == '/' ? path : base + "/" + path;
  full = fs::path(full).lexically_normal().string();
  std::string recorded = fs::path(recorded_dir).lexically_normal().string();
  while (recorded.size() > 1 && recorded.back() == '/') recorded.pop_back();
  if (!recorded.empty() && recorded != base && PathIsUnder(full, recorded)) {
    full = base + full.substr(recorded.size());  // a copy reads its own files
  }
  if (!PathIsUnder(full, base)) {
    return Status::InvalidInput("'" + path + "' is outside the work dir " + base);
  }
  std::string real_dir = RealPathOf(base);
  std::string real_parent = RealPathOf(fs::path(full).parent_path().string());
  if (real_dir.empty() || real_parent.empty() ||
      (real_parent != real_dir && !PathIsUnder(real_parent, real_dir))) {
    return Status::InvalidInput("'" + path + "' leaves the work dir " + base +
                                " (through a symlinked directory)");
  }
  return full;
}

Result<int> OpenWorkDirFile(const std::string& dir, const std::string& path,
                            const std::string& recorded_dir) {
  Result<std::string> inside = PathInsideWorkDir(dir, path, recorded_dir);
  if (!inside.ok()) return inside.status();
  int fd = ::open(inside->c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      return Status::InvalidInput("'" + *inside + "' is a symbolic link; it is not followed");
    }
    if (err == ENOENT) return Status::NotFound("'" + *inside + "' does not exist (yet)");
    return Status::IoError("cannot open '" + *inside + "': " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidInput("'" + *inside + "' is not a regular file (a FIFO, a device?)");
  }
  return fd;
}

Result<std::string> ReadWorkDirFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      return Status::InvalidInput(path +
                                  " is a symbolic link; a work dir's own files are "
                                  "never read through one");
    }
    return Status::IoError("cannot read " + path + ": " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidInput(path +
                                " is not a regular file (a FIFO, a device?); it is not read");
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxWorkDirFileBytes) {
    ::close(fd);
    return Status::InvalidInput(path + " is " + std::to_string(st.st_size) +
                                    " bytes; a work dir file is at most " +
                                    std::to_string(kMaxWorkDirFileBytes) + " bytes",
                                "it was not written by trtllm-run; prepare the case again");
  }
  std::string contents;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return Status::IoError("cannot read " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
    if (contents.size() > kMaxWorkDirFileBytes) {  // grew while being read
      ::close(fd);
      return Status::InvalidInput(path + " is over " + std::to_string(kMaxWorkDirFileBytes) +
                                  " bytes; a work dir file is not that large");
    }
  }
  ::close(fd);
  return contents;
}

bool ReadSlice(const std::string& path, long long offset, std::size_t max_bytes, std::string* out,
               std::uint64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  *size = static_cast<std::uint64_t>(st.st_size);
  long long start = offset;
  if (offset < 0) start = std::max<long long>(0, st.st_size + offset);
  out->assign(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::pread(fd, &(*out)[got], max_bytes - got, start + static_cast<long long>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out->resize(got);
  ::close(fd);
  return true;
}

}  // namespace trtllm_run
