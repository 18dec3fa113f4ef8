// The perf-sanity sub-type of the `pytest` workflow (perf_sanity_plan.h).
#include "perf_sanity_plan.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

std::string ConfigFolder(const std::string& repo_root, bool disaggregated) {
  const char* env = std::getenv(disaggregated ? "DISAGG_CONFIG_FOLDER" : "AGG_CONFIG_FOLDER");
  std::string folder = env && *env     ? env
                       : disaggregated ? "tests/scripts/perf-sanity/disaggregated"
                                       : "tests/scripts/perf-sanity/aggregated";
  return fs::path(folder).is_absolute() ? folder : repo_root + "/" + folder;
}

std::string YamlConfigs(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    if (path.extension() == ".yaml") names.push_back(path.stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (size_t i = 0; i < names.size() && i < 20; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 20) list += ", ...";
  return list.empty() ? "(none)" : list;
}

Result<YAML::Node> LoadPerfConfig(const std::string& path) {
  Result<std::string> text = ReadFileLimited(path, kMaxCasesFileBytes, "perf config");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput(
        "cannot read perf config '" + path + "': " + text.status().message(),
        "give --perf-config-yaml FILE, a readable perf-sanity config");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlLimits(text.value(), path));
  try {
    YAML::Node root = YAML::Load(text.value());
    if (!root.IsMap()) {
      return Status::InvalidInput("perf config '" + path + "' is not a YAML mapping",
                                  "a perf-sanity config has hardware: and server_configs: (or "
                                  "worker_config:) sections");
    }
    return root;
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput("perf config '" + path + "' is not valid YAML: " + e.what());
  }
}

// An integer field of a YAML mapping, `fallback` when absent.
Result<int> IntField(const YAML::Node& node, const char* key, int fallback,
                     const std::string& where) {
  YAML::Node value = node[key];
  if (!value || value.IsNull()) return fallback;
  try {
    int n = value.as<int>();
    if (n < 0) throw YAML::Exception(YAML::Mark(), "negative");
    return n;
  } catch (const YAML::Exception&) {
    return Status::InvalidInput(where + ": " + key + " must be a non-negative integer, got '" +
                                (value.IsScalar() ? value.Scalar() : std::string("a non-scalar")) +
                                "'");
  }
}

struct WorkerSize {
  int tp = 1, pp = 1, cp = 1;
  int SpecGpus() const { return tp * pp; }
  int Gpus() const { return tp * pp * cp; }
};

