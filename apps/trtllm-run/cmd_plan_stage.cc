// `trtllm-run plan --stage NAME`: a TensorRT-LLM CI stage planned as its CI does (the
// stage table, the keys, the rendered test-db, waives, least_duration shards), printed;
// nothing is written or submitted.
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "history/history_store.h"
#include "placement/env_check.h"
#include "stage/stage_plan.h"
#include "stage/test_db_render.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::cli {
namespace {

std::string Secs(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(seconds < 10 ? 1 : 0) << seconds << " s";
  return out.str();
}

std::string SplitsText(const StagePlan& plan) {
  if (plan.splits.size() == 1) {
    return "split " + std::to_string(plan.splits[0]) + " of " + std::to_string(plan.split_count);
  }
  return "splits " + std::to_string(plan.splits.front()) + "-" +
         std::to_string(plan.splits.back()) + " of " + std::to_string(plan.split_count);
}

std::string Text(const StagePlan& plan) {
  std::ostringstream out;
  out << "stage " << (plan.stage_name.empty() ? "-" : EscapeControl(plan.stage_name))
      << ": test-db " << plan.test_db_context << ", " << SplitsText(plan);
  if (plan.gpu_count > 0) {
    out << ", " << plan.gpu_count << " GPU" << (plan.gpu_count == 1 ? "" : "s") << " on "
        << plan.node_count << " node" << (plan.node_count == 1 ? "" : "s");
  }
  out << "\nkeys: " << EscapeControl(KeysText(plan.match_keys)) << "\n";
  for (const auto& [key, origin] : plan.key_origins) {
    if (key != "gpu" && key != "system_gpu_count" && origin != "--match") continue;
    auto value = plan.match_keys.find(key);
    if (value == plan.match_keys.end()) continue;
    out << "  " << EscapeControl(key + "=" + value->second) << " from " << EscapeControl(origin)
        << "\n";
  }
  out << "blocks:\n";
  for (const std::string& line : plan.matched_blocks_explained) out << "  " << line << "\n";
  out << "durations: "
      << (plan.durations_source.empty() ? "none (every test counts 1 s)"
                                        : EscapeControl(plan.durations_source))
      << "\n";
  for (const StageShard& shard : plan.shards) {
    out << "shard " << shard.split_id << "/" << plan.split_count << ": " << shard.tests.size()
        << (shard.tests.size() == 1 ? " test" : " tests") << ", " << Secs(shard.expected_seconds)
        << " expected\n";
    for (const StageTest& test : shard.tests) {
      out << "  " << EscapeControl(test.id) << "  " << Secs(test.expected_seconds);
      if (test.timeout_seconds) out << "  TIMEOUT " << test.timeout_seconds / 60 << " min";
      if (test.isolation) out << "  ISOLATION";
      out << "\n";
    }
  }
  if (!plan.waived.empty()) {
    out << "waived (" << plan.waived.size() << ", SKIPPED, not submitted):\n";
    for (const StageTest& test : plan.waived) {
      out << "  " << EscapeControl(test.id) << "  (" << EscapeControl(*test.waived_reason) << ")\n";
    }
  }
  for (const std::string& warning : plan.warnings) out << "warning: " << warning << "\n";
  return out.str();
}

std::string Json(const StagePlan& plan) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const std::string& value) {
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  auto strings = [&](const char* key, const std::vector<std::string>& values) {
    w.Key(key);
    w.StartArray();
    for (const std::string& value : values) str(value);
    w.EndArray();
  };
  auto test_object = [&](const StageTest& test) {
    w.StartObject();
    w.Key("id");
    str(test.id);
    w.Key("isolation");
    w.Bool(test.isolation);
    w.Key("expected_seconds");
    w.Double(test.expected_seconds);
    w.Key("timeout_seconds");
    w.Int(test.timeout_seconds);
    if (test.waived_reason) {
      w.Key("waived_reason");
      str(*test.waived_reason);
    }
    w.EndObject();
  };
  w.StartObject();
  w.Key("stage_name");
  str(plan.stage_name);
  w.Key("test_db_context");
  str(plan.test_db_context);
  w.Key("split_count");
  w.Int(plan.split_count);
  w.Key("splits");
  w.StartArray();
  for (int split : plan.splits) w.Int(split);
  w.EndArray();
  w.Key("gpu_count");
  w.Int(plan.gpu_count);
  w.Key("node_count");
  w.Int(plan.node_count);
  w.Key("match_keys");
  w.StartObject();
  for (const auto& [key, value] : plan.match_keys) {
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    str(value);
  }
  w.EndObject();
  w.Key("key_origins");
  w.StartObject();
  for (const auto& [key, origin] : plan.key_origins) {
    w.Key(key.c_str(), static_cast<rapidjson::SizeType>(key.size()));
    str(origin);
  }
  w.EndObject();
  strings("matched_blocks_explained", plan.matched_blocks_explained);
  w.Key("durations_source");
  str(plan.durations_source);
  w.Key("shards");
  w.StartArray();
  for (const StageShard& shard : plan.shards) {
    w.StartObject();
    w.Key("split_id");
    w.Int(shard.split_id);
    w.Key("expected_seconds");
    w.Double(shard.expected_seconds);
    w.Key("tests");
    w.StartArray();
    for (const StageTest& test : shard.tests) test_object(test);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("waived");
  w.StartArray();
  for (const StageTest& test : plan.waived) test_object(test);
  w.EndArray();
  strings("warnings", plan.warnings);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

// The partition a stage's jobs go to on a Slurm scenario, and its GRES and node count:
// a placeholder case is placed as `run` places one (the catalog, config files, SSH
// options, the probe and the default-partition rule), nothing is written.
Result<StagePartitionFacts> ProbeStagePartition(const po::variables_map& vm,
                                                const CaseRequest& shared) {
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return runtime.status();
  CaseRequest probe = shared;
  probe.custom_cmd = "true";
  probe.custom_script.reset();
  probe.test_cmd.reset();
  if (!probe.model_name) probe.model_name = "stage_partition_probe";
  // Only the partition matters here: no image to resolve, nothing to install or build.
  probe.container_runtime = "none";
  probe.container_image = "none";
  probe.skip_install = true;
  probe.build_project = false;
  Result<PlannedCase> planned = runtime.value()->Plan(probe);
  if (!planned.ok()) return planned.status();
  const Placement& placement = planned->placement;
  // sbatch's "a,b" list: the first member stands for all (the same on each, in CI's pools).
  const std::string name = placement.partition.substr(0, placement.partition.find(','));
  if (placement.slurm_env) {
    for (const SlurmPartition& partition : placement.slurm_env->partitions) {
      if (partition.name != name) continue;
      StagePartitionFacts facts;
      facts.name = name;
      facts.gres = partition.gres;
      facts.nodes = std::atol(partition.nodes.c_str());
      return facts;
    }
  }
  return Status::ExecutionError("the Slurm probe does not describe partition '" + name + "'");
}

// --durations FILE|history, and the history's durations for a checkout without a
// .test_durations (used by PlanStage only then).
std::optional<int> DurationsFromFlags(const std::string& subcommand, const po::variables_map& vm,
                                      StageRequest* request) {
  const std::string given = vm.count("durations") ? vm["durations"].as<std::string>() : "";
  if (vm.count("durations") && given != "history") {
    request->durations_file = given;
    return std::nullopt;
  }
  Result<std::string> path = HistoryPathFromFlags(vm, nullptr);
  if (!path.ok()) return UsageError(subcommand, path.status().message(), path.status().hint());
  std::error_code error;
  const bool exists = !path->empty() && (history::IsPostgresUrl(*path) ||
                                         std::filesystem::exists(path.value(), error));
  if (given == "history" && !exists) {
    return Fail(subcommand,
                Status::InvalidInput(
                    "--durations history: " + (path->empty() ? std::string("the history is off")
                                                             : "no history store at " + *path),
                    "run the stage's tests once (their durations are recorded), "
                    "or give --durations FILE"));
  }
  if (!exists) return std::nullopt;
  Result<std::unique_ptr<history::HistoryStore>> store = history::OpenHistoryStore(path.value());
  Result<std::map<std::string, double>> durations =
      store.ok() ? store.value()->MeanDurations()
                 : Result<std::map<std::string, double>>(store.status());
  if (!durations.ok()) {
    if (given == "history") return Fail(subcommand, durations.status());
    return std::nullopt;  // the fallback only: the checkout's rules apply
  }
  if (given == "history") {
    if (durations->empty()) {
      return Fail(subcommand, Status::InvalidInput("--durations history: the history at " + *path +
                                                       " holds no test durations yet",
                                                   "give --durations FILE"));
    }
    request->durations = std::move(durations.value());
    request->durations_origin = "history " + *path;
  } else {
    request->fallback_durations = std::move(durations.value());
    request->fallback_durations_origin = "history " + *path;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> StageRequestFromFlags(const std::string& subcommand, const po::variables_map& vm,
                                         const CaseRequest& shared, StageRequest* request,
                                         std::string* probe_warning) {
  if (vm.count("test-db")) request->test_db_context = vm["test-db"].as<std::string>();
  if (vm.count("waives")) request->waives_file = vm["waives"].as<std::string>();
  if (vm.count("splits")) request->splits = vm["splits"].as<int>();
  if (std::optional<int> bad = DurationsFromFlags(subcommand, vm, request)) return bad;
  if (vm.count("match")) {
    for (const std::string& pair : vm["match"].as<std::vector<std::string>>()) {
      const std::size_t equals = pair.find('=');
      if (equals == std::string::npos || equals == 0) {
        return UsageError(subcommand, "--match '" + EscapeControl(pair) + "' is not key=value",
                          "e.g. --match system_gpu_count=4 --match gpu=b200");
      }
      request->match[pair.substr(0, equals)] = pair.substr(equals + 1);
    }
  }
  // On a local scenario the target is this host: its GPUs (nvidia-smi) give gpu and
  // system_gpu_count, as CI's sysinfo does. On a Slurm scenario the partition the jobs go
  // to gives them (its GPU GRES and node count), found as a case's placement finds it.
  if (shared.scenario &&
      (*shared.scenario == "local_direct" || *shared.scenario == "local_docker")) {
    std::unique_ptr<Scenario> local = MakeLocalScenario();
    Result<EnvFacts> facts = CheckEnvironment(*local, nullptr);
    if (facts.ok() && facts->gpu_count > 0) {
      request->target_gpu = facts->device_type;
      request->target_system_gpu_count = facts->gpu_count;
      request->target_origin = "nvidia-smi on this host";
    } else if (probe_warning != nullptr) {
      *probe_warning =
          "warning: --scenario " + *shared.scenario + ": nvidia-smi finds no GPU on this host (" +
          (facts.ok() ? (facts->notes.empty() ? std::string("no GPUs") : facts->notes.front())
                      : facts.status().message()) +
          "): gpu and system_gpu_count come from the stage; give --match to choose\n";
    }
  } else if (shared.scenario &&
             (*shared.scenario == "local_slurm" || *shared.scenario == "remote_slurm")) {
    Result<StagePartitionFacts> partition = ProbeStagePartition(vm, shared);
    if (!partition.ok() && partition.status().code() == StatusCode::kInvalidInput) {
      return Fail(subcommand, partition.status());
    }
    if (partition.ok()) {
      request->target_partition = std::move(partition.value());
    } else if (probe_warning != nullptr) {
      *probe_warning = "warning: --scenario " + *shared.scenario +
                       ": the partition could not be probed (" +
                       EscapeControl(partition.status().message()) +
                       "): gpu and system_gpu_count come from the stage; give --match to choose\n";
    }
  }
  return std::nullopt;
}

int PlanStageMain(const po::variables_map& vm, const CaseRequest& shared) {
  StageRequest request;
  if (vm.count("stage")) request.stage = vm["stage"].as<std::string>();
  if (shared.repo_root) request.repo_root = *shared.repo_root;
  std::string probe_warning;
  if (std::optional<int> bad = StageRequestFromFlags("plan", vm, shared, &request, &probe_warning))
    return *bad;
  Result<StagePlan> plan = PlanStage(request);
  if (!plan.ok()) return Fail("plan", plan.status());
  std::cerr << probe_warning;
  if (vm["json"].as<bool>()) {
    std::cerr << Text(plan.value()) << std::flush;
    std::cout << Json(plan.value()) << std::flush;
  } else {
    std::cout << Text(plan.value()) << std::flush;
  }
  return kExitPassed;
}

}  // namespace trtllm_run::cli
