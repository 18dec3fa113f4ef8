// Private helpers for the directories a run creates (runtime.cc: work dirs; multi_run.cc:
// the run dir of `run --cases`).
#ifndef TRTLLM_RUN_MODEL_DIR_UTIL_H_
#define TRTLLM_RUN_MODEL_DIR_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "trtllm_run/status.h"

namespace trtllm_run {

// The local time as YYYYmmdd_HHMMSS, the suffix of work dir names.
std::string LocalTimestamp();

// Creates `planned` (and its parents), or `planned`_2, _3, ... when a run in the same
// second already took the name; never reuses an existing directory. Returns the directory
// created. `what` names it in errors ("work dir", "run dir").
Result<std::string> CreateUniqueDir(const std::string& planned, const std::string& what);

// The contents of a file a work dir holds (job_spec.json, run_state.json, result.json,
// slurm_job_id, a handle's records): opened beneath its directory without following a
// symlink (model/workdir_files.h OpenBeneath), non-blocking, so a FIFO, a device or a
// symlink placed there is refused (kInvalidInput naming the path) instead of blocking the
// reader or being followed out of the work dir; at most kMaxWorkDirFileBytes (16 MiB),
// else kInvalidInput naming the file and the cap. kIoError when it cannot be read.
Result<std::string> ReadWorkDirFile(const std::string& path);

// Reads up to `max_bytes` of the regular file `path` from `offset` (negative: that many
// bytes before its end) into `out`, and its size into `size`. Opened non-blocking: false,
// not a hang, for a FIFO or a device, and for a file that cannot be opened.
bool ReadSlice(const std::string& path, long long offset, std::size_t max_bytes, std::string* out,
               std::uint64_t* size);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_MODEL_DIR_UTIL_H_
