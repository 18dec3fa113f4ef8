// Planning errors that say where the case was routed: which scenario routing chose and
// why, and the flag that sends the case elsewhere.
#ifndef TRTLLM_RUN_PLACEMENT_ROUTE_CONTEXT_H_
#define TRTLLM_RUN_PLACEMENT_ROUTE_CONTEXT_H_

#include <string>
#include <vector>

#include "trtllm_run/environment.h"
#include "trtllm_run/request.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// "routing chose <scenario>: <why>" from the placement's routing note (the note
// "scenario <name>...: <why>"), or "" when no scenario was chosen.
std::string RouteExplanation(const Placement& placement);

// `error` with the route appended to its message and, to its hint, the --scenario values
// that would run the case elsewhere (the other names of `executors`) unless no scenario
// fixes it (NoScenarioFixes). Unchanged when `error` is OK or no scenario was chosen.
// True for an error about the case's own values that every scenario would refuse alike:
// a time limit above the partition's MaxTime, the models mount or models root (a model
// that cannot be found is found nowhere), flags the chosen scenario does not read (the
// hint already names the scenarios that do), and a problem of a config or request file.
bool NoScenarioFixes(const Status& error);

Status WithRoute(const Status& error, const CaseRequest& request, const Placement& placement,
                 const std::vector<std::string>& executors);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_PLACEMENT_ROUTE_CONTEXT_H_
