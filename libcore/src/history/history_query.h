// What `trtllm-run history` tells from a store's rows (history_store.h): one test's or
// case's record, the flaky tests, the durations for sharding. Backend-free: it reads the
// rows any HistoryStore returns.
#ifndef TRTLLM_RUN_HISTORY_HISTORY_QUERY_H_
#define TRTLLM_RUN_HISTORY_HISTORY_QUERY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "history/history_store.h"

namespace trtllm_run::history {

// One test's (or case's) record.
struct TestSummary {
  std::string name;
  std::int64_t runs = 0;    // outcomes recorded (reruns included)
  std::int64_t passed = 0;  // passed (a case: PASSED)
  std::int64_t failed = 0;  // failed or error (a case: any verdict but PASSED and SKIPPED)
  double pass_rate = 0;     // passed / (passed + failed); 0 when neither
  std::optional<double> p50_seconds, p90_seconds;  // of the outcomes with a duration
  std::vector<OutcomeRow> last;                    // the newest outcomes, newest first
  std::vector<std::pair<std::string, std::int64_t>> signatures;  // most frequent first
};

// The summary of `rows` (newest first, as HistoryStore::Outcomes gives them); `last`
// keeps the first `last_n`.
TestSummary Summarize(const std::string& name, const std::vector<OutcomeRow>& rows, int last_n);

// A test with both outcomes on one commit, or one that failed and then passed on a rerun.
struct FlakyTest {
  std::string node_id;
  std::int64_t passed = 0, failed = 0;  // every outcome in the window
  std::int64_t passed_on_rerun = 0;     // passes of a rerun (attempt > 0)
  std::int64_t mixed_commits = 0;       // commits with both outcomes
  double flake_rate = 0;                // failed / (passed + failed)
  std::string last_at;
  bool rerun_flake = false;  // a commit where it failed and passed on a rerun
};

// The flaky tests of `counts` (HistoryStore::CountsByCommit), highest flake rate first
// (then most outcomes, then node id): a known commit with a pass and a failure, or a commit
// (known or not) with a failure and a rerun's pass. An unknown commit ("") is otherwise
// never one commit: the outcomes there may come from different code.
std::vector<FlakyTest> FindFlaky(const std::vector<CommitCounts>& counts);

// The p-th percentile (0..100) of `values` by linear interpolation (numpy's default);
// nullopt when empty.
std::optional<double> Percentile(std::vector<double> values, double p);

// pytest-split's .test_durations text: a JSON object {"node id": seconds}, sorted by id.
std::string TestDurationsJson(const std::map<std::string, double>& durations);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_HISTORY_QUERY_H_
