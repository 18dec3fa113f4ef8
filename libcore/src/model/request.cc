// CaseRequest fields: one table drives the CLI flags, SetRequestField and request files,
// so a flag and its request-file key can never drift apart.
#include "trtllm_run/request.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <map>

#include "model/edit_distance.h"
#include "model/request_field_table.h"
#include "model/slurm_time.h"
#include "model/trust.h"
#include "model/utf8.h"
#include "model/yaml_util.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

const char* kPasswordRefusal =
    "never put a password in a request file; use $TRTLLM_RUN_SLURM_PASSWORD or --password-file";

const FieldDef* FindField(std::string_view name) {
  std::string snake = ToSnake(name);
  for (const FieldDef& def : FieldTable()) {
    if (snake == def.name) return &def;
  }
  return nullptr;
}

// The closest field name to `name`, or "" when none is plausibly meant.
std::string ClosestField(std::string_view name) {
  std::vector<std::string> names;
  for (const FieldDef& def : FieldTable()) names.push_back(def.name);
  return ClosestName(ToSnake(name), names);
}

std::string ValidNames(bool kebab) {
  std::string names;
  for (const FieldDef& def : FieldTable()) {
    if (!names.empty()) names += ", ";
    names += kebab ? ToKebab(def.name) : def.name;
  }
  return names;
}

Status UnknownField(std::string_view name, std::string_view origin, bool is_file_key) {
  bool kebab = !is_file_key && name.find('-') != std::string_view::npos;
  std::string what = is_file_key ? "unknown key '" : "unknown request field '";
  std::string hint;
  std::string closest = ClosestField(name);
  if (!closest.empty()) hint = "did you mean '" + (kebab ? ToKebab(closest) : closest) + "'? ";
  hint += std::string(is_file_key ? "valid keys: " : "valid fields: ") + ValidNames(kebab);
  return Status::InvalidInput(what + std::string(name) + "'" +
                                  (origin.empty() ? "" : " (from " + std::string(origin) + ")"),
                              hint);
}

std::string FromOrigin(std::string_view origin) {
  return origin.empty() ? "" : " (from " + std::string(origin) + ")";
}

Result<int> ParseFieldInt(const FieldDef& def, std::string_view value, std::string_view origin) {
  std::string_view s = Trim(value);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::optional<long long> parsed = ParseInteger(s, def.allows_zero ? 0 : 1, INT_MAX);
  if (!parsed) {
    return Status::InvalidInput(std::string(def.name) + " must be a " +
                                (def.allows_zero ? "non-negative" : "positive") +
                                " integer, got '" + std::string(value) + "'" + FromOrigin(origin));
  }
  return static_cast<int>(*parsed);
}

Result<bool> ParseBool(const FieldDef& def, std::string_view value, std::string_view origin) {
  std::string lower;
  for (char c : value) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (lower == "true" || lower == "yes" || lower == "1" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "0" || lower == "off") return false;
  return Status::InvalidInput(std::string(def.name) + " must be true or false, got '" +
                                  std::string(value) + "'" + FromOrigin(origin),
                              "accepted: true/false, yes/no, 1/0, on/off");
}

Status SetField(const FieldDef& def, CaseRequest* request, std::string_view value,
                std::string_view origin) {
  switch (def.type) {
    case FieldType::kString:
      if (def.slurm_time) {
        Result<std::string> slurm = NormalizeSlurmTime(value, def.name + FromOrigin(origin));
        if (!slurm.ok()) return slurm.status();
        request->*def.str = slurm.value();
        return Status::Ok();
      }
      request->*def.str = std::string(value);
      return Status::Ok();
    case FieldType::kInt: {
      Result<int> n = ParseFieldInt(def, value, origin);
      if (!n.ok()) return n.status();
      request->*def.integer = n.value();
      return Status::Ok();
    }
    case FieldType::kBool: {
      Result<bool> b = ParseBool(def, value, origin);
      if (!b.ok()) return b.status();
      request->*def.boolean = b.value();
      return Status::Ok();
    }
    case FieldType::kStringList:
      (request->*def.list).emplace_back(value);
      return Status::Ok();
  }
  return Status::Internal("unhandled field type for " + std::string(def.name));
}

// ---- Request files ----

const char* ExpectedForm(FieldType type) {
  switch (type) {
    case FieldType::kString:
      return "a string";
    case FieldType::kInt:
      return "a positive integer";
    case FieldType::kBool:
      return "true or false";
    case FieldType::kStringList:
      return "a list of strings (or a single string)";
  }
  return "a value";
}

