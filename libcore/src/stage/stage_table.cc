// The stage table of jenkins/L0_Test.groovy (see stage_table.h).
#include "stage/stage_table.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>
#include <set>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

// One value of a Groovy list literal as this reader needs it.
struct Element {
  bool is_string = false;
  std::string text;  // the string's contents, or the token as written
};

// The text with comments blanked out (same length, newlines kept, so offsets keep their
// line numbers). `//` starts a comment outside double-quoted strings; so does `/*` up to
// `*/`. Strings are tracked per line: Groovy's multi-line strings hold no stage entries.
std::string WithoutComments(std::string_view text) {
  std::string out(text);
  bool in_block = false;
  bool in_string = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (c == '\n') {
      in_string = false;
      continue;
    }
    if (in_block) {
      if (c == '*' && i + 1 < out.size() && out[i + 1] == '/') {
        out[i] = out[i + 1] = ' ';
        ++i;
        in_block = false;
      } else {
        out[i] = ' ';
      }
      continue;
    }
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
      --i;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      out[i] = out[i + 1] = ' ';
      ++i;
      in_block = true;
    }
  }
  return out;
}

// Reads a double-quoted string at text[*at] == '"'; its contents, *at past the closing
// quote. nullopt when it is not closed on its line.
std::optional<std::string> ReadString(std::string_view text, std::size_t* at) {
  std::string value;
  for (std::size_t i = *at + 1; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      value += text[++i];
    } else if (text[i] == '"') {
      *at = i + 1;
      return value;
    } else {
      value += text[i];
    }
  }
  return std::nullopt;
}

void SkipBlanks(std::string_view text, std::size_t* at) {
  while (*at < text.size() && IsBlank(text[*at])) ++*at;
}

// Reads comma-separated elements up to `close` (']' or ')'), *at past it. Nested
// brackets, braces and parentheses make the list not one this reader wants (nullopt).
std::optional<std::vector<Element>> ReadElements(std::string_view text, std::size_t* at,
                                                 char close) {
  std::vector<Element> elements;
  std::size_t i = *at;
  while (true) {
    SkipBlanks(text, &i);
    if (i >= text.size()) return std::nullopt;
    if (text[i] == close && elements.empty()) {
      *at = i + 1;
      return elements;
    }
    Element element;
    if (text[i] == '"') {
      std::optional<std::string> value = ReadString(text, &i);
      if (!value) return std::nullopt;
      element.is_string = true;
      element.text = *value;
    } else {
      const std::size_t start = i;
      while (i < text.size() && text[i] != ',' && text[i] != close && !IsBlank(text[i])) {
        if (std::string_view("[](){}\"").find(text[i]) != std::string_view::npos) {
          return std::nullopt;
        }
        ++i;
      }
      element.text = std::string(text.substr(start, i - start));
      if (element.text.empty()) return std::nullopt;
    }
    elements.push_back(std::move(element));
    SkipBlanks(text, &i);
    if (i >= text.size()) return std::nullopt;
    if (text[i] == close) {
      *at = i + 1;
      return elements;
    }
    if (text[i] != ',') return std::nullopt;
    ++i;
  }
}

