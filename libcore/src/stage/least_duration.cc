// pytest-split's least_duration (see least_duration.h).
#include "stage/least_duration.h"

#include <algorithm>
#include <numeric>

#include "model/json_util.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

std::vector<SplitGroup> LeastDurationSplit(const std::vector<std::string>& node_ids,
                                           const std::map<std::string, double>& durations,
                                           int splits, std::vector<double>* item_seconds) {
  std::vector<SplitGroup> groups(static_cast<std::size_t>(std::max(splits, 1)));
  // The mean over the items' known durations only, as pytest-split drops the others.
  double known_sum = 0;
  std::size_t known = 0;
  for (const std::string& id : node_ids) {
    auto found = durations.find(id);
    if (found != durations.end()) {
      known_sum += found->second;
      ++known;
    }
  }
  const double mean = known ? known_sum / static_cast<double>(known) : 1.0;
  std::vector<double> seconds(node_ids.size());
  for (std::size_t i = 0; i < node_ids.size(); ++i) {
    auto found = durations.find(node_ids[i]);
    seconds[i] = found != durations.end() ? found->second : mean;
  }
  std::vector<std::size_t> order(node_ids.size());
  std::iota(order.begin(), order.end(), 0);
  // By id first (std::string compares bytes unsigned: code point order, as Python's str),
  // then stably by duration, longest first: equal durations stay in id order.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return node_ids[a] < node_ids[b]; });
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return seconds[a] > seconds[b]; });
  for (std::size_t item : order) {
    // The heap's minimum of (total, group index).
    std::size_t target = 0;
    for (std::size_t g = 1; g < groups.size(); ++g) {
      if (groups[g].seconds < groups[target].seconds) target = g;
    }
    groups[target].items.push_back(item);
    groups[target].seconds += seconds[item];
  }
  for (SplitGroup& group : groups) std::sort(group.items.begin(), group.items.end());
  if (item_seconds) *item_seconds = std::move(seconds);
  return groups;
}

Result<std::map<std::string, double>> ParseTestDurations(const std::string& text,
                                                         const std::string& origin) {
  rapidjson::Document doc;
  TRTLLM_RUN_RETURN_IF_ERROR(json::ParseObject(text, origin, &doc));
  std::map<std::string, double> durations;
  for (auto member = doc.MemberBegin(); member != doc.MemberEnd(); ++member) {
    const std::string id(member->name.GetString(), member->name.GetStringLength());
    if (!member->value.IsNumber() || member->value.GetDouble() < 0) {
      return Status::InvalidInput(origin + ": the duration of '" + EscapeControl(id) + "' is " +
                                      json::TypeName(member->value) +
                                      ", not a number of seconds >= 0",
                                  "a .test_durations file is a JSON object of test id -> "
                                  "seconds, as pytest-split's --store-durations writes it");
    }
    durations[id] = member->value.GetDouble();
  }
  return durations;
}

}  // namespace trtllm_run
