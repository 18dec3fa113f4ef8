// Reads GPU-count markers from Python test sources: logical lines (brackets, strings and
// continuations joined), decorators attached to their class or def, pytestmark
// assignments, and pytest.param(..., marks=...) entries matched to a node's [params].
#include "python_markers.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace pytest_markers {
namespace {

struct Statement {
  int indent = 0;
  std::string text;
};

// The index past the string literal starting at src[i] (a quote character).
size_t SkipString(const std::string& src, size_t i) {
  const char quote = src[i];
  const bool triple = src.compare(i, 3, std::string(3, quote)) == 0;
  size_t j = i + (triple ? 3 : 1);
  while (j < src.size()) {
    if (src[j] == '\\') {
      j += 2;
      continue;
    }
    if (triple) {
      if (src.compare(j, 3, std::string(3, quote)) == 0) return j + 3;
    } else if (src[j] == quote || src[j] == '\n') {
      return j + 1;
    }
    ++j;
  }
  return src.size();
}

std::vector<Statement> LogicalLines(const std::string& src) {
  std::vector<Statement> out;
  std::string current;
  int indent = -1;
  int column = 0;
  int depth = 0;
  auto flush = [&]() {
    size_t end = current.find_last_not_of(" \t\r");
    if (end != std::string::npos) out.push_back({indent, current.substr(0, end + 1)});
    current.clear();
    indent = -1;
    column = 0;
    depth = 0;
  };
  size_t i = 0;
  while (i < src.size()) {
    char c = src[i];
    if (indent < 0) {
      if (c == ' ') {
        ++column;
        ++i;
        continue;
      }
      if (c == '\t') {
        column += 8 - column % 8;
        ++i;
        continue;
      }
      if (c == '\n' || c == '\r') {
        column = 0;
        ++i;
        continue;
      }
      if (c == '#') {
        while (i < src.size() && src[i] != '\n') ++i;
        continue;
      }
      indent = column;
    }
    if (c == '#') {
      while (i < src.size() && src[i] != '\n') ++i;
    } else if (c == '\\' && i + 1 < src.size() && src[i + 1] == '\n') {
      current += ' ';
      i += 2;
    } else if (c == '"' || c == '\'') {
      size_t end = SkipString(src, i);
      current.append(src, i, end - i);
      i = end;
    } else if (c == '\n') {
      if (depth > 0) {
        current += ' ';
      } else {
        flush();
      }
      ++i;
    } else {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      current += c;
      ++i;
    }
  }
  flush();
  return out;
}

// The index just past the bracket matching text[open].
size_t MatchBracket(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size();) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      i = SkipString(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  return text.size();
}

struct Found {
  int devices = 0;
  std::string marker;
};

// Hand-written scanners for the marker syntax: linear in the text, no recursion, so any
// length of source is fine. "Word" characters and spaces are those of Python's \w and \s.
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsSpaceChar(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

size_t SkipSpaces(std::string_view text, size_t i) {
  while (i < text.size() && IsSpaceChar(text[i])) ++i;
  return i;
}

// Whether `word` occurs at `at` as a whole word start (no word character before it).
bool WordStartsAt(std::string_view text, size_t at, std::string_view word) {
  return text.compare(at, word.size(), word) == 0 && (at == 0 || !IsWordChar(text[at - 1]));
}

// A GPU-count marker found: its digits, and how to name it (without the spaces, newlines
// or comments it may have been written with).
struct Call {
  std::string_view digits;
  std::string shown;
};

// Every `name ( digits )` call in `text` (spaces allowed).
std::vector<Call> CountCalls(std::string_view text, std::string_view name) {
  std::vector<Call> calls;
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    if (!WordStartsAt(text, at, name)) continue;
    size_t i = SkipSpaces(text, at + name.size());
    if (i >= text.size() || text[i] != '(') continue;
    i = SkipSpaces(text, i + 1);
    const size_t digits_begin = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits_begin) continue;
    const std::string_view digits = text.substr(digits_begin, i - digits_begin);
    i = SkipSpaces(text, i);
    if (i >= text.size() || text[i] != ')') continue;
    calls.push_back({digits, std::string(name) + "(" + std::string(digits) + ")"});
    at = i;
  }
  return calls;
}

