#include "trtllm_run/user_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "model/input_limits.h"
#include "model/problems.h"
#include "model/yaml_util.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace fs = std::filesystem;

namespace {

// Fields that describe one case, not a default for many.
const std::set<std::string>& CaseOnlyFields() {
  static const std::set<std::string> fields = {"test_cmd",         "bench_cmd",     "eval_cmd",
                                               "custom_cmd",       "custom_script", "custom_env",
                                               "perf_config_yaml", "model_name",    "repo_root"};
  return fields;
}

std::string ToSnake(std::string text) {
  std::replace(text.begin(), text.end(), '-', '_');
  return text;
}

std::vector<std::string> ConfigKeys() {
  std::vector<std::string> keys;
  for (const RequestField& field : RequestFields()) {
    if (!CaseOnlyFields().count(field.name)) keys.push_back(field.name);
  }
  return keys;
}

std::size_t Distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

Status UnknownKey(const std::string& where, const std::string& key, bool top_level) {
  std::vector<std::string> keys = ConfigKeys();
  if (top_level) keys.push_back("clusters");
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : keys) {
    std::size_t distance = Distance(ToSnake(key), candidate);
    if (distance < best_distance) best_distance = distance, best = candidate;
  }
  std::string hint;
  if (best_distance <= std::max<std::size_t>(2, key.size() / 3)) {
    hint = "did you mean '" + best + "'? ";
  }
  std::string names;
  for (const std::string& name : keys) names += (names.empty() ? "" : ", ") + name;
  if (CaseOnlyFields().count(ToSnake(key))) {
    return Status::InvalidInput(
        where + ": '" + EscapeControl(key) + "' belongs to one case, not to a config file",
        "give it with the case (a flag or a --request file); config keys: " + names);
  }
  return Status::InvalidInput(
      where + ": unknown key '" + EscapeControl(key) + "' in a trtllm-run config file",
      hint + "valid keys: " + names);
}

// The request keys of one mapping (the top level or a cluster's section).
void ReadValues(const YAML::Node& map, const std::string& origin, bool top_level,
                std::vector<ConfigValue>* values,
                std::map<std::string, std::vector<ConfigValue>>* clusters, ProblemList* problems) {
  std::set<std::string> seen;
  for (const auto& entry : map) {
    const std::string where = YamlWhere(origin, entry.first.Mark());
    if (!entry.first.IsScalar()) {
      problems->Add(
          Status::InvalidInput(where + ": keys must be names, got " + YamlNodeKind(entry.first)));
      continue;
    }
    const std::string key = ToSnake(entry.first.Scalar());
    const YAML::Node& value = entry.second;
    if (top_level && key == "clusters") {
      if (!value.IsMap()) {
        problems->Add(Status::InvalidInput(
            where + ": 'clusters' must be a mapping of cluster names to mappings, got " +
                YamlNodeKind(value),
            "e.g. clusters: {my-cluster: {partition: batch}}"));
        continue;
      }
      for (const auto& cluster : value) {
        const std::string at = YamlWhere(origin, cluster.first.Mark());
        if (!cluster.first.IsScalar() || !cluster.second.IsMap()) {
          problems->Add(Status::InvalidInput(
              at + ": each cluster under 'clusters' is a name with a mapping of request keys"));
          continue;
        }
        ReadValues(cluster.second, origin, false, &(*clusters)[cluster.first.Scalar()], nullptr,
                   problems);
      }
      continue;
    }
    if (key == "slurm_password") {
      problems->Add(Status::InvalidInput(
          where + ": slurm_password is never read from files",
          "give --password-file FILE or $TRTLLM_RUN_SLURM_PASSWORD at run time"));
      continue;
    }
    std::vector<std::string> names = ConfigKeys();
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      problems->Add(UnknownKey(where, entry.first.Scalar(), top_level));
      continue;
    }
    if (!seen.insert(key).second) {
      problems->Add(Status::InvalidInput(where + ": key '" + key + "' is given twice"));
      continue;
    }
    std::vector<std::string> texts;
    if (value.IsScalar()) {
      texts.push_back(value.Scalar());
    } else if (value.IsSequence()) {
      for (const auto& item : value) {
        if (item.IsScalar()) texts.push_back(item.Scalar());
      }
    }
    if (texts.empty() || (value.IsSequence() && texts.size() != value.size())) {
      problems->Add(Status::InvalidInput(where + ": key '" + key + "' must be a value, got " +
                                         YamlNodeKind(value)));
      continue;
    }
    CaseRequest probe;  // checks the value as a request file would
    bool valid = true;
    for (const std::string& text : texts) {
      valid = problems->Add(SetRequestField(&probe, key, text, where)) && valid;
    }
    if (valid) valid = problems->Add(ValidateRequestValues(probe).WithContext(where));
    if (!valid) continue;
    for (const std::string& text : texts) values->push_back({key, text, where});
  }
}

}  // namespace