// custom_env as a mapping {KEY: VALUE} or a list of KEY=VALUE strings, turned into the
// string form "KEY=VALUE KEY2='v a l'" that ParseEnvAssignments reads back exactly.
Result<std::string> CustomEnvFromNode(const std::string& path, const YAML::Node& node) {
  std::string text;
  auto add = [&](const std::string& name, const std::string& value, const YAML::Mark& mark) {
    if (!IsShellIdentifier(name)) {
      return Status::InvalidInput(
          YamlWhere(path, mark) + ": custom_env: '" + name + "' is not a valid variable name",
          "names match [A-Za-z_][A-Za-z0-9_]*");
    }
    if (!text.empty()) text += ' ';
    text += name + "=" + (value.empty() ? std::string() : ShellQuote(value));
    return Status::Ok();
  };
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (!entry.first.IsScalar() || !(entry.second.IsScalar() || entry.second.IsNull())) {
        return Status::InvalidInput(YamlWhere(path, entry.first.Mark()) +
                                        ": custom_env entries must be KEY: VALUE with scalar "
                                        "values",
                                    "e.g. custom_env: {BATCH_SIZE: 32, MSG: \"a b\"}");
      }
      std::string value = entry.second.IsNull() ? "" : entry.second.Scalar();
      TRTLLM_RUN_RETURN_IF_ERROR(add(entry.first.Scalar(), value, entry.first.Mark()));
    }
    return text;
  }
  for (const auto& item : node) {  // a sequence
    if (!item.IsScalar()) {
      return Status::InvalidInput(YamlWhere(path, item.Mark()) +
                                      ": custom_env list items must be KEY=VALUE strings, got " +
                                      YamlNodeKind(item),
                                  "e.g. custom_env: [BATCH_SIZE=32, \"MSG=a b\"]");
    }
    const std::string& word = item.Scalar();
    size_t eq = word.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidInput(YamlWhere(path, item.Mark()) + ": custom_env: '" + word +
                                      "' is not a KEY=VALUE assignment",
                                  "e.g. custom_env: [BATCH_SIZE=32, \"MSG=a b\"]");
    }
    TRTLLM_RUN_RETURN_IF_ERROR(add(word.substr(0, eq), word.substr(eq + 1), item.Mark()));
  }
  return text;
}

bool IsExecutorOptionKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status BadExecutorOptionKey(std::string_view key, const std::string& where) {
  return Status::InvalidInput(
      where + ": executor option key '" + EscapeControl(std::string(key)) + "' is not a key",
      "keys are letters, digits, '_', '.' and '-', e.g. "
      "--executor-option queue=fast");
}

// A secret would be written to job_spec.json with the other executor options; its value
// is not repeated.
Status SecretExecutorOption(std::string_view key, const std::string& where) {
  return Status::InvalidInput(where + ": executor option '" + std::string(key) +
                                  "' names a secret; its value was not used or stored",
                              "executor options are written to job_spec.json: the SSH password "
                              "comes only from $TRTLLM_RUN_SLURM_PASSWORD, --password-file or the "
                              "prompt");
}

// executor_options: a mapping of scalar keys to scalar values.
Status ExecutorOptionsFromNode(const std::string& path, const YAML::Node& node,
                               std::map<std::string, std::string>* options) {
  if (!node.IsMap()) {
    return Status::InvalidInput(YamlWhere(path, node.Mark()) +
                                    ": executor_options must be a mapping of KEY: VALUE, got " +
                                    YamlNodeKind(node),
                                "e.g. executor_options: {queue: fast}");
  }
  for (const auto& entry : node) {
    const std::string where = YamlWhere(path, entry.first.Mark());
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) {
      return Status::InvalidInput(where +
                                      ": executor_options entries must be KEY: VALUE with "
                                      "scalar values",
                                  "e.g. executor_options: {queue: fast}");
    }
    const std::string& key = entry.first.Scalar();
    if (!IsExecutorOptionKey(key)) return BadExecutorOptionKey(key, where);
    if (LooksLikeSecretName(key)) return SecretExecutorOption(key, where);
    if (!options->emplace(key, entry.second.Scalar()).second) {
      return Status::InvalidInput(where + ": executor option '" + key + "' is given twice");
    }
  }
  return Status::Ok();
}