Result<WorkerSize> ReadWorkerSize(const YAML::Node& node, const std::string& where) {
  WorkerSize size;
  Result<int> tp = IntField(node, "tensor_parallel_size", 1, where);
  if (!tp.ok()) return tp.status();
  Result<int> pp = IntField(node, "pipeline_parallel_size", 1, where);
  if (!pp.ok()) return pp.status();
  Result<int> cp = IntField(node, "context_parallel_size", 1, where);
  if (!cp.ok()) return cp.status();
  size.tp = std::max(1, tp.value());
  size.pp = std::max(1, pp.value());
  size.cp = std::max(1, cp.value());
  return size;
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// submit.py's inputs (spec 001 Step 4 Category 4): the given config file (with the id's
// server config or mode), else the test id itself.
PerfSubmitPlan PerfInputs(const CaseRequest& request, const std::optional<PerfSanityId>& id,
                          const std::string& config_path) {
  PerfSubmitPlan perf;
  perf.enabled = true;
  if (request.perf_config_yaml) {
    perf.config_file = config_path;
    if (id) {
      perf.test_name = id->select;
      if (id->disaggregated_config) perf.benchmark_mode = id->mode;
    }
  } else if (id) {
    perf.test_list = id->test_string;
  } else {
    perf.incomplete = Status::InvalidInput(
        "perf-sanity test_cmd has no test_e2e[<id>] and no perf_config_yaml was given",
        "give the test id, e.g. test_e2e[aggr-<config>-<server config>], or "
        "--perf-config-yaml FILE");
  }
  return perf;
}

// The job's size as the perf config gives it.
struct PerfSize {
  int required = 1;  // spec 000's required_devices
  int total = 1;     // what submit.py launches
  int per_node = 1;  // hardware.gpus_per_node
  int nodes = 1;
};

// The perf config's path: perf_config_yaml, else the test id's config in the repo; ""
// when there is neither.
Result<std::string> ConfigPathFor(const CaseRequest& request, const std::optional<PerfSanityId>& id,
                                  const std::string& repo_root, JobPlan* plan) {
  std::string config_path;
  if (request.perf_config_yaml) {
    std::error_code error;
    config_path = fs::absolute(*request.perf_config_yaml, error).lexically_normal().string();
    plan->notes.push_back("perf config " + config_path + ": given (perf_config_yaml)");
  } else if (id) {
    std::string folder = ConfigFolder(repo_root, id->disaggregated_config);
    config_path = folder + "/" + id->config + ".yaml";
    std::error_code error;
    if (!fs::is_regular_file(config_path, error)) {
      return Status::InvalidInput(
          "perf-sanity config '" + id->config + ".yaml' of test id '" + id->id +
              "' was not found in " + folder,
          "give --perf-config-yaml FILE, or an id naming one of: " + YamlConfigs(folder));
    }
    plan->notes.push_back("perf config " + config_path + ": from the test id");
  }

  return config_path;
}

// Aggregated configs: the server config the id selects (none: every entry, the largest).
Status SizeAggregated(const YAML::Node& config, const std::string& config_path,
                      const std::optional<PerfSanityId>& id, PerfSize* size, JobPlan* plan) {
  std::string select = id ? id->select : "";
  const YAML::Node servers = config["server_configs"];
  std::vector<std::string> names;
  std::optional<WorkerSize> chosen;
  std::string chosen_name;
  for (const YAML::Node& server : servers) {
    std::string name = server["name"] ? server["name"].as<std::string>("") : "";
    names.push_back(name);
    if (!select.empty() && name != select) continue;
    Result<WorkerSize> server_size =
        ReadWorkerSize(server, config_path + ": server config " + name);
    if (!server_size.ok()) return server_size.status();
    if (!chosen || server_size->Gpus() > chosen->Gpus()) {
      chosen = server_size.value();
      chosen_name = name;
    }
  }
  if (!chosen) {
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    return Status::InvalidInput(
        (select.empty() ? "perf config '" + config_path + "' has no server_configs"
                        : "no server config named '" + select + "' in '" + config_path + "'"),
        "server_configs names: " + (list.empty() ? std::string("(none)") : list));
  }
  size->required = chosen->SpecGpus();
  size->total = chosen->Gpus();
  size->nodes = CeilDiv(size->total, size->per_node);
  plan->notes.push_back("required_devices " + std::to_string(size->required) + ": tp " +
                        std::to_string(chosen->tp) + " x pp " + std::to_string(chosen->pp) +
                        " of server config " + chosen_name +
                        (select.empty() ? " (the largest; the id selects every entry)" : "") +
                        "; " + std::to_string(size->nodes) + " node(s) of " +
                        std::to_string(size->per_node) + " GPUs (hardware.gpus_per_node)");
  if (chosen->cp > 1) {
    plan->notes.push_back(
        "sizing differs: the spec's rule gives tp x pp = " + std::to_string(size->required) +
        " GPUs; submit.py launches tp x pp x cp = " + std::to_string(size->total) +
        " (context_parallel_size " + std::to_string(chosen->cp) + "), which the job is sized for");
  }
  return Status::Ok();
}

// Disaggregated configs: one context server (ctx_only), or submit.py's sizing of every
// context and generation server on whole nodes.
Status SizeDisaggregated(const YAML::Node& config, const std::string& config_path,
                         const std::string& mode, PerfSize* size, JobPlan* plan) {
  const YAML::Node workers = config["worker_config"];
  Result<WorkerSize> ctx = ReadWorkerSize(workers["ctx"] ? workers["ctx"] : YAML::Node(),
                                          config_path + ": worker_config.ctx");
  if (!ctx.ok()) return ctx.status();
  Result<WorkerSize> gen = ReadWorkerSize(workers["gen"] ? workers["gen"] : YAML::Node(),
                                          config_path + ": worker_config.gen");
  if (!gen.ok()) return gen.status();
  if (mode == "ctx_only") {
    size->required = ctx->SpecGpus();
    size->total = ctx->Gpus();
    size->nodes = CeilDiv(size->total, size->per_node);
    plan->notes.push_back("required_devices " + std::to_string(size->total) +
                          ": one context server (worker_config.ctx tp " + std::to_string(ctx->tp) +
                          " x pp " + std::to_string(ctx->pp) + " x cp " + std::to_string(ctx->cp) +
                          ") on the aggregated path");
  } else {
    const YAML::Node hardware = config["hardware"];
    Result<int> num_ctx = IntField(hardware, "num_ctx_servers", 0, config_path + ": hardware");
    if (!num_ctx.ok()) return num_ctx.status();
    Result<int> num_gen = IntField(hardware, "num_gen_servers", 0, config_path + ": hardware");
    if (!num_gen.ok()) return num_gen.status();
    int ctx_servers = num_ctx.value();
    std::string bench_mode = config["benchmark"] && config["benchmark"]["mode"]
                                 ? config["benchmark"]["mode"].as<std::string>("")
                                 : "";
    if (mode == "gen_only" && bench_mode.find("gen_only_no_context") != std::string::npos) {
      ctx_servers = 0;
    }
    int ctx_nodes = ctx_servers * CeilDiv(ctx->Gpus(), size->per_node);
    int gen_nodes = num_gen.value() * CeilDiv(gen->Gpus(), size->per_node);
    size->nodes = std::max(1, ctx_nodes + gen_nodes);
    size->total = ctx_servers * ctx->Gpus() + num_gen.value() * gen->Gpus();
    size->required = size->total;
    plan->notes.push_back(
        "required_devices " + std::to_string(size->total) + ": " + std::to_string(ctx_servers) +
        " context server(s) of " + std::to_string(ctx->Gpus()) + " GPUs + " +
        std::to_string(num_gen.value()) + " generation server(s) of " +
        std::to_string(gen->Gpus()) + " GPUs; " + std::to_string(size->nodes) +
        " node(s): each server on whole size->nodes of " + std::to_string(size->per_node) +
        " GPUs (submit.py's disaggregated sizing)");
    plan->notes.push_back(
        "sizing differs: the spec's rule (tp x pp of a matching server_configs entry) has no "
        "entry in a disaggregated config and falls back to 1 GPU; submit.py's sizing is used");
  }
  size->total = std::max(size->total, 1);
  return Status::Ok();
}

// The model when the caller gave none: the config's metadata, else the config name.
void NameFromConfig(const YAML::Node& config, const std::optional<PerfSanityId>& id,
                    JobPlan* plan) {
  std::string from_config = config["metadata"] && config["metadata"]["model_name"]
                                ? config["metadata"]["model_name"].as<std::string>("")
                                : "";
  std::string name = SanitizeModelName(from_config);
  if (!name.empty()) {
    plan->model_name = name;
    plan->notes.push_back("model_name " + name + ": metadata.model_name of the perf config");
  } else if (id) {
    plan->model_name = SanitizeModelName(id->config);
    plan->notes.push_back("model_name " + plan->model_name + ": the config of the test id");
  }
}
}  // namespace