// Every `mark . gpuN` (N digits, then no word character) in `text`.
std::vector<Call> GpuMarks(std::string_view text) {
  std::vector<Call> marks;
  for (size_t at = text.find("mark"); at != std::string_view::npos;
       at = text.find("mark", at + 1)) {
    if (!WordStartsAt(text, at, "mark")) continue;
    size_t i = SkipSpaces(text, at + 4);
    if (i >= text.size() || text[i] != '.') continue;
    i = SkipSpaces(text, i + 1);
    if (text.compare(i, 3, "gpu") != 0) continue;
    i += 3;
    const size_t digits_begin = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits_begin || (i < text.size() && IsWordChar(text[i]))) continue;
    const std::string_view digits = text.substr(digits_begin, i - digits_begin);
    marks.push_back({digits, "mark.gpu" + std::string(digits)});
    at = i - 1;
  }
  return marks;
}

// The markers of one level (a def with its matched pytest.param, a class, the module), by
// kind: the repo's conftest reads each kind with get_closest_marker, so the closest level
// that has a kind decides it, kind by kind. Memory is read at every level (its fixture
// reads all markers) and the largest wins.
struct LevelMarks {
  Found device;      // skip_less_device(N)
  Found world_size;  // skip_less_mpi_world_size(N): N ranks, one GPU each
  Found gpu_mark;    // mark.gpuN, skip_single_gpu (2)
  Found memory;      // skip_less_device_memory(MiB)
  bool any() const { return device.devices || world_size.devices || gpu_mark.devices; }
};

void KeepLarger(Found* into, const Found& other) {
  if (other.devices > into->devices) *into = other;
}

void MergeLevel(LevelMarks* into, const LevelMarks& other) {
  KeepLarger(&into->device, other.device);
  KeepLarger(&into->world_size, other.world_size);
  KeepLarger(&into->gpu_mark, other.gpu_mark);
  KeepLarger(&into->memory, other.memory);
}

Found LargestCall(const std::vector<Call>& calls, long long limit) {
  Found best;
  for (const Call& call : calls) {
    std::optional<long long> parsed = ParseInteger(call.digits, 0, limit);
    if (!parsed) continue;
    int n = static_cast<int>(*parsed);
    if (n > best.devices) best = {n, call.shown};
  }
  return best;
}

LevelMarks ReadMarks(const std::string& text) {
  LevelMarks marks;
  // No test needs a million GPUs, nor a GPU of a terabyte... times a thousand.
  marks.device = LargestCall(CountCalls(text, "skip_less_device"), 999999);
  marks.world_size = LargestCall(CountCalls(text, "skip_less_mpi_world_size"), 999999);
  marks.gpu_mark = LargestCall(GpuMarks(text), 999999);
  marks.memory = LargestCall(CountCalls(text, "skip_less_device_memory"), 999999999);
  if (marks.gpu_mark.devices < 2) {
    static const std::string_view kSingle = "skip_single_gpu";
    for (size_t at = text.find(kSingle); at != std::string::npos; at = text.find(kSingle, at + 1)) {
      const size_t after = at + kSingle.size();
      if (WordStartsAt(text, at, kSingle) && (after == text.size() || !IsWordChar(text[after]))) {
        marks.gpu_mark = {2, "skip_single_gpu"};
        break;
      }
    }
  }
  return marks;
}

struct ParamSpan {
  size_t begin = 0, end = 0;  // "pytest.param(" ... ")"
};

std::vector<ParamSpan> ParamSpans(const std::string& text) {
  std::vector<ParamSpan> spans;
  for (size_t at = text.find("pytest"); at != std::string::npos; at = text.find("pytest", at + 1)) {
    if (!WordStartsAt(text, at, "pytest")) continue;
    size_t i = SkipSpaces(text, at + 6);
    if (i >= text.size() || text[i] != '.') continue;
    i = SkipSpaces(text, i + 1);
    if (text.compare(i, 5, "param") != 0) continue;
    i = SkipSpaces(text, i + 5);
    if (i >= text.size() || text[i] != '(') continue;
    if (!spans.empty() && at < spans.back().end) continue;  // nested in the previous one
    spans.push_back({at, MatchBracket(text, i)});
  }
  return spans;
}

