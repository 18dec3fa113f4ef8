// Quote-aware reading of shell command lines (see command_parse.h).
#include "trtllm_run/sdk/commands/command_parse.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>

#include "commands/command_excerpt.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

// A blank inside one line: space, \t, \r (a newline ends a command, so it is not one).
bool IsLineBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

Status Unterminated(const char* what, size_t at, std::string_view command) {
  return Status::InvalidInput("unterminated " + std::string(what) + " starting at character " +
                                  std::to_string(at + 1) +
                                  " of the command: " + CommandExcerpt(command),
                              "close it, or escape it with a backslash");
}

// Scanners over `s` from `i` (the opening character). Each returns the index just past
// the closing character, or npos when the construct is unterminated.
size_t ScanSingleQuoted(std::string_view s, size_t i) {
  size_t close = s.find('\'', i + 1);
  return close == std::string_view::npos ? close : close + 1;
}

size_t ScanBacktick(std::string_view s, size_t i) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == '`') {
      return j + 1;
    }
  }
  return std::string_view::npos;
}

size_t ScanDoubleQuoted(std::string_view s, size_t i);

// `s[i]` is '(' or '{' (after a '$', or a '<(' / '>(' process substitution).
size_t ScanBalanced(std::string_view s, size_t i) {
  const char open = s[i];
  const char close = open == '(' ? ')' : '}';
  int depth = 0;
  for (size_t j = i; j < s.size();) {
    char c = s[j];
    if (c == '\\') {
      j += 2;
    } else if (c == '\'') {
      j = ScanSingleQuoted(s, j);
      if (j == std::string_view::npos) return j;
    } else if (c == '"') {
      j = ScanDoubleQuoted(s, j);
      if (j == std::string_view::npos) return j;
    } else if (c == '`') {
      j = ScanBacktick(s, j);
      if (j == std::string_view::npos) return j;
    } else {
      if (c == open) ++depth;
      if (c == close && --depth == 0) return j + 1;
      ++j;
    }
  }
  return std::string_view::npos;
}

size_t ScanDoubleQuoted(std::string_view s, size_t i) {
  for (size_t j = i + 1; j < s.size();) {
    char c = s[j];
    if (c == '\\') {
      j += 2;
    } else if (c == '"') {
      return j + 1;
    } else if (c == '`') {
      j = ScanBacktick(s, j);
      if (j == std::string_view::npos) return j;
    } else if (c == '$' && j + 1 < s.size() && (s[j + 1] == '(' || s[j + 1] == '{')) {
      j = ScanBalanced(s, j + 1);
      if (j == std::string_view::npos) return j;
    } else {
      ++j;
    }
  }
  return std::string_view::npos;
}

// The unquoted value of a double-quoted string s[i..end) (end past the closing quote):
// backslash removes itself before $ ` " \ and newline; substitutions stay literal.
void AppendDoubleQuotedValue(std::string_view s, size_t i, size_t end, std::string* out) {
  for (size_t j = i + 1; j + 1 < end;) {
    char c = s[j];
    if (c == '\\' && j + 2 < end) {
      char e = s[j + 1];
      if (e == '\n') {
        j += 2;
        continue;
      }
      if (e == '$' || e == '`' || e == '"' || e == '\\') {
        *out += e;
        j += 2;
        continue;
      }
    }
    *out += c;
    ++j;
  }
}

// Scans one word from s[i]. Sets `*text` to its unquoted value and returns the index
// past it, or an error for an unterminated construct.
Result<size_t> ScanWord(std::string_view s, size_t i, std::string* text) {
  const size_t start = i;
  while (i < s.size()) {
    char c = s[i];
    if (IsLineBlank(c) || c == '\n' || c == ';' || c == '|' || c == '(' || c == ')') break;
    if (c == '&') {
      bool redirect = i > start && (s[i - 1] == '>' || s[i - 1] == '<');
      bool amp_redirect = i + 1 < s.size() && s[i + 1] == '>';
      if (!redirect && !amp_redirect) break;
      *text += c;
      ++i;
    } else if (c == '\\') {
      if (i + 1 >= s.size()) {
        *text += c;
        ++i;
      } else if (s[i + 1] == '\n') {
        i += 2;
      } else {
        *text += s[i + 1];
        i += 2;
      }
    } else if (c == '\'') {
      size_t end = ScanSingleQuoted(s, i);
      if (end == std::string_view::npos) return Unterminated("single quote", i, s);
      text->append(s.substr(i + 1, end - i - 2));
      i = end;
    } else if (c == '"') {
      size_t end = ScanDoubleQuoted(s, i);
      if (end == std::string_view::npos) return Unterminated("double quote", i, s);
      AppendDoubleQuotedValue(s, i, end, text);
      i = end;
    } else if (c == '`') {
      size_t end = ScanBacktick(s, i);
      if (end == std::string_view::npos) return Unterminated("backtick", i, s);
      text->append(s.substr(i, end - i));
      i = end;
    } else if ((c == '$' || c == '<' || c == '>') && i + 1 < s.size() &&
               (s[i + 1] == '(' || (c == '$' && s[i + 1] == '{'))) {
      size_t end = ScanBalanced(s, i + 1);
      if (end == std::string_view::npos) {
        return Unterminated(s[i + 1] == '(' ? "$( or ( substitution" : "${", i, s);
      }
      text->append(s.substr(i, end - i));
      i = end;
    } else {
      *text += c;
      ++i;
    }
  }
  return i;
}

