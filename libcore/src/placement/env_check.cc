#include "placement/env_check.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "model/json_util.h"
#include "os/probe_script.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

using probe::FirstLine;
using probe::NonEmptyLines;

bool HasDigit(const std::string& word) {
  return std::any_of(word.begin(), word.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Device types named by their first model token, upper case.
const char* const kKnownDeviceTypes[] = {"A2",   "A10",   "A10G",  "A16",   "A30",  "A40",  "A100",
                                         "A800", "H20",   "H100",  "H200",  "H800", "B100", "B200",
                                         "B300", "GB200", "GB300", "GH200", "L4",   "L20",  "L40",
                                         "L40S", "T4",    "V100",  "P100",  "P40"};

}  // namespace

std::string DeviceTypeFromGpuName(std::string_view name) {
  std::vector<std::string> words = SplitWhitespace(name);
  while (!words.empty()) {
    std::string vendor = AsciiUpper(words.front());
    if (vendor != "NVIDIA" && vendor != "TESLA" && vendor != "GEFORCE" && vendor != "QUADRO") break;
    words.erase(words.begin());
  }
  if (words.empty()) return "";
  // "A100-SXM4-80GB": the model is the part before the first '-'.
  for (std::string& word : words) {
    size_t dash = word.find('-');
    if (dash != std::string::npos && dash > 0) word.resize(dash);
  }
  std::string first = AsciiUpper(words.front());
  for (const char* known : kKnownDeviceTypes) {
    if (first == known) return first;
  }
  std::string token;
  for (const std::string& word : words) {
    token += word;
    if (HasDigit(word)) break;
  }
  return token;
}

GpuInventory ParseNvidiaSmiNames(std::string_view output) {
  GpuInventory inventory;
  for (std::string line : NonEmptyLines(output)) {
    if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
      line = line.substr(1, line.size() - 2);
    }
    inventory.names.push_back(line);
  }
  if (!inventory.names.empty()) {
    inventory.device_type = DeviceTypeFromGpuName(inventory.names.front());
    for (const std::string& name : inventory.names) {
      if (DeviceTypeFromGpuName(name) != inventory.device_type) inventory.mixed = true;
    }
  }
  return inventory;
}

std::optional<std::string> ParseClusterName(std::string_view show_config) {
  for (const std::string& line : NonEmptyLines(show_config)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    if (Trim(std::string_view(line).substr(0, eq)) != "ClusterName") continue;
    std::string value(Trim(std::string_view(line).substr(eq + 1)));
    if (value.empty() || value == "(null)") return std::nullopt;
    return value;
  }
  return std::nullopt;
}

std::string EnvCheckScript(const std::string& marker, int command_timeout_seconds) {
  std::string script = "# trtllm-run env check: every query once, concurrently.\n";
  script += probe::Prelude(marker, command_timeout_seconds);
  script += R"SH(put arch "$(uname -m 2>/dev/null)"
if command -v nvidia-smi >/dev/null 2>&1; then
  q gpus nvidia-smi --query-gpu=name --format=csv,noheader &
fi
if command -v docker >/dev/null 2>&1; then
  q docker docker info --format '{{json .Runtimes}}' &
fi
miss=
for t in sbatch squeue sinfo scontrol; do command -v "$t" >/dev/null 2>&1 || miss="$miss $t"; done
put slurm_missing "$miss"
if command -v scontrol >/dev/null 2>&1; then q config scontrol show config & fi
wait
emit_all
)SH";
  return script;
}

