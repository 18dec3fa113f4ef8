// pytest's terminal report: the summary line, per-test lines and the short test summary
// (trtllm_run/sdk/pytest_log.h).
#include "trtllm_run/sdk/pytest_log.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace pytest_log {
namespace {

constexpr std::size_t kMaxMessage = 500;
constexpr std::size_t kMaxSkipReasons = 20;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string Clip(std::string_view text) {
  text = Trim(text);
  if (text.size() <= kMaxMessage) return std::string(text);
  return std::string(text.substr(0, kMaxMessage)) + "...";
}

// srun -l prefixes each line with "<task>: "; pytest's own lines never start that way.
std::string_view StripTaskPrefix(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t digits = i;
  while (i < line.size() && IsDigit(line[i]) && i - digits < 6) ++i;
  if (i > digits && i < line.size() && line[i] == ':' &&
      (i + 1 == line.size() || line[i + 1] == ' ')) {
    return line.substr(std::min(line.size(), i + 2));
  }
  return line;
}

}  // namespace

std::string TaskZeroLines(std::string_view log) {
  std::string kept;
  kept.reserve(log.size());
  while (!log.empty()) {
    const std::size_t end = log.find('\n');
    const std::string_view line = log.substr(0, end);
    log = end == std::string_view::npos ? std::string_view() : log.substr(end + 1);
    const std::string_view rest = StripTaskPrefix(line);
    bool task_zero = rest.size() == line.size();  // no prefix
    if (!task_zero) {
      std::string_view prefix = line.substr(0, line.size() - rest.size());
      while (!prefix.empty() && prefix.front() == ' ') prefix.remove_prefix(1);
      task_zero = prefix.substr(0, 2) == "0:";
    }
    if (task_zero) {
      kept.append(line);
      kept += '\n';
    }
  }
  return kept;
}

namespace {

// A non-negative count; false when not all digits or absurdly long.
bool ParseCount(std::string_view text, int* out) {
  std::optional<long long> value = ParseInteger(text, 0, 999999999);
  if (!value) return false;
  *out = static_cast<int>(*value);
  return true;
}

// "0.12s", "65.20s (0:01:05)".
bool IsDuration(std::string_view text) {
  std::size_t paren = text.find(" (");
  if (paren != std::string_view::npos) {
    if (!EndsWith(text, ")")) return false;
    text = text.substr(0, paren);
  }
  if (text.size() < 2 || text.back() != 's') return false;
  text.remove_suffix(1);
  bool digit = false;
  for (char c : text) {
    if (IsDigit(c)) {
      digit = true;
    } else if (c != '.') {
      return false;
    }
  }
  return digit;
}

// The end of a node id that starts `text` ("dir/test_a.py::T::test_b[x y]"): the first
// blank, except inside the [parameters], which may hold blanks. npos when `text` does not
// start with something shaped like a node id (a path ending in .py, then ::parts).
std::size_t NodeIdEnd(std::string_view text) {
  std::size_t py = text.find(".py");
  if (py == std::string_view::npos || py == 0) return std::string_view::npos;
  for (std::size_t i = 0; i < py; ++i) {
    if (IsSpace(text[i])) return std::string_view::npos;
  }
  std::size_t i = py + 3;
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '[') {
      ++depth;
    } else if (c == ']' && depth > 0) {
      --depth;
    } else if (depth == 0 && IsSpace(c)) {
      break;
    }
  }
  return depth == 0 ? i : std::string_view::npos;
}

struct OutcomeWord {
  const char* word;
  const char* outcome;
};
constexpr OutcomeWord kOutcomeWords[] = {
    {"PASSED", "passed"}, {"FAILED", "failed"}, {"SKIPPED", "skipped"},
    {"XFAIL", "xfailed"}, {"XPASS", "xpassed"}, {"ERROR", "error"},
};

// How bad an outcome is: error > failed > xpassed > the good ones.
int Severity(std::string_view outcome) {
  if (outcome == "error") return 3;
  if (outcome == "failed") return 2;
  if (outcome == "xpassed") return 1;
  return 0;  // passed, skipped, xfailed
}

const char* OutcomeOf(std::string_view word) {
  for (const OutcomeWord& entry : kOutcomeWords) {
    if (word == entry.word) return entry.outcome;
  }
  return nullptr;
}

class Collector {
 public:
  explicit Collector(Report* report) : report_(report) {}

  // The FAILURES / ERRORS sections: "____ TestX.test_y[p] ____" then the traceback, whose
  // "E   " lines hold the whole message that the short summary cuts at 80 columns.
  void SectionTitle(std::string_view title) {
    for (std::string_view prefix : {"ERROR at setup of ", "ERROR at teardown of "}) {
      if (StartsWith(title, prefix)) title.remove_prefix(prefix.size());
    }
    section_ = std::string(title);
  }
  void SectionLine(std::string_view line) {
    if (section_.empty() || !StartsWith(line, "E ")) return;
    std::string& message = section_messages_[section_];
    if (message.size() >= kMaxMessage) return;
    message += (message.empty() ? "" : " | ") + std::string(Trim(line.substr(1)));
  }
  void EndSections() { section_.clear(); }

