// The `pytest` workflow: every test_cmd (spec 000 "Pytest / test_cmd"). Two sub-types:
//  - pytest and other commands: the GPU count comes from the closest GPU-count marker
//    of the test the command names (the test file is read, relative to the repo root or
//    tests/integration/defs); at most 8 GPUs, always one node.
//  - perf-sanity (test_e2e[<id>], the perf-sanity test file, or perf_config_yaml): the
//    workflow_type is "perf_sanity" (Slurm only); the job is sized from the perf config's
//    matching server config and hardware.gpus_per_node, as the repo's submit.py sizes it.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "pytest_outcome.h"
#include "python_markers.h"
#include "trtllm_run/command_parse.h"
#include "trtllm_run/derive.h"
#include "trtllm_run/input_limits.h"
#include "trtllm_run/plugin_api.h"
#include "trtllm_run/render.h"
#include "trtllm_run/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;
using pytest_markers::NodeId;

constexpr int kMaxPytestDevices = 8;

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string Trim(const std::string& text) {
  const char* blanks = " \t\r\n";
  std::size_t first = text.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

std::string BaseName(const std::string& word) {
  size_t slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

bool IsPerfSanity(const CaseRequest& request) {
  const std::string& cmd = *request.test_cmd;
  return request.perf_config_yaml.has_value() || cmd.find("perf-sanity") != std::string::npos ||
         cmd.find("test_perf_sanity") != std::string::npos ||
         cmd.find("test_e2e[") != std::string::npos;
}

// ---- pytest ----

struct CommandWords {
  bool is_pytest = false;
  std::vector<std::string> node_ids;  // words naming a test file, with ::parts
};

CommandWords ReadCommand(const std::vector<ShellToken>& tokens) {
  CommandWords out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const ShellToken& token = tokens[i];
    if (token.kind != ShellToken::kWord) continue;
    std::string base = BaseName(token.text);
    if (base == "pytest" || base == "py.test") out.is_pytest = true;
    if (token.text == "-m" && i + 1 < tokens.size() && tokens[i + 1].text == "pytest") {
      out.is_pytest = true;
    }
    if (token.text.empty() || token.text[0] == '-') continue;
    std::string file = token.text.substr(0, token.text.find("::"));
    if (EndsWith(file, ".py")) out.node_ids.push_back(token.text);
  }
  return out;
}

// TensorRT-LLM runs its integration tests from this directory (its pytest.ini and
// conftest.py live there), and its test lists name them relative to it.
constexpr char kIntegrationDefs[] = "tests/integration/defs";

struct TestFile {
  std::string path;  // the file, absolute
  // The directory, relative to the repo root, that the node id resolves against: "" (the
  // repo root, or an absolute id) or kIntegrationDefs.
  std::string base;
};

// The test file of a node id: as given (absolute or under the repo root), or under
// tests/integration/defs where the repo's integration tests are run from.
Result<TestFile> FindTestFile(const std::string& file, const std::string& repo_root) {
  std::vector<std::pair<fs::path, std::string>> candidates;
  if (fs::path(file).is_absolute()) {
    candidates.emplace_back(file, "");
  } else {
    candidates.emplace_back(fs::path(repo_root) / file, "");
    candidates.emplace_back(fs::path(repo_root) / kIntegrationDefs / file, kIntegrationDefs);
  }
  std::string tried;
  for (const auto& [candidate, base] : candidates) {
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      return TestFile{candidate.lexically_normal().string(), base};
    }
    tried += (tried.empty() ? "" : ", ") + candidate.lexically_normal().string();
  }
  return Status::InvalidInput(
      "test file '" + file + "' of test_cmd was not found (looked at " + tried + ")",
      "give --repo-root of the TensorRT-LLM checkout the test belongs "
      "to, or a path relative to it or to tests/integration/defs");
}

// Model name from the node id: the class without "Test", else the function without
// "test_", else the file stem without "test_".
std::string ModelFromNode(const NodeId& node) {
  auto strip = [](std::string name, const std::string& prefix) {
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) {
      name = name.substr(prefix.size());
    }
    return name;
  };
  if (!node.classes.empty()) return SanitizeModelName(strip(node.classes.back(), "Test"));
  if (!node.function.empty()) return SanitizeModelName(strip(node.function, "test_"));
  std::string stem = BaseName(node.file);
  if (EndsWith(stem, ".py")) stem.resize(stem.size() - 3);
  return SanitizeModelName(strip(stem, "test_"));
}

