// `trtllm-run stage NAME`: a TensorRT-LLM CI stage planned as its CI does (stage_plan.h),
// its shards run as concurrent jobs, failed tests rerun by CI's policy, one JUnit and
// result.json for the stage (stage_run.h).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "history/repeat_stats.h"
#include "history/reuse_passed.h"
#include "stage/rerun_policy.h"
#include "stage/stage_plan.h"
#include "stage/stage_run.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

namespace fs = std::filesystem;

// `text` as a JSON string literal.
std::string JsonQuote(const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string Summary(const StageRunResult& result) {
  std::string text = "stage " + EscapeControl(result.stage_name) + ": " + result.status + " (" +
                     result.reason + ")\n";
  for (const stage::StageTestResult& test : result.tests) {
    stage::StageTestVerdict verdict = stage::VerdictOf(test);
    if (verdict == stage::StageTestVerdict::kPassed) continue;
    text +=
        "  " + std::string(stage::StageTestVerdictName(verdict)) + "  " + EscapeControl(test.id);
    if (test.waived_reason) text += "  (" + EscapeControl(*test.waived_reason) + ")";
    if (test.reused_reason) text += "  (" + EscapeControl(*test.reused_reason) + ")";
    if (!test.rerun_note.empty()) text += "  [" + EscapeControl(test.rerun_note) + "]";
    text += "\n";
  }
  for (const std::string& warning : result.warnings) {
    text += "warning: " + EscapeControl(warning) + "\n";
  }
  text += "JUnit:      " + EscapeControl(result.junit_path) + "\n";
  text += "result:     " + EscapeControl(result.run_dir) + "/result.json\n";
  return text;
}

// --reuse-passed: the plan's tests that passed on the checkout's commit in this stage are
// marked reused (SKIPPED, never submitted, left in their shard so the split is unchanged).
void ReusePassed(history::HistoryStore* store, const std::string& repo_root, StagePlan* plan) {
  const std::string commit = history::ReadGitHead(repo_root).commit;
  if (store == nullptr || commit.empty()) {
    std::cerr << "trtllm-run stage: warning: --reuse-passed: "
              << (store == nullptr ? "no history store" : "the checkout has no commit")
              << ": every test runs\n";
    return;
  }
  Result<std::vector<history::LatestOutcome>> latest =
      store->LatestTestOutcomes(commit, plan->stage_name);
  if (!latest.ok()) {
    std::cerr << "trtllm-run stage: warning: --reuse-passed: "
              << EscapeControl(latest.status().message()) << ": every test runs\n";
    return;
  }
  std::vector<std::string> ids;
  for (const StageShard& shard : plan->shards) {
    for (const StageTest& test : shard.tests) {
      if (!test.waived_reason) ids.push_back(test.id);
    }
  }
  std::map<std::string, std::string> reasons = history::PassedBefore(ids, *latest, commit);
  for (StageShard& shard : plan->shards) {
    for (StageTest& test : shard.tests) {
      auto found = reasons.find(test.id);
      if (found != reasons.end() && !test.waived_reason) test.reused_reason = found->second;
    }
  }
  std::cerr << "trtllm-run stage: --reuse-passed: " << reasons.size() << " of " << ids.size()
            << " test(s) passed on " << commit << " in stage " << EscapeControl(plan->stage_name)
            << " before: SKIPPED\n";
}

// The outcome of one test in one run of a repeated stage; nullopt when it did not run as a
// sample (waived, reused, skipped by pytest).
std::optional<history::RepeatRun> RepeatRunOf(const stage::StageTestResult& test, int index,
                                              const std::map<int, std::string>& nodes_of_split,
                                              const std::string& run_dir) {
  stage::StageTestVerdict verdict = stage::VerdictOf(test);
  if (verdict == stage::StageTestVerdict::kWaived || verdict == stage::StageTestVerdict::kSkipped) {
    return std::nullopt;
  }
  history::RepeatRun run;
  run.index = index;
  // A pass after a rerun is a pass, as the stage's verdict counts it (CI's policy).
  const bool passed =
      verdict == stage::StageTestVerdict::kPassed || verdict == stage::StageTestVerdict::kFlaky;
  run.verdict = passed ? "PASSED" : "FAILED";
  for (const stage::TestAttempt& attempt : test.attempts) run.duration_seconds += attempt.seconds;
  auto nodes = nodes_of_split.find(test.split_id);
  if (nodes != nodes_of_split.end()) run.nodes = nodes->second;
  if (!passed) {
    run.signature = test.attempts.empty()
                        ? history::FailureSignature("not run: " + test.not_run_reason)
                        : history::FailureSignature(test.attempts.front().message);
  }
  run.work_dir = run_dir;
  return run;
}

// The directory of a repeated stage: `run_dir` (--run-dir, checked not to exist), else
// <repo>/work_dirs/stage_<name>_repeat[_2, _3, ...], made here (never one that exists).
Result<std::string> MakeRepeatDir(const std::string& run_dir, const std::string& repo_root,
                                  const std::string& stage_name) {
  std::string safe = stage_name;
  for (char& c : safe) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  const std::string base =
      run_dir.empty() ? repo_root + "/work_dirs/stage_" + safe + "_repeat" : run_dir;
  std::error_code error;
  fs::create_directories(fs::path(base).parent_path(), error);
  for (int n = 1; n < 1000; ++n) {
    const std::string dir = n == 1 ? base : base + "_" + std::to_string(n);
    if (fs::create_directory(dir, error)) return fs::absolute(dir, error).string();
    if (!run_dir.empty()) break;  // --run-dir names exactly one directory
  }
  return Status::IoError("cannot make the stage repeat dir " + base +
                         (error ? ": " + error.message() : ": it exists"));
}

// `stage --repeat N`: the stage run N times in turn, each in <dir>/run_<i> and recorded in
// the history; <dir>/result.json holds every run's verdict and one repeat summary per test.
int RepeatStage(Runtime& runtime, const StagePlan& plan, StageRunOptions options,
                const RepeatFlags& repeat, history::HistoryStore* store,
                const po::variables_map& vm, const std::string& repo_root) {
  Result<std::string> dir = MakeRepeatDir(options.run_dir, repo_root, plan.stage_name);
  if (!dir.ok()) return Fail("stage", dir.status());
  std::map<std::string, std::vector<history::RepeatRun>> runs_of;  // by test id, in test order
  std::vector<std::string> order;
  std::vector<StageRunResult> results;
  bool interrupted = false;
  for (int index = 1; index <= repeat.count && !interrupted; ++index) {
    std::cerr << "trtllm-run stage: repeat run " << index << " of " << repeat.count << "\n";
    options.run_dir = *dir + "/run_" + std::to_string(index);
    Result<StageRunResult> result = RunStage(runtime, plan, options);
    if (!result.ok()) return Fail("stage", result.status());
    std::map<int, std::string> nodes_of_split;
    for (const history::CaseRecord& record : history::StageRecordsOf(result.value())) {
      RecordInHistory("stage", store, record);
      if (record.attempt == 0 && !record.nodes.empty()) nodes_of_split[record.shard] = record.nodes;
    }
    for (const stage::StageTestResult& test : result->tests) {
      std::optional<history::RepeatRun> run =
          RepeatRunOf(test, index, nodes_of_split, result->run_dir);
      if (!run) continue;
      if (!runs_of.count(test.id)) order.push_back(test.id);
      runs_of[test.id].push_back(std::move(*run));
    }
    interrupted = result->interrupted || result->status == "CANCELLED";
    std::cerr << Summary(result.value());
    results.push_back(std::move(result.value()));
  }
  std::vector<history::RepeatSummary> summaries;
  for (const std::string& id : order) {
    summaries.push_back(history::SummarizeRepeat(id, runs_of[id], repeat.pass_rate));
  }
  const bool accepted = !summaries.empty() && !interrupted &&
                        std::all_of(summaries.begin(), summaries.end(),
                                    [](const history::RepeatSummary& s) { return s.accepted; });
  std::string json = "{\n  \"schema_version\": 1,\n  \"stage\": " + JsonQuote(plan.stage_name) +
                     ",\n  \"repeat_count\": " + std::to_string(repeat.count) +
                     ",\n  \"status\": \"" + (accepted ? "PASSED" : "FAILED") +
                     "\",\n  \"runs\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    json += std::string(i ? "," : "") + "\n    {\"index\": " + std::to_string(i + 1) +
            ", \"status\": " + JsonQuote(results[i].status) +
            ", \"reason\": " + JsonQuote(results[i].reason) +
            ", \"run_dir\": " + JsonQuote(results[i].run_dir) + "}";
  }
  json += "\n  ],\n  \"repeat\": [";
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    json += std::string(i ? "," : "") + "\n    " + history::RepeatSummaryJson(summaries[i]);
  }
  json += "\n  ]\n}\n";
  Status written = WriteFileAtomic(*dir + "/result.json", json);
  if (!written.ok()) std::cerr << "trtllm-run stage: error: " << written.ToString() << "\n";
  int stable = 0;
  std::cerr << "\n";
  for (const history::RepeatSummary& summary : summaries) {
    if (summary.passed == summary.runs) {
      ++stable;
    } else {
      std::cerr << history::FormatRepeatSummary(summary);
    }
  }
  std::cerr << "stage " << EscapeControl(plan.stage_name) << " repeated " << results.size()
            << " time(s): " << stable << " of " << summaries.size()
            << " test(s) passed every run: " << (accepted ? "PASSED" : "FAILED") << "\n"
            << "result:     " << EscapeControl(*dir) << "/result.json\n";
  if (vm["json"].as<bool>()) std::cout << json << std::flush;
  if (interrupted && !results.empty() && results.back().interrupted) return kExitUserInterrupt;
  return accepted ? kExitPassed : kExitFailed;
}

}  // namespace