Result<JobPlan> PlanPerfSanity(const CaseRequest& request) {
  JobPlan plan;
  plan.workflow_type = "perf_sanity";
  plan.command = *request.test_cmd;
  const std::string repo_root = request.repo_root.value_or(".");
  Result<std::optional<PerfSanityId>> found_id = FindPerfSanityId(plan.command);
  if (!found_id.ok()) return found_id.status();
  const std::optional<PerfSanityId>& id = found_id.value();

  Result<std::string> found_path = ConfigPathFor(request, id, repo_root, &plan);
  if (!found_path.ok()) return found_path.status();
  const std::string config_path = found_path.value();

  PerfSize size;
  if (config_path.empty()) {
    plan.notes.push_back(
        "perf-sanity without a test id or perf_config_yaml: 1 GPU, 1 node "
        "(spec default)");
  } else {
    Result<YAML::Node> loaded = LoadPerfConfig(config_path);
    if (!loaded.ok()) return loaded.status();
    const YAML::Node& config = loaded.value();
    Result<int> gpn = IntField(config["hardware"] ? config["hardware"] : YAML::Node(),
                               "gpus_per_node", 0, config_path + ": hardware");
    if (!gpn.ok()) return gpn.status();
    if (gpn.value() <= 0) {
      return Status::InvalidInput("perf config '" + config_path + "' has no hardware.gpus_per_node",
                                  "perf-sanity configs size the job from hardware.gpus_per_node");
    }
    size.per_node = gpn.value();
    const bool disaggregated_config = config["worker_config"].IsDefined();
    if (!disaggregated_config && !config["server_configs"].IsDefined()) {
      return Status::InvalidInput("perf config '" + config_path +
                                  "' has neither server_configs (aggregated) nor "
                                  "worker_config (disaggregated)");
    }
    std::string mode = id ? id->mode : (disaggregated_config ? "e2e" : "");
    if (id && id->disaggregated_config != disaggregated_config) {
      return Status::InvalidInput(
          "test id '" + id->id + "' needs " +
              (id->disaggregated_config ? "a disaggregated" : "an aggregated") + " config, but '" +
              config_path + "' is " +
              (disaggregated_config ? "disaggregated (worker_config)"
                                    : "aggregated (server_configs)"),
          "use aggr-<config>-<server config> ids with aggregated configs and "
          "disagg-{e2e|gen_only}-<config> or aggr-ctx_only-<config> with disaggregated ones");
    }
    if (!disaggregated_config) {
      TRTLLM_RUN_RETURN_IF_ERROR(SizeAggregated(config, config_path, id, &size, &plan));
    } else {
      TRTLLM_RUN_RETURN_IF_ERROR(SizeDisaggregated(config, config_path, mode, &size, &plan));
    }
    if (!request.model_name) NameFromConfig(config, id, &plan);
  }
  if (request.model_name) {
    Result<std::string> model = DeriveModelName(request, "", "perf_sanity", &plan);
    if (!model.ok()) return model.status();
    plan.model_name = model.value();
  } else if (plan.model_name.empty()) {
    plan.model_name = "perf_sanity";
    plan.notes.push_back("model_name perf_sanity: default (no perf config to name the model)");
  }

  if (request.total_required_devices && request.required_devices_per_node) {
    size.total = *request.total_required_devices;
    size.per_node = *request.required_devices_per_node;
    size.nodes = CeilDiv(size.total, size.per_node);
    plan.notes.push_back(
        "devices: total_required_devices and required_devices_per_node given; "
        "used verbatim");
  }
  if (request.required_devices == 0) {
    return Status::InvalidInput(
        "perf-sanity tests need GPUs; required_devices 0 (CPU only) cannot run them",
        "leave --size.required-devices out (the perf config sizes the job)");
  }
  if (request.required_devices) size.required = *request.required_devices;
  if (request.node_count) size.nodes = *request.node_count;
  plan.devices_requested = true;
  plan.required_devices = size.required;
  plan.total_required_devices = size.total;
  plan.required_devices_per_node = size.per_node;
  plan.node_count = std::max(1, size.nodes);
  plan.steps.push_back(PlanStep{"run", plan.command, size.total, size.total > 1});
  plan.success_patterns = {"8_done_"};
  plan.failure_patterns = {"FAILED", "Error"};
  LaunchFacts& launch = plan.launch;
  launch.job_kind = "perf";
  launch.log_file_pattern = "slurm-%j.out";
  launch.task_layout = TaskLayout::kTaskPerDeviceOnEachNode;
  launch.gpu_count_source = "the perf config";
  launch.fewer_gpus_hint =
      "use a perf config (--perf-config-yaml) whose hardware.gpus_per_node is at most {gpus}";
  launch.perf = PerfInputs(request, id, config_path);
  return plan;
}

}  // namespace trtllm_run
