// Paths inside a work dir, shared by the file readers and InspectWorkDir.
#pragma once

#include <string>

#include "trtllm_run/status.h"

namespace trtllm_run {

// `path` as a path inside `dir` (see OpenWorkDirFile), or kInvalidInput naming why not.
// Does not look at the file itself.
Result<std::string> PathInsideWorkDir(const std::string& dir, const std::string& path,
                                      const std::string& recorded_dir);

}  // namespace trtllm_run
