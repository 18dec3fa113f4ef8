#include "trtllm_run/user_config.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "model/problems.h"
#include "model/trust.h"
#include "model/yaml_util.h"
#include "runtime/config_trust.h"
#include "trtllm_run/sdk/input_limits.h"
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

// Fields whose text is a duration (ParseDurationSeconds); Plan parses them per case.
const std::set<std::string>& DurationFields() {
  static const std::set<std::string> fields = {"monitor_timeout", "max_pending", "silence_timeout"};
  return fields;
}

std::string ToSnake(std::string text) {
  std::replace(text.begin(), text.end(), '-', '_');
  return text;
}

std::string Kebab(std::string text) {
  std::replace(text.begin(), text.end(), '_', '-');
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
  if (top_level) keys.push_back("history");
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

// A key a checkout's config may not set: where it may be given instead.
Status RefusedInCheckout(const std::string& where, const std::string& key) {
  std::string allowed;
  for (const std::string& name : RepoConfigKeys()) allowed += (allowed.empty() ? "" : ", ") + name;
  std::string user_config = UserConfigPath();
  if (user_config.empty()) user_config = "~/.config/trtllm-run/config.yaml";
  return Status::InvalidInput(
      where + ": '" + key +
          "' may not be set by a checkout's .trtllm-run.yaml: a cloned repo does not choose "
          "hosts, SSH options, identities, files to read or upload, the scenario, the image, "
          "an env file or what is installed and run",
      "give it as --" + Kebab(key) + ", in a --request or --cases file you name, or in your own " +
          user_config + "; a checkout's config may set only: " + allowed);
}

// The request keys of one mapping (the top level or a cluster's section).
void ReadValues(const YAML::Node& map, const std::string& origin, ConfigSource source,
                bool top_level, std::vector<ConfigValue>* values,
                std::map<std::string, std::vector<ConfigValue>>* clusters,
                std::optional<ConfigValue>* history, ProblemList* problems) {
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
        ReadValues(cluster.second, origin, source, false, &(*clusters)[cluster.first.Scalar()],
                   nullptr, nullptr, problems);
      }
      continue;
    }
    if (top_level && key == "history") {
      // Where this user's runs are recorded (history/history_record.h): a path, a
      // postgresql:// URL (checked by the CLI: history_flags.cc), or off.
      if (source == ConfigSource::kRepo) {
        problems->Add(Status::InvalidInput(
            where + ": 'history' may not be set by a checkout's .trtllm-run.yaml: a cloned "
                    "repo does not choose where your runs are recorded",
            "give --history FILE or --no-history, or set it in your own "
            "~/.config/trtllm-run/config.yaml"));
      } else if (!value.IsScalar() || value.Scalar().empty()) {
        problems->Add(Status::InvalidInput(
            where + ": 'history' must be a file path or off, got " + YamlNodeKind(value),
            "e.g. history: /local/me/trtllm-history.sqlite, history: "
            "postgresql://me@db.example/trtllm_history, or history: off"));
      } else {
        *history = ConfigValue{key, value.Scalar(), where};
      }
      continue;
    }
    if (LooksLikeSecretName(key)) {
      problems->Add(Status::InvalidInput(
          where + ": '" + EscapeControl(key) + "': a password is never read from files",
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
    if (source == ConfigSource::kRepo && !RepoConfigMaySet(key)) {
      problems->Add(RefusedInCheckout(where, key));
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
    if (valid && DurationFields().count(key)) {  // else Plan finds them later, one round on
      Result<int> duration = ParseDurationSeconds(texts.front(), key);
      if (!duration.ok()) {
        valid = problems->Add(Status::InvalidInput(where + ": " + duration.status().message(),
                                                   duration.status().hint()));
      }
    }
    if (!valid) continue;
    for (const std::string& text : texts) values->push_back({key, text, where});
  }
}

std::string FileKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

std::string UserName(uid_t uid) {
  struct passwd* pw = ::getpwuid(uid);
  return pw != nullptr && pw->pw_name != nullptr ? std::string(pw->pw_name) : "no name";
}

}  // namespace

Result<std::optional<std::string>> ReadOwnConfigFile(const std::string& path, ConfigSource source) {
  // Non-blocking: opening a FIFO must not wait for a writer. The checkout's file is not
  // followed through a symlink (it could name any file the caller can read).
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  if (source == ConfigSource::kRepo) flags |= O_NOFOLLOW;
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) return std::optional<std::string>();
    if (err == ELOOP && source == ConfigSource::kRepo) {
      return Status::InvalidInput("the config file " + path +
                                      " is a symbolic link; a checkout's config is read only "
                                      "when it is a regular file",
                                  "replace the link with the file, or remove it");
    }
    return Status::InvalidInput("cannot read the config file " + path + ": " + std::strerror(err),
                                "fix or remove the config file " + path);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    return Status::InvalidInput("cannot read the config file " + path + ": " + std::strerror(err),
                                "fix or remove the config file " + path);
  }
  const std::string refused = "the config file " + path + " is refused: it ";
  if (!S_ISREG(info.st_mode)) {
    return Status::InvalidInput(refused + "is not a regular file (" + FileKind(info.st_mode) + ")",
                                "config files are read only when they are regular files; "
                                "replace or remove " +
                                    path);
  }
  const uid_t me = ::geteuid();
  if (info.st_uid != me && info.st_uid != 0) {
    return Status::InvalidInput(
        refused + "is owned by uid " + std::to_string(info.st_uid) + " (" + UserName(info.st_uid) +
            "), not by you (uid " + std::to_string(me) + ") or root",
        "a config file someone else owns could set what trtllm-run does as you; take it "
        "over (chown) or remove it");
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status::InvalidInput(refused + "is writable by " +
                                    ((info.st_mode & S_IWOTH) ? "others" : "group") + " (mode " +
                                    mode + ")",
                                "anyone who can write it could set what trtllm-run does as you; "
                                "chmod go-w " +
                                    path);
  }
  if (static_cast<std::size_t>(info.st_size) > kMaxRequestFileBytes) {
    return Status::InvalidInput(
        TooLarge("config file", path, static_cast<std::size_t>(info.st_size), kMaxRequestFileBytes)
            .message(),
        "fix or remove the config file " + path);
  }
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      return Status::InvalidInput("cannot read the config file " + path + ": " + std::strerror(err),
                                  "fix or remove the config file " + path);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > kMaxRequestFileBytes) {  // it grew while read
      return TooLarge("config file", path, text.size(), kMaxRequestFileBytes);
    }
  }
  return std::optional<std::string>(std::move(text));
}

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

Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& origin,
                                   ConfigSource source) {
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
    ReadValues(root, origin, source, true, &file.values, &file.clusters, &file.history, &problems);
  } catch (const YAML::Exception& e) {
    problems.Add(Status::InvalidInput(origin + ": " + e.what()));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(problems.ToStatus("in the config file " + origin));
  return file;
}

// The public forms (user_config.h) hold files to the stricter rules of a checkout's.
Result<std::optional<ConfigFile>> LoadConfigFile(const std::string& path) {
  return LoadConfigFile(path, ConfigSource::kRepo);
}

Result<ConfigFile> ParseConfigText(const std::string& text, const std::string& origin) {
  return ParseConfigText(text, origin, ConfigSource::kRepo);
}

Result<std::optional<ConfigFile>> LoadConfigFile(const std::string& path, ConfigSource source) {
  if (path.empty()) return std::optional<ConfigFile>();
  Result<std::optional<std::string>> text = ReadOwnConfigFile(path, source);
  if (!text.ok()) return text.status();
  if (!text.value()) return std::optional<ConfigFile>();
  Result<ConfigFile> parsed = ParseConfigText(*text.value(), path, source);
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
