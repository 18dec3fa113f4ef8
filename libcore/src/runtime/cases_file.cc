// Cases files (multi_run.h): a YAML/JSON list or mapping of cases, or a plain list of
// test ids, perf-sanity ids and test commands, one per line.
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_parse.h"
#include "model/input_limits.h"
#include "model/yaml_util.h"
#include "runtime/dir_util.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace {

const RequestField* FindRequestField(const std::string& key) {
  for (const RequestField& field : RequestFields()) {
    if (field.name == key || field.flag == key) return &field;
  }
  return nullptr;
}

// One request mapping of a cases file into `request` (and its `name:` into `name` when
// given). Stops at the first problem of the mapping.
Status LoadCaseMapping(const YAML::Node& node, const std::string& origin, const std::string& what,
                       CaseRequest* request, std::string* name) {
  if (!node.IsMap()) {
    return Status::InvalidInput(YamlWhere(origin, node.Mark()) + ": " + what +
                                    " must be a mapping of request keys to values",
                                "e.g. - {name: smoke, custom_cmd: \"echo hi\"}");
  }
  for (const auto& entry : node) {
    const std::string where = YamlWhere(origin, entry.first.Mark());
    if (!entry.first.IsScalar()) {
      return Status::InvalidInput(where + ": keys must be request field names");
    }
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "name") {
      if (name == nullptr || !value.IsScalar()) {
        return Status::InvalidInput(where + ": 'name' is the label of a case: a string in a case");
      }
      *name = value.Scalar();
      continue;
    }
    const RequestField* field = FindRequestField(key);
    if (field == nullptr) {  // SetRequestField names the valid keys
      return SetRequestField(request, key, "", where);
    }
    if (field->name == "custom_env" && value.IsMap()) {
      std::string text;
      for (const auto& env : value) {
        if (!env.first.IsScalar() || !env.second.IsScalar()) {
          return Status::InvalidInput(where + ": custom_env values must be strings");
        }
        text +=
            (text.empty() ? "" : " ") + env.first.Scalar() + "=" + ShellQuote(env.second.Scalar());
      }
      TRTLLM_RUN_RETURN_IF_ERROR(SetRequestField(request, key, text, where));
      continue;
    }
    if (value.IsSequence() && field->type == FieldType::kStringList) {
      for (const auto& item : value) {
        if (!item.IsScalar()) {
          return Status::InvalidInput(where + ": items of '" + key + "' must be strings");
        }
        TRTLLM_RUN_RETURN_IF_ERROR(SetRequestField(request, key, item.Scalar(), where));
      }
      continue;
    }
    if (!value.IsScalar()) {
      return Status::InvalidInput(where + ": key '" + key + "' must be a single value",
                                  value.IsNull() ? "give a value or remove the line" : "");
    }
    TRTLLM_RUN_RETURN_IF_ERROR(SetRequestField(request, key, value.Scalar(), where));
  }
  return Status::Ok();
}

// The error of a cases file listing every problem found.
Status AllProblems(const std::string& origin, const std::vector<std::string>& problems,
                   std::size_t total) {
  std::string message = std::to_string(problems.size()) + " of " + std::to_string(total) +
                        " cases in " + origin + " are invalid; nothing was run:";
  for (const std::string& problem : problems) message += "\n  " + problem;
  return Status::InvalidInput(message,
                              "fix the cases named above (keys are the request-file keys "
                              "of `trtllm-run run --help`, in snake_case)");
}

CaseRequest Layer(const CaseRequest& defaults, const CaseRequest& shared, const CaseRequest& own) {
  CaseRequest request = defaults;
  MergeRequest(shared, &request);
  MergeRequest(own, &request);
  return request;
}

