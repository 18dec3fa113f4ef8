// trtllm-run exec WORK_DIR: run a work dir that `trtllm-run plan` prepared, to a verdict
// (Runtime::ExecuteWorkDir). The plan-then-run flow: review or edit nothing, then run.
// One run per work dir: a work dir another trtllm-run executes, or one that already has
// a verdict (result.json), is refused with exit 2 and left untouched.
#include <signal.h>

#include <iostream>

#include "cli.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "trtllm_run/report.h"

namespace trtllm_run::cli {

int ExecMain(int argc, char** argv) {
  po::options_description visible("Exec");
  visible.add_options()("kill-grace", DurationValue("30s"),
                        "time between SIGTERM and SIGKILL when a job is stopped")(
      "json", po::bool_switch(),
      "print result.json on stdout at the end; the job's output then goes to stderr")(
      "junit", po::value<std::string>()->value_name("PATH"),
      "also write the verdict as JUnit XML to PATH");
  visible.add(HtmlOptions()).add(HistoryOptions()).add(PerfGateOptions()).add(PluginOptions());
  CommandUsage usage;
  usage.positional = "WORK_DIR";
  usage.about =
      "Runs a work dir prepared by `trtllm-run plan` (its job_spec.json) to a verdict, exactly "
      "as `trtllm-run run` would have. Refused (exit 2, nothing touched) when another "
      "trtllm-run runs it, or when it already ran (result.json or run_state.json exists).";
  po::variables_map vm;
  if (std::optional<int> done = Parse("exec", argc, argv, visible, &vm, usage)) return *done;
  const std::string work_dir = Positional(vm);
  if (Result<std::string> history = HistoryPathFromFlags(vm, nullptr); !history.ok()) {
    return UsageError("exec", history.status().message(), history.status().hint());
  }
  Result<int> kill_grace_flag = KillGraceFlag(vm);
  if (!kill_grace_flag.ok()) return Fail("exec", kill_grace_flag.status());
  const int kill_grace = kill_grace_flag.value();
  if (vm.count("junit")) {
    Status writable = CheckOutputFile(vm["junit"].as<std::string>(), "--junit");
    if (!writable.ok()) return Fail("exec", writable);
  }
  // A bad --perf-gate or --perf-baseline is exit 2 before anything runs.
  Result<std::function<void(RunResult*)>> perf_check = PerfFinalizer(vm, nullptr);
  if (!perf_check.ok()) return Fail("exec", perf_check.status());
  if (Status html = CheckHtmlFlag(vm); !html.ok()) return Fail("exec", html);
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("exec", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  RunOptions options = TerminalRunOptions(vm, &cancel, kill_grace);
  std::unique_ptr<history::HistoryStore> store = OpenHistoryForRecording("exec", vm);
  Result<std::function<void(RunResult*)>> perf_gate = PerfFinalizer(vm, store.get());
  if (!perf_gate.ok()) return Fail("exec", perf_gate.status());
  options.finalize = perf_gate.value();  // perf metrics (and the gate) as in `run`
  Result<RunResult> result = runtime.value()->ExecuteWorkDir(work_dir, options);
  if (!result.ok()) return Fail("exec", result.status());
  RecordInHistory("exec", store.get(), history::CaseRecordOf(result.value(), "run", ""));
  store.reset();  // the report reads the store afresh
  WriteHtmlIfAsked("exec", vm, result->work_dir);
  return ReportResult("exec", vm, result.value());
}

}  // namespace trtllm_run::cli
