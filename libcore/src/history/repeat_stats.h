// `--repeat N`: one case (or test) run N times, told as a pass count, a pass rate with its
// Wilson 95% score interval, the spread of the durations, where the runs ran and every
// failure's signature (docs/history.md "Repeats"). Backend-free: it reads the runs'
// history records (history_record.h CaseRecordOf), nothing else.
#ifndef TRTLLM_RUN_HISTORY_REPEAT_STATS_H_
#define TRTLLM_RUN_HISTORY_REPEAT_STATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trtllm_run::history {

// The most runs `--repeat` takes: more is a typo, not a stability study.
inline constexpr int kMaxRepeat = 1000;

// The Wilson score interval of `passed` successes in `runs` trials at quantile `z`
// (1.959963984540054: 95%): center (p + z²/2n) / (1 + z²/n), half width
// z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²), clamped to [0, 1]. {0, 1} when runs is 0.
struct Interval {
  double low = 0;
  double high = 1;
};
Interval WilsonInterval(std::int64_t passed, std::int64_t runs, double z = 1.959963984540054);

// One of the N runs.
struct RepeatRun {
  int index = 0;        // 1..N
  std::string verdict;  // PASSED, FAILED, ... (result.json's status)
  double duration_seconds = 0;
  std::string nodes;      // the node list it ran on ("" when not known: a local run)
  std::string signature;  // the failure's signature (FailureSignature); "" when it passed
  std::string work_dir;
};

// A failure signature and the runs (their indexes) that failed with it.
struct RepeatFailure {
  std::string signature;
  std::vector<int> runs;
};

struct RepeatSummary {
  std::string name;
  int runs = 0;
  int passed = 0;
  double pass_rate = 0;  // passed / runs; 0 when no run
  Interval interval;     // WilsonInterval(passed, runs)
  double min_seconds = 0, median_seconds = 0, max_seconds = 0;
  std::vector<std::string> nodes;            // distinct node lists, in order of first use
  std::vector<RepeatFailure> failures;       // by signature, most frequent first
  std::optional<double> required_pass_rate;  // --repeat-pass-rate
  bool accepted = false;                     // every run passed, or pass_rate >= required_pass_rate
  std::vector<RepeatRun> each;               // in index order
};

// The summary of `runs` (any order). Accepted when all passed, or, with `required_pass_rate`,
// when the observed pass rate is at least it. A run without a signature that did not pass
// is listed under its verdict ("TIMEOUT").
RepeatSummary SummarizeRepeat(const std::string& name, std::vector<RepeatRun> runs,
                              std::optional<double> required_pass_rate);

// For people: "repeat NAME: 14/20 passed (70.0%, Wilson 95% 48.1%..85.5%), 2.1 s / 2.5 s /
// 3.0 s (min/median/max) on 2 node lists: a, b" then one line per failure signature.
std::string FormatRepeatSummary(const RepeatSummary& summary);

// The summary as a JSON object (docs/result-schema.md "repeat").
std::string RepeatSummaryJson(const RepeatSummary& summary);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_REPEAT_STATS_H_
