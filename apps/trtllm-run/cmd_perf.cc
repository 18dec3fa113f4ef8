// trtllm-run perf: compare two runs' perf metrics; evaluate the gate on given data
// (docs/perf.md).
#include <iostream>

#include "cli.h"
#include "perf/perf_compare.h"
#include "perf/perf_evaluate.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {

int PerfMain(int argc, char** argv) {
  po::options_description options("Perf");
  options.add_options()("json", po::bool_switch(), "compare: print the table as JSON on stdout");
  po::variables_map vm;
  CommandUsage usage;
  usage.positional = "compare RUN_A RUN_B | evaluate FILE";
  usage.max_positionals = 3;
  usage.about =
      "`perf compare RUN_A RUN_B`: the perf metrics of two finished work dirs side by side "
      "(A, B, change, better/worse by each metric's direction), from their result.json's perf "
      "section, else their logs. `perf evaluate FILE`: CI's baseline and gate on the data of "
      "FILE (a JSON of the new metrics, the history and the latest post-merge values), printed "
      "as result.json's perf section; for checking the algorithm. Exit 0, 2 on bad input or a "
      "work dir without metrics (docs/perf.md).";
  if (std::optional<int> done = Parse("perf", argc, argv, options, &vm, usage)) return *done;
  const std::vector<std::string> args = Positionals(vm);
  const std::string& verb = args.front();
  if (verb == "evaluate") {
    if (args.size() != 2) return UsageError("perf", "evaluate takes one FILE");
    Result<std::string> evaluated = perf::EvaluateGateFile(args[1]);
    if (!evaluated.ok()) return Fail("perf", evaluated.status());
    std::cout << evaluated.value();
    return kExitPassed;
  }
  if (verb != "compare") {
    return UsageError("perf", "unknown perf command '" + EscapeControl(verb) + "'",
                      "valid: compare RUN_A RUN_B, evaluate FILE");
  }
  if (args.size() != 3) {
    return UsageError("perf", "compare takes two work dirs: RUN_A RUN_B",
                      "e.g. trtllm-run perf compare work_dirs/a_20261201_100000 "
                      "work_dirs/a_20261202_100000");
  }
  Result<perf::Comparison> comparison = perf::CompareWorkDirs(args[1], args[2]);
  if (!comparison.ok()) {
    if (comparison.status().code() == StatusCode::kNotFound) {
      return Fail("perf",
                  Status::InvalidInput(comparison.status().message(), comparison.status().hint()));
    }
    return Fail("perf", comparison.status());
  }
  if (vm["json"].as<bool>()) {
    std::cout << perf::ComparisonJson(comparison.value());
  } else {
    std::cout << perf::FormatComparison(comparison.value());
  }
  return kExitPassed;
}

}  // namespace trtllm_run::cli