  // Gives each failed test the message of its section, which is complete.
  void Finish() {
    for (TestCaseOutcome& test : report_->tests) {
      if (test.outcome != "failed" && test.outcome != "error") continue;
      std::size_t sep = test.name.find("::");
      if (sep == std::string::npos) continue;
      std::string title = test.name.substr(sep + 2);
      for (std::size_t at = title.find("::"); at != std::string::npos; at = title.find("::", at)) {
        title.replace(at, 2, ".");
      }
      auto found = section_messages_.find(title);
      if (found != section_messages_.end()) test.message = Clip(found->second);
    }
  }

  void Add(std::string_view name, const char* outcome, std::string_view message) {
    auto found = index_.find(std::string(name));
    if (found == index_.end()) {
      if (report_->tests.size() >= kMaxTests) return;
      index_.emplace(std::string(name), report_->tests.size());
      report_->tests.push_back(TestCaseOutcome{std::string(name), outcome, Clip(message)});
      return;
    }
    TestCaseOutcome& test = report_->tests[found->second];
    // pytest reports a test once per phase that went wrong: "PASSED" for the call and
    // "ERROR" for its teardown, in either order. The worse outcome is the verdict.
    if (Severity(outcome) < Severity(test.outcome)) return;
    test.outcome = outcome;
    if (!message.empty()) test.message = Clip(message);
  }

  void AddSkipReason(std::string reason) {
    reason = Clip(reason);
    if (reason.empty() || report_->skip_reasons.size() >= kMaxSkipReasons) return;
    for (const std::string& known : report_->skip_reasons) {
      if (known == reason) return;
    }
    report_->skip_reasons.push_back(std::move(reason));
  }

 private:
  Report* report_;
  std::map<std::string, std::size_t> index_;
  std::string section_;
  std::map<std::string, std::string> section_messages_;
};

// "<nodeid> PASSED  [ 50%]", "<nodeid> SKIPPED (need 2 GPUs)  [100%]" (pytest -v).
bool ParseVerboseLine(std::string_view line, Collector* collector) {
  std::size_t end = NodeIdEnd(line);
  if (end == std::string_view::npos || end >= line.size()) return false;
  std::string_view name = line.substr(0, end);
  if (name.find("::") == std::string_view::npos) return false;
  std::string_view rest = Trim(line.substr(end));
  // Drop the progress column: "[ 50%]".
  if (EndsWith(rest, "%]")) {
    std::size_t open = rest.rfind('[');
    if (open == std::string_view::npos) return false;
    rest = Trim(rest.substr(0, open));
  }
  std::size_t blank = rest.find(' ');
  const char* outcome = OutcomeOf(rest.substr(0, blank));
  if (outcome == nullptr) return false;
  std::string_view message;
  if (blank != std::string_view::npos) {
    message = Trim(rest.substr(blank));
    if (StartsWith(message, "(") && EndsWith(message, ")")) {
      message = message.substr(1, message.size() - 2);
    }
  }
  collector->Add(name, outcome, message);
  if (std::string_view(outcome) == "skipped" && !message.empty()) {
    collector->AddSkipReason(std::string(message));
  }
  return true;
}

// A line of the "short test summary info" section: "FAILED <nodeid> - <message>",
// "PASSED <nodeid>", "XPASS <nodeid> <reason>", "SKIPPED [2] <file>:<line>: <reason>".
void ParseShortSummaryLine(std::string_view line, Collector* collector) {
  std::size_t blank = line.find(' ');
  if (blank == std::string_view::npos) return;
  const char* outcome = OutcomeOf(line.substr(0, blank));
  if (outcome == nullptr) return;
  std::string_view rest = line.substr(blank + 1);
  if (std::string_view(outcome) == "skipped") {
    // "[N] file:line: reason"
    std::size_t close = rest.find("] ");
    if (StartsWith(rest, "[") && close != std::string_view::npos) {
      std::string_view where_reason = rest.substr(close + 2);
      std::size_t colon = where_reason.find(": ");
      std::string reason = colon == std::string_view::npos
                               ? std::string(where_reason)
                               : std::string(where_reason.substr(colon + 2)) + " (" +
                                     std::string(where_reason.substr(0, colon)) + ")";
      collector->AddSkipReason(reason);
      return;
    }
  }
  std::size_t end = NodeIdEnd(rest);
  if (end == std::string_view::npos) return;
  std::string_view name = rest.substr(0, end);
  std::string_view message = Trim(rest.substr(end));
  if (StartsWith(message, "- ")) message.remove_prefix(2);
  collector->Add(name, outcome, message);
}

}  // namespace