// One top-level comma-separated item of a bracketed text: its trimmed text and where that
// starts in the text split.
struct Item {
  std::string text;
  size_t offset = 0;
};

// The top-level comma-separated items inside the bracket at text[open] (a trailing comma
// gives no empty item).
std::vector<Item> BracketItems(const std::string& text, size_t open) {
  std::vector<Item> items;
  if (open >= text.size()) return items;
  const size_t close = MatchBracket(text, open);
  const size_t inner_end = close > open + 1 ? close - 1 : open + 1;
  size_t start = open + 1;
  int depth = 0;
  auto push = [&](size_t end) {
    size_t b = start;
    while (b < end && IsSpaceChar(text[b])) ++b;
    size_t e = end;
    while (e > b && IsSpaceChar(text[e - 1])) --e;
    items.push_back({text.substr(b, e - b), b});
  };
  for (size_t i = open + 1; i < inner_end;) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      i = SkipString(text, i);
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      push(i);
      start = i + 1;
    }
    ++i;
  }
  push(std::min(inner_end, text.size()));
  if (!items.empty() && items.back().text.empty()) items.pop_back();
  return items;
}

// Top-level comma-separated arguments of "name(args)".
std::vector<std::string> Arguments(const std::string& call) {
  std::vector<std::string> args;
  size_t open = call.find('(');
  if (open == std::string::npos) return args;
  for (Item& item : BracketItems(call, open)) args.push_back(std::move(item.text));
  return args;
}

// The literal text of a Python string literal (prefixes r/b/u/f allowed), or nullopt.
std::optional<std::string> StringLiteral(const std::string& arg) {
  size_t q = arg.find_first_of("\"'");
  if (q == std::string::npos || q > 2) return std::nullopt;
  for (size_t i = 0; i < q; ++i) {
    if (std::string("rRbBuUfF").find(arg[i]) == std::string::npos) return std::nullopt;
  }
  if (SkipString(arg, q) != arg.size()) return std::nullopt;
  bool triple = arg.compare(q, 3, std::string(3, arg[q])) == 0;
  size_t skip = triple ? 3 : 1;
  if (arg.size() < q + 2 * skip) return std::nullopt;
  return arg.substr(q + skip, arg.size() - q - 2 * skip);
}

// One part of the id pytest makes for a pytest.param: its literal text, or any value
// (pytest names non-literal values itself: one or more characters other than '-').
struct IdPiece {
  bool any = false;
  std::string literal;
};

// Whether `pieces`, joined by '-', match `params` from `at` up to a '-' or the end.
bool PiecesMatchAt(const std::vector<IdPiece>& pieces, const std::string& params, size_t at) {
  size_t i = at;
  for (size_t p = 0; p < pieces.size(); ++p) {
    if (p > 0) {
      if (i >= params.size() || params[i] != '-') return false;
      ++i;
    }
    if (pieces[p].any) {
      // What follows is '-' or the end, so the value runs to the next '-': no choice.
      const size_t end = std::min(params.find('-', i), params.size());
      if (end == i) return false;
      i = end;
    } else {
      if (params.compare(i, pieces[p].literal.size(), pieces[p].literal) != 0) return false;
      i += pieces[p].literal.size();
    }
  }
  return i == params.size() || params[i] == '-';
}

// Whether `pieces` match a '-'-separated stretch of `params`: what `(^|-)pieces(-|$)`
// finds.
bool PiecesMatch(const std::vector<IdPiece>& pieces, const std::string& params) {
  for (size_t at = 0; at <= params.size(); ++at) {
    if ((at == 0 || params[at - 1] == '-') && PiecesMatchAt(pieces, params, at)) return true;
  }
  return false;
}

