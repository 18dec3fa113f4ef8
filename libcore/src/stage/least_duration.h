// pytest-split's least_duration algorithm (the splitting CI's processShardTestList asks
// pytest for), over the durations of a .test_durations file.
#ifndef TRTLLM_RUN_STAGE_LEAST_DURATION_H_
#define TRTLLM_RUN_STAGE_LEAST_DURATION_H_

#include <map>
#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {

struct SplitGroup {
  std::vector<std::size_t> items;  // indices into the split's input, ascending
  double seconds = 0;              // the sum of their durations
};

// Splits `node_ids` (in collection order) into `splits` groups as pytest-split's
// least_duration does: each item's duration is durations[id], or the mean of the
// durations of the items that have one (1 when none has); the items sorted by id, then
// stably by duration, longest first; each in turn goes to the group with the least total
// so far (ties: the lowest group); each group keeps its items in collection order.
// `item_seconds` (optional) gets each item's duration as used.
std::vector<SplitGroup> LeastDurationSplit(const std::vector<std::string>& node_ids,
                                           const std::map<std::string, double>& durations,
                                           int splits, std::vector<double>* item_seconds = nullptr);

// The map of a .test_durations file (a JSON object: test id -> seconds). kInvalidInput
// naming `origin` when it is not one or a value is not a non-negative number.
Result<std::map<std::string, double>> ParseTestDurations(const std::string& text,
                                                         const std::string& origin);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_LEAST_DURATION_H_
