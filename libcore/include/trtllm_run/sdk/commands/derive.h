// Derivations shared by the workflows (spec 000 "Device Count Auto-Parsing", Step 1).
#ifndef TRTLLM_RUN_SDK_COMMANDS_DERIVE_H_
#define TRTLLM_RUN_SDK_COMMANDS_DERIVE_H_

#include <optional>
#include <string>
#include <string_view>

#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The value of the first `--model X`, `--model=X`, `--model_path X`, `--model_path=X` or
// `-m X` in a shell command, or nullopt. Quotes are honoured; nothing is expanded.
TRTLLM_RUN_API std::optional<std::string> FindModelArgument(std::string_view command);

// model_name: the request's model_name if given, else the sanitized model argument of
// `command`, else `fallback`. kInvalidInput when a given name sanitizes to nothing.
// Appends a note saying which source was used.
TRTLLM_RUN_API Result<std::string> DeriveModelName(const CaseRequest& request,
                                                   std::string_view command,
                                                   std::string_view fallback, JobPlan* plan);

// Sets required/total/per-node devices and node_count on `plan`: the caller's
// total_required_devices and required_devices_per_node win verbatim, each missing one is
// `required_devices`; node_count is the caller's or ceil(total / per_node) (at least 1).
// kInvalidInput when per_node exceeds total. `required_devices` 0 (CPU only) makes all
// three 0 and node_count 1; a total or per-node count given with it is kInvalidInput.
TRTLLM_RUN_API Status ApplyDeviceCounts(const CaseRequest& request, int required_devices,
                                        JobPlan* plan);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_COMMANDS_DERIVE_H_
