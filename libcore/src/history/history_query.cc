#include "history/history_query.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cmath>

namespace trtllm_run::history {

namespace {

bool IsPass(const std::string& outcome) { return outcome == "passed" || outcome == "PASSED"; }
bool IsSkip(const std::string& outcome) {
  return outcome == "skipped" || outcome == "SKIPPED" || outcome == "xfailed";
}

}  // namespace

std::optional<double> Percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const std::size_t low = static_cast<std::size_t>(std::floor(rank));
  const std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
}

TestSummary Summarize(const std::string& name, const std::vector<OutcomeRow>& rows, int last_n) {
  TestSummary summary;
  summary.name = name;
  std::vector<double> durations;
  std::map<std::string, std::int64_t> signatures;
  for (const OutcomeRow& row : rows) {
    ++summary.runs;
    if (IsPass(row.outcome)) {
      ++summary.passed;
    } else if (!IsSkip(row.outcome)) {
      ++summary.failed;
      if (!row.signature.empty()) ++signatures[row.signature];
    }
    if (row.duration_seconds) durations.push_back(*row.duration_seconds);
    if (static_cast<int>(summary.last.size()) < last_n) summary.last.push_back(row);
  }
  const std::int64_t judged = summary.passed + summary.failed;
  summary.pass_rate = judged ? static_cast<double>(summary.passed) / judged : 0;
  summary.p50_seconds = Percentile(durations, 50);
  summary.p90_seconds = Percentile(durations, 90);
  summary.signatures.assign(signatures.begin(), signatures.end());
  std::stable_sort(summary.signatures.begin(), summary.signatures.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return summary;
}

std::vector<FlakyTest> FindFlaky(const std::vector<CommitCounts>& counts) {
  std::map<std::string, FlakyTest> tests;
  for (const CommitCounts& row : counts) {
    FlakyTest& test = tests[row.node_id];
    test.node_id = row.node_id;
    test.passed += row.passed;
    test.failed += row.failed;
    test.passed_on_rerun += row.passed_on_rerun;
    if (!row.commit.empty() && row.passed > 0 && row.failed > 0) ++test.mixed_commits;
    // A rerun's pass after the test's own failure (a test rerun because its shard's job
    // died before it never failed: no flake).
    if (row.passed_on_rerun > 0 && row.failed > 0) test.rerun_flake = true;
    test.last_at = std::max(test.last_at, row.last_at);
  }
  std::vector<FlakyTest> flaky;
  for (auto& [id, test] : tests) {
    if (test.mixed_commits == 0 && !test.rerun_flake) continue;
    test.flake_rate =
        static_cast<double>(test.failed) / static_cast<double>(test.passed + test.failed);
    flaky.push_back(std::move(test));
  }
  std::sort(flaky.begin(), flaky.end(), [](const FlakyTest& a, const FlakyTest& b) {
    if (a.flake_rate != b.flake_rate) return a.flake_rate > b.flake_rate;
    if (a.passed + a.failed != b.passed + b.failed)
      return a.passed + a.failed > b.passed + b.failed;
    return a.node_id < b.node_id;
  });
  return flaky;
}

std::string TestDurationsJson(const std::map<std::string, double>& durations) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  for (const auto& [id, seconds] : durations) {
    w.Key(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    w.Double(std::round(seconds * 1000) / 1000);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace trtllm_run::history
