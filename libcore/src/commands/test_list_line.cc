// TensorRT-LLM test-list lines (see test_list_line.h).
#include "trtllm_run/sdk/commands/test_list_line.h"

#include "commands/command_excerpt.h"
#include "trtllm_run/sdk/commands/command_parse.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

constexpr char kGrammar[] =
    "a test-list line is `[full:<GPU>/]<test id> [-k \"<expr>\"] [-m \"<expr>\"] "
    "[SKIP|XFAIL|UNSTABLE (<reason>)] [TIMEOUT (<minutes>)] [ISOLATION]`, as in "
    "TensorRT-LLM's tests/integration/test_lists";

// The end of the first word of `text`; blanks inside [parameters] do not end it.
std::size_t FirstWordEnd(std::string_view text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') ++depth;
    if (text[i] == ']' && depth > 0) --depth;
    if (depth == 0 && IsBlank(text[i])) return i;
  }
  return text.size();
}

// A unittest path that is a directory or a file pattern rather than a .py node id.
bool IsUnittestPath(std::string_view word) {
  if (word.rfind("unittest/", 0) != 0) return false;
  return word.find_first_of("'\"$`;&|<>()\\*?") == std::string_view::npos;
}

Status Bad(std::string_view line, const std::string& what) {
  return Status::InvalidInput(
      "test-list line '" + EscapeControl(CommandExcerpt(line)) + "': " + what, kGrammar);
}

// Reads "(...)" at `*at` (blanks before it skipped), balanced; the text inside. nullopt
// when no '(' comes next or it is never closed.
std::optional<std::string> ReadParenthesized(std::string_view text, std::size_t* at) {
  std::size_t i = *at;
  while (i < text.size() && IsBlank(text[i])) ++i;
  if (i >= text.size() || text[i] != '(') return std::nullopt;
  int depth = 0;
  for (std::size_t j = i; j < text.size(); ++j) {
    if (text[j] == '(') ++depth;
    if (text[j] == ')' && --depth == 0) {
      *at = j + 1;
      return std::string(Trim(text.substr(i + 1, j - i - 1)));
    }
  }
  // Unbalanced inside the reason (a URL with one '('): up to the last ')'.
  std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || close < i) return std::nullopt;
  *at = close + 1;
  return std::string(Trim(text.substr(i + 1, close - i - 1)));
}

// Reads a selector's value at `*at`: "quoted", 'quoted' or one bare word.
std::optional<std::string> ReadSelectorValue(std::string_view text, std::size_t* at) {
  std::size_t i = *at;
  while (i < text.size() && IsBlank(text[i])) ++i;
  if (i >= text.size()) return std::nullopt;
  if (text[i] == '"' || text[i] == '\'') {
    const char quote = text[i];
    std::string value;
    for (std::size_t j = i + 1; j < text.size(); ++j) {
      if (quote == '"' && text[j] == '\\' && j + 1 < text.size()) {
        value += text[++j];
      } else if (text[j] == quote) {
        *at = j + 1;
        return value;
      } else {
        value += text[j];
      }
    }
    return std::nullopt;  // unterminated
  }
  std::size_t end = i;
  while (end < text.size() && !IsBlank(text[end])) ++end;
  *at = end;
  return std::string(text.substr(i, end - i));
}

bool NextWordIs(std::string_view text, std::size_t at, std::string_view word) {
  if (text.compare(at, word.size(), word) != 0) return false;
  std::size_t after = at + word.size();
  return after == text.size() || IsBlank(text[after]) || text[after] == '(';
}

}  // namespace

const char* ListMarkerName(ListMarker marker) {
  switch (marker) {
    case ListMarker::kSkip:
      return "SKIP";
    case ListMarker::kXfail:
      return "XFAIL";
    case ListMarker::kUnstable:
      return "UNSTABLE";
    case ListMarker::kNone:
      break;
  }
  return "";
}