std::string UserConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/trtllm-run/config.yaml";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return "";
  return std::string(home) + "/.config/trtllm-run/config.yaml";
}

std::string RepoConfigPath(const std::string& repo_root) {
  return (fs::path(repo_root) / ".trtllm-run.yaml").string();
}

Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& origin) {
  if (text.size() > kMaxRequestFileBytes) {
    return TooLarge("config file", origin, text.size(), kMaxRequestFileBytes);
  }
  ConfigFile file;
  file.path = origin;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput(YamlWhere(origin, e.mark) + ": not valid YAML: " + e.msg);
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, origin));
  if (root.IsNull()) return file;  // an empty file sets nothing
  if (!root.IsMap()) {
    return Status::InvalidInput(origin +
                                    ": a config file must be a mapping of request keys to "
                                    "values, got " +
                                    YamlNodeKind(root),
                                "e.g. partition: batch");
  }
  ProblemList problems;
  try {
    ReadValues(root, origin, true, &file.values, &file.clusters, &problems);
  } catch (const YAML::Exception& e) {
    problems.Add(Status::InvalidInput(origin + ": " + e.what()));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(problems.ToStatus("in the config file " + origin));
  return file;
}

Result<std::optional<ConfigFile>> LoadConfigFile(const std::string& path) {
  std::error_code error;
  if (path.empty() || !fs::exists(path, error)) return std::optional<ConfigFile>();
  Result<std::string> text = ReadFileLimited(path, kMaxRequestFileBytes, "config file");
  if (!text.ok()) {
    return Status::InvalidInput(text.status().message(), "fix or remove the config file " + path);
  }
  Result<ConfigFile> parsed = ParseConfigText(text.value(), path);
  if (!parsed.ok()) return parsed.status();
  return std::optional<ConfigFile>(std::move(parsed.value()));
}

bool ConfigLayers::HasCluster(const std::string& cluster) const {
  for (const ConfigFile& file : files) {
    if (file.clusters.count(cluster)) return true;
  }
  return false;
}

bool ConfigLayers::HasAnyCluster() const {
  for (const ConfigFile& file : files) {
    if (!file.clusters.empty()) return true;
  }
  return false;
}

Result<CaseRequest> ApplyConfigLayers(const ConfigLayers& layers, const std::string& cluster,
                                      const CaseRequest& given, std::vector<std::string>* notes) {
  std::set<std::string> taken;
  for (const auto& [field, text] : GivenRequestFields(given)) taken.insert(field);
  CaseRequest request = given;
  auto apply = [&](const std::vector<ConfigValue>& values, const std::string& section) -> Status {
    std::set<std::string> here;
    for (const ConfigValue& value : values) {
      if (taken.count(value.field) && !here.count(value.field)) continue;
      here.insert(value.field);
      TRTLLM_RUN_RETURN_IF_ERROR(SetRequestField(&request, value.field, value.text, value.origin));
      if (notes) {
        notes->push_back("config: " + value.field + "=" + value.text + " (from " + value.origin +
                         section + ")");
      }
    }
    taken.insert(here.begin(), here.end());
    return Status::Ok();
  };
  for (const ConfigFile& file : layers.files) {
    auto section = cluster.empty() ? file.clusters.end() : file.clusters.find(cluster);
    if (section != file.clusters.end()) {
      TRTLLM_RUN_RETURN_IF_ERROR(apply(section->second, ", cluster " + cluster));
    }
    TRTLLM_RUN_RETURN_IF_ERROR(apply(file.values, ""));
  }
  return request;
}

}  // namespace trtllm_run