bool ParseSummaryLine(std::string_view line, TestCounts* counts) {
  std::string_view text = Trim(line);
  // "===== ... =====" in the default and -v modes; bare with -q.
  if (StartsWith(text, "=")) {
    if (!EndsWith(text, "=")) return false;
    while (!text.empty() && text.front() == '=') text.remove_prefix(1);
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    text = Trim(text);
  }
  std::size_t in = text.rfind(" in ");
  if (in == std::string_view::npos || !IsDuration(text.substr(in + 4))) return false;
  std::string_view items = text.substr(0, in);
  TestCounts parsed;
  parsed.summary = std::string(text);
  if (items == "no tests ran") {
    *counts = parsed;
    return true;
  }
  while (!items.empty()) {
    std::size_t comma = items.find(", ");
    std::string_view item = items.substr(0, comma);
    items = comma == std::string_view::npos ? std::string_view() : items.substr(comma + 2);
    std::size_t blank = item.find(' ');
    if (blank == std::string_view::npos) return false;
    int count = 0;
    if (!ParseCount(item.substr(0, blank), &count)) return false;
    std::string_view word = item.substr(blank + 1);
    if (word == "passed") {
      parsed.passed = count;
    } else if (word == "failed") {
      parsed.failed = count;
    } else if (word == "skipped") {
      parsed.skipped = count;
    } else if (word == "xfailed") {
      parsed.xfailed = count;
    } else if (word == "xpassed") {
      parsed.xpassed = count;
    } else if (word == "error" || word == "errors") {
      parsed.errors = count;
    } else if (word == "deselected") {
      parsed.deselected = count;
    } else if (word != "warning" && word != "warnings" && word != "rerun") {
      return false;
    }
  }
  *counts = parsed;
  return true;
}

Report ParseLog(std::string_view log) {
  Report report;
  Collector collector(&report);
  bool in_short_summary = false;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t newline = log.find('\n', start);
    std::size_t end = newline == std::string_view::npos ? log.size() : newline;
    std::string_view line = StripTaskPrefix(log.substr(start, end - start));
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    TestCounts counts;
    if (ParseSummaryLine(line, &counts)) {
      report.counts = counts;
      in_short_summary = false;
      continue;
    }
    std::string_view text = Trim(line);
    if (StartsWith(text, "=") && text.find(" test session starts ") != std::string_view::npos) {
      report.session_started = true;
      continue;
    }
    if (StartsWith(text, "=") && text.find(" short test summary info ") != std::string_view::npos) {
      in_short_summary = true;
      collector.EndSections();
      continue;
    }
    if (StartsWith(text, "=") && EndsWith(text, "=")) {
      collector.EndSections();  // any other "=== ... ===" header ends a section
      continue;
    }
    if (StartsWith(text, "__") && EndsWith(text, "__")) {
      std::string_view title = text;
      while (!title.empty() && title.front() == '_') title.remove_prefix(1);
      while (!title.empty() && title.back() == '_') title.remove_suffix(1);
      collector.SectionTitle(Trim(title));
      continue;
    }
    if (!in_short_summary && StartsWith(text, "E ")) {
      collector.SectionLine(text);
      continue;
    }
    if (StartsWith(text, "!")) {
      std::size_t at = text.find("Interrupted: ");
      if (at != std::string_view::npos) {
        std::string_view what = text.substr(at + 13);
        while (!what.empty() && (what.back() == '!' || what.back() == ' ')) what.remove_suffix(1);
        report.interrupted = Clip(what);
      } else if (text.find("KeyboardInterrupt") != std::string_view::npos) {
        report.interrupted = "KeyboardInterrupt";
      }
      continue;
    }
    if (StartsWith(text, "+++") && EndsWith(text, "+++") &&
        text.find(" Timeout ") != std::string_view::npos) {
      report.timeout_banner = true;
      continue;
    }
    if (!in_short_summary && text.find("::") != std::string_view::npos &&
        NodeIdEnd(text) == text.size()) {
      report.last_started = std::string(text);  // -v names a test before it runs
      continue;
    }
    if (StartsWith(text, "INTERNALERROR>")) {
      if (report.internal_error.empty()) report.internal_error = Clip(text);
      continue;
    }
    if (StartsWith(text, "ERROR: file or directory not found:") ||
        StartsWith(text, "ERROR: not found:") || StartsWith(text, "pytest: error:") ||
        StartsWith(text, "ERROR: usage:")) {
      // "pytest: error: ..." says more than the usage line before it.
      if (report.usage_error.empty() || StartsWith(text, "pytest: error:")) {
        report.usage_error = Clip(text);
      }
      continue;
    }
    if (in_short_summary) {
      ParseShortSummaryLine(text, &collector);
    } else if (!ParseVerboseLine(text, &collector) &&
               (StartsWith(text, "FAILED ") || StartsWith(text, "ERROR "))) {
      // A summary line whose section header is not in the text read (a log's tail, or a
      // window of it): still "FAILED <nodeid> - <message>" when a node id follows.
      std::string_view rest = text.substr(text.find(' ') + 1);
      if (rest.find("::") != std::string_view::npos && NodeIdEnd(rest) != std::string_view::npos) {
        ParseShortSummaryLine(text, &collector);
      }
    }
  }
  collector.Finish();
  return report;
}

}  // namespace pytest_log
}  // namespace trtllm_run