int StageMain(int argc, char** argv) {
  po::options_description stage_options("Stage");
  stage_options.add_options()(
      "splits", po::value<int>()->value_name("N"),
      "split the stage's tests into N shards (default: the stage table's split count)")(
      "test-db", po::value<std::string>()->value_name("CONTEXT"),
      "render tests/integration/test_lists/test-db/CONTEXT.yml and skip the stage table")(
      "match", po::value<std::vector<std::string>>()->value_name("KEY=VALUE"),
      "override a match key of the render (repeatable), e.g. --match system_gpu_count=4")(
      "waives", po::value<std::string>()->value_name("FILE"),
      "the waive list (default: the checkout's tests/integration/test_lists/waives.txt)")(
      "rerun-signatures", po::value<std::string>()->value_name("FILE"),
      "known failure signatures, one per line: a test that failed after more than 10 min is "
      "rerun once when its failure text holds one")(
      "no-reruns", po::bool_switch(), "do not rerun failed tests (CI's policy is the default)")(
      "durations", po::value<std::string>()->value_name("FILE|history"),
      "the split's durations: a pytest-split .test_durations file, or `history` for the mean "
      "durations the history recorded (default: the checkout's "
      "tests/integration/defs/.test_durations, else the history's when it has some)")(
      "python", po::value<std::string>()->value_name("PYTHON")->default_value("python3"),
      "the interpreter that runs pytest in each shard's job")(
      "max-parallel-local", po::value<int>()->value_name("N")->default_value(0),
      "shards running on this host at once (local_direct, local_docker); 0: all of them")(
      "run-dir", po::value<std::string>()->value_name("DIR"),
      "the stage's directory (default: <repo>/work_dirs/stage_<name>_<time>); must not exist")(
      "kill-grace", DurationValue("30s"), "time between SIGTERM and SIGKILL when a job is stopped")(
      "json", po::bool_switch(), "print the stage's result.json on stdout at the end")(
      "junit", po::value<std::string>()->value_name("PATH"),
      "also write the stage's merged JUnit XML to PATH");
  po::options_description visible;
  visible.add(CaseOptions())
      .add(stage_options)
      .add(HtmlOptions())
      .add(RepeatOptions(/*reuse_passed=*/true))
      .add(HistoryOptions())
      .add(PluginOptions());
  po::variables_map vm;
  CommandUsage usage;
  usage.positional = "NAME";
  usage.about =
      "Runs a TensorRT-LLM CI stage as its CI does: NAME from jenkins/L0_Test.groovy (a family "
      "without its split suffix means every split), the test-db rendered with the stage's keys, "
      "waives applied, the tests split by least_duration into shards that run as concurrent "
      "jobs, failed tests rerun by CI's policy (<= 5 min: 2 reruns; 5-10 min: 1; > 10 min: 1 "
      "with a known failure signature; unfinished: 0; never run: 1), one merged JUnit. Exit 0 "
      "when every test that is not waived passed, 1 when one failed, 2 bad input, 3 error, "
      "130 on Ctrl-C.";
  if (std::optional<int> done = Parse("stage", argc, argv, visible, &vm, usage)) return *done;
  if (Result<std::string> history = HistoryPathFromFlags(vm, nullptr); !history.ok()) {
    return UsageError("stage", history.status().message(), history.status().hint());
  }

  Result<CaseRequest> shared = RequestFromOptions(vm);
  if (!shared.ok()) return Fail("stage", shared.status());
  Result<int> kill_grace = KillGraceFlag(vm);
  if (!kill_grace.ok()) return Fail("stage", kill_grace.status());
  if (vm.count("junit")) {
    Status writable = CheckOutputFile(vm["junit"].as<std::string>(), "--junit");
    if (!writable.ok()) return Fail("stage", writable);
  }
  if (Status html = CheckHtmlFlag(vm); !html.ok()) return Fail("stage", html);
  if (shared->test_cmd || shared->bench_cmd || shared->eval_cmd || shared->custom_cmd ||
      shared->custom_script) {
    return UsageError("stage",
                      "a stage's jobs run its tests: --test-cmd, --bench-cmd, --eval-cmd, "
                      "--custom-cmd and --custom-script do not apply",
                      "`trtllm-run run` runs one command; `stage` takes the stage's name");
  }
  if (vm["max-parallel-local"].as<int>() < 0) {
    return UsageError("stage", "--max-parallel-local must be >= 0");
  }
  RepeatFlags repeat;
  if (std::optional<int> bad = RepeatFromFlags("stage", vm, &repeat)) return *bad;

  StageRequest request;
  request.stage = Positional(vm);
  request.repo_root = CheckoutRoot(shared->repo_root);
  shared->repo_root = request.repo_root;
  std::string probe_warning;
  if (std::optional<int> bad =
          StageRequestFromFlags("stage", vm, shared.value(), &request, &probe_warning)) {
    return *bad;
  }
  if (!probe_warning.empty()) std::cerr << "trtllm-run stage: " << probe_warning;
  StageRunOptions options;
  if (vm.count("rerun-signatures")) {
    auto signatures = stage::ReadFailureSignatures(vm["rerun-signatures"].as<std::string>());
    if (!signatures.ok()) return Fail("stage", signatures.status());
    options.failure_signatures = std::move(signatures.value());
  }
  Result<StagePlan> plan = PlanStage(request);
  if (!plan.ok()) return Fail("stage", plan.status());
  for (const std::string& warning : plan->warnings) {
    std::cerr << "trtllm-run stage: warning: " << EscapeControl(warning) << "\n";
  }
  std::unique_ptr<history::HistoryStore> store = OpenHistoryForRecording("stage", vm);
  if (repeat.reuse_passed) ReusePassed(store.get(), request.repo_root, &plan.value());

  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("stage", runtime.status());
  PrintPluginProblems(runtime.value()->registry());
  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  options.shared = shared.value();
  options.reruns = !vm["no-reruns"].as<bool>();
  options.python = vm["python"].as<std::string>();
  options.max_parallel_local = vm["max-parallel-local"].as<int>();
  options.progress = &std::cerr;
  options.cancel = &cancel;
  options.kill_grace_seconds = kill_grace.value();
  if (vm.count("run-dir")) {
    options.run_dir = vm["run-dir"].as<std::string>();
    std::error_code error;
    if (options.run_dir.empty() || fs::exists(options.run_dir, error)) {
      return UsageError("stage", "--run-dir '" + options.run_dir +
                                     "' must name a directory that does not exist yet");
    }
  }
  if (repeat.count > 0) {
    return RepeatStage(*runtime.value(), plan.value(), options, repeat, store.get(), vm,
                       request.repo_root);
  }
  Result<StageRunResult> result = RunStage(*runtime.value(), plan.value(), options);
  if (!result.ok()) return Fail("stage", result.status());
  // Every shard job of every round, each in its own transaction.
  for (const history::CaseRecord& record : history::StageRecordsOf(result.value())) {
    RecordInHistory("stage", store.get(), record);
  }
  store.reset();  // the report reads the store afresh
  std::cerr << "\n" << Summary(result.value());
  WriteHtmlIfAsked("stage", vm, result->run_dir);
  if (vm.count("junit")) {
    Result<std::string> merged = ReadFile(result->junit_path);
    Status written =
        merged.ok() ? WriteFileAtomic(vm["junit"].as<std::string>(), *merged) : merged.status();
    if (!written.ok()) std::cerr << "trtllm-run stage: error: " << written.ToString() << "\n";
  }
  if (vm["json"].as<bool>()) std::cout << StageResultToJson(result.value()) << std::flush;
  return ExitCodeForStage(result.value());
}

}  // namespace trtllm_run::cli
