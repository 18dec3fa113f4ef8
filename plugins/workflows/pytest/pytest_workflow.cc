// The `pytest` workflow: every test_cmd (spec 000 "Pytest / test_cmd"). Two sub-types:
//  - pytest and other commands: the GPU count comes from the closest GPU-count marker
//    of the test the command names (the test file is read, relative to the repo root or
//    tests/integration/defs); at most 8 GPUs, always one node.
//  - perf-sanity (test_e2e[<id>], the perf-sanity test file, or perf_config_yaml): the
//    workflow_type is "perf_sanity" (Slurm only); the job is sized from the perf config's
//    matching server config and hardware.gpus_per_node, as the repo's submit.py sizes it.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "perf_sanity_plan.h"
#include "pytest_outcome.h"
#include "python_markers.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/derive.h"
#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/plugin_api.h"
#include "trtllm_run/sdk/render.h"
#include "trtllm_run/sdk/text.h"

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
  // Where the program that runs pytest starts in the command (`pytest`, or `python` of
  // `python -m pytest`): a launcher goes there. npos: not found.
  size_t pytest_at = std::string::npos;
  bool has_launcher = false;  // trtllm-llmapi-launch is already in the command
};

CommandWords ReadCommand(const std::vector<ShellToken>& tokens) {
  CommandWords out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const ShellToken& token = tokens[i];
    if (token.kind != ShellToken::kWord) continue;
    std::string base = BaseName(token.text);
    if (base == "trtllm-llmapi-launch") out.has_launcher = true;
    if ((base == "pytest" || base == "py.test") && !out.is_pytest) {
      out.is_pytest = true;
      out.pytest_at = token.begin;
    }
    if (token.text == "-m" && i + 1 < tokens.size() && tokens[i + 1].text == "pytest" &&
        !out.is_pytest) {
      out.is_pytest = true;
      if (i > 0 && tokens[i - 1].kind == ShellToken::kWord) out.pytest_at = tokens[i - 1].begin;
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
// Its unit tests run from tests/ (tests/integration/defs/test_unittests.py), named
// `unittest/...` in the test lists.
constexpr char kTestsDir[] = "tests";

// pytest-timeout's per-test limits, as TensorRT-LLM's CI sets them: --timeout=3600 for an
// integration test, --timeout=1600 for each unit test of a `unittest/...` line.
constexpr int kDefaultTestTimeoutSeconds = 3600;
constexpr int kUnittestTestTimeoutSeconds = 1600;
// The job's own limit covers the test's and these: the install step, then a margin so
// that pytest-timeout, which names the test, fires before the job is stopped.
constexpr int kInstallAllowanceSeconds = 1800;
constexpr int kTimeoutMarginSeconds = 300;

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
  } else if (file.rfind("unittest/", 0) == 0) {
    candidates.emplace_back(fs::path(repo_root) / kTestsDir / file, kTestsDir);
    candidates.emplace_back(fs::path(repo_root) / file, "");
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
      "to, or a path relative to it, to tests/integration/defs or (unittest/...) to tests");
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

// The GPU count a parametrized id names, as TensorRT-LLM's ids write it: tp16, tp8pp2,
// tp4_pp2, tep8, dep4, pp2 (tp x pp; tep/dep count like tp). 0 when the id names none.
int IdParallelism(const std::string& params, std::string* shown) {
  int tp = 0;
  int pp = 0;
  std::string part;
  auto take = [&](const std::string& token) {
    // A run of <letters><digits> pairs: tp8pp2 -> (tp, 8), (pp, 2).
    size_t i = 0;
    while (i < token.size()) {
      size_t letters = i;
      while (i < token.size() && std::isalpha(static_cast<unsigned char>(token[i]))) ++i;
      std::string name = token.substr(letters, i - letters);
      size_t digits = i;
      while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) ++i;
      if (name.empty() || i == digits || i - digits > 4) return;
      const int n = std::stoi(token.substr(digits, i - digits));
      if (name == "tp" || name == "tep" || name == "dep") {
        tp = std::max(tp, n);
        part += (part.empty() ? "" : ", ") + token;
      } else if (name == "pp") {
        pp = std::max(pp, n);
        if (part.find(token) == std::string::npos) part += (part.empty() ? "" : ", ") + token;
      } else {
        return;
      }
    }
  };
  std::string token;
  for (char c : params + "-") {
    if (c == '-' || c == '_' || c == '[' || c == ']') {
      take(token);
      token.clear();
    } else {
      token += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (tp == 0 && pp == 0) return 0;
  *shown = part;
  return std::max(tp, 1) * std::max(pp, 1);
}

// TensorRT-LLM's CI runs a pytest that spans nodes as jenkins/scripts/slurm_run.sh does:
// one task per GPU over ceil(gpus / per node) nodes, through the cluster's MPI plugin, with
// `trtllm-llmapi-launch pytest ...` on every rank; rank 0's pytest is the test.
void MakeMultiNode(int nodes, size_t launcher_at, const std::string& why, JobPlan* plan) {
  const int gpus = plan->required_devices;
  plan->node_count = nodes;
  plan->total_required_devices = gpus;
  plan->required_devices_per_node = (gpus + nodes - 1) / nodes;
  plan->launch.task_layout = TaskLayout::kAsPlanned;
  std::string command = plan->command;
  if (launcher_at != std::string::npos && launcher_at <= command.size()) {
    command.insert(launcher_at, "trtllm-llmapi-launch ");
  }
  for (PlanStep& step : plan->steps) {
    if (step.name != "run") continue;
    step.tasks = gpus;
    step.use_mpi = true;
    step.command = command;
  }
  plan->notes.push_back(
      "multi-node pytest: " + std::to_string(nodes) + " nodes of " +
      std::to_string(plan->required_devices_per_node) + " GPUs (" + why + "), one task per GPU " +
      "through the cluster's MPI plugin, `trtllm-llmapi-launch pytest` on every rank" +
      (plan->working_dir.empty() ? std::string() : " from " + plan->working_dir) +
      ", as TensorRT-LLM's CI runs it (jenkins/scripts/slurm_run.sh); the verdict is rank 0's "
      "pytest");
}

// The GPUs of the test against the partition's: more than a node has -> multi-node.
Status PytestPlacement(size_t launcher_at, bool has_launcher, const PlacementFacts& facts,
                       JobPlan* plan) {
  const int required = plan->required_devices;
  if (plan->node_count > 1) {  // already multi-node (the request's per-node count)
    if (facts.gpus_per_node && plan->required_devices_per_node > *facts.gpus_per_node) {
      return Status::InvalidInput(
          "required_devices_per_node = " + std::to_string(plan->required_devices_per_node) +
              " is above partition " + facts.partition +
              "'s gpus_per_node = " + std::to_string(*facts.gpus_per_node),
          "give --required-devices-per-node " + std::to_string(*facts.gpus_per_node) + " or fewer");
    }
    return Status::Ok();
  }
  if (!facts.gpus_per_node) {
    if (required > kMaxPytestDevices) {
      plan->notes.push_back("warning: the test needs " + std::to_string(required) +
                            " GPUs and partition " + facts.partition +
                            " does not say how many a node has: planned on one node; give "
                            "--required-devices-per-node to spread it over nodes");
    }
    return Status::Ok();
  }
  const int per_node = *facts.gpus_per_node;
  if (required <= per_node || per_node <= 0) return Status::Ok();
  const int nodes = (required + per_node - 1) / per_node;
  MakeMultiNode(nodes, has_launcher ? std::string::npos : launcher_at,
                std::to_string(required) + " GPUs, partition " + facts.partition + " has " +
                    std::to_string(per_node) + " per node",
                plan);
  if (launcher_at == std::string::npos && !has_launcher) {
    plan->notes.push_back(
        "warning: no pytest program found in the command to put trtllm-llmapi-launch in "
        "front of: every rank runs the command as it is");
  }
  return Status::Ok();
}

// The pytest command of a test-list line: the id and its selectors, and the line's
// TIMEOUT (N) as pytest-timeout's --timeout in seconds (an integration test's own limit;
// a unittest line's TIMEOUT bounds the whole run, as CI's test_unittests_v2 wrapper does).
std::string ListLineCommand(const TestListLine& line) {
  std::string command = "pytest";
  if (line.timeout_minutes && !line.IsUnittest()) {
    command += " --timeout=" + std::to_string(*line.timeout_minutes * 60);
  }
  command += " " + ShellQuote(line.id);
  if (line.k_expr) command += " -k " + ShellQuote(*line.k_expr);
  if (line.m_expr) command += " -m " + ShellQuote(*line.m_expr);
  return command;
}

void AddListLineNotes(const TestListLine& line, std::vector<std::string>* notes) {
  if (!line.gpu_prefix.empty()) {
    notes->push_back("full:" + line.gpu_prefix + "/: TensorRT-LLM's CI applies this line on " +
                     line.gpu_prefix + " machines only; it is planned as given, whatever the GPU");
  }
  if (line.marker == ListMarker::kSkip) {
    notes->push_back("SKIP" + (line.reason.empty() ? "" : " (" + line.reason + ")") +
                     ": the test is not run; its verdict is SKIPPED");
  } else if (line.marker != ListMarker::kNone) {
    notes->push_back(std::string(ListMarkerName(line.marker)) +
                     (line.reason.empty() ? "" : " (" + line.reason + ")") +
                     ": the test runs; its verdict is recorded as " + ListMarkerName(line.marker) +
                     " (result.json details.list_marker, JUnit), and a FAILED one does not "
                     "fail a multi-case run");
  }
  if (line.isolation) {
    notes->push_back("ISOLATION: the test runs in a pytest process of its own (every case does)");
  }
}

// N when `expr` (a -m selector) is TensorRT-LLM's N-GPU mark `gpuN` alone.
std::optional<int> GpuMarkSelected(const std::string& expr) {
  const std::string text = Trim(expr);
  if (text.size() < 4 || text.compare(0, 3, "gpu") != 0) return std::nullopt;
  std::optional<long long> n = ParseInteger(std::string_view(text).substr(3), 1, 64);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

// The per-test limit the command gives pytest-timeout itself (--timeout=S / --timeout S).
std::optional<int> CommandTestTimeout(const std::vector<ShellToken>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& word = tokens[i].text;
    std::optional<long long> seconds;
    if (word.rfind("--timeout=", 0) == 0) {
      seconds = ParseInteger(std::string_view(word).substr(10), 0, 99999999);
    } else if (word == "--timeout" && i + 1 < tokens.size()) {
      seconds = ParseInteger(tokens[i + 1].text, 0, 99999999);
    } else {
      continue;
    }
    if (seconds) return static_cast<int>(*seconds);
  }
  return std::nullopt;
}

// Each test's own limit (pytest-timeout) and the job's, which covers it, the install step
// and a margin: a test that hangs is then named by pytest-timeout (TIMEOUT naming the
// test) before the job is stopped. The runtime keeps an explicit --monitor-timeout.
void SetTimeouts(const std::vector<ShellToken>& tokens, const std::optional<TestListLine>& line,
                 bool install, JobPlan* plan) {
  const bool unittest = line && line->IsUnittest();
  int per_test = unittest ? kUnittestTestTimeoutSeconds : kDefaultTestTimeoutSeconds;
  std::optional<int> given = CommandTestTimeout(tokens);
  if (given) {
    per_test = *given;
    plan->notes.push_back(
        "test timeout " + std::to_string(per_test) + "s per test: pytest-timeout's --timeout" +
        (line && line->timeout_minutes && !unittest
             ? " from TIMEOUT (" + std::to_string(*line->timeout_minutes) + ") minutes"
             : std::string(" of the command")) +
        " (the job's Python needs pytest-timeout, as TensorRT-LLM's CI image has)");
  } else {
    // The environment, not --timeout: pytest without the plugin ignores it.
    plan->env.push_back(EnvVar{"PYTEST_TIMEOUT", std::to_string(per_test)});
    plan->notes.push_back("test timeout " + std::to_string(per_test) +
                          "s per test: PYTEST_TIMEOUT for pytest-timeout, as CI's --timeout=" +
                          std::to_string(per_test) + (unittest ? " of test_unittests.py" : "") +
                          " (no effect where pytest-timeout is not installed)");
  }
  int run_limit = per_test;
  if (unittest) {
    run_limit = line->timeout_minutes ? *line->timeout_minutes * 60 : kDefaultTestTimeoutSeconds;
  } else if (per_test == 0) {
    run_limit = kDefaultTestTimeoutSeconds;  // --timeout=0: no per-test limit
  }
  plan->monitor_timeout_seconds =
      run_limit + (install ? kInstallAllowanceSeconds : 0) + kTimeoutMarginSeconds;
  plan->notes.push_back(
      "monitor_timeout " + std::to_string(plan->monitor_timeout_seconds) + "s: " +
      (unittest ? "the unittest run's " + std::to_string(run_limit) + "s" +
                      (line->timeout_minutes
                           ? " (TIMEOUT (" + std::to_string(*line->timeout_minutes) + "))"
                           : std::string(" (CI's default)"))
                : "the test's " + std::to_string(run_limit) + "s") +
      (install ? " + " + std::to_string(kInstallAllowanceSeconds) + "s for the install step"
               : std::string()) +
      " + " + std::to_string(kTimeoutMarginSeconds) + "s margin (--monitor-timeout overrides it)");
}

Result<JobPlan> PlanPytest(const CaseRequest& request) {
  JobPlan plan;
  plan.workflow_type = "pytest";
  plan.command = *request.test_cmd;
  // A bare node id: "file.py::names" or a file pytest would collect (test_*.py, *_test.py);
  // a lone "tool.py" may be a script to execute and is left as the command.
  const std::string trimmed = Trim(plan.command);
  const std::string id_file = BaseName(trimmed.substr(0, trimmed.find("::")));
  Result<std::optional<TestListLine>> parsed_line = ParseTestListLine(trimmed);
  if (!parsed_line.ok()) return parsed_line.status().WithContext("test_cmd");
  std::optional<TestListLine> list_line;
  if (parsed_line.value() &&
      (parsed_line.value()->HasExtras() || parsed_line.value()->IsUnittest())) {
    list_line = parsed_line.value();
  }
  if (list_line) {
    plan.command = ListLineCommand(*list_line);
    plan.notes.push_back("test_cmd is a test-list line: runs as " + plan.command);
    AddListLineNotes(*list_line, &plan.notes);
  } else if (IsBareTestId(trimmed) && trimmed.rfind("test_e2e[", 0) != 0 &&
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
  std::optional<pytest_markers::DeviceMarker> memory;  // skip_less_device_memory, MiB
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
      if (lookup.memory_mib && (!memory || lookup.memory_mib->devices > memory->devices)) {
        memory = lookup.memory_mib;
        memory->source += " (" + file.value() + ")";
      }
    }
  }

  if (list_line && list_line->IsUnittest() && !base_of) {
    // A unittest directory (`unittest/_torch/modeling -k x`): no .py word to resolve.
    std::error_code error;
    const fs::path dir = fs::path(repo_root) / kTestsDir / list_line->id;
    if (!fs::exists(dir, error)) {
      return Status::InvalidInput("test path '" + list_line->id + "' of test_cmd was not found (" +
                                      dir.lexically_normal().string() + ")",
                                  "give --repo-root of the TensorRT-LLM checkout; unittest/... "
                                  "paths are relative to its tests/ directory");
    }
    base_of = std::make_pair(list_line->id, std::string(kTestsDir));
  }
  if (!derived && list_line && list_line->m_expr) {
    if (std::optional<int> gpus = GpuMarkSelected(*list_line->m_expr)) {
      derived = pytest_markers::DeviceMarker{
          *gpus, "-m \"" + *list_line->m_expr + "\" selects the tests marked gpu" +
                     std::to_string(*gpus) + " (TensorRT-LLM's mark for " + std::to_string(*gpus) +
                     " GPUs)"};
    }
  }

  // The parallelism an id such as [tp16] or [tp8pp2] names: used when no marker says more
  // (a marker inside a helper function or a parametrize built at run time is not read).
  std::string id_shown;
  int id_gpus = 0;
  for (const std::string& word : words.node_ids) {
    std::string shown;
    const int gpus = IdParallelism(pytest_markers::ParseNodeId(word).params, &shown);
    if (gpus > id_gpus) {
      id_gpus = gpus;
      id_shown = shown + " in " + word;
    }
  }
  int required = 1;
  if (request.required_devices) {
    required = *request.required_devices;
    plan.notes.push_back(
        "required_devices " + std::to_string(required) + ": given" +
        (derived ? " (the test's marker says " + std::to_string(derived->devices) + ")" : ""));
  } else if (derived && derived->devices >= id_gpus) {
    required = derived->devices;
    plan.notes.push_back("required_devices " + std::to_string(required) + ": " + derived->source);
  } else if (id_gpus > 0) {
    required = id_gpus;
    plan.notes.push_back("required_devices " + std::to_string(required) +
                         ": the parallelism the test id names (" + id_shown + ")" +
                         (derived
                              ? "; the marker found says only " + std::to_string(derived->devices) +
                                    " (" + derived->source + ")"
                              : "; no GPU-count marker was found for it"));
  } else if (request.test_db_gpu_count && *request.test_db_gpu_count > 0) {
    required = *request.test_db_gpu_count;
    plan.notes.push_back("required_devices " + std::to_string(required) +
                         ": the system_gpu_count of the test-db block the test came from (no "
                         "GPU-count marker on the test)");
  } else {
    plan.notes.push_back(
        std::string("required_devices 1: default (") +
        (words.is_pytest ? "no GPU-count marker on the test" : "not a pytest command") + ")");
  }
  if (request.test_db_gpu_count && *request.test_db_gpu_count > required &&
      !request.required_devices) {
    plan.notes.push_back("note: the test-db block the test came from runs on " +
                         std::to_string(*request.test_db_gpu_count) +
                         " GPUs (system_gpu_count); "
                         "the test asks for " +
                         std::to_string(required));
  }
  if (memory) {
    plan.notes.push_back("GPU memory: the test asks for at least " +
                         std::to_string(memory->devices) + " MiB per GPU (" + memory->source +
                         "); on GPUs with less, the repo's conftest skips it");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(ApplyDeviceCounts(request, required, &plan));
  plan.devices_requested = request.required_devices || derived || id_gpus > 0 ||
                           request.test_db_gpu_count || request.total_required_devices ||
                           request.required_devices_per_node;

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
                         " resolves there (TensorRT-LLM runs its " +
                         (base_of->second == kTestsDir
                              ? "unit tests from it, as test_unittests.py does"
                              : "integration tests from it, with its pytest.ini and "
                                "conftest.py") +
                         "); pytest runs in that directory");
  }
  const bool install = !request.skip_install.value_or(false);
  if (install) {
    plan.steps.push_back(PlanStep{"install", InstallCommand(false), 1, false});
  }
  if (words.is_pytest) SetTimeouts(tokens.value(), list_line, install, &plan);
  plan.steps.push_back(PlanStep{"run", plan.command, 1, false});
  const size_t launcher_at = words.pytest_at;
  const bool has_launcher = words.has_launcher;
  plan.success_patterns = {"passed"};
  plan.failure_patterns = {"FAILED", "ERROR"};
  LaunchFacts& launch = plan.launch;
  launch.job_kind = "auto_test";
  launch.task_layout = TaskLayout::kOneTask;
  launch.keep_env = {"SLURM_PROCID"};  // the rank only (spec-notes)
  launch.run_shows_gpus = true;
  launch.gpu_count_source = "the test's GPU marker";
  launch.runs_without_gpus = true;
  launch.after_placement = [launcher_at, has_launcher](const PlacementFacts& facts,
                                                       JobPlan* placed) {
    return PytestPlacement(launcher_at, has_launcher, facts, placed);
  };
  if (plan.node_count > 1) {  // the request's own per-node count
    MakeMultiNode(
        plan.node_count, has_launcher ? std::string::npos : launcher_at,
        "the request's required_devices_per_node " + std::to_string(plan.required_devices_per_node),
        &plan);
  } else if (required > kMaxPytestDevices) {
    plan.notes.push_back("note: " + std::to_string(required) +
                         " GPUs are more than most nodes have: on Slurm it spans nodes when the "
                         "partition's gpus_per_node is below it");
  }
  return plan;
}

class PytestWorkflow : public Workflow {
 public:
  std::string Name() const override { return "pytest"; }
  int ClaimOrder() const override { return 40; }
  bool Claims(const CaseRequest& request) const override { return request.test_cmd.has_value(); }

  void Judge(const JobSpec& spec, const std::string& log_tail, RunResult* result) const override {
    // Multi-node: every rank runs trtllm-llmapi-launch pytest; rank 0's is the test.
    const bool multi_node = spec.node_count > 1 && spec.workflow_type == "pytest";
    pytest_outcome::Judge(
        pytest_outcome::ParseLog(multi_node ? pytest_outcome::TaskZeroLines(log_tail) : log_tail),
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
