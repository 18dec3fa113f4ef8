// --perf-gate MODE / --perf-baseline FILE: the perf gate of run and run --cases (cli.h,
// docs/perf.md).
#include "cli.h"
#include "perf/perf_case.h"

namespace trtllm_run::cli {

po::options_description PerfGateOptions() {
  po::options_description options("Perf (bench and perf-sanity cases)");
  options.add_options()(
      "perf-gate", po::value<std::string>()->default_value("off")->value_name("MODE"),
      "gate the metrics of a perf case (trtllm-bench, perf-sanity) as TensorRT-LLM's CI does: "
      "pre-merge (10 % threshold, exempt when main itself regressed), post-merge (5 %), warn "
      "(annotate only, the verdict stays), off. A gated metric (token_throughput, "
      "total_token_throughput, acceptance length al) beyond its baseline makes a PASSED case "
      "FAILED with diagnosis perf_regression and the metric table. Metrics are always read "
      "into result.json's perf and recorded in the history (docs/perf.md)")(
      "perf-baseline", po::value<std::string>()->value_name("FILE"),
      "a pinned baseline (and per-metric thresholds) instead of the one computed from the "
      "history's last 90 days: {\"version\": 1, \"entries\": [{\"match_key\": {...}, "
      "\"metrics\": {NAME: {\"baseline\": X, \"threshold_pre_merge\": F, "
      "\"threshold_post_merge\": F}}}]}; it cannot drift down with a regression");
  return options;
}

namespace {

// The perf gate's options from the flags, without the store.
Result<perf::PerfOptions> PerfOptionsFromFlags(const po::variables_map& vm) {
  perf::PerfOptions options;
  options.gate_mode = vm.count("perf-gate") ? vm["perf-gate"].as<std::string>() : "off";
  TRTLLM_RUN_RETURN_IF_ERROR(perf::CheckGateMode(options.gate_mode));
  if (vm.count("perf-baseline")) {
    Result<perf::BaselineFile> file = perf::LoadBaselineFile(vm["perf-baseline"].as<std::string>());
    if (!file.ok()) return file.status();
    options.baseline = std::move(file.value());
  }
  return options;
}

}  // namespace

Result<std::function<void(RunResult*)>> PerfFinalizer(const po::variables_map& vm,
                                                      history::HistoryStore* store) {
  Result<perf::PerfOptions> options = PerfOptionsFromFlags(vm);
  if (!options.ok()) return options.status();
  options->store = store;
  return std::function<void(RunResult*)>([options = std::move(options.value())](RunResult* result) {
    perf::ApplyPerf(result, options);
  });
}

Result<std::function<void(RunResult*)>> PerfFinalizer(const po::variables_map& vm,
                                                      HistoryOpening& store) {
  Result<perf::PerfOptions> options = PerfOptionsFromFlags(vm);
  if (!options.ok()) return options.status();
  return std::function<void(RunResult*)>(
      [options = std::move(options.value()), &store](RunResult* result) mutable {
        options.store = store.Get();
        perf::ApplyPerf(result, options);
      });
}

}  // namespace trtllm_run::cli
