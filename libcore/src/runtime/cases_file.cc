// Cases files (multi_run.h): a YAML/JSON list or mapping of cases, or a plain list of
// test ids, perf-sanity ids and test commands, one per line.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "model/dir_util.h"
#include "model/yaml_util.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/sdk/input_limits.h"
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

// What planning refuses in a case on its own values, without routing: no command, two
// commands, a duration that is not one. One line per problem.
std::vector<std::string> CaseValueProblems(const CaseRequest& request) {
  std::vector<std::string> out;
  Result<CommandKind> kind = ClassifyCommand(request);
  if (!kind.ok()) {
    out.push_back(kind.status().ToString());
  } else if (kind.value() == CommandKind::kNone) {
    out.push_back(
        "no command given\n  hint: give one of test_cmd, bench_cmd, eval_cmd, custom_cmd or "
        "custom_script");
  }
  const std::pair<const char*, const std::optional<std::string>*> durations[] = {
      {"monitor_timeout", &request.monitor_timeout},
      {"max_pending", &request.max_pending},
      {"silence_timeout", &request.silence_timeout}};
  for (const auto& [field, value] : durations) {
    if (!*value) continue;
    Result<int> seconds = ParseDurationSeconds(**value, field);
    if (!seconds.ok()) out.push_back(seconds.status().ToString());
  }
  return out;
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
    if (!problems.empty()) {
      // The file is refused already: what planning would refuse in the other cases comes
      // in the same report, so that one edit fixes them all.
      std::vector<std::pair<int, std::string>> by_case;
      for (const std::string& problem : problems) {
        by_case.emplace_back(std::atoi(problem.c_str() + 5), problem);  // "case N: ..."
      }
      for (const CaseEntry& entry : cases) {
        for (const std::string& problem : CaseValueProblems(entry.request)) {
          by_case.emplace_back(entry.index, "case " + std::to_string(entry.index) + " (" +
                                                entry.origin + "): " + problem);
        }
      }
      std::stable_sort(by_case.begin(), by_case.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      problems.clear();
      for (auto& [case_index, problem] : by_case) problems.push_back(std::move(problem));
      return AllProblems(origin, problems, index);
    }
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

// The case of one line of a plain list or a test-db block (trimmed, not a comment):
// fills `entry` (name, request) and returns "", or returns the problem. A test-list line
// (test_list_line.h) is the case's test_cmd as written, for the pytest workflow to read
// with its markers and selectors; a bare id runs as `pytest '<id>'`; a command as it is.
std::string LineCase(std::string id, const CaseRequest& shared, CaseEntry* entry) {
  std::size_t comment = id.find(" #");
  if (comment != std::string::npos) id = Trim(id.substr(0, comment));
  if (id[0] == '%' || id.rfind("<%", 0) == 0) {
    return Excerpt(id) +
           " is a Mako template line; trtllm-run does not render Mako: render the list first "
           "(TensorRT-LLM's test_list_parser.py does) or write its lines out";
  }
  CaseRequest own;
  Result<std::optional<TestListLine>> list_line = ParseTestListLine(id);
  if (!list_line.ok()) return list_line.status().ToString();
  // Perf-sanity ids keep their own path (the perf-sanity workflow; TIMEOUT: the job's).
  if (list_line.value() && (list_line.value()->HasExtras() || list_line.value()->IsUnittest()) &&
      list_line.value()->id.find("test_e2e[") == std::string::npos) {
    const TestListLine& line = *list_line.value();
    entry->name = line.id;
    if (line.k_expr) entry->name += " -k \"" + *line.k_expr + "\"";
    if (line.m_expr) entry->name += " -m \"" + *line.m_expr + "\"";
    own.test_cmd = id;
  } else {
    std::string without_timeout, minutes;
    if (SplitTimeoutSuffix(id, &without_timeout, &minutes)) {
      own.monitor_timeout = minutes + "m";  // a command's TIMEOUT (N): the job's limit
      id = without_timeout;
    }
    if (std::string problem = PlainLineProblem(id); !problem.empty()) return problem;
    entry->name = id;
    own.test_cmd = TestCommandForId(id);
  }
  entry->request = Layer(CaseRequest{}, shared, own);
  Result<CommandKind> kind = ClassifyCommand(entry->request);
  if (!kind.ok()) return kind.status().ToString();
  return "";
}

// The cases of a plain list: one test id, perf-sanity id or test command per line.
// `yaml_error` is why the text is not YAML, when it is not.
Result<std::vector<CaseEntry>> ParsePlainCases(const std::string& text, const std::string& origin,
                                               const CaseRequest& shared,
                                               const std::optional<std::string>& yaml_error) {
  const std::string kForms =
      "a cases file is a YAML/JSON list of cases, a mapping with `cases:`, a test-db YAML, or "
      "a plain list with one pytest node id, test-list line, perf-sanity id (test_e2e[...]) or "
      "test command per line";
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
    if (first && yaml_error && id[0] != '%') {
      // A file that starts as YAML does (a list item, a flow collection, a quoted or a
      // plain `key:`) was meant as YAML: say why it is not.
      const std::string word = id.substr(0, id.find_first_of(" \t"));
      if (IsYamlIndicator(id[0]) || word.back() == ':') {
        return Status::InvalidInput(*yaml_error, kForms);
      }
    }
    first = false;
    CaseEntry entry;
    entry.index = static_cast<int>(cases.size() + problems.size()) + 1;
    entry.origin =
        origin + ":" + std::to_string(number) + " (case " + std::to_string(entry.index) + ")";
    if (std::string problem = LineCase(id, shared, &entry); !problem.empty()) {
      problems.push_back(entry.origin + ": " + problem);
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

// "system_gpu_count>=4, system_gpu_count<=4, gpu=*b200*, stage=pre_merge": a test-db
// block's condition in one line, for the notes (the conditions are not evaluated).
std::string ConditionText(const YAML::Node& node, const std::string& key) {
  if (!node) return "";
  if (node.IsScalar()) {
    if (key == "gte") return ">=" + node.Scalar();
    if (key == "lte") return "<=" + node.Scalar();
    if (key == "gt") return ">" + node.Scalar();
    if (key == "lt") return "<" + node.Scalar();
    return "=" + node.Scalar();
  }
  std::string text;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      text += (text.empty() ? "" : "|") + (item.IsScalar() ? item.Scalar() : std::string("..."));
    }
    return "=" + text;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.IsScalar() ? entry.first.Scalar() : "?";
    const bool level = name == "ranges" || name == "wildcards" || name == "terms";
    std::string part = ConditionText(entry.second, name);
    if (part.empty()) continue;
    if (!level && entry.second.IsMap()) {
      // system_gpu_count: {gte: 4, lte: 4} -> system_gpu_count>=4, system_gpu_count<=4
      std::string named;
      for (const auto& bound : entry.second) {
        named += (named.empty() ? "" : ", ") + name +
                 ConditionText(bound.second, bound.first.IsScalar() ? bound.first.Scalar() : "");
      }
      part = named;
    } else if (!level) {
      part = name + part;
    }
    text += (text.empty() ? "" : ", ") + part;
  }
  return text;
}

// The GPU count a test-db block's condition gives its tests, as TensorRT-LLM's blocks
// state it: `ranges: {system_gpu_count: {gte: N, lte: N}}` (gte, else lte, else an exact
// `terms: {system_gpu_count: N}`). Nothing when the block does not say or says it badly
// (then the test's own markers size it).
std::optional<int> BlockGpuCount(const YAML::Node& condition) {
  if (!condition || !condition.IsMap()) return std::nullopt;
  auto parse = [](const YAML::Node& node) -> std::optional<int> {
    if (!node || !node.IsScalar()) return std::nullopt;
    const std::string& text = node.Scalar();
    if (text.empty() || text.size() > 4 ||
        !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
      return std::nullopt;
    }
    const int value = std::stoi(text);
    return value > 0 ? std::optional<int>(value) : std::nullopt;
  };
  const YAML::Node ranges = condition["ranges"];
  if (ranges && ranges.IsMap()) {
    const YAML::Node count = ranges["system_gpu_count"];
    if (count && count.IsMap()) {
      if (std::optional<int> gte = parse(count["gte"])) return gte;
      if (std::optional<int> lte = parse(count["lte"])) return lte;
    }
  }
  const YAML::Node terms = condition["terms"];
  if (terms && terms.IsMap()) return parse(terms["system_gpu_count"]);
  return std::nullopt;
}

// A test-db YAML (tests/integration/test_lists/test-db/*.yml): `version:` and one or more
// lists of blocks {condition: ..., tests: [lines]}. Every block's tests are read, in file
// order; each case's notes name its block and condition, which is not evaluated here.
Result<std::vector<CaseEntry>> ParseTestDbCases(const YAML::Node& root, const std::string& origin,
                                                const CaseRequest& shared) {
  std::vector<CaseEntry> cases;
  std::vector<std::string> problems;
  int index = 0;
  for (const auto& list : root) {
    const std::string list_name = list.first.IsScalar() ? list.first.Scalar() : "";
    if (list_name == "version") continue;
    if (!list.second.IsSequence()) {
      return Status::InvalidInput(YamlWhere(origin, list.first.Mark()) + ": test-db key '" +
                                      EscapeControl(list_name) +
                                      "' must be a list of blocks {condition: ..., tests: [...]}",
                                  "a test-db YAML is `version:` and lists of such blocks, as in "
                                  "tests/integration/test_lists/test-db/");
    }
    int block = 0;
    for (const auto& item : list.second) {
      ++block;
      const std::string block_name = EscapeControl(list_name) + "[" + std::to_string(block) + "]";
      if (!item.IsMap() || !item["tests"]) {
        problems.push_back(YamlWhere(origin, item.Mark()) + ": block " + block_name +
                           " has no `tests:` list");
        continue;
      }
      const YAML::Node tests = item["tests"];
      if (tests.IsNull()) continue;
      if (!tests.IsSequence()) {
        problems.push_back(YamlWhere(origin, tests.Mark()) + ": `tests:` of block " + block_name +
                           " must be a list of test-list lines");
        continue;
      }
      const std::string condition = ConditionText(item["condition"], "");
      const std::optional<int> gpu_count = BlockGpuCount(item["condition"]);
      const std::string note = "read from test-db block " + block_name + " of " + origin +
                               " (condition: " + (condition.empty() ? "none" : condition) +
                               "; not evaluated here: every block's tests are read)";
      for (const auto& test : tests) {
        CaseEntry entry;
        entry.index = ++index;
        entry.origin = YamlWhere(origin, test.Mark()) + " (case " + std::to_string(index) + ")";
        if (!test.IsScalar() || Trim(test.Scalar()).empty()) {
          problems.push_back(entry.origin + ": a test of block " + block_name +
                             " must be one test-list line");
          continue;
        }
        entry.notes.push_back(note);
        if (std::string problem = LineCase(std::string(Trim(test.Scalar())), shared, &entry);
            !problem.empty()) {
          problems.push_back(entry.origin + ": " + problem);
          continue;
        }
        if (gpu_count && !entry.request.test_db_gpu_count) {
          entry.request.test_db_gpu_count = gpu_count;
        }
        cases.push_back(std::move(entry));
      }
    }
  }
  if (index == 0 && problems.empty()) {
    return Status::InvalidInput(origin + ": the test-db YAML lists no tests in any block");
  }
  if (!problems.empty()) return AllProblems(origin, problems, std::max<std::size_t>(index, 1));
  return cases;
}

// A test-db YAML rather than a cases mapping: `version:` beside lists of blocks.
bool IsTestDb(const YAML::Node& root) {
  if (!root.IsMap() || !root["version"]) return false;
  for (const auto& entry : root) {
    if (entry.second.IsSequence() && entry.second.size() > 0 && entry.second[0].IsMap() &&
        (entry.second[0]["tests"] || entry.second[0]["condition"])) {
      return true;
    }
  }
  return false;
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
    try {
      if (IsTestDb(root)) {
        TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, origin));
        return ParseTestDbCases(root, origin, shared);
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidInput(origin + ": " + e.what());
    }
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
