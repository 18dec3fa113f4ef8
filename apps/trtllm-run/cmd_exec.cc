// trtllm-run exec WORK_DIR: run a work dir that `trtllm-run plan` prepared, to a verdict
// (Runtime::ExecuteWorkDir). The plan-then-run flow: review or edit nothing, then run.
// One run per work dir: a work dir another trtllm-run executes, or one that already has
// a verdict (result.json), is refused with exit 2 and left untouched.
#include <signal.h>

#include <iostream>
#include <vector>

#include "cli.h"
#include "trtllm_run/report.h"

namespace trtllm_run::cli {

int ExecMain(int argc, char** argv) {
  po::options_description visible("Exec");
  visible.add_options()("kill-grace", po::value<int>()->default_value(30),
                        "seconds between SIGTERM and SIGKILL when a job is stopped")(
      "json", po::bool_switch(),
      "print result.json on stdout at the end; the job's output then goes to stderr")(
      "junit", po::value<std::string>(), "also write the verdict as JUnit XML to FILE");
  visible.add(PluginOptions());
  po::options_description all;
  all.add(visible).add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("work-dir", po::value<std::vector<std::string>>());
  all.add(hidden);
  po::positional_options_description positional;
  positional.add("work-dir", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return UsageError("exec", e.what());
  }
  if (vm.count("help")) {
    std::cout << "usage: trtllm-run exec [options] WORK_DIR\n\n"
              << "Runs a work dir prepared by `trtllm-run plan` (its job_spec.json) to a verdict,\n"
              << "exactly as `trtllm-run run` would have. Refused (exit 2, nothing touched) when\n"
              << "another trtllm-run runs it, or when it already ran (result.json or\n"
              << "run_state.json exists).\n\n"
              << visible << "\n";
    return 0;
  }
  if (!vm.count("work-dir")) return UsageError("exec", "give the work dir: WORK_DIR");
  const auto& dirs = vm["work-dir"].as<std::vector<std::string>>();
  if (dirs.size() > 1) return UsageError("exec", "one work dir only; unexpected '" + dirs[1] + "'");
  int kill_grace = vm["kill-grace"].as<int>();
  if (kill_grace < 0) {
    return UsageError("exec", "--kill-grace must be >= 0, got " + std::to_string(kill_grace));
  }
  if (vm.count("junit")) {
    Status writable = CheckOutputFile(vm["junit"].as<std::string>(), "--junit");
    if (!writable.ok()) return Fail("exec", writable);
  }
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("exec", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  RunOptions options = TerminalRunOptions(vm, &cancel, kill_grace);
  Result<RunResult> result = runtime.value()->ExecuteWorkDir(dirs[0], options);
  if (!result.ok()) return Fail("exec", result.status());
  return ReportResult("exec", vm, result.value());
}

}  // namespace trtllm_run::cli