// `arg` when it is `name = value` (not `==`): the name, else "".
std::string KeywordName(const std::string& arg) {
  if (arg.empty() || !(std::isalpha(static_cast<unsigned char>(arg[0])) || arg[0] == '_')) {
    return "";
  }
  size_t i = 1;
  while (i < arg.size() && IsWordChar(arg[i])) ++i;
  const size_t name_end = i;
  i = SkipSpaces(arg, i);
  if (i >= arg.size() || arg[i] != '=' || (i + 1 < arg.size() && arg[i + 1] == '=')) return "";
  return arg.substr(0, name_end);
}

// A number or a name as pytest writes it into an id: [-+]?[\w.]+.
bool IsPlainValue(const std::string& arg) {
  size_t i = !arg.empty() && (arg[0] == '-' || arg[0] == '+') ? 1 : 0;
  if (i == arg.size()) return false;
  for (; i < arg.size(); ++i) {
    if (!IsWordChar(arg[i]) && arg[i] != '.') return false;
  }
  return true;
}

// Whether the pytest.param call selects the node's params: its id=, else the id the
// parametrize's ids=[...] list gives its position (`list_id`), else the id pytest makes from
// its literal values, as a `-`-separated part of the [params] text.
bool ParamMatches(const std::string& call, const std::string& params,
                  const std::optional<std::string>& list_id, std::string* id_text) {
  std::vector<IdPiece> pieces;
  for (const std::string& arg : Arguments(call)) {
    const std::string keyword = KeywordName(arg);
    if (!keyword.empty()) {
      if (keyword == "id") {
        size_t b = arg.find('=') + 1;
        while (b < arg.size() && arg[b] == ' ') ++b;
        std::optional<std::string> id = StringLiteral(arg.substr(b));
        if (!id) return false;
        *id_text = *id;
        return PiecesMatch({IdPiece{false, *id}}, params);
      }
      continue;
    }
    if (list_id) continue;  // an id= of its own is looked for; the values do not matter
    if (std::optional<std::string> literal = StringLiteral(arg)) {
      pieces.push_back({false, *literal});
    } else if (IsPlainValue(arg)) {
      pieces.push_back({false, arg});
    } else {
      pieces.push_back({true, ""});
    }
  }
  if (list_id) {
    *id_text = *list_id;
    return PiecesMatch({IdPiece{false, *list_id}}, params);
  }
  if (pieces.empty()) return false;
  std::string body;
  for (size_t i = 0; i < pieces.size(); ++i) {
    body += (i ? "-" : "") + (pieces[i].any ? std::string("[^-]+") : pieces[i].literal);
  }
  *id_text = body;
  return PiecesMatch(pieces, params);
}

struct Scope {
  int indent = 0;
  bool is_class = false;
  std::string name;
  std::vector<std::string> decorators;
  std::vector<std::string> pytestmarks;  // class body `pytestmark = ...`
};

bool StartsWithWord(const std::string& text, const std::string& word) {
  return text.compare(0, word.size(), word) == 0 &&
         (text.size() == word.size() || text[word.size()] == ' ' || text[word.size()] == '\t');
}

std::string DefinedName(const std::string& text, size_t after) {
  size_t b = text.find_first_not_of(" \t", after);
  if (b == std::string::npos) return "";
  size_t e = b;
  while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) {
    ++e;
  }
  return text.substr(b, e - b);
}

// `pytestmark = ...` or `pytestmark: <annotation> = ...`.
bool IsPytestmarkAssignment(const std::string& text) {
  if (text.compare(0, 10, "pytestmark") != 0) return false;
  size_t i = SkipSpaces(text, 10);
  if (i < text.size() && text[i] == ':') return text.find('=', i) != std::string::npos;
  return i < text.size() && text[i] == '=';
}

