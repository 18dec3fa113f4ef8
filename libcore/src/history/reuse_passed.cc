// --reuse-passed matching (reuse_passed.h).
#include "history/reuse_passed.h"

#include <algorithm>

namespace trtllm_run::history {
namespace {

bool IsPass(const std::string& outcome) { return outcome == "passed" || outcome == "PASSED"; }

}  // namespace

std::string ReusedReason(const std::string& commit, const LatestOutcome& pass) {
  return "passed on " + commit + " at " + pass.recorded_at + " (" + pass.work_dir + ")";
}

std::map<std::string, std::string> PassedBefore(const std::vector<std::string>& ids,
                                                const std::vector<LatestOutcome>& latest,
                                                const std::string& commit) {
  std::map<std::string, std::string> reused;
  if (commit.empty()) return reused;  // no commit: nothing is "the same commit"
  // `latest` is in id order (the store sorts it); keep it so for the prefix scans.
  std::vector<const LatestOutcome*> sorted;
  for (const LatestOutcome& row : latest) sorted.push_back(&row);
  std::sort(sorted.begin(), sorted.end(),
            [](const LatestOutcome* a, const LatestOutcome* b) { return a->id < b->id; });
  auto first_not_below = [&](const std::string& key) {
    return std::lower_bound(
        sorted.begin(), sorted.end(), key,
        [](const LatestOutcome* row, const std::string& k) { return row->id < k; });
  };
  for (const std::string& id : ids) {
    if (id.empty()) continue;
    auto at = first_not_below(id);
    if (at != sorted.end() && (*at)->id == id) {
      if (IsPass((*at)->outcome)) reused[id] = ReusedReason(commit, **at);
      continue;
    }
    // The tests pytest expanded this line into: "<id>::<name>".
    const std::string prefix = id + "::";
    const LatestOutcome* newest = nullptr;
    bool all_passed = true;
    for (auto it = first_not_below(prefix);
         it != sorted.end() && (*it)->id.compare(0, prefix.size(), prefix) == 0; ++it) {
      all_passed = all_passed && IsPass((*it)->outcome);
      if (newest == nullptr || (*it)->recorded_at > newest->recorded_at) newest = *it;
    }
    if (newest != nullptr && all_passed) reused[id] = ReusedReason(commit, *newest);
  }
  return reused;
}

}  // namespace trtllm_run::history
