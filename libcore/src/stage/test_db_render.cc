// Rendering a test-db YAML with CI's condition semantics (see test_db_render.h).
#include "stage/test_db_render.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "model/yaml_util.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

constexpr char kConditionForms[] =
    "a test-db condition is {terms: {key: value}, ranges: {key: {gte: N, lte: M}}, "
    "wildcards: {key: pattern or [patterns]}}, as in tests/integration/test_lists/test-db/";

struct Check {
  bool holds = true;
  std::string text;  // "stage=pre_merge", "system_gpu_count=4 not in [2, 2]"
};

// The checks of one block's condition against `keys`; keys the condition names that
// `keys` lacks go to `unknown`. kInvalidInput for a condition of the wrong shape.
Result<std::vector<Check>> Evaluate(const YAML::Node& condition, const std::string& origin,
                                    const std::string& where,
                                    const std::map<std::string, std::string>& keys,
                                    std::vector<std::string>* unknown) {
  std::vector<Check> checks;
  if (!condition || condition.IsNull()) return checks;
  if (!condition.IsMap()) {
    return Status::InvalidInput(
        where + ": `condition:` must be a mapping, got " + YamlNodeKind(condition),
        kConditionForms);
  }
  auto bad = [&](const YAML::Node& node, const std::string& what) {
    return Status::InvalidInput(YamlWhere(origin, node.Mark()) + ": " + what, kConditionForms);
  };
  for (const auto& kind_entry : condition) {
    const std::string kind = kind_entry.first.as<std::string>("");
    const YAML::Node& body = kind_entry.second;
    if (kind != "terms" && kind != "ranges" && kind != "wildcards") {
      return bad(kind_entry.first, "condition kind '" + EscapeControl(kind) +
                                       "' is not one of terms, ranges, wildcards");
    }
    if (body.IsNull()) continue;
    if (!body.IsMap()) {
      return bad(body, "`" + kind + ":` must be a mapping of keys, got " + YamlNodeKind(body));
    }
    for (const auto& entry : body) {
      const std::string key = entry.first.as<std::string>("");
      const YAML::Node& want = entry.second;
      auto have = keys.find(key);
      Check check;
      if (kind == "terms") {
        if (!want.IsScalar()) {
          return bad(want, "terms." + EscapeControl(key) + " must be one value, got " +
                               YamlNodeKind(want));
        }
        if (have == keys.end()) {
          unknown->push_back(key);
          continue;
        }
        const std::string& value = want.Scalar();
        const bool boolean = AsciiLower(value) == "true" || AsciiLower(value) == "false";
        check.holds =
            boolean ? AsciiLower(have->second) == AsciiLower(value) : have->second == value;
        check.text = key + "=" + have->second + (check.holds ? "" : ", not " + value);
      } else if (kind == "ranges") {
        if (!want.IsMap()) {
          return bad(want, "ranges." + EscapeControl(key) + " must be {gte: N, lte: M}, got " +
                               YamlNodeKind(want));
        }
        std::optional<long long> gte, lte;
        for (const auto& bound : want) {
          const std::string name = bound.first.as<std::string>("");
          std::optional<long long> n =
              bound.second.IsScalar()
                  ? ParseInteger(bound.second.Scalar(), -1000000000LL, 1000000000LL)
                  : std::nullopt;
          if (name != "gte" && name != "lte") {
            return bad(bound.first, "ranges." + EscapeControl(key) + " bound '" +
                                        EscapeControl(name) + "' is not gte or lte");
          }
          if (!n) {
            return bad(bound.second,
                       "ranges." + EscapeControl(key) + "." + name + " must be a whole number");
          }
          (name == "gte" ? gte : lte) = n;
        }
        if (have == keys.end()) {
          unknown->push_back(key);
          continue;
        }
        const std::string interval = "[" + (gte ? std::to_string(*gte) : std::string("-inf")) +
                                     ", " + (lte ? std::to_string(*lte) : std::string("inf")) + "]";
        std::optional<long long> value = ParseInteger(have->second, -1000000000LL, 1000000000LL);
        check.holds = value && (!gte || *value >= *gte) && (!lte || *value <= *lte);
        check.text = key + "=" + have->second + (check.holds ? " in " : " not in ") + interval;
      } else {  // wildcards
        std::vector<std::string> patterns;
        if (want.IsScalar()) {
          patterns.push_back(want.Scalar());
        } else if (want.IsSequence()) {
          for (const auto& pattern : want) {
            if (!pattern.IsScalar()) {
              return bad(pattern, "wildcards." + EscapeControl(key) +
                                      " must be a pattern or a list of patterns");
            }
            patterns.push_back(pattern.Scalar());
          }
        } else {
          return bad(want, "wildcards." + EscapeControl(key) +
                               " must be a pattern or a list of patterns, got " +
                               YamlNodeKind(want));
        }
        if (have == keys.end()) {
          unknown->push_back(key);
          continue;
        }
        const std::string value = AsciiLower(have->second);
        std::string list;
        check.holds = false;
        for (const std::string& pattern : patterns) {
          list += (list.empty() ? "'" : ", '") + pattern + "'";
          if (::fnmatch(AsciiLower(pattern).c_str(), value.c_str(), 0) == 0) check.holds = true;
        }
        check.text =
            key + "=" + have->second + (check.holds ? " matches " : " matches none of ") + list;
      }
      checks.push_back(std::move(check));
    }
  }
  return checks;
}

}  // namespace