// The cases of a YAML/JSON document that is a list or a mapping.
Result<std::vector<CaseEntry>> ParseYamlCases(YAML::Node root, const std::string& origin,
                                              const CaseRequest& shared) {
  TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, origin));
  try {
    CaseRequest defaults;
    YAML::Node list = root;
    if (root.IsMap()) {
      for (const auto& entry : root) {
        const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
        if (key != "defaults" && key != "cases") {
          return Status::InvalidInput(YamlWhere(origin, entry.first.Mark()) + ": unknown key '" +
                                          EscapeControl(key) + "' in a cases file",
                                      "a cases file is a list of cases, or a mapping with "
                                      "`defaults:` (optional) and `cases:`");
        }
      }
      if (root["defaults"]) {
        TRTLLM_RUN_RETURN_IF_ERROR(
            LoadCaseMapping(root["defaults"], origin, "defaults", &defaults, nullptr));
      }
      list = root["cases"];
      if (!list) {
        return Status::InvalidInput(origin + ": a cases mapping needs a `cases:` list");
      }
    }
    if (!list.IsSequence()) {
      return Status::InvalidInput(
          YamlWhere(origin, list.Mark()) + ": the cases must be a list",
          "e.g.\n  - custom_cmd: \"echo one\"\n  - custom_cmd: \"echo two\"");
    }
    std::vector<CaseEntry> cases;
    std::vector<std::string> problems;
    int index = 0;
    for (const auto& item : list) {
      ++index;
      CaseEntry entry;
      entry.index = index;
      entry.origin = YamlWhere(origin, item.Mark()) + " (case " + std::to_string(index) + ")";
      CaseRequest own;
      Status loaded =
          LoadCaseMapping(item, origin, "case " + std::to_string(index), &own, &entry.name);
      if (!loaded.ok()) {
        problems.push_back("case " + std::to_string(index) + ": " + loaded.ToString());
        continue;
      }
      entry.request = Layer(defaults, shared, own);
      cases.push_back(std::move(entry));
    }
    if (index == 0) return Status::InvalidInput(origin + ": no cases (the list is empty)");
    if (!problems.empty()) return AllProblems(origin, problems, index);
    return cases;
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput(origin + ": " + e.what());
  }
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// The characters a YAML or JSON document's lines may start with to open a list, a
// mapping, a quoted string, an alias, a tag, a block scalar or a directive; never the
// first character of a test id, a perf-sanity id or a command.
bool IsYamlIndicator(char c) {
  return std::string_view("-?:,[]{}&*!|>'\"%@`").find(c) != std::string_view::npos;
}

// Characters of a program name or path: the first word of a command line, or a lone
// pytest argument such as a test directory.
bool IsProgramWord(std::string_view word) {
  if (word.empty() || word[0] == '-') return false;
  for (char c : word) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '/' &&
        c != '+' && c != '-') {
      return false;
    }
  }
  return true;
}

// Splits "<id> TIMEOUT (<digits>)" (spaces allowed around the parentheses and the
// digits) into `id` and `digits`; false, leaving both untouched, when `line` (trimmed)
// does not end so. A scan from the end: lines may be any length.
bool SplitTimeoutSuffix(const std::string& line, std::string* id, std::string* digits) {
  std::size_t k = line.size();  // one past what is left to read, moving left
  auto skip_spaces = [&] {
    while (k > 0 && IsSpace(line[k - 1])) --k;
  };
  skip_spaces();
  if (k == 0 || line[k - 1] != ')') return false;
  --k;
  skip_spaces();
  const std::size_t digits_end = k;
  while (k > 0 && line[k - 1] >= '0' && line[k - 1] <= '9') --k;
  if (k == digits_end) return false;
  const std::size_t digits_begin = k;
  skip_spaces();
  if (k == 0 || line[k - 1] != '(') return false;
  --k;
  skip_spaces();
  static const std::string_view kWord = "TIMEOUT";
  if (k < kWord.size() || line.compare(k - kWord.size(), kWord.size(), kWord) != 0) return false;
  k -= kWord.size();
  const std::size_t word_begin = k;
  skip_spaces();
  if (k == word_begin || k == 0) return false;  // a space before TIMEOUT, an id before that
  *digits = line.substr(digits_begin, digits_end - digits_begin);
  *id = line.substr(0, k);
  return true;
}

// The start of `line` for a message: control bytes escaped, at most 60 characters.
std::string Excerpt(const std::string& line) {
  return "'" + EscapeControl(line.size() > 60 ? line.substr(0, 57) + "..." : line) + "'";
}

// Why `id` (one line of a plain list, trimmed, without comment and TIMEOUT suffix) is not
// a test id, a perf-sanity id or a test command; "" when it is one.
std::string PlainLineProblem(const std::string& id) {
  if (IsYamlIndicator(id[0])) {
    return Excerpt(id) + " starts with '" + EscapeControl(id.substr(0, 1)) +
           "', which starts YAML or JSON, not a test id or a command";
  }
  if (IsBareTestId(id)) return "";
  std::size_t space = 0;
  while (space < id.size() && !IsSpace(id[space])) ++space;
  const std::string first = id.substr(0, space);
  if (IsProgramWord(first)) return "";
  if (space == id.size()) {
    return Excerpt(id) +
           " is not a test id (file.py::test[params]), a perf-sanity id (test_e2e[...]) "
           "or a path";
  }
  return Excerpt(id) + " is not a test command: its first word " + Excerpt(first) +
         " is not a program such as pytest, python3 or bash, nor a path to one";
}