// The ids a parametrize's ids=[...] list gives the pytest.param entries of its argvalues
// list, by where each entry starts in `decorator`: pytest names the i-th entry ids[i] (an
// entry's own id= still wins). Entries whose id is not a string literal are left out.
std::map<size_t, std::string> ListIds(const std::string& decorator) {
  std::map<size_t, std::string> ids_by_offset;
  static const std::string_view kName = "parametrize";
  for (size_t at = decorator.find(kName); at != std::string::npos;
       at = decorator.find(kName, at + 1)) {
    if (!WordStartsAt(decorator, at, kName)) continue;
    const size_t open = SkipSpaces(decorator, at + kName.size());
    if (open >= decorator.size() || decorator[open] != '(') continue;
    std::optional<Item> values;
    std::optional<Item> ids;
    int positional = 0;
    for (const Item& arg : BracketItems(decorator, open)) {
      const std::string keyword = KeywordName(arg.text);
      if (keyword.empty()) {
        if (++positional == 2) values = arg;
      } else if (keyword == "argvalues" || keyword == "ids") {
        Item value = arg;
        const size_t skip = SkipSpaces(arg.text, arg.text.find('=') + 1);
        value.text = arg.text.substr(skip);
        value.offset = arg.offset + skip;
        (keyword == "ids" ? ids : values) = value;
      }
    }
    if (!values || !ids || values->text.empty() || ids->text.empty()) continue;
    if (std::string("[(").find(values->text[0]) == std::string::npos ||
        std::string("[(").find(ids->text[0]) == std::string::npos) {
      continue;
    }
    std::vector<Item> entries = BracketItems(decorator, values->offset);
    std::vector<Item> names = BracketItems(decorator, ids->offset);
    for (size_t i = 0; i < entries.size() && i < names.size(); ++i) {
      std::optional<std::string> name = StringLiteral(names[i].text);
      if (name && entries[i].text.compare(0, 6, "pytest") == 0) {
        ids_by_offset[entries[i].offset] = *name;
      }
    }
  }
  return ids_by_offset;
}

}  // namespace

NodeId ParseNodeId(const std::string& word) {
  NodeId node;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t sep = word.find("::", start);
    parts.push_back(word.substr(start, sep == std::string::npos ? sep : sep - start));
    if (sep == std::string::npos) break;
    start = sep + 2;
  }
  node.file = parts[0];
  if (parts.size() == 1) return node;
  std::string last = parts.back();
  size_t bracket = last.find('[');
  if (bracket != std::string::npos) {
    size_t close = last.rfind(']');
    node.params = last.substr(bracket + 1, close == std::string::npos || close < bracket
                                               ? std::string::npos
                                               : close - bracket - 1);
    last = last.substr(0, bracket);
  }
  bool last_is_class = bracket == std::string::npos && !last.empty() &&
                       std::isupper(static_cast<unsigned char>(last[0]));
  for (size_t i = 1; i + 1 < parts.size(); ++i) node.classes.push_back(parts[i]);
  if (last_is_class) {
    node.classes.push_back(last);
  } else {
    node.function = last;
  }
  return node;
}

