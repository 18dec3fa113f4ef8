// --repeat N, --repeat-pass-rate R (run, run --cases, stage) and --reuse-passed (run --cases,
// stage): the flags, the N copies of each case and their summaries (history/repeat_stats.h),
// and the cases a previous pass on the same commit lets skip (history/reuse_passed.h).
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "history/repeat_stats.h"
#include "history/reuse_passed.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

namespace fs = std::filesystem;

// The text a case of `entry` is known by when it has no name: its command.
std::string CommandOf(const CaseRequest& request) {
  for (const std::optional<std::string>* command :
       {&request.test_cmd, &request.bench_cmd, &request.eval_cmd, &request.custom_script,
        &request.custom_cmd}) {
    if (*command) return **command;
  }
  return request.model_name.value_or("");
}

}  // namespace

std::string RepeatedCaseName(const CaseEntry& entry) {
  return entry.name.empty() ? CommandOf(entry.request) : entry.name;
}

po::options_description RepeatOptions(bool reuse_passed) {
  po::options_description options("Repeats and reuse");
  const std::string repeat_help =
      "run each case (each stage) N times (1.." + std::to_string(history::kMaxRepeat) +
      "): Slurm jobs all submitted at once so the scheduler spreads them over the "
      "partition's nodes, local runs in turn; a custom command sees its run's number in "
      "TRTLLM_RUN_REPEAT_INDEX. Reports the pass count, the pass rate with its Wilson 95% "
      "interval, the durations (min/median/max), the nodes and every failure's signature, "
      "also under `repeat` in result.json; PASSED only when all N passed";
  options.add_options()("repeat", po::value<std::string>()->value_name("N"), repeat_help.c_str())(
      "repeat-pass-rate", po::value<std::string>()->value_name("R"),
      "with --repeat: PASSED when the observed pass rate is at least R (0..1), e.g. 0.9");
  if (reuse_passed) {
    options.add_options()(
        "reuse-passed", po::bool_switch(),
        "skip the tests (cases) that passed on the checkout's commit (and in this stage, for "
        "`stage`) as recorded in the history: SKIPPED with the reason \"passed on <commit> at "
        "<time> (<work dir>)\", as CI's reusePassedTestResults does");
  }
  return options;
}

std::optional<int> RepeatFromFlags(const std::string& subcommand, const po::variables_map& vm,
                                   RepeatFlags* flags) {
  if (vm.count("repeat")) {
    const std::string text = vm["repeat"].as<std::string>();
    errno = 0;
    char* end = nullptr;
    const long long count = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || count < 1 ||
        count > history::kMaxRepeat) {
      return UsageError(subcommand,
                        "--repeat '" + text + "' is not a number of runs from 1 to " +
                            std::to_string(history::kMaxRepeat),
                        "e.g. --repeat 20");
    }
    flags->count = static_cast<int>(count);
  }
  if (vm.count("repeat-pass-rate")) {
    const std::string text = vm["repeat-pass-rate"].as<std::string>();
    if (!vm.count("repeat")) {
      return UsageError(subcommand, "--repeat-pass-rate goes with --repeat N",
                        "e.g. --repeat 20 --repeat-pass-rate 0.9");
    }
    errno = 0;
    char* end = nullptr;
    const double rate = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(rate) || rate < 0 ||
        rate > 1) {
      return UsageError(subcommand, "--repeat-pass-rate '" + text + "' is not a rate from 0 to 1",
                        "e.g. --repeat-pass-rate 0.9 accepts 18 passes of 20");
    }
    flags->pass_rate = rate;
  }
  flags->reuse_passed = vm.count("reuse-passed") && vm["reuse-passed"].as<bool>();
  if (flags->reuse_passed && flags->count > 0) {
    return UsageError(subcommand, "give --repeat N or --reuse-passed, not both",
                      "--repeat measures how often tests pass; --reuse-passed skips them");
  }
  if (flags->reuse_passed) {
    Result<std::string> store = HistoryPathFromFlags(vm, nullptr);
    if (store.ok() && store->empty()) {
      return UsageError(subcommand, "--reuse-passed reads the history, and it is off",
                        "drop --no-history (or the config's `history: off`), or give --history "
                        "STORE");
    }
  }
  return std::nullopt;
}

std::string CheckoutRoot(const std::optional<std::string>& repo_root) {
  std::error_code error;
  if (repo_root) return fs::absolute(*repo_root, error).lexically_normal().string();
  fs::path cwd = fs::current_path(error);
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
}

std::vector<CaseEntry> ExpandRepeats(const std::vector<CaseEntry>& cases, int count) {
  std::vector<CaseEntry> expanded;
  for (std::size_t group = 0; group < cases.size(); ++group) {
    const CaseEntry& original = cases[group];
    const std::string base = original.name.empty() ? CommandOf(original.request) : original.name;
    for (int run = 1; run <= count; ++run) {
      CaseEntry entry = original;
      entry.index = static_cast<int>(group) * count + run;
      entry.name = base + " #" + std::to_string(run);
      entry.origin =
          original.origin + " (run " + std::to_string(run) + " of " + std::to_string(count) + ")";
      Result<CommandKind> kind = ClassifyCommand(entry.request);
      if (kind.ok() && kind.value() == CommandKind::kCustom) {
        const std::string index = "TRTLLM_RUN_REPEAT_INDEX=" + std::to_string(run);
        entry.request.custom_env =
            entry.request.custom_env ? *entry.request.custom_env + " " + index : index;
      }
      expanded.push_back(std::move(entry));
    }
  }
  return expanded;
}