// The cases of a plain list: one test id, perf-sanity id or test command per line.
// `yaml_error` is why the text is not YAML, when it is not.
Result<std::vector<CaseEntry>> ParsePlainCases(const std::string& text, const std::string& origin,
                                               const CaseRequest& shared,
                                               const std::optional<std::string>& yaml_error) {
  const std::string kForms =
      "a cases file is a YAML/JSON list of cases, a mapping with `cases:`, or a plain list "
      "with one pytest node id, perf-sanity id (test_e2e[...]) or test command per line";
  std::vector<CaseEntry> cases;
  std::vector<std::string> problems;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool first = true;
  while (std::getline(lines, line)) {
    ++number;
    std::string id(Trim(line));
    if (id.empty() || id[0] == '#' || id == "---") continue;
    if (first && yaml_error) {
      // A file that starts as YAML does (a list item, a flow collection, a quoted or a
      // plain `key:`) was meant as YAML: say why it is not.
      const std::string word = id.substr(0, id.find_first_of(" \t"));
      if (IsYamlIndicator(id[0]) || word.back() == ':') {
        return Status::InvalidInput(*yaml_error, kForms);
      }
    }
    first = false;
    std::size_t comment = id.find(" #");
    if (comment != std::string::npos) id = Trim(id.substr(0, comment));
    CaseEntry entry;
    entry.index = static_cast<int>(cases.size() + problems.size()) + 1;
    entry.origin =
        origin + ":" + std::to_string(number) + " (case " + std::to_string(entry.index) + ")";
    CaseRequest own;
    std::string without_timeout, minutes;
    if (SplitTimeoutSuffix(id, &without_timeout, &minutes)) {
      own.monitor_timeout = minutes + "m";
      id = without_timeout;
    }
    if (std::string problem = PlainLineProblem(id); !problem.empty()) {
      problems.push_back(entry.origin + ": " + problem);
      continue;
    }
    entry.name = id;
    own.test_cmd = TestCommandForId(id);
    entry.request = Layer(CaseRequest{}, shared, own);
    Result<CommandKind> kind = ClassifyCommand(entry.request);
    if (!kind.ok()) {
      problems.push_back(entry.origin + ": " + kind.status().ToString());
      continue;
    }
    cases.push_back(std::move(entry));
  }
  if (cases.empty() && problems.empty()) {
    return Status::InvalidInput(origin + ": no cases (only comments and blank lines)",
                                "give one pytest node id or perf-sanity id per line");
  }
  if (!problems.empty()) {
    Status all = AllProblems(origin, problems, cases.size() + problems.size());
    if (!yaml_error) return all;
    return Status::InvalidInput(all.message() + "\n  (read as a plain list: " + *yaml_error + ")",
                                all.hint());
  }
  return cases;
}

}  // namespace

Result<std::vector<CaseEntry>> ParseCasesText(const std::string& text, const std::string& origin,
                                              const CaseRequest& shared) {
  if (text.size() > kMaxCasesFileBytes) {
    return TooLarge("cases file", origin, text.size(), kMaxCasesFileBytes);
  }
  // The format is what the text parses as, never a guess from its first line: a document
  // that is a YAML/JSON list or mapping is read as one; anything else (a scalar, nothing,
  // or not YAML at all) is a plain list whose every line must be a test id or command.
  const std::string body = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text;
  YAML::Node root;
  std::optional<std::string> yaml_error;
  try {
    root = YAML::Load(body);
  } catch (const YAML::Exception& e) {
    yaml_error = YamlWhere(origin, e.mark) + ": not valid YAML or JSON: " + e.msg;
  }
  if (!yaml_error && (root.IsSequence() || root.IsMap())) {
    return ParseYamlCases(root, origin, shared);
  }
  return ParsePlainCases(body, origin, shared, yaml_error);
}

Result<std::vector<CaseEntry>> LoadCasesFile(const std::string& path, const CaseRequest& shared) {
  Result<std::string> text = ReadFileLimited(path, kMaxCasesFileBytes, "cases file");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput("--cases: " + text.status().message(),
                                "give a YAML/JSON list of cases or a list of test ids");
  }
  return ParseCasesText(text.value(), path, shared);
}

}  // namespace trtllm_run