std::string CiNodeId(std::string_view line_text) {
  std::string_view text = Trim(line_text);
  std::size_t end = text.size();
  for (const char* marker : {" XFAIL", " SKIP", " UNSTABLE", " TIMEOUT", " ISOLATION"}) {
    end = std::min(end, text.find(marker));
  }
  std::string id(Trim(text.substr(0, end)));
  if (id.rfind("full:", 0) == 0 && id.find('/') != std::string::npos) {
    id = id.substr(id.find('/') + 1);
  }
  if (id.rfind("unittest/", 0) == 0) id = "test_unittests.py::test_unittests_v2[" + id + "]";
  return id;
}

std::string TestListKey(const TestListLine& line) {
  TestListLine key;
  key.id = line.id;
  key.k_expr = line.k_expr;
  key.m_expr = line.m_expr;
  return FormatTestListLine(key);
}

std::string KeysText(const std::map<std::string, std::string>& keys) {
  std::string text;
  for (const auto& [key, value] : keys) text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text;
}

Result<RenderedTestDb> RenderTestDb(const std::string& yaml_text, const std::string& origin,
                                    const std::string& context,
                                    const std::map<std::string, std::string>& keys) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& error) {
    return Status::InvalidInput(origin + ":" + std::to_string(error.mark.line + 1) +
                                ": not YAML: " + error.msg);
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckYamlNodeLimits(root, origin));
  const std::string forms =
      "a test-db YAML is `version:` and `<context>:` with a list of blocks {condition: ..., "
      "tests: [...]}, as in tests/integration/test_lists/test-db/";
  if (!root.IsMap() || !root[context]) {
    return Status::InvalidInput(
        origin + ": has no `" + EscapeControl(context) + ":` list of blocks", forms);
  }
  const YAML::Node blocks = root[context];
  if (!blocks.IsSequence()) {
    return Status::InvalidInput(YamlWhere(origin, blocks.Mark()) + ": `" + EscapeControl(context) +
                                    ":` must be a list of blocks, got " + YamlNodeKind(blocks),
                                forms);
  }
  RenderedTestDb rendered;
  std::set<std::string> listed;
  int number = 0;
  for (const auto& block : blocks) {
    ++number;
    const std::string where = YamlWhere(origin, block.Mark());
    if (!block.IsMap()) {
      return Status::InvalidInput(where + ": block " + std::to_string(number) +
                                      " must be a mapping {condition: ..., tests: [...]}",
                                  forms);
    }
    const YAML::Node tests = block["tests"];
    if (tests && !tests.IsNull() && !tests.IsSequence()) {
      return Status::InvalidInput(YamlWhere(origin, tests.Mark()) + ": `tests:` of block " +
                                      std::to_string(number) + " must be a list of test-list lines",
                                  forms);
    }
    std::vector<std::string> unknown;
    Result<std::vector<Check>> checks = Evaluate(block["condition"], origin, where, keys, &unknown);
    if (!checks.ok()) return checks.status();
    const bool matched =
        std::all_of(checks->begin(), checks->end(), [](const Check& check) { return check.holds; });
    const std::size_t count = tests && tests.IsSequence() ? tests.size() : 0;
    std::string line =
        "block " + std::to_string(number) + " (" +
        where.substr(where.rfind('/') == std::string::npos ? 0 : where.rfind('/') + 1) + ", " +
        std::to_string(count) + (count == 1 ? " test" : " tests") + "): ";
    std::string shown;
    for (const Check& check : *checks) {
      if (matched || !check.holds) shown += (shown.empty() ? "" : "; ") + check.text;
    }
    if (!block["condition"]) shown = "no condition";
    line += matched ? "matched" : "not matched";
    if (!shown.empty()) line += ": " + shown;
    if (matched && !unknown.empty()) {
      std::string names;
      for (const std::string& key : unknown) names += (names.empty() ? "" : ", ") + key;
      line += "; not known here, assumed to match: " + names;
    }
    rendered.explained.push_back(EscapeControl(line));
    if (!matched || count == 0) continue;
    for (const auto& test : tests) {
      const std::string test_where = YamlWhere(origin, test.Mark());
      if (!test.IsScalar() || Trim(test.Scalar()).empty()) {
        return Status::InvalidInput(test_where + ": a test of block " + std::to_string(number) +
                                        " must be one test-list line",
                                    forms);
      }
      Result<std::optional<TestListLine>> parsed = ParseTestListLine(test.Scalar());
      if (!parsed.ok()) return parsed.status().WithContext(test_where);
      if (!parsed.value()) {
        return Status::InvalidInput(test_where + ": '" + EscapeControl(test.Scalar()) +
                                        "' is not a test id (file.py::Class::test[params] or a "
                                        "unittest/ path)",
                                    forms);
      }
      TestListLine list_line = std::move(*parsed.value());
      const std::string key = TestListKey(list_line);
      if (!listed.insert(key).second) {
        rendered.warnings.push_back(test_where + ": " + EscapeControl(key) +
                                    " is listed again by a matched block: it runs once");
        continue;
      }
      rendered.tests.push_back({std::move(list_line), test_where, CiNodeId(test.Scalar())});
    }
  }
  return rendered;
}

}  // namespace trtllm_run
