// Files inside a work dir: opened beneath its directory with no symlink in any component
// (workdir_files.h OpenBeneath), read whole (bounded), from the end, or in slices.
#include "model/workdir_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model/dir_util.h"
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

std::string NormalizedDir(const std::string& dir) {
  std::string base = std::filesystem::path(dir).lexically_normal().string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base;
}

// Closes a descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; -1 with errno ENOSYS when this
// kernel (or a seccomp filter) does not offer it.
int OpenAt2Beneath(int dir_fd, const std::string& relative, int flags, mode_t mode) {
#ifdef SYS_openat2
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<std::uint64_t>(flags);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; attempt < 8; ++attempt) {
    long fd = ::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return -1;  // EAGAIN: a concurrent rename; the kernel asks again
  }
  return -1;
#else
  (void)dir_fd;
  (void)relative;
  (void)flags;
  (void)mode;
  errno = ENOSYS;
  return -1;
#endif
}

// The same as OpenAt2Beneath with one openat(O_NOFOLLOW) per component: each directory is
// opened O_DIRECTORY | O_NOFOLLOW from the one before, the last component O_NOFOLLOW.
int OpenByComponents(int dir_fd, const std::string& relative, int flags, mode_t mode) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t slash = relative.find('/', start);
    if (slash == std::string::npos) slash = relative.size();
    std::string part = relative.substr(start, slash - start);
    if (part == "..") {
      errno = EXDEV;
      return -1;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  if (parts.empty()) {
    errno = EISDIR;
    return -1;
  }
  FdCloser current(-1);
  int at = dir_fd;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    int next = ::openat(at, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return -1;
    current.reset(next);
    at = next;
  }
  return ::openat(at, parts.back().c_str(), flags | O_NOFOLLOW, mode);
}

Status OpenError(int err, const std::string& shown) {
  switch (err) {
    case ELOOP:
    case EMLINK:
      return Status::InvalidInput("'" + shown +
                                  "' is or passes through a symbolic link; a work dir's files "
                                  "are never read or written through one");
    case EXDEV:
      return Status::InvalidInput("'" + shown + "' leads out of its directory; it is not opened");
    case ENOTDIR:
      return Status::InvalidInput("'" + shown +
                                  "' has a component that is not a directory (or a symlink to "
                                  "one); it is not opened");
    case ENXIO:
      return Status::InvalidInput("'" + shown +
                                  "' is not a regular file (a FIFO, a socket?); it is not opened");
    case ENOENT:
      return Status::NotFound("'" + shown + "' does not exist (yet)");
    default:
      return Status::IoError("cannot open '" + shown + "': " + std::strerror(err));
  }
}

}  // namespace

Result<int> OpenBeneath(int dir_fd, const std::string& relative, int flags, mode_t mode,
                        const std::string& shown, BeneathResolve how) {
  if (relative.empty() || relative[0] == '/') {
    return Status::InvalidInput("'" + shown + "' is not a path inside its directory");
  }
  const int all_flags = flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd = -1;
  if (how == BeneathResolve::kAuto) {
    fd = OpenAt2Beneath(dir_fd, relative, all_flags, mode);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == EAGAIN)) {
      fd = OpenByComponents(dir_fd, relative, all_flags, mode);
    }
  } else {
    fd = OpenByComponents(dir_fd, relative, all_flags, mode);
  }
  if (fd < 0) return OpenError(errno, shown);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidInput("'" + shown +
                                "' is not a regular file (a FIFO, a device?); it is not opened");
  }
  // A regular file never blocks; a descriptor handed to a child (stdout) is left blocking.
  int status_flags = ::fcntl(fd, F_GETFL);
  if (status_flags >= 0) ::fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK);
  return fd;
}

Result<int> OpenInDir(const std::string& dir, const std::string& relative, int flags, mode_t mode) {
  const std::string shown = NormalizedDir(dir) + "/" + relative;
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound("'" + shown + "' does not exist");
    return Status::IoError("cannot open '" + shown + "': its directory: " + std::strerror(err));
  }
  FdCloser closer(dir_fd);
  return OpenBeneath(dir_fd, relative, flags, mode, shown);
}

