// trtllm-run run: one case, from flags or a request file, to a verdict.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "history/repeat_stats.h"
#include "perf/perf_case.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {

namespace {

// `run --cases FILE`: many cases, the case flags shared by all (multi_run.h); `run --repeat
// N` of one case is a cases run of N copies of it (`single` holds that case).
int RunCasesMain(const po::variables_map& vm, const CaseRequest& shared, int kill_grace,
                 const RepeatFlags& repeat, std::optional<CaseEntry> single = std::nullopt) {
  MultiRunOptions options;
  options.max_parallel = vm["max-parallel"].as<int>();
  options.max_parallel_local = vm["max-parallel-local"].as<int>();
  if (options.max_parallel < 1 || options.max_parallel_local < 1) {
    return UsageError("run", "--max-parallel and --max-parallel-local must be >= 1");
  }
  if (vm.count("cases") && vm.count("rerun-failed")) {
    return UsageError("run", "give --cases FILE or --rerun-failed CASES_DIR, not both");
  }
  const bool rerun = vm.count("rerun-failed") > 0;
  const std::string path = single  ? std::string()
                           : rerun ? vm["rerun-failed"].as<std::string>() + "/cases.json"
                                   : vm["cases"].as<std::string>();
  if (vm.count("junit")) {
    Status writable = CheckOutputFile(vm["junit"].as<std::string>(), "--junit");
    if (!writable.ok()) return Fail("run", writable);
  }
  if (Status html = CheckHtmlFlag(vm); !html.ok()) return Fail("run", html);
  Result<std::vector<CaseEntry>> cases =
      single  ? Result<std::vector<CaseEntry>>(std::vector<CaseEntry>{*single})
      : rerun ? LoadFailedCases(vm["rerun-failed"].as<std::string>(), shared)
              : LoadCasesFile(path, shared);
  if (!cases.ok()) return Fail("run", cases.status());
  if (rerun) {
    std::cerr << "trtllm-run: rerunning " << cases->size() << " case(s) that did not pass in "
              << EscapeControl(vm["rerun-failed"].as<std::string>()) << "\n";
  }
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("run", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  options.progress = &std::cerr;
  options.cancel = &cancel;
  options.kill_grace_seconds = kill_grace;
  options.cases_file = path;
  if (vm.count("run-dir")) {
    // The caller names the run by this directory (the MCP server's run_cases handle):
    // a second run must not take a "_2" name beside it.
    options.run_dir = vm["run-dir"].as<std::string>();
    std::error_code error;
    if (options.run_dir.empty() || std::filesystem::exists(options.run_dir, error)) {
      return UsageError("run", "--run-dir '" + options.run_dir +
                                   "' must name a directory that does not exist yet");
    }
  }
  // Each case is recorded at its verdict, in its own transaction (a repeat's runs under
  // their case's name, so `history NAME` counts them together).
  std::unique_ptr<history::HistoryStore> store = OpenHistoryForRecording("run", vm);
  Result<std::function<void(RunResult*)>> perf_gate = PerfFinalizer(vm, store.get());
  if (!perf_gate.ok()) return Fail("run", perf_gate.status());
  options.finalize = perf_gate.value();
  const std::vector<CaseEntry> originals = cases.value();
  std::vector<CaseEntry> to_run =
      repeat.count > 0 ? ExpandRepeats(originals, repeat.count) : originals;
  std::vector<CaseOutcome> reused;
  if (repeat.reuse_passed) reused = TakeReusedCases("run", store.get(), &to_run);
  if (store) {
    const std::string kind = single ? "run" : "case";
    const int count = repeat.count;
    options.on_verdict = [&store, &originals, kind, count](const CaseOutcome& outcome) {
      std::string name = outcome.entry.name;
      if (count > 0) {
        const std::size_t group = static_cast<std::size_t>((outcome.entry.index - 1) / count);
        name = group < originals.size() ? RepeatedCaseName(originals[group]) : "";
      }
      RecordInHistory("run", store.get(), history::CaseRecordOf(outcome.result, kind, name));
    };
  }
  MultiRunResult merged;
  if (!to_run.empty()) {
    Result<MultiRunResult> result = RunCases(*runtime.value(), to_run, options);
    if (!result.ok()) return Fail("run", result.status());
    merged = std::move(result.value());
  } else {
    std::cerr << "trtllm-run run: every case passed on this commit before: nothing to run\n";
    merged.cases_file = path;
  }
  // The exit code of what ran: a reused case is SKIPPED, never a failure.
  const int ran_exit = merged.cases.empty() ? kExitPassed : ExitCodeForCases(merged);
  if (!reused.empty()) {
    merged.cases.insert(merged.cases.end(), reused.begin(), reused.end());
    std::stable_sort(
        merged.cases.begin(), merged.cases.end(),
        [](const CaseOutcome& a, const CaseOutcome& b) { return a.entry.index < b.entry.index; });
  }
  std::string combined = CasesToJson(merged);
  std::vector<history::RepeatSummary> summaries;
  if (repeat.count > 0) {
    summaries = SummarizeRepeats(originals, merged, repeat.count, repeat.pass_rate);
    combined = WithRepeatJson(combined, summaries);
  }
  if ((!reused.empty() || repeat.count > 0) && !merged.run_dir.empty()) {
    Status written = WriteFileAtomic(merged.run_dir + "/result.json", combined);
    if (!written.ok()) std::cerr << "trtllm-run run: error: " << written.ToString() << "\n";
  }
  WriteHtmlIfAsked("run", vm, merged.run_dir);
  std::cerr << "\n" << FormatCasesTable(merged) << "\n";
  for (const history::RepeatSummary& summary : summaries) {
    std::cerr << history::FormatRepeatSummary(summary);
  }
  if (vm.count("junit")) {
    const std::string junit = vm["junit"].as<std::string>();
    Status written = WriteFileAtomic(junit, CasesToJUnit(merged));
    if (!written.ok()) std::cerr << "trtllm-run run: error: " << written.ToString() << "\n";
  }
  if (vm["json"].as<bool>()) std::cout << combined << std::flush;
  if (repeat.count > 0) {
    // The verdict of a repeat is its summaries': all passed, or the rate accepted.
    if (ran_exit == kExitUserInterrupt) return ran_exit;
    const bool accepted =
        std::all_of(summaries.begin(), summaries.end(),
                    [](const history::RepeatSummary& summary) { return summary.accepted; });
    return accepted ? kExitPassed : (ran_exit != kExitPassed ? ran_exit : kExitFailed);
  }
  return ran_exit;
}

}  // namespace

int RunMain(int argc, char** argv) {
  po::options_description run_options("Run");
  run_options.add_options()("kill-grace", DurationValue("30s"),
                            "time between SIGTERM and SIGKILL when a job is stopped")(
      "json", po::bool_switch(),
      "print result.json on stdout at the end; the job's output then goes to stderr")(
      "junit", po::value<std::string>()->value_name("PATH"),
      "also write the verdict as JUnit XML to PATH");
  po::options_description cases_options("Many cases (--cases)");
  cases_options.add_options()(
      "cases", po::value<std::string>()->value_name("FILE"),
      "run every case of FILE: a YAML/JSON list of request mappings (or {defaults: {...}, "
      "cases: [...]}), or a text file with one pytest node id / perf-sanity id per line. The "
      "case flags above (and --request) apply to every case; a case's own keys win. All cases "
      "are planned first: any bad case -> exit 2, nothing submitted. Then a table on stderr, "
      "<repo>/work_dirs/cases_<time>/result.json, --junit with one testcase per case, --json "
      "prints the combined JSON. Exit 0 when all PASSED (or PASSED and SKIPPED), 130 on "
      "Ctrl-C, else the most severe verdict's code: ERROR 3 > OUT_OF_MEMORY 7 > HANG_DETECTED "
      "5 > TIMEOUT 4 > FAILED 1 > CANCELLED 6 > SKIPPED 8")(
      "max-parallel", po::value<int>()->value_name("N")->default_value(32),
      "--cases: cases in flight at once (Slurm jobs of one cluster share one "
      "watcher; a job that printed its end line frees its place)")(
      "max-parallel-local", po::value<int>()->value_name("N")->default_value(1),
      "--cases: of those, cases running on this host (local_direct, local_docker) at once")(
      "run-dir", po::value<std::string>()->value_name("DIR"),
      "--cases: the directory of the combined result.json (default: "
      "<repo>/work_dirs/cases_<time>); it must not exist yet")(
      "rerun-failed", po::value<std::string>()->value_name("CASES_DIR"),
      "run again the cases of CASES_DIR (a --cases run's directory) that neither passed nor were "
      "skipped, with "
      "their original inputs (its cases.json); case flags given now override them");
  po::options_description visible;
  visible.add(CaseOptions())
      .add(run_options)
      .add(cases_options)
      .add(HtmlOptions())
      .add(RepeatOptions(/*reuse_passed=*/true))
      .add(HistoryOptions())
      .add(PerfGateOptions())
      .add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("run", argc, argv, visible, &vm)) return *done;
  if (Result<std::string> history = HistoryPathFromFlags(vm, nullptr); !history.ok()) {
    return UsageError("run", history.status().message(), history.status().hint());
  }

