// The one way to read or append a file of a work dir, a cases dir or an MCP handle: every
// reader of the CLI, the MCP server and libcore goes through OpenBeneath.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// `path` as a path inside `dir` (see OpenWorkDirFile), or kInvalidInput naming why not.
// Lexical only, and a check of the directories as they are now: the open itself
// (OpenBeneath) is what keeps a later swap of a component from leading outside.
Result<std::string> PathInsideWorkDir(const std::string& dir, const std::string& path,
                                      const std::string& recorded_dir);

// How OpenBeneath resolves the path: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) when
// the kernel has it, else a walk of openat(O_NOFOLLOW) per component; tests force the walk.
enum class BeneathResolve { kAuto, kComponentWalk };

// Opens `relative` (components separated by '/'; no "..", not absolute) beneath the
// directory `dir_fd` with no symbolic link in any component, so a component swapped for a
// symlink at any moment leads nowhere. `flags` is O_RDONLY, or O_WRONLY | O_APPEND
// [| O_CREAT] (created with `mode`); O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY are
// always added, so a FIFO or a device never blocks. Only a regular file is returned (the
// caller closes it); otherwise kInvalidInput (a symlink, a FIFO, a device, a path leading
// out), kNotFound (not there yet) or kIoError, each naming `shown`.
Result<int> OpenBeneath(int dir_fd, const std::string& relative, int flags, mode_t mode,
                        const std::string& shown, BeneathResolve how = BeneathResolve::kAuto);

// OpenBeneath of `relative` beneath the directory `dir` (the path the caller was given;
// symlinks in `dir` itself are the caller's choice, none below it is followed).
Result<int> OpenInDir(const std::string& dir, const std::string& relative, int flags,
                      mode_t mode = 0);

// The whole of the regular file `relative` beneath `dir` (OpenInDir), read with at most
// `max_bytes` held: a larger file (or one that grows past it while read) is kInvalidInput
// naming the file and the cap.
Result<std::string> ReadFileInDir(const std::string& dir, const std::string& relative,
                                  std::size_t max_bytes = kMaxWorkDirFileBytes);

// The file at `path` opened for appending as OpenInDir does beneath its parent directory
// (created 0644 when missing); never through a symlink, never a FIFO or a device.
Result<int> OpenForAppend(const std::string& path);

// The size of the open file `fd` (0 when fstat fails).
std::uint64_t FileSizeOf(int fd);

// The start of the last `lines` lines of the open regular file `fd`, found by reading
// backwards from its end in chunks, never more than `max_scan` bytes: when that many
// bytes hold fewer lines, the offset `max_scan` bytes before the end. A final line
// without its newline counts as a line. `size` gets the file's size.
std::uint64_t TailStart(int fd, std::size_t lines, std::uint64_t max_scan, std::uint64_t* size);

}  // namespace trtllm_run