std::uint64_t FileSizeOf(int fd) {
  struct stat st;
  return ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

namespace {

Result<std::string> ReadOpenFile(int fd, const std::string& shown, std::size_t max_bytes) {
  FdCloser closer(fd);
  std::uint64_t size = FileSizeOf(fd);
  if (size > max_bytes) {
    return Status::InvalidInput("'" + shown + "' is " + std::to_string(size) +
                                    " bytes; it is read only up to " + std::to_string(max_bytes) +
                                    " bytes",
                                "it was not written by trtllm-run; prepare the case again");
  }
  std::string contents;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IoError("cannot read '" + shown + "': " + std::strerror(errno));
    if (n == 0) break;
    contents.append(buffer, static_cast<std::size_t>(n));
    if (contents.size() > max_bytes) {  // grew while being read
      return Status::InvalidInput("'" + shown + "' is over " + std::to_string(max_bytes) +
                                  " bytes; it is read only up to " + std::to_string(max_bytes) +
                                  " bytes");
    }
  }
  return contents;
}

// `path` split into its directory and last component ("." when it has no slash).
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

Result<std::string> ReadFileInDir(const std::string& dir, const std::string& relative,
                                  std::size_t max_bytes) {
  Result<int> fd = OpenInDir(dir, relative, O_RDONLY);
  if (!fd.ok()) return fd.status();
  return ReadOpenFile(fd.value(), NormalizedDir(dir) + "/" + relative, max_bytes);
}

Result<int> OpenForAppend(const std::string& path) {
  auto [dir, name] = SplitPath(path);
  return OpenInDir(dir, name, O_WRONLY | O_APPEND | O_CREAT, 0644);
}

std::uint64_t TailStart(int fd, std::size_t lines, std::uint64_t max_scan, std::uint64_t* size) {
  *size = FileSizeOf(fd);
  const std::uint64_t end = *size;
  const std::uint64_t lowest = end > max_scan ? end - max_scan : 0;
  if (lines == 0) return end;
  std::size_t found = 0;  // newlines that end a counted line
  std::uint64_t pos = end;
  bool skip_last_newline = true;  // the file's final newline ends the last line
  char buffer[65536];
  while (pos > lowest) {
    std::uint64_t chunk = std::min<std::uint64_t>(sizeof buffer, pos - lowest);
    std::uint64_t from = pos - chunk;
    ssize_t n = ::pread(fd, buffer, static_cast<std::size_t>(chunk), static_cast<off_t>(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return pos;  // shrank or unreadable: what was seen so far
    for (ssize_t i = n - 1; i >= 0; --i) {
      std::uint64_t at = from + static_cast<std::uint64_t>(i);
      if (buffer[i] != '\n') {
        skip_last_newline = false;
        continue;
      }
      if (skip_last_newline && at + 1 == end) {
        skip_last_newline = false;
        continue;
      }
      skip_last_newline = false;
      if (++found == lines) return at + 1;
    }
    pos = from;
  }
  return lowest;
}

// `path` as a path inside `dir` (see OpenWorkDirFile), or kInvalidInput naming why not.
Result<std::string> PathInsideWorkDir(const std::string& dir, const std::string& path,
                                      const std::string& recorded_dir) {
  namespace fs = std::filesystem;
  if (path.empty()) return Status::InvalidInput("no file is named");
  std::string base = NormalizedDir(dir);
  std::string full = path[0] == '/' ? path : base + "/" + path;
  full = fs::path(full).lexically_normal().string();
  std::string recorded = NormalizedDir(recorded_dir);
  if (!recorded_dir.empty() && recorded != base && PathIsUnder(full, recorded)) {
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
  const std::string base = NormalizedDir(dir);
  const std::string relative = base == "/" ? inside->substr(1) : inside->substr(base.size() + 1);
  int dir_fd = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return OpenError(errno, base);
  FdCloser closer(dir_fd);
  return OpenBeneath(dir_fd, relative, O_RDONLY, 0, *inside);
}

Result<std::string> ReadWorkDirFile(const std::string& path) {
  auto [dir, name] = SplitPath(path);
  return ReadFileInDir(dir, name);
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
  // The buffer is sized by the file (an empty log allocates nothing), and grown to the
  // file's new size when a file still being written has more; never past max_bytes.
  auto bytes_from_start = [&](const struct stat& now) {
    return std::min<std::size_t>(
        max_bytes, now.st_size > start ? static_cast<std::size_t>(now.st_size - start) : 0);
  };
  out->clear();
  out->resize(bytes_from_start(st));
  std::size_t got = 0;
  while (got < max_bytes) {
    if (got == out->size()) {
      if (::fstat(fd, &st) != 0 || bytes_from_start(st) <= got) break;
      out->resize(bytes_from_start(st));
    }
    ssize_t n = ::pread(fd, &(*out)[got], out->size() - got, start + static_cast<long long>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out->resize(got);
  ::close(fd);
  return true;
}

}  // namespace trtllm_run