std::string BaseName(const std::string& word) {
  size_t slash = word.find_last_of('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

// Index ranges [first, last) of the simple commands (runs of words) in `tokens`.
std::vector<std::pair<size_t, size_t>> SimpleCommands(const std::vector<ShellToken>& tokens) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t i = 0;
  while (i < tokens.size()) {
    if (tokens[i].kind != ShellToken::kWord) {
      ++i;
      continue;
    }
    size_t first = i;
    while (i < tokens.size() && tokens[i].kind == ShellToken::kWord) ++i;
    ranges.emplace_back(first, i);
  }
  return ranges;
}

// The token index of the program word of the last invocation of `program`, and the end
// of its simple command; nullopt when there is none.
std::optional<std::pair<size_t, size_t>> FindLastInvocation(const std::vector<ShellToken>& tokens,
                                                            std::string_view program) {
  std::optional<std::pair<size_t, size_t>> found;
  for (const auto& [first, last] : SimpleCommands(tokens)) {
    for (size_t i = first; i < last; ++i) {
      if (BaseName(tokens[i].text) == program) found = std::make_pair(i, last);
    }
  }
  return found;
}

// Trims blanks, newlines and backslash-newline continuations from both ends.
std::string_view TrimBlanksAndContinuations(std::string_view text) {
  while (true) {
    size_t before = text.size();
    if (!text.empty() && (IsLineBlank(text.front()) || text.front() == '\n')) {
      text.remove_prefix(1);
    } else if (text.size() >= 2 && text[0] == '\\' && text[1] == '\n') {
      text.remove_prefix(2);
    }
    if (text.size() >= 2 && text[text.size() - 2] == '\\' && text.back() == '\n') {
      text.remove_suffix(2);
    } else if (!text.empty() && (IsLineBlank(text.back()) || text.back() == '\n')) {
      text.remove_suffix(1);
    }
    if (text.size() == before) return text;
  }
}

}  // namespace

Result<std::vector<ShellToken>> TokenizeShell(std::string_view s) {
  std::vector<ShellToken> tokens;
  int depth = 0;
  size_t i = 0;
  auto push_operator = [&](std::string op, size_t begin, size_t end) {
    ShellToken token;
    token.kind = ShellToken::kOperator;
    token.text = std::move(op);
    token.begin = begin;
    token.end = end;
    token.depth = depth;
    tokens.push_back(std::move(token));
  };
  while (i < s.size()) {
    char c = s[i];
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (IsLineBlank(c)) {
      ++i;
    } else if (c == '\\' && next == '\n') {
      i += 2;
    } else if (c == '\n') {
      push_operator("\n", i, i + 1);
      ++i;
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if ((c == '&' && next == '&') || (c == '|' && next == '|') ||
               (c == ';' && next == ';') || (c == '|' && next == '&')) {
      push_operator(std::string(s.substr(i, 2)), i, i + 2);
      i += 2;
    } else if (c == ';' || c == '|' || (c == '&' && next != '>')) {
      push_operator(std::string(1, c), i, i + 1);
      ++i;
    } else if (c == '(') {
      push_operator("(", i, i + 1);
      ++depth;
      ++i;
    } else if (c == ')') {
      depth = std::max(0, depth - 1);
      push_operator(")", i, i + 1);
      ++i;
    } else {
      ShellToken token;
      token.begin = i;
      Result<size_t> end = ScanWord(s, i, &token.text);
      if (!end.ok()) return end.status();
      token.end = end.value();
      std::string_view raw = s.substr(token.begin, token.end - token.begin);
      if (raw == "}") depth = std::max(0, depth - 1);
      token.depth = depth;
      if (raw == "{") ++depth;
      tokens.push_back(std::move(token));
      i = end.value();
    }
  }
  return tokens;
}

Result<std::vector<std::string>> SplitTopLevelAnd(std::string_view command) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(command);
  if (!tokens.ok()) return tokens.status();
  std::vector<std::string> parts;
  size_t start = 0;
  auto add = [&](size_t end) -> Status {
    std::string_view part = TrimBlanksAndContinuations(command.substr(start, end - start));
    if (part.empty()) {
      return Status::InvalidInput("empty command next to '&&' in: " + CommandExcerpt(command),
                                  "write 'A && B' with a command on both sides");
    }
    parts.emplace_back(part);
    return Status::Ok();
  };
  for (const ShellToken& token : tokens.value()) {
    if (token.kind == ShellToken::kOperator && token.text == "&&" && token.depth == 0) {
      TRTLLM_RUN_RETURN_IF_ERROR(add(token.begin));
      start = token.end;
    }
  }
  TRTLLM_RUN_RETURN_IF_ERROR(add(command.size()));
  return parts;
}