std::optional<int> Number(const Element& element) {
  if (element.is_string) return std::nullopt;
  std::optional<long long> n = ParseInteger(element.text, 0, 100000);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

int LineOf(std::string_view text, std::size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// ["platform", "context", split id, split count, gpus?, nodes?, ...] as an entry.
std::optional<StageEntry> EntryFrom(const std::string& name, const std::vector<Element>& values) {
  if (values.size() < 4 || !values[0].is_string || !values[1].is_string) return std::nullopt;
  std::optional<int> split_id = Number(values[2]);
  std::optional<int> split_count = Number(values[3]);
  if (!split_id || !split_count || *split_id < 1 || *split_count < *split_id) return std::nullopt;
  StageEntry entry;
  entry.name = name;
  entry.platform = values[0].text;
  entry.context = values[1].text;
  entry.split_id = *split_id;
  entry.split_count = *split_count;
  if (values.size() > 4) {
    if (std::optional<int> gpus = Number(values[4]); gpus && *gpus > 0) entry.gpu_count = *gpus;
  }
  if (values.size() > 5) {
    if (std::optional<int> nodes = Number(values[5]); nodes && *nodes > 0) {
      entry.node_count = *nodes;
    }
  }
  return entry;
}

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The value of `name` where the text before `before` last sets it to a number
// (`def numMultiNodeTests = 9`, `count = 3`), or the number `name` itself.
std::optional<int> NumberOrVariable(std::string_view text, std::size_t before,
                                    const std::string& name) {
  if (std::optional<long long> n = ParseInteger(name, 0, 100000)) return static_cast<int>(*n);
  if (name.empty()) return std::nullopt;
  std::optional<int> value;
  const std::string_view head = text.substr(0, before);
  for (std::size_t at = head.find(name); at != std::string_view::npos;
       at = head.find(name, at + 1)) {
    if (at > 0 && (IsIdentifierChar(head[at - 1]) || head[at - 1] == '.')) continue;
    std::size_t i = at + name.size();
    if (i < head.size() && IsIdentifierChar(head[i])) continue;
    while (i < head.size() && (head[i] == ' ' || head[i] == '\t')) ++i;
    if (i >= head.size() || head[i] != '=' || (i + 1 < head.size() && head[i + 1] == '=')) {
      continue;
    }
    ++i;
    while (i < head.size() && (head[i] == ' ' || head[i] == '\t')) ++i;
    std::size_t digits = i;
    while (digits < head.size() && std::isdigit(static_cast<unsigned char>(head[digits]))) {
      ++digits;
    }
    if (digits == i || (digits < head.size() && IsIdentifierChar(head[digits]))) continue;
    if (std::optional<long long> n = ParseInteger(head.substr(i, digits - i), 0, 100000)) {
      value = static_cast<int>(*n);
    }
  }
  return value;
}

// Skips blanks, then reads `word` at *at (advancing past it); false when it is not there.
bool Expect(std::string_view text, std::size_t* at, std::string_view word) {
  SkipBlanks(text, at);
  if (text.compare(*at, word.size(), word) != 0) return false;
  *at += word.size();
  return true;
}

// Skips blanks, then reads an identifier or a number at *at.
std::string Word(std::string_view text, std::size_t* at) {
  SkipBlanks(text, at);
  const std::size_t start = *at;
  while (*at < text.size() && IsIdentifierChar(text[*at])) ++*at;
  return std::string(text.substr(start, *at - start));
}

// The entries of `(1..N).collectEntries { i -> ["<name>-${i}".toString(), [values]] }`
// (L0_Test.groovy's generated families, e.g. its multi-node stages): one entry per i, the
// loop variable and N substituted in the name and the values. N may be a variable set to
// a number earlier in the text. Read by hand, without recursion, whatever the input.
void ReadRangeFamilies(std::string_view view, const std::function<void(StageEntry)>& add) {
  constexpr std::string_view kCollect = ".collectEntries";
  for (std::size_t at = view.find(kCollect); at != std::string_view::npos;
       at = view.find(kCollect, at + 1)) {
    // Backwards: `(A..B)` right before it.
    std::size_t close = at;
    while (close > 0 && IsBlank(view[close - 1])) --close;
    if (close == 0 || view[close - 1] != ')') continue;
    const std::size_t open = view.rfind('(', close - 1);
    if (open == std::string_view::npos || close - open > 200) continue;
    std::size_t i = open + 1;
    const std::string first_word = Word(view, &i);
    if (!Expect(view, &i, "..")) continue;
    const std::string count_name = Word(view, &i);
    if (!Expect(view, &i, ")") || i != close) continue;
    // Forwards: `{ i -> ["name".toString(), [values]]`.
    std::size_t j = at + kCollect.size();
    if (!Expect(view, &j, "{")) continue;
    const std::string loop = Word(view, &j);
    if (loop.empty() || !Expect(view, &j, "->") || !Expect(view, &j, "[")) continue;
    SkipBlanks(view, &j);
    if (j >= view.size() || view[j] != '"') continue;
    std::optional<std::string> name_template = ReadString(view, &j);
    if (!name_template) continue;
    std::size_t after_name = j;
    if (!Expect(view, &after_name, ".toString()")) after_name = j;
    j = after_name;
    if (!Expect(view, &j, ",") || !Expect(view, &j, "[")) continue;
    std::optional<std::vector<Element>> raw = ReadElements(view, &j, ']');
    if (!raw || !Expect(view, &j, "]")) continue;
    std::optional<int> first = NumberOrVariable(view, open, first_word);
    std::optional<int> last = NumberOrVariable(view, open, count_name);
    if (!first || !last) continue;
    for (int k = *first; k <= *last && k - *first < 1000; ++k) {
      const std::string number = std::to_string(k);
      std::string name = *name_template;
      for (const std::string& placeholder : {"${" + loop + "}", "$" + loop}) {
        for (std::size_t pos = name.find(placeholder); pos != std::string::npos;
             pos = name.find(placeholder, pos + number.size())) {
          name.replace(pos, placeholder.size(), number);
        }
      }
      std::vector<Element> values;
      bool readable = true;
      for (Element value : *raw) {
        if (!value.is_string && value.text == loop) value.text = number;
        if (!value.is_string && value.text == count_name) value.text = std::to_string(*last);
        readable &= value.is_string || Number(value).has_value() || value.text == "true" ||
                    value.text == "false";
        values.push_back(std::move(value));
      }
      if (!readable) break;
      if (std::optional<StageEntry> entry = EntryFrom(name, values)) {
        entry->line = LineOf(view, open);
        add(std::move(*entry));
      }
    }
  }
}

}  // namespace

std::vector<StageEntry> ReadStageTable(std::string_view groovy) {
  const std::string text = WithoutComments(groovy);
  const std::string_view view(text);
  std::vector<StageEntry> entries;
  std::set<std::string> seen;
  auto add = [&](StageEntry entry) {
    if (seen.insert(entry.name).second) entries.push_back(std::move(entry));
  };
  constexpr std::string_view kBuild = "buildStageConfigs";
  std::size_t i = 0;
  while (i < view.size()) {
    if (view[i] == '"') {
      const std::size_t start = i;
      std::optional<std::string> name = ReadString(view, &i);
      if (!name) {
        ++i;
        continue;
      }
      std::size_t j = i;
      SkipBlanks(view, &j);
      if (j >= view.size() || view[j] != ':') continue;
      ++j;
      SkipBlanks(view, &j);
      if (j >= view.size() || view[j] != '[') continue;
      ++j;
      std::optional<std::vector<Element>> values = ReadElements(view, &j, ']');
      if (!values) continue;
      if (std::optional<StageEntry> entry = EntryFrom(*name, *values)) {
        entry->line = LineOf(view, start);
        add(std::move(*entry));
      }
      i = j;
      continue;
    }
    if (view.compare(i, kBuild.size(), kBuild) == 0 && (i == 0 || !IsIdentifierChar(view[i - 1]))) {
      const std::size_t start = i;
      std::size_t j = i + kBuild.size();
      // `def buildStageConfigs(stageName, ...)` declares it: its parameters are not strings.
      SkipBlanks(view, &j);
      if (j < view.size() && view[j] == '(') {
        ++j;
        std::optional<std::vector<Element>> args = ReadElements(view, &j, ')');
        if (args && args->size() >= 6 && (*args)[0].is_string && (*args)[1].is_string &&
            (*args)[2].is_string) {
          std::optional<int> count = Number((*args)[3]);
          for (int k = 1; count && k <= *count && k <= 1000; ++k) {
            std::vector<Element> values = {
                (*args)[1], (*args)[2], Element{false, std::to_string(k)},
                (*args)[3], (*args)[4], (*args)[5]};
            if (std::optional<StageEntry> entry =
                    EntryFrom((*args)[0].text + "-" + std::to_string(k), values)) {
              entry->line = LineOf(view, start);
              add(std::move(*entry));
            }
          }
          i = j;
          continue;
        }
      }
      i = start + kBuild.size();
      continue;
    }
    ++i;
  }
  ReadRangeFamilies(view, add);
  return entries;
}

std::string StageGpuSegment(std::string_view name) {
  return std::string(name.substr(0, name.find('-')));
}

std::map<std::string, std::string> MatchKeysFromStageName(std::string_view name) {
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  std::map<std::string, std::string> keys;
  keys["stage"] = has("Post-Merge") ? "post_merge" : "pre_merge";
  static const std::pair<const char*, const char*> kBackends[] = {
      {"-PyTorch-", "pytorch"}, {"-TensorRT-", "tensorrt"}, {"-CPP-", "cpp"},
      {"-Triton-", "triton"},   {"-FMHA-", "fmha"},         {"-AutoDeploy-", "autodeploy"},
      {"-Verl-", "verl"}};
  for (const auto& [part, backend] : kBackends) {
    if (has(part)) {
      keys["backend"] = backend;
      break;
    }
  }
  keys["auto_trigger"] = has("-DeepSeek-") ? "deepseek" : has("-GptOss-") ? "gpt_oss" : "others";
  keys["orchestrator"] = has("-Ray-") ? "ray" : "mpi";
  // <GPU>-<N>_GPUs: the first '-'-free word followed by -<digits>_GPUs.
  std::size_t at = 0;
  while ((at = name.find("_GPUs", at)) != std::string_view::npos) {
    std::size_t digits = at;
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
    if (digits < at && digits >= 2 && name[digits - 1] == '-') {
      const std::size_t gpu_end = digits - 1;
      std::size_t gpu_start = gpu_end;
      while (gpu_start > 0 && name[gpu_start - 1] != '-') --gpu_start;
      if (gpu_start < gpu_end) {
        keys["gpu"] = AsciiLower(name.substr(gpu_start, gpu_end - gpu_start));
        keys["system_gpu_count"] = std::string(name.substr(digits, at - digits));
        break;
      }
    }
    at += 5;
  }
  return keys;
}

}  // namespace trtllm_run