std::vector<history::RepeatSummary> SummarizeRepeats(const std::vector<CaseEntry>& cases,
                                                     const MultiRunResult& result, int count,
                                                     std::optional<double> pass_rate) {
  std::vector<std::vector<history::RepeatRun>> runs(cases.size());
  for (const CaseOutcome& outcome : result.cases) {
    const int group = (outcome.entry.index - 1) / count;
    if (group < 0 || group >= static_cast<int>(cases.size())) continue;
    history::CaseRecord record = history::CaseRecordOf(outcome.result, "case", "");
    history::RepeatRun run;
    run.index = (outcome.entry.index - 1) % count + 1;
    run.verdict = record.verdict;
    run.duration_seconds = outcome.result.duration_seconds;
    run.nodes = record.nodes;
    run.signature = record.signature;
    run.work_dir = outcome.result.work_dir;
    runs[static_cast<std::size_t>(group)].push_back(std::move(run));
  }
  std::vector<history::RepeatSummary> summaries;
  for (std::size_t group = 0; group < cases.size(); ++group) {
    const std::string name =
        cases[group].name.empty() ? CommandOf(cases[group].request) : cases[group].name;
    summaries.push_back(history::SummarizeRepeat(name, std::move(runs[group]), pass_rate));
  }
  return summaries;
}

std::string WithRepeatJson(const std::string& combined,
                           const std::vector<history::RepeatSummary>& summaries) {
  rapidjson::Document doc;
  doc.Parse(combined.c_str(), combined.size());
  if (doc.HasParseError() || !doc.IsObject()) return combined;
  rapidjson::Value list(rapidjson::kArrayType);
  for (const history::RepeatSummary& summary : summaries) {
    rapidjson::Document one(&doc.GetAllocator());
    one.Parse(history::RepeatSummaryJson(summary).c_str());
    list.PushBack(rapidjson::Value(one, doc.GetAllocator()), doc.GetAllocator());
  }
  doc.AddMember("repeat", list, doc.GetAllocator());
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
  writer.SetIndent(' ', 2);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::vector<CaseOutcome> TakeReusedCases(const std::string& subcommand,
                                         history::HistoryStore* store,
                                         std::vector<CaseEntry>* cases) {
  std::vector<CaseOutcome> reused;
  if (store == nullptr) return reused;
  // The commit of each case's checkout; usually one for all.
  std::map<std::string, std::map<std::string, std::string>> reasons_by_commit;
  std::vector<CaseEntry> left;
  for (CaseEntry& entry : *cases) {
    const std::string commit = history::ReadGitHead(CheckoutRoot(entry.request.repo_root)).commit;
    if (commit.empty() || entry.name.empty()) {
      left.push_back(std::move(entry));
      continue;
    }
    if (!reasons_by_commit.count(commit)) {
      std::vector<std::string> names;
      for (const CaseEntry& other : *cases) names.push_back(other.name);
      std::map<std::string, std::string>& reasons = reasons_by_commit[commit];
      // A case's own verdict first (its name in the cases file), then a test of that id
      // recorded by any run (a plain list's pytest node id).
      Result<std::vector<history::LatestOutcome>> verdicts = store->LatestCaseVerdicts(commit);
      Result<std::vector<history::LatestOutcome>> tests =
          store->LatestTestOutcomes(commit, std::nullopt);
      if (!verdicts.ok() || !tests.ok()) {
        std::cerr << "trtllm-run " << subcommand << ": warning: --reuse-passed: "
                  << EscapeControl((verdicts.ok() ? tests.status() : verdicts.status()).message())
                  << "; every case runs\n";
      } else {
        std::map<std::string, std::string> by_case =
            history::PassedBefore(names, *verdicts, commit);
        std::vector<std::string> case_ids;
        for (const history::LatestOutcome& row : *verdicts) case_ids.push_back(row.id);
        std::sort(case_ids.begin(), case_ids.end());
        std::map<std::string, std::string> by_test = history::PassedBefore(names, *tests, commit);
        for (const std::string& name : names) {
          // A case recorded by name decides by its own verdict, even when it failed.
          const bool has_case_row = std::binary_search(case_ids.begin(), case_ids.end(), name);
          if (by_case.count(name)) {
            reasons[name] = by_case[name];
          } else if (!has_case_row && by_test.count(name)) {
            reasons[name] = by_test[name];
          }
        }
      }
    }
    const std::map<std::string, std::string>& reasons = reasons_by_commit[commit];
    auto found = reasons.find(entry.name);
    if (found == reasons.end()) {
      left.push_back(std::move(entry));
      continue;
    }
    CaseOutcome outcome;
    outcome.result.status = RunStatus::kSkipped;
    outcome.result.reason = found->second;
    outcome.result.command = CommandOf(entry.request);
    outcome.result.notes.push_back("--reuse-passed: not run");
    outcome.entry = std::move(entry);
    reused.push_back(std::move(outcome));
  }
  *cases = std::move(left);
  return reused;
}

}  // namespace trtllm_run::cli