std::optional<std::string> Invocation::Option(std::initializer_list<std::string_view> names) const {
  std::optional<std::string> value;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i].text;
    for (std::string_view name : names) {
      if (word == name && i + 1 < words.size()) {
        value = words[i + 1].text;
      } else if (word.size() > name.size() && word.compare(0, name.size(), name) == 0 &&
                 word[name.size()] == '=') {
        value = word.substr(name.size() + 1);
      }
    }
  }
  return value;
}

bool Invocation::HasWord(std::string_view word) const {
  for (const ShellToken& token : words) {
    if (token.text == word) return true;
  }
  return false;
}

std::optional<Invocation> LastInvocation(std::string_view command, std::string_view program) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(command);
  if (!tokens.ok()) return std::nullopt;
  std::optional<std::pair<size_t, size_t>> found = FindLastInvocation(tokens.value(), program);
  if (!found) return std::nullopt;
  Invocation invocation;
  invocation.words.assign(tokens->begin() + found->first, tokens->begin() + found->second);
  return invocation;
}

std::string PrefixInvocation(std::string_view command, std::string_view program,
                             std::string_view word) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(command);
  if (!tokens.ok()) return std::string(command);
  std::optional<std::pair<size_t, size_t>> found = FindLastInvocation(tokens.value(), program);
  if (!found) return std::string(command);
  for (size_t i = found->first; i > 0; --i) {
    const ShellToken& before = tokens.value()[i - 1];
    if (before.kind != ShellToken::kWord) break;
    if (BaseName(before.text) == word) return std::string(command);
  }
  size_t at = tokens.value()[found->first].begin;
  std::string out(command.substr(0, at));
  out += word;
  out += ' ';
  out += command.substr(at);
  return out;
}

std::string ReplaceOptionValue(std::string_view command,
                               std::initializer_list<std::string_view> names,
                               std::string_view old_value, std::string_view new_value) {
  Result<std::vector<ShellToken>> tokens = TokenizeShell(command);
  if (!tokens.ok()) return std::string(command);
  const std::vector<ShellToken>& t = tokens.value();
  struct Edit {
    size_t begin, end;
    std::string text;
  };
  std::vector<Edit> edits;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != ShellToken::kWord) continue;
    for (std::string_view name : names) {
      if (t[i].text == name && i + 1 < t.size() && t[i + 1].kind == ShellToken::kWord &&
          t[i + 1].text == old_value) {
        edits.push_back({t[i + 1].begin, t[i + 1].end, ShellQuote(new_value)});
      } else if (t[i].text.size() == name.size() + 1 + old_value.size() &&
                 t[i].text.compare(0, name.size(), name) == 0 && t[i].text[name.size()] == '=' &&
                 t[i].text.compare(name.size() + 1, std::string::npos, old_value) == 0) {
        edits.push_back({t[i].begin, t[i].end, std::string(name) + "=" + ShellQuote(new_value)});
      }
    }
  }
  std::string out(command);
  for (auto it = edits.rbegin(); it != edits.rend(); ++it) {
    out.replace(it->begin, it->end - it->begin, it->text);
  }
  return out;
}

std::string CommandExcerpt(std::string_view text) {
  constexpr size_t kMax = 120;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

}  // namespace trtllm_run