Result<std::optional<TestListLine>> ParseTestListLine(std::string_view line) {
  std::string_view text = Trim(line);
  TestListLine parsed;
  const bool prefixed = text.rfind("full:", 0) == 0;
  if (prefixed) {
    std::size_t slash = text.find('/');
    std::size_t blank = text.find_first_of(" \t");
    if (slash == std::string_view::npos || slash == 5 || (blank != text.npos && blank < slash)) {
      return Bad(line, "full: must be followed by <GPU>/ and the test id (full:B200/x.py::t)");
    }
    parsed.gpu_prefix = std::string(text.substr(5, slash - 5));
    text = text.substr(slash + 1);
  }
  const std::size_t id_end = FirstWordEnd(text);
  const std::string_view id = text.substr(0, id_end);
  const bool node_id = IsBareTestId(id) && id.rfind("test_e2e[", 0) != 0;
  if (!node_id && !IsUnittestPath(id)) {
    if (prefixed) return Bad(line, "'" + std::string(id) + "' after full:<GPU>/ is not a test id");
    return std::optional<TestListLine>();
  }
  parsed.id = std::string(id);
  // Words that only a list line has after the id: a command with these is not likely.
  const bool list_shaped = prefixed || id.find("::") != std::string_view::npos ||
                           parsed.IsUnittest() || text.find("${") != std::string_view::npos;
  std::size_t at = id_end;
  bool saw_marker = false;
  while (true) {
    while (at < text.size() && IsBlank(text[at])) ++at;
    if (at >= text.size()) break;
    const std::string_view rest = text.substr(at);
    if (rest.find("${") == 0 || rest.find("<%") == 0) {
      return Bad(line,
                 "holds a Mako template expression; this tool reads test lists without Mako: "
                 "render the list first (TensorRT-LLM's test_list_parser.py does) or write the "
                 "marker out");
    }
    if (NextWordIs(text, at, "-k") || NextWordIs(text, at, "-m")) {
      const bool k = text[at + 1] == 'k';
      at += 2;
      std::optional<std::string> value = ReadSelectorValue(text, &at);
      if (!value || value->empty()) {
        return Bad(line,
                   std::string(k ? "-k" : "-m") + " needs an expression, e.g. -k \"a and not b\"");
      }
      if ((k && parsed.k_expr) || (!k && parsed.m_expr)) {
        return Bad(line, std::string(k ? "-k" : "-m") + " is given twice");
      }
      (k ? parsed.k_expr : parsed.m_expr) = *value;
      continue;
    }
    ListMarker marker = NextWordIs(text, at, "SKIP")       ? ListMarker::kSkip
                        : NextWordIs(text, at, "XFAIL")    ? ListMarker::kXfail
                        : NextWordIs(text, at, "UNSTABLE") ? ListMarker::kUnstable
                                                           : ListMarker::kNone;
    if (marker != ListMarker::kNone) {
      if (parsed.marker != ListMarker::kNone) {
        return Bad(line, std::string("two of SKIP, XFAIL and UNSTABLE (") +
                             ListMarkerName(parsed.marker) + " and " + ListMarkerName(marker) +
                             "): give one");
      }
      parsed.marker = marker;
      at += std::string_view(ListMarkerName(marker)).size();
      std::size_t after = at;
      while (after < text.size() && IsBlank(text[after])) ++after;
      if (after < text.size() && text[after] == '(') {
        std::optional<std::string> reason = ReadParenthesized(text, &at);
        if (!reason)
          return Bad(line,
                     std::string(ListMarkerName(marker)) + "'s reason is not closed with ')'");
        parsed.reason = *reason;
      } else if (after < text.size() && !NextWordIs(text, after, "TIMEOUT") &&
                 !NextWordIs(text, after, "ISOLATION") && !NextWordIs(text, after, "-k") &&
                 !NextWordIs(text, after, "-m")) {
        return Bad(line, std::string("the reason of ") + ListMarkerName(marker) +
                             " goes in parentheses: " + ListMarkerName(marker) + " (reason)");
      }
      saw_marker = true;
      continue;
    }
    if (NextWordIs(text, at, "TIMEOUT")) {
      if (parsed.timeout_minutes) return Bad(line, "TIMEOUT is given twice");
      at += 7;
      std::optional<std::string> minutes = ReadParenthesized(text, &at);
      std::optional<long long> n = minutes ? ParseInteger(*minutes, 1, 100000) : std::nullopt;
      if (!n) {
        return Bad(line,
                   "TIMEOUT takes a whole number of minutes in parentheses, e.g. TIMEOUT (90), "
                   "got '" +
                       EscapeControl(minutes.value_or(std::string(Trim(text.substr(at))))) + "'");
      }
      parsed.timeout_minutes = static_cast<int>(*n);
      saw_marker = true;
      continue;
    }
    if (NextWordIs(text, at, "ISOLATION")) {
      parsed.isolation = true;
      at += 9;
      saw_marker = true;
      continue;
    }
    if (!list_shaped && !saw_marker && !parsed.k_expr && !parsed.m_expr) {
      return std::optional<TestListLine>();  // `tools/run.py --flag`: a command
    }
    std::string word(rest.substr(0, FirstWordEnd(rest)));
    return Bad(line,
               "'" + EscapeControl(word) + "' after the test id is neither -k/-m nor a marker");
  }
  return std::optional<TestListLine>(std::move(parsed));
}

std::string FormatTestListLine(const TestListLine& line) {
  std::string text = line.gpu_prefix.empty() ? "" : "full:" + line.gpu_prefix + "/";
  text += line.id;
  if (line.k_expr) text += " -k \"" + *line.k_expr + "\"";
  if (line.m_expr) text += " -m \"" + *line.m_expr + "\"";
  if (line.marker != ListMarker::kNone) {
    text += std::string(" ") + ListMarkerName(line.marker);
    if (!line.reason.empty()) text += " (" + line.reason + ")";
  }
  if (line.timeout_minutes) text += " TIMEOUT (" + std::to_string(*line.timeout_minutes) + ")";
  if (line.isolation) text += " ISOLATION";
  return text;
}

}  // namespace trtllm_run