  Result<CaseRequest> request = RequestFromOptions(vm);
  if (!request.ok()) return Fail("run", request.status());
  Result<int> kill_grace_flag = KillGraceFlag(vm);
  if (!kill_grace_flag.ok()) return Fail("run", kill_grace_flag.status());
  const int kill_grace = kill_grace_flag.value();
  if (Status mode = perf::CheckGateMode(vm["perf-gate"].as<std::string>()); !mode.ok()) {
    return UsageError("run", mode.message(), mode.hint());
  }
  RepeatFlags repeat;
  if (std::optional<int> bad = RepeatFromFlags("run", vm, &repeat)) return *bad;
  if (vm.count("cases") || vm.count("rerun-failed")) {
    return RunCasesMain(vm, request.value(), kill_grace, repeat);
  }
  if (repeat.reuse_passed) {
    return UsageError("run", "--reuse-passed needs --cases FILE (or `stage`)",
                      "a single run is what you asked for: it always runs");
  }
  if (repeat.count > 0) {
    CaseEntry single;
    single.index = 1;
    single.origin = "the command line";
    single.request = request.value();
    return RunCasesMain(vm, request.value(), kill_grace, repeat, single);
  }
  if (vm.count("junit")) {
    Status writable = CheckOutputFile(vm["junit"].as<std::string>(), "--junit");
    if (!writable.ok()) return Fail("run", writable);
  }
  if (Status html = CheckHtmlFlag(vm); !html.ok()) return Fail("run", html);
  if (!vm["max-parallel"].defaulted() || !vm["max-parallel-local"].defaulted() ||
      vm.count("run-dir")) {
    return UsageError("run",
                      "--max-parallel, --max-parallel-local and --run-dir need --cases FILE");
  }
  // The baseline file is read before anything runs: a bad one is exit 2, nothing started.
  Result<std::function<void(RunResult*)>> perf_check = PerfFinalizer(vm, nullptr);
  if (!perf_check.ok()) return Fail("run", perf_check.status());
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("run", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  RunOptions options = TerminalRunOptions(vm, &cancel, kill_grace);
  // Opened while the case is planned and its job runs (every input was checked above);
  // first used after the job.
  HistoryOpening store("run", vm);
  Result<std::function<void(RunResult*)>> perf_gate = PerfFinalizer(vm, store);
  if (!perf_gate.ok()) return Fail("run", perf_gate.status());
  options.finalize = perf_gate.value();
  Result<RunResult> result = runtime.value()->Run(request.value(), options);
  if (!result.ok()) return Fail("run", result.status());
  RecordInHistory("run", store.Get(), history::CaseRecordOf(result.value(), "run", ""));
  store.Close();  // the report reads the store afresh
  WriteHtmlIfAsked("run", vm, result->work_dir);
  return ReportResult("run", vm, result.value());
}

}  // namespace trtllm_run::cli
