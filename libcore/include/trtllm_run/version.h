// Library version, for `--version` and plugin compatibility reports.
#ifndef TRTLLM_RUN_VERSION_H_
#define TRTLLM_RUN_VERSION_H_

#include "trtllm_run/export.h"

namespace trtllm_run {

// The version of libtrtllm_run_core, e.g. "0.1.0".
TRTLLM_RUN_API const char* Version();

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_VERSION_H_