Status LoadRequestNode(const std::string& path, const YAML::Node& root, CaseRequest* request) {
  if (!root.IsMap()) {
    return Status::InvalidInput(
        path +
            ": a request file must be a mapping of field names to "
            "values, got " +
            YamlNodeKind(root),
        "e.g. custom_cmd: \"python3 run.py\"; valid keys: " + ValidNames(false));
  }
  std::map<std::string, int> seen_lines;
  // Parse into a copy so that a bad file leaves `request` untouched.
  CaseRequest loaded = *request;
  for (const auto& entry : root) {
    const YAML::Node& key_node = entry.first;
    const YAML::Node& value = entry.second;
    std::string where = YamlWhere(path, key_node.Mark());
    if (!key_node.IsScalar()) {
      return Status::InvalidInput(
          where + ": keys must be field names, got " + YamlNodeKind(key_node),
          "valid keys: " + ValidNames(false));
    }
    const std::string key = key_node.Scalar();
    if (LooksLikeSecretName(key)) {
      return Status::InvalidInput(where + ": key '" + EscapeControl(key) + "' is not allowed",
                                  kPasswordRefusal);
    }
    if (ToSnake(key) == "executor_options") {
      loaded.executor_options.emplace();
      TRTLLM_RUN_RETURN_IF_ERROR(ExecutorOptionsFromNode(path, value, &*loaded.executor_options));
      continue;
    }
    const FieldDef* def = FindField(key);
    if (def == nullptr) return UnknownField(key, where, true);
    auto [it, inserted] = seen_lines.emplace(def->name, key_node.Mark().line + 1);
    if (!inserted) {
      return Status::InvalidInput(where + ": key '" + key + "' is given twice (first on line " +
                                  std::to_string(it->second) + ")");
    }
    auto wrong = [&]() {
      return Status::InvalidInput(where + ": key '" + key + "' must be " + ExpectedForm(def->type) +
                                      ", got " + YamlNodeKind(value),
                                  value.IsNull() ? "give a value or remove the line" : "");
    };

    if (std::string(def->name) == "custom_env" && (value.IsMap() || value.IsSequence())) {
      Result<std::string> env = CustomEnvFromNode(path, value);
      if (!env.ok()) return env.status();
      loaded.custom_env = env.value();
      continue;
    }
    if (def->type == FieldType::kStringList) {
      std::vector<std::string> items;
      if (value.IsScalar()) {
        items.push_back(value.Scalar());
      } else if (value.IsSequence()) {
        for (const auto& item : value) {
          if (!item.IsScalar()) {
            return Status::InvalidInput(YamlWhere(path, item.Mark()) + ": items of '" + key +
                                        "' must be strings, got " + YamlNodeKind(item));
          }
          items.push_back(item.Scalar());
        }
      } else {
        return wrong();
      }
      loaded.*(def->list) = std::move(items);
      continue;
    }
    if (!value.IsScalar()) return wrong();
    TRTLLM_RUN_RETURN_IF_ERROR(SetField(*def, &loaded, value.Scalar(), where));
  }
  *request = std::move(loaded);
  return Status::Ok();
}

// yaml-cpp 0.7 accepts a quoted scalar that is never closed, silently swallowing the
// rest of the file into it. Every quoted scalar must find its closing quote.
Status CheckQuotesClosed(const std::string& path, const std::string& text, const YAML::Node& node) {
  if (node.IsScalar() && node.Tag() == "!") {
    const YAML::Mark mark = node.Mark();
    size_t pos = mark.pos < 0 ? text.size() : static_cast<size_t>(mark.pos);
    char quote = pos < text.size() ? text[pos] : '\0';
    if (quote == '\'' || quote == '"') {
      bool closed = false;
      for (size_t i = pos + 1; i < text.size(); ++i) {
        if (quote == '"' && text[i] == '\\') {
          ++i;
        } else if (text[i] == quote) {
          if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
            ++i;  // '' is an escaped quote
          } else {
            closed = true;
            break;
          }
        }
      }
      if (!closed) {
        return Status::InvalidInput(YamlWhere(path, mark) + ": unterminated " +
                                        (quote == '"' ? "double" : "single") + "-quoted string",
                                    "close the quote on the value that starts on this line");
      }
    }
  }
  if (node.IsSequence()) {
    for (const auto& item : node) TRTLLM_RUN_RETURN_IF_ERROR(CheckQuotesClosed(path, text, item));
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      TRTLLM_RUN_RETURN_IF_ERROR(CheckQuotesClosed(path, text, entry.first));
      TRTLLM_RUN_RETURN_IF_ERROR(CheckQuotesClosed(path, text, entry.second));
    }
  }
  return Status::Ok();
}

}  // namespace