EnvFacts EnvFactsFromProbe(const ProbeOutput& output, const ClusterCatalog* catalog,
                           const std::string& models_repo_env) {
  EnvFacts facts;
  if (const ProbeSection* arch = output.Find("arch")) facts.arch = std::string(Trim(arch->out));

  const ProbeSection* gpus = output.Find("gpus");
  if (gpus == nullptr) {
    facts.notes.push_back("gpus: 0 (no nvidia-smi on PATH)");
  } else if (gpus->exit_code != 0) {
    facts.notes.push_back("gpus: 0 (" + probe::DescribeFailure("nvidia-smi", *gpus) + ")");
  } else {
    GpuInventory inventory = ParseNvidiaSmiNames(gpus->out);
    facts.gpu_count = static_cast<int>(inventory.names.size());
    if (facts.gpu_count > 0) {
      facts.gpu_name = inventory.names.front();
      facts.device_type = inventory.device_type;
      facts.notes.push_back(
          "gpus: " + std::to_string(facts.gpu_count) + " x " + facts.gpu_name + " -> device_type " +
          facts.device_type + " (nvidia-smi)" +
          (inventory.mixed ? "; GPUs of several types: the first one counts" : ""));
    } else {
      facts.notes.push_back("gpus: 0 (nvidia-smi lists none)");
    }
  }

  const ProbeSection* docker = output.Find("docker");
  if (docker == nullptr) {
    facts.docker_error = "docker not found on PATH";
  } else if (docker->exit_code != 0) {
    std::string error = FirstLine(docker->err);
    facts.docker_error = error.empty() ? probe::DescribeFailure("docker info", *docker) : error;
  } else {
    facts.docker_available = true;
    std::vector<std::string> runtimes;
    rapidjson::Document doc;
    if (json::ParseObject(docker->out, "docker info", &doc).ok()) {
      for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
        runtimes.emplace_back(it->name.GetString(), it->name.GetStringLength());
      }
    }
    facts.nvidia_runtime = std::find(runtimes.begin(), runtimes.end(), "nvidia") != runtimes.end();
    facts.notes.push_back("docker: engine reachable; runtimes " +
                          (runtimes.empty() ? std::string("unknown") : Join(runtimes, ", ")));
  }
  if (!facts.docker_available)
    facts.notes.push_back("docker: unavailable (" + facts.docker_error + ")");

  const ProbeSection* missing = output.Find("slurm_missing");
  std::string missing_tools =
      missing ? std::string(Trim(missing->out)) : "sbatch squeue sinfo scontrol";
  facts.slurm_available = missing_tools.empty();
  facts.notes.push_back(facts.slurm_available
                            ? "slurm: client tools found (sbatch, squeue, sinfo, scontrol)"
                            : "slurm: client tools missing: " + missing_tools);
  if (const ProbeSection* config = output.Find("config")) {
    if (config->exit_code == 0) {
      facts.cluster_name = ParseClusterName(config->out);
      if (facts.cluster_name) {
        facts.notes.push_back("cluster: " + *facts.cluster_name + " (scontrol show config)");
      }
    } else {
      facts.notes.push_back("cluster: unknown (" +
                            probe::DescribeFailure("scontrol show config", *config) + ")");
    }
  }

  const ClusterEntry* entry =
      (catalog && facts.cluster_name) ? catalog->FindByName(*facts.cluster_name) : nullptr;
  if (entry != nullptr && entry->gpus_per_node > 0) {
    facts.gpus_per_node = entry->gpus_per_node;
    facts.notes.push_back("gpus_per_node: " + std::to_string(facts.gpus_per_node) +
                          " (cluster catalog " + catalog->path + ")");
  } else {
    facts.gpus_per_node = facts.gpu_count;
  }
  if (entry != nullptr && !entry->models_repo_host.empty()) {
    facts.default_models_repo = entry->models_repo_host;
    facts.notes.push_back("default_models_repo: " + entry->models_repo_host +
                          " (models_repo_host of cluster " + entry->name + ")");
  } else if (!models_repo_env.empty()) {
    facts.default_models_repo = models_repo_env;
    facts.notes.push_back("default_models_repo: " + models_repo_env + " ($TRTLLM_RUN_MODELS_REPO)");
  }
  return facts;
}

Result<EnvFacts> CheckEnvironment(Scenario& scenario, const ClusterCatalog* catalog) {
  std::string marker = probe::RandomMarker();
  Result<ProbeOutput> output =
      probe::Run(scenario, EnvCheckScript(marker, 20), marker, "the env check");
  if (!output.ok()) return output.status();
  const char* models_repo = std::getenv("TRTLLM_RUN_MODELS_REPO");
  return EnvFactsFromProbe(output.value(), catalog, models_repo ? models_repo : "");
}

std::string EnvFactsToJson(const EnvFacts& facts) {
  rapidjson::StringBuffer buffer;
  json::Writer w(buffer);
  w.SetIndent(' ', 2);
  auto optional_string = [&](const char* key, const std::optional<std::string>& value) {
    w.Key(key);
    if (value) {
      json::WriteString(&w, *value);
    } else {
      w.Null();
    }
  };
  w.StartObject();
  w.Key("gpu_count");
  w.Int(facts.gpu_count);
  w.Key("gpu_name");
  json::WriteString(&w, facts.gpu_name);
  w.Key("device_type");
  json::WriteString(&w, facts.device_type);
  w.Key("gpus_per_node");
  w.Int(facts.gpus_per_node);
  w.Key("docker_available");
  w.Bool(facts.docker_available);
  w.Key("docker_error");
  json::WriteString(&w, facts.docker_error);
  w.Key("nvidia_runtime");
  w.Bool(facts.nvidia_runtime);
  w.Key("slurm_available");
  w.Bool(facts.slurm_available);
  optional_string("cluster_name", facts.cluster_name);
  w.Key("arch");
  json::WriteString(&w, facts.arch);
  optional_string("default_models_repo", facts.default_models_repo);
  w.Key("notes");
  json::WriteStringArray(&w, facts.notes);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace trtllm_run