Lookup FindDeviceMarker(const std::string& source, const NodeId& node) {
  std::vector<Scope> scopes;  // every class and def, in file order
  std::vector<size_t> stack;  // indices into scopes
  std::vector<std::string> module_marks;
  std::vector<std::string> pending;
  std::optional<size_t> target;        // the def (or the class for class nodes)
  std::vector<size_t> target_classes;  // its enclosing classes, outermost first

  for (const Statement& stmt : LogicalLines(source)) {
    while (!stack.empty() && stmt.indent <= scopes[stack.back()].indent) stack.pop_back();
    const std::string& text = stmt.text;
    if (text[0] == '@') {
      pending.push_back(text);
      continue;
    }
    bool is_async_def = StartsWithWord(text, "async") && text.find("def") != std::string::npos;
    bool is_def = StartsWithWord(text, "def") || is_async_def;
    bool is_class = StartsWithWord(text, "class");
    if (is_def || is_class) {
      Scope scope;
      scope.indent = stmt.indent;
      scope.is_class = is_class;
      scope.name = DefinedName(text, is_class ? 5 : text.find("def") + 3);
      scope.decorators = std::move(pending);
      pending.clear();
      scopes.push_back(std::move(scope));
      size_t index = scopes.size() - 1;
      // Is this the node? Its enclosing scopes must be exactly the node's classes.
      std::vector<std::string> chain;
      bool inside_def = false;
      for (size_t i : stack) {
        if (!scopes[i].is_class) inside_def = true;
        chain.push_back(scopes[i].name);
      }
      if (!inside_def) {
        bool match = false;
        if (!node.function.empty()) {
          match = is_def && scopes[index].name == node.function && chain == node.classes;
        } else if (!node.classes.empty()) {
          std::vector<std::string> outer(node.classes.begin(), node.classes.end() - 1);
          match = is_class && scopes[index].name == node.classes.back() && chain == outer;
        }
        if (match) {
          target = index;
          target_classes = stack;
        }
      }
      stack.push_back(index);
      continue;
    }
    pending.clear();
    if (IsPytestmarkAssignment(text)) {
      if (stack.empty()) {
        module_marks.push_back(text);
      } else if (scopes[stack.back()].is_class) {
        scopes[stack.back()].pytestmarks.push_back(text);
      }
    }
  }

  Lookup lookup;
  lookup.function_found = target.has_value() && !node.function.empty();
  // The levels, closest first, each with the words that name it in the source text.
  std::vector<std::pair<LevelMarks, std::string>> levels;
  if (target && !node.function.empty()) {
    const Scope& def = scopes[*target];
    LevelMarks own;
    LevelMarks param;
    std::string param_id;
    for (const std::string& decorator : def.decorators) {
      std::string without_params = decorator;
      std::vector<ParamSpan> spans = ParamSpans(decorator);
      const std::map<size_t, std::string> list_ids = ListIds(decorator);
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        std::string call = decorator.substr(it->begin, it->end - it->begin);
        std::string id_text;
        auto listed = list_ids.find(it->begin);
        std::optional<std::string> list_id;
        if (listed != list_ids.end()) list_id = listed->second;
        if (!node.params.empty() && ParamMatches(call, node.params, list_id, &id_text)) {
          LevelMarks found = ReadMarks(call);
          if (found.any() || found.memory.devices) {
            MergeLevel(&param, found);
            param_id = id_text;
          }
        }
        without_params.erase(it->begin, it->end - it->begin);
      }
      MergeLevel(&own, ReadMarks(without_params));
    }
    // The params' marks and the def's own are one level (both are the item's own markers);
    // each kind is named where its count came from.
    LevelMarks level = own;
    auto from_param = [&](Found* kind, const Found& in_param) {
      if (in_param.devices > kind->devices) {
        *kind = in_param;
        kind->marker += " in the pytest.param '" + param_id + "' of " + def.name;
      } else if (kind->devices > 0) {
        kind->marker += " on " + def.name;
      }
    };
    from_param(&level.device, param.device);
    from_param(&level.world_size, param.world_size);
    from_param(&level.gpu_mark, param.gpu_mark);
    from_param(&level.memory, param.memory);
    levels.emplace_back(level, "");
  }
  std::vector<size_t> classes = target_classes;
  if (target && scopes[*target].is_class) classes.push_back(*target);
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    const Scope& cls = scopes[*it];
    LevelMarks level;
    for (const std::string& text : cls.decorators) MergeLevel(&level, ReadMarks(text));
    for (const std::string& text : cls.pytestmarks) MergeLevel(&level, ReadMarks(text));
    levels.emplace_back(level, " on class " + cls.name);
  }
  LevelMarks module;
  for (const std::string& text : module_marks) MergeLevel(&module, ReadMarks(text));
  levels.emplace_back(module, " in the module's pytestmark");

  // Each kind from its closest level; the GPU count is the largest of the three kinds.
  std::optional<DeviceMarker> best;
  auto closest = [&](Found LevelMarks::*kind) {
    for (const auto& [level, where] : levels) {
      const Found& found = level.*kind;
      if (found.devices > 0) {
        if (!best || found.devices > best->devices) {
          best = DeviceMarker{found.devices, found.marker + where};
        }
        return;
      }
    }
  };
  closest(&LevelMarks::device);
  closest(&LevelMarks::world_size);
  closest(&LevelMarks::gpu_mark);
  lookup.marker = best;
  for (const auto& [level, where] : levels) {
    if (level.memory.devices > 0 &&
        (!lookup.memory_mib || level.memory.devices > lookup.memory_mib->devices)) {
      lookup.memory_mib = DeviceMarker{level.memory.devices, level.memory.marker + where};
    }
  }
  return lookup;
}

}  // namespace pytest_markers
}  // namespace trtllm_run