const std::vector<RequestField>& RequestFields() {
  static const std::vector<RequestField> fields = [] {
    std::vector<RequestField> out;
    for (const FieldDef& def : FieldTable()) {
      out.push_back(RequestField{def.name, ToKebab(def.name), def.type, def.help});
    }
    return out;
  }();
  return fields;
}

Status SetRequestField(CaseRequest* request, std::string_view name, std::string_view value,
                       std::string_view origin) {
  if (LooksLikeSecretName(name)) {
    return Status::InvalidInput(
        "'" + EscapeControl(std::string(name)) + "': a password cannot be set as a request field" +
            FromOrigin(origin),
        "use $TRTLLM_RUN_SLURM_PASSWORD, --password-file or the interactive prompt");
  }
  const FieldDef* def = FindField(name);
  if (def == nullptr) return UnknownField(name, origin, false);
  return SetField(*def, request, value, origin);
}

Status SetExecutorOption(CaseRequest* request, std::string_view key_value,
                         std::string_view origin) {
  const std::string where = origin.empty() ? std::string("executor option") : std::string(origin);
  std::size_t eq = key_value.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidInput(
        where + ": '" + EscapeControl(std::string(key_value)) + "' is not KEY=VALUE",
        "give --executor-option KEY=VALUE, e.g. --executor-option queue=fast");
  }
  std::string_view key = key_value.substr(0, eq);
  if (!IsExecutorOptionKey(key)) return BadExecutorOptionKey(key, where);
  if (LooksLikeSecretName(key)) return SecretExecutorOption(key, where);
  if (!request->executor_options) request->executor_options.emplace();
  (*request->executor_options)[std::string(key)] = std::string(key_value.substr(eq + 1));
  return Status::Ok();
}

Status LoadRequestFile(const std::string& path, CaseRequest* request) {
  Result<std::string> text = ReadFileLimited(path, kMaxRequestFileBytes, "request file");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput("--request: " + text.status().message(),
                                "give a readable YAML or JSON file: a mapping of field names "
                                "to values");
  }
  return LoadRequestText(text.value(), path, request);
}

Status LoadRequestText(const std::string& text, const std::string& path, CaseRequest* request) {
  if (text.size() > kMaxRequestFileBytes) {
    return TooLarge("request file", path, text.size(), kMaxRequestFileBytes);
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::InvalidInput(where + ": not valid YAML or JSON: " + e.msg);
  }
  try {
    TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, path));
    TRTLLM_RUN_RETURN_IF_ERROR(CheckQuotesClosed(path, text, root));
    return LoadRequestNode(path, root, request);
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput(path + ": " + e.what());
  }
}

void MergeRequest(const CaseRequest& overrides, CaseRequest* base) {
  for (const FieldDef& def : FieldTable()) {
    switch (def.type) {
      case FieldType::kString:
        if ((overrides.*def.str).has_value()) base->*def.str = overrides.*def.str;
        break;
      case FieldType::kInt:
        if ((overrides.*def.integer).has_value()) base->*def.integer = overrides.*def.integer;
        break;
      case FieldType::kBool:
        if ((overrides.*def.boolean).has_value()) base->*def.boolean = overrides.*def.boolean;
        break;
      case FieldType::kStringList:
        if (!(overrides.*def.list).empty()) base->*def.list = overrides.*def.list;
        break;
    }
  }
  if (overrides.executor_options) {
    if (!base->executor_options) base->executor_options.emplace();
    for (const auto& [key, value] : *overrides.executor_options) {
      (*base->executor_options)[key] = value;
    }
  }
  if (overrides.slurm_password.has_value()) base->slurm_password = overrides.slurm_password;
}

std::vector<std::pair<std::string, std::string>> GivenRequestFields(const CaseRequest& request) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const FieldDef& def : FieldTable()) {
    switch (def.type) {
      case FieldType::kString:
        if ((request.*def.str).has_value()) given.emplace_back(def.name, *(request.*def.str));
        break;
      case FieldType::kInt:
        if ((request.*def.integer).has_value()) {
          given.emplace_back(def.name, std::to_string(*(request.*def.integer)));
        }
        break;
      case FieldType::kBool:
        if ((request.*def.boolean).has_value()) {
          given.emplace_back(def.name, *(request.*def.boolean) ? "true" : "false");
        }
        break;
      case FieldType::kStringList:
        for (const std::string& item : request.*def.list) given.emplace_back(def.name, item);
        break;
    }
  }
  return given;
}

}  // namespace trtllm_run
