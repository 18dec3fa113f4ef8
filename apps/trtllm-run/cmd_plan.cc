// trtllm-run plan: classify, derive, route and render one case without running it. The
// work dir gets job_spec.json, the script and (Slurm) slurm_env.json; stdout gets the
// summary of spec 001 Step 6.
#include <iostream>

#include "cli.h"

namespace trtllm_run::cli {

int PlanMain(int argc, char** argv) {
  po::options_description plan_options("Plan");
  plan_options.add_options()(
      "slurm-env", po::value<std::string>(),
      "plan against a saved slurm_env.json instead of probing the cluster (same as "
      "--slurm-env-file)")(
      "cases", po::value<std::string>(),
      "plan every case of FILE (the cases files of `run --cases`) and print a table: workflow, "
      "scenario, model, GPUs, nodes, partition, account. Nothing is written or submitted; "
      "every problem of every case is reported at once (exit 2)");
  po::options_description visible;
  visible.add(CaseOptions()).add(plan_options).add(PluginOptions());
  po::variables_map vm;
  if (std::optional<int> done = Parse("plan", argc, argv, visible, &vm)) return *done;

  Result<CaseRequest> request = RequestFromOptions(vm);
  if (!request.ok()) return Fail("plan", request.status());
  if (vm.count("slurm-env")) {
    if (vm.count("slurm-env-file")) {
      return UsageError("plan", "give --slurm-env or --slurm-env-file, not both");
    }
    request.value().slurm_env_file = vm["slurm-env"].as<std::string>();
  }
  if (vm.count("cases")) return PlanCasesMain(vm, request.value());
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("plan", runtime.status());
  PrintPluginProblems(runtime.value()->registry());

  Result<PreparedCase> prepared = runtime.value()->Prepare(request.value());
  if (!prepared.ok()) return Fail("plan", prepared.status());
  std::cout << FormatPlanSummary(prepared.value()) << std::flush;
  return kExitPassed;
}

}  // namespace trtllm_run::cli
