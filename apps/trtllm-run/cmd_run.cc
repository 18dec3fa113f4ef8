// trtllm-run run: one case, from flags or a request file, to a verdict.
#include <signal.h>

#include <iostream>

#include "cli.h"
#include "trtllm_run/report.h"

namespace trtllm_run::cli {

int RunMain(int argc, char** argv) {
  po::options_description run_options("Run");
  run_options.add_options()("kill-grace", po::value<int>()->default_value(30),
                            "seconds between SIGTERM and SIGKILL when a job is stopped")(
      "json", po::bool_switch(),
      "print result.json on stdout at the end; the job's output then goes to stderr")(
      "junit", po::value<std::string>(), "also write the verdict as JUnit XML to FILE");
  po::options_description visible;
  visible.add(CaseOptions()).add(run_options).add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("run", argc, argv, visible, &vm)) return *done;

  Result<CaseRequest> request = RequestFromOptions(vm);
  if (!request.ok()) return Fail("run", request.status());
  int kill_grace = vm["kill-grace"].as<int>();
  if (kill_grace < 0) {
    return UsageError("run", "--kill-grace must be >= 0, got " + std::to_string(kill_grace));
  }
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("run", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  RunOptions options;
  const bool json = vm["json"].as<bool>();
  options.terminal = json ? &std::cerr : &std::cout;  // stdout stays pure JSON
  options.progress = &std::cerr;
  options.cancel = &cancel;
  options.kill_grace_seconds = kill_grace;
  Result<RunResult> result = runtime.value()->Run(request.value(), options);
  if (!result.ok()) return Fail("run", result.status());
  std::cout.flush();
  std::cerr << "\n" << FormatSummary(result.value()) << "\n";
  if (vm.count("junit")) {
    Status written = WriteJUnit(result.value(), vm["junit"].as<std::string>());
    if (!written.ok()) std::cerr << "trtllm-run run: error: " << written.ToString() << "\n";
  }
  if (json) std::cout << ResultToJson(result.value()) << std::flush;
  return ExitCodeFor(result.value());
}

}  // namespace trtllm_run::cli
