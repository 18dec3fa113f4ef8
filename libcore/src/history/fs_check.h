// Whether a directory's filesystem can hold a SQLite store: SQLite's locks are POSIX
// advisory locks, which NFS without a lock daemon, SMB/CIFS and most FUSE filesystems do
// not honour (or hang on), so two writers there corrupt the store or wait forever (what
// ReFrame's results store met). Checked by the filesystem's type (statfs) and by taking
// a lock on a probe file.
#ifndef TRTLLM_RUN_HISTORY_FS_CHECK_H_
#define TRTLLM_RUN_HISTORY_FS_CHECK_H_

#include <cstdint>
#include <string>

#include "trtllm_run/status.h"

namespace trtllm_run::history {

// The name of a filesystem type (statfs f_type) whose locks a store cannot trust ("nfs",
// "cifs", "smb2", "fuse", "9p", ...); "" for any other type.
std::string UnlockableFilesystemName(std::int64_t f_type);

// Ok when a store may live in `dir` (an existing directory): its filesystem is not one of
// UnlockableFilesystemName's and a non-blocking write lock on a probe file there is
// granted. Otherwise kInvalidInput naming `store_path`, the filesystem and the fix
// (--history FILE on a local disk, or --no-history).
Status CheckStoreFilesystem(const std::string& dir, const std::string& store_path);

// The message CheckStoreFilesystem gives for a filesystem named `fs_name` (exposed for the
// unit test, which cannot mount NFS).
Status UnlockableStoreStatus(const std::string& store_path, const std::string& fs_name);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_FS_CHECK_H_
