#include "history/fs_check.h"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trtllm_run::history {

std::string UnlockableFilesystemName(std::int64_t f_type) {
  // statfs(2)'s magic numbers (linux/magic.h); compared as the 32 bits the kernel sets.
  switch (static_cast<std::uint32_t>(f_type)) {
    case 0x6969u:
      return "nfs";
    case 0x517Bu:
      return "smb";
    case 0xFF534D42u:
      return "cifs";
    case 0xFE534D42u:
      return "smb2";
    case 0x65735546u:
      return "fuse";
    case 0x01021997u:
      return "9p";
    case 0x5346414Fu:
    case 0x6B414653u:
      return "afs";
    case 0x73757245u:
      return "coda";
    case 0x564Cu:
      return "ncp";
    case 0x786F4256u:
      return "vboxsf";
    default:
      return "";
  }
}

Status UnlockableStoreStatus(const std::string& store_path, const std::string& fs_name) {
  return Status::InvalidInput(
      "history store " + store_path + ": its filesystem (" + fs_name +
          ") does not give SQLite working locks; concurrent runs would corrupt the store or "
          "hang on it",
      "give --history FILE on a local disk (e.g. /tmp/" + std::string("history.sqlite") +
          "), or --no-history; `history: PATH` or `history: off` in your "
          "~/.config/trtllm-run/config.yaml makes the choice stick");
}

Status CheckStoreFilesystem(const std::string& dir, const std::string& store_path) {
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) {
    return Status::IoError("history store " + store_path + ": cannot statfs " + dir + ": " +
                           std::strerror(errno));
  }
  const std::string bad = UnlockableFilesystemName(static_cast<std::int64_t>(fs.f_type));
  if (!bad.empty()) return UnlockableStoreStatus(store_path, bad);
  // A filesystem of another type may still refuse locks (an NFS export mounted as
  // something else, a FUSE-backed overlay): take one, without waiting.
  const std::string probe = dir + "/.trtllm-run-lock-probe";
  const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Status::IoError("history store " + store_path + ": cannot create " + probe + ": " +
                           std::strerror(errno));
  }
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  const int rc = ::fcntl(fd, F_SETLK, &lock);
  const int error = errno;
  ::close(fd);  // releases the lock
  // EAGAIN / EACCES: another process holds it, so locks work.
  if (rc != 0 && error != EAGAIN && error != EACCES) {
    return UnlockableStoreStatus(store_path,
                                 std::string("a lock probe failed: ") + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace trtllm_run::history