Result<JobPlan> PlanPytest(const CaseRequest& request) {
  JobPlan plan;
  plan.workflow_type = "pytest";
  plan.command = *request.test_cmd;
  // A bare node id: "file.py::names" or a file pytest would collect (test_*.py, *_test.py);
  // a lone "tool.py" may be a script to execute and is left as the command.
  const std::string trimmed = Trim(plan.command);
  const std::string id_file = BaseName(trimmed.substr(0, trimmed.find("::")));
  if (IsBareTestId(trimmed) && trimmed.rfind("test_e2e[", 0) != 0 &&
      (trimmed.find("::") != std::string::npos || id_file.rfind("test_", 0) == 0 ||
       EndsWith(id_file, "_test.py"))) {
    plan.command = TestCommandForId(trimmed);
    plan.notes.push_back("test_cmd is a bare test id: runs as " + plan.command);
  }
  const std::string repo_root = request.repo_root.value_or(".");
  Result<std::vector<ShellToken>> tokens = TokenizeShell(plan.command);
  if (!tokens.ok()) return tokens.status().WithContext("test_cmd");
  CommandWords words = ReadCommand(tokens.value());

  std::optional<pytest_markers::DeviceMarker> derived;
  std::string model_from_id;
  std::optional<std::pair<std::string, std::string>> base_of;  // (node id, its base)
  if (words.is_pytest) {
    for (const std::string& word : words.node_ids) {
      NodeId node = pytest_markers::ParseNodeId(word);
      if (model_from_id.empty()) model_from_id = ModelFromNode(node);
      Result<TestFile> found = FindTestFile(node.file, repo_root);
      if (!found.ok()) return found.status();
      if (!fs::path(node.file).is_absolute()) {
        if (base_of && base_of->second != found->base) {
          auto where = [](const std::string& base) {
            return base.empty() ? std::string("the repo root") : base;
          };
          return Status::InvalidInput(
              "the test ids of test_cmd resolve in different directories: '" + base_of->first +
                  "' under " + where(base_of->second) + ", '" + word + "' under " +
                  where(found->base),
              "pytest runs in one directory: give every id relative to the same one (e.g. "
              "tests/integration/defs/" +
                  word + "), or run them as separate cases");
        }
        base_of = std::make_pair(word, found->base);
      }
      Result<std::string> file = found->path;
      Result<std::string> source = ReadFile(file.value());
      if (!source.ok()) return source.status();
      pytest_markers::Lookup lookup = pytest_markers::FindDeviceMarker(source.value(), node);
      if (!node.function.empty() && !lookup.function_found) {
        plan.notes.push_back("warning: test function " + node.function + " was not found in " +
                             file.value() + "; only class and module markers were read");
      }
      if (lookup.marker && (!derived || lookup.marker->devices > derived->devices)) {
        derived = lookup.marker;
        derived->source += " (" + file.value() + ")";
      }
    }
  }

  int required = 1;
  if (request.required_devices) {
    required = *request.required_devices;
    plan.notes.push_back(
        "required_devices " + std::to_string(required) + ": given" +
        (derived ? " (the test's marker says " + std::to_string(derived->devices) + ")" : ""));
  } else if (derived) {
    required = derived->devices;
    plan.notes.push_back("required_devices " + std::to_string(required) + ": " + derived->source);
  } else {
    plan.notes.push_back(
        std::string("required_devices 1: default (") +
        (words.is_pytest ? "no GPU-count marker on the test" : "not a pytest command") + ")");
  }
  if (required > kMaxPytestDevices) {
    return Status::InvalidInput("required_devices = " + std::to_string(required) +
                                    " exceeds the maximum of 8 GPUs for pytest.",
                                "pytest runs on one node with at most 8 GPUs; multi-node tests "
                                "run through the perf-sanity path");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(ApplyDeviceCounts(request, required, &plan));
  plan.devices_requested = request.required_devices || derived || request.total_required_devices ||
                           request.required_devices_per_node;
  if (plan.node_count > 1) {
    return Status::InvalidInput(
        "pytest is always single-node, but the request gives node_count = " +
            std::to_string(plan.node_count),
        "drop --node-count, or give --required-devices-per-node equal to "
        "the total");
  }

  if (request.model_name) {
    Result<std::string> name = DeriveModelName(request, plan.command, "pytest", &plan);
    if (!name.ok()) return name.status();
    plan.model_name = name.value();
  } else if (!model_from_id.empty()) {
    plan.model_name = model_from_id;
    plan.notes.push_back("model_name " + plan.model_name + ": from the test id");
  } else {
    Result<std::string> name = DeriveModelName(request, plan.command, "pytest", &plan);
    if (!name.ok()) return name.status();
    plan.model_name = name.value();
  }

  if (base_of && !base_of->second.empty()) {
    plan.working_dir = base_of->second;
    plan.notes.push_back("working_dir " + plan.working_dir + ": the test id " + base_of->first +
                         " resolves there (TensorRT-LLM runs its integration tests from it, "
                         "with its pytest.ini and conftest.py); pytest runs in that directory");
  }
  if (!request.skip_install.value_or(false)) {
    plan.steps.push_back(PlanStep{"install", InstallCommand(false), 1, false});
  }
  plan.steps.push_back(PlanStep{"run", plan.command, 1, false});
  WorkflowPatterns patterns = PatternsFor("pytest", plan.model_name);
  plan.success_patterns = patterns.success;
  plan.failure_patterns = patterns.failure;
  return plan;
}

// ---- perf-sanity ----

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
    std::string name = it->path().filename().string();
    if (EndsWith(name, ".yaml")) names.push_back(name.substr(0, name.size() - 5));
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

Result<JobPlan> PlanPerfSanity(const CaseRequest& request) {
  JobPlan plan;
  plan.workflow_type = "perf_sanity";
  plan.command = *request.test_cmd;
  const std::string repo_root = request.repo_root.value_or(".");
  Result<std::optional<PerfSanityId>> found_id = FindPerfSanityId(plan.command);
  if (!found_id.ok()) return found_id.status();
  const std::optional<PerfSanityId>& id = found_id.value();

  std::string config_path;
  if (request.perf_config_yaml) {
    std::error_code error;
    config_path = fs::absolute(*request.perf_config_yaml, error).lexically_normal().string();
    plan.notes.push_back("perf config " + config_path + ": given (perf_config_yaml)");
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
    plan.notes.push_back("perf config " + config_path + ": from the test id");
  }

  int required = 1, total = 1, per_node = 1, nodes = 1;
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
    per_node = gpn.value();
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
      // Aggregated: the server config the id selects (none: every entry, the largest).
      std::string select = id ? id->select : "";
      const YAML::Node servers = config["server_configs"];
      std::vector<std::string> names;
      std::optional<WorkerSize> chosen;
      std::string chosen_name;
      for (const YAML::Node& server : servers) {
        std::string name = server["name"] ? server["name"].as<std::string>("") : "";
        names.push_back(name);
        if (!select.empty() && name != select) continue;
        Result<WorkerSize> size = ReadWorkerSize(server, config_path + ": server config " + name);
        if (!size.ok()) return size.status();
        if (!chosen || size->Gpus() > chosen->Gpus()) {
          chosen = size.value();
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
      required = chosen->SpecGpus();
      total = chosen->Gpus();
      nodes = CeilDiv(total, per_node);
      plan.notes.push_back("required_devices " + std::to_string(required) + ": tp " +
                           std::to_string(chosen->tp) + " x pp " + std::to_string(chosen->pp) +
                           " of server config " + chosen_name +
                           (select.empty() ? " (the largest; the id selects every entry)" : "") +
                           "; " + std::to_string(nodes) + " node(s) of " +
                           std::to_string(per_node) + " GPUs (hardware.gpus_per_node)");
      if (chosen->cp > 1) {
        plan.notes.push_back(
            "sizing differs: the spec's rule gives tp x pp = " + std::to_string(required) +
            " GPUs; submit.py launches tp x pp x cp = " + std::to_string(total) +
            " (context_parallel_size " + std::to_string(chosen->cp) +
            "), which the job is sized for");
      }
    } else {
      const YAML::Node workers = config["worker_config"];
      Result<WorkerSize> ctx = ReadWorkerSize(workers["ctx"] ? workers["ctx"] : YAML::Node(),
                                              config_path + ": worker_config.ctx");
      if (!ctx.ok()) return ctx.status();
      Result<WorkerSize> gen = ReadWorkerSize(workers["gen"] ? workers["gen"] : YAML::Node(),
                                              config_path + ": worker_config.gen");
      if (!gen.ok()) return gen.status();
      if (mode == "ctx_only") {
        required = ctx->SpecGpus();
        total = ctx->Gpus();
        nodes = CeilDiv(total, per_node);
        plan.notes.push_back("required_devices " + std::to_string(total) +
                             ": one context server (worker_config.ctx tp " +
                             std::to_string(ctx->tp) + " x pp " + std::to_string(ctx->pp) +
                             " x cp " + std::to_string(ctx->cp) + ") on the aggregated path");
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
        int ctx_nodes = ctx_servers * CeilDiv(ctx->Gpus(), per_node);
        int gen_nodes = num_gen.value() * CeilDiv(gen->Gpus(), per_node);
        nodes = std::max(1, ctx_nodes + gen_nodes);
        total = ctx_servers * ctx->Gpus() + num_gen.value() * gen->Gpus();
        required = total;
        plan.notes.push_back("required_devices " + std::to_string(total) + ": " +
                             std::to_string(ctx_servers) + " context server(s) of " +
                             std::to_string(ctx->Gpus()) + " GPUs + " +
                             std::to_string(num_gen.value()) + " generation server(s) of " +
                             std::to_string(gen->Gpus()) + " GPUs; " + std::to_string(nodes) +
                             " node(s): each server on whole nodes of " + std::to_string(per_node) +
                             " GPUs (submit.py's disaggregated sizing)");
        plan.notes.push_back(
            "sizing differs: the spec's rule (tp x pp of a matching server_configs entry) has no "
            "entry in a disaggregated config and falls back to 1 GPU; submit.py's sizing is used");
      }
      total = std::max(total, 1);
    }
    // The model: the caller's name, else the config's metadata, else the config name.
    if (!request.model_name) {
      std::string from_config = config["metadata"] && config["metadata"]["model_name"]
                                    ? config["metadata"]["model_name"].as<std::string>("")
                                    : "";
      std::string name = SanitizeModelName(from_config);
      if (!name.empty()) {
        plan.model_name = name;
        plan.notes.push_back("model_name " + name + ": metadata.model_name of the perf config");
      } else if (id) {
        plan.model_name = SanitizeModelName(id->config);
        plan.notes.push_back("model_name " + plan.model_name + ": the config of the test id");
      }
    }
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
    total = *request.total_required_devices;
    per_node = *request.required_devices_per_node;
    nodes = CeilDiv(total, per_node);
    plan.notes.push_back(
        "devices: total_required_devices and required_devices_per_node given; "
        "used verbatim");
  }
  if (request.required_devices == 0) {
    return Status::InvalidInput(
        "perf-sanity tests need GPUs; required_devices 0 (CPU only) cannot run them",
        "leave --required-devices out (the perf config sizes the job)");
  }
  if (request.required_devices) required = *request.required_devices;
  if (request.node_count) nodes = *request.node_count;
  plan.devices_requested = true;
  plan.required_devices = required;
  plan.total_required_devices = total;
  plan.required_devices_per_node = per_node;
  plan.node_count = std::max(1, nodes);
  plan.steps.push_back(PlanStep{"run", plan.command, total, total > 1});
  WorkflowPatterns patterns = PatternsFor("perf_sanity", plan.model_name);
  plan.success_patterns = patterns.success;
  plan.failure_patterns = patterns.failure;
  return plan;
}

class PytestWorkflow : public Workflow {
 public:
  std::string Name() const override { return "pytest"; }
  int ClaimOrder() const override { return 40; }
  bool Claims(const CaseRequest& request) const override { return request.test_cmd.has_value(); }

  void Judge(const JobSpec& spec, const std::string& log_tail, RunResult* result) const override {
    pytest_outcome::Judge(pytest_outcome::ParseLog(log_tail),
                          spec.direct_cmd.empty() ? result->command : spec.direct_cmd, result);
  }

  Result<JobPlan> Plan(const CaseRequest& request) const override {
    if (!IsPerfSanity(request)) return PlanPytest(request);
    // A config of the wrong shape (a scalar where a mapping or list belongs) makes
    // yaml-cpp throw from inside the planning: bad input, not a crash.
    try {
      return PlanPerfSanity(request);
    } catch (const YAML::Exception& e) {
      std::string config =
          request.perf_config_yaml ? "'" + *request.perf_config_yaml + "'" : "of the test id";
      return Status::InvalidInput(
          "perf config " + config + " does not have the expected structure: " + e.what(),
          "hardware: and metadata: are mappings, server_configs: is a list of mappings "
          "(worker_config: a mapping), as in tests/scripts/perf-sanity/");
    }
  }
};

}  // namespace
}  // namespace trtllm_run

TRTLLM_RUN_DECLARE_WORKFLOW_PLUGIN(trtllm_run::PytestWorkflow, "pytest", "0.1.0",
                                   "pytest, perf-sanity and other test commands (test_cmd)")
