// `trtllm-run stage NAME`: a TensorRT-LLM CI stage planned as its CI does (stage_plan.h),
// its shards run as concurrent jobs, failed tests rerun by CI's policy, one JUnit and
// result.json for the stage (stage_run.h).
#include <signal.h>

#include <filesystem>
#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "stage/rerun_policy.h"
#include "stage/stage_plan.h"
#include "stage/stage_run.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

namespace fs = std::filesystem;

// The repo root as a run resolves it: the flag, else the nearest .git above the cwd.
std::string RepoRoot(const CaseRequest& shared) {
  std::error_code error;
  if (shared.repo_root) return fs::absolute(*shared.repo_root, error).lexically_normal().string();
  fs::path cwd = fs::current_path(error);
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
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
      "python", po::value<std::string>()->default_value("python3"),
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
  visible.add(CaseOptions()).add(stage_options).add(HistoryOptions()).add(PluginOptions());
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

  StageRequest request;
  request.stage = Positional(vm);
  request.repo_root = RepoRoot(shared.value());
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
  Result<StageRunResult> result = RunStage(*runtime.value(), plan.value(), options);
  if (!result.ok()) return Fail("stage", result.status());
  // Every shard job of every round, each in its own transaction.
  std::unique_ptr<history::HistoryStore> store = OpenHistoryForRecording("stage", vm);
  for (const history::CaseRecord& record : history::StageRecordsOf(result.value())) {
    RecordInHistory("stage", store.get(), record);
  }
  std::cerr << "\n" << Summary(result.value());
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
