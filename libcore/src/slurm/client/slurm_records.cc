// Parsers of what Slurm prints about jobs (slurm_job.h).
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kSacctFormat[] =
    "JobID,State,ExitCode,DerivedExitCode,Reason,Start,End,Elapsed,NodeList,JobName";
const char kEndMarkerPattern[] = "[trtllm-run] job finished with exit code";
const char kSlurmCancelledPattern[] = "CANCELLED AT";
const char kSrunTaskExitPattern[] = ": Exited with exit code ";

namespace {

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  return AsciiUpper(haystack).find(AsciiUpper(needle)) != std::string::npos;
}

std::optional<int> ParseInt(std::string_view text) {
  std::optional<long long> value = ParseInteger(Trim(text), -99999999, 999999999);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// A key of scontrol's "Key=Value" output: letters first, then letters, digits and the
// punctuation real keys use ("ReqB:S:C:T", "CPUs/Task", "MCS_label", "AllocNode:Sid").
bool IsKeyStart(std::string_view text, std::size_t pos) {
  if (pos >= text.size() || !std::isalpha(static_cast<unsigned char>(text[pos]))) return false;
  for (std::size_t i = pos; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=') return i > pos;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '/' ||
          c == '.' || c == '-')) {
      return false;
    }
  }
  return false;
}

// Splits one scontrol record (a line, or the lines of one job in the multi-line format
// joined by spaces) into key/value pairs. A value runs until the next " Key=".
std::vector<std::pair<std::string, std::string>> SplitKeyValues(std::string_view record) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::size_t pos = 0;
  while (pos < record.size() && std::isspace(static_cast<unsigned char>(record[pos]))) ++pos;
  while (pos < record.size()) {
    std::size_t eq = record.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::string key(Trim(record.substr(pos, eq - pos)));
    std::size_t value_start = eq + 1;
    std::size_t next = value_start;
    std::size_t value_end = record.size();
    while (true) {
      std::size_t space = record.find(' ', next);
      if (space == std::string_view::npos) break;
      std::size_t after = space;
      while (after < record.size() && record[after] == ' ') ++after;
      if (IsKeyStart(record, after)) {
        value_end = space;
        next = after;
        break;
      }
      next = space + 1;
    }
    pairs.emplace_back(key, std::string(Trim(record.substr(value_start, value_end - value_start))));
    if (value_end == record.size()) break;
    pos = next;
  }
  return pairs;
}

// The task ids of scontrol's ArrayTaskId ("4", "0-3", "0-9%2", "1,3-5", "[0-3]"); false when
// the text is none of these or names more than 1,000,000 tasks.
bool ExpandArrayTaskIds(std::string_view text, std::vector<long>* tasks) {
  std::string spec(Trim(text));
  if (!spec.empty() && spec.front() == '[') spec.erase(0, 1);
  if (!spec.empty() && spec.back() == ']') spec.pop_back();
  std::size_t throttle = spec.find('%');
  if (throttle != std::string::npos) spec.resize(throttle);
  if (spec.empty()) return false;
  std::vector<long> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string part = spec.substr(start, comma - start);
    std::size_t dash = part.find('-');
    auto number = [](const std::string& digits, long* value) {
      if (digits.empty() || digits.size() > 9) return false;
      for (char c : digits) {
        if (c < '0' || c > '9') return false;
      }
      *value = std::stol(digits);
      return true;
    };
    long low = 0, high = 0;
    if (dash == std::string::npos) {
      if (!number(part, &low)) return false;
      high = low;
    } else if (!number(part.substr(0, dash), &low) || !number(part.substr(dash + 1), &high) ||
               high < low) {
      return false;
    }
    if (out.size() + static_cast<std::size_t>(high - low) >= 1000000) return false;
    for (long task = low; task <= high; ++task) out.push_back(task);
    start = comma + 1;
  }
  *tasks = std::move(out);
  return true;
}

SlurmJobRecord RecordFromPairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  SlurmJobRecord record;
  for (const auto& [key, value] : pairs) {
    if (key == "JobId") {
      record.job_id = value;
    } else if (key == "JobName") {
      record.job_name = value;
    } else if (key == "JobState") {
      record.state = NormalizeSlurmState(value);
    } else if (key == "Reason") {
      record.reason = value;
    } else if (key == "ExitCode") {
      record.exit = ParseSlurmExit(value);
    } else if (key == "RunTime") {
      record.run_time = value;
    } else if (key == "TimeLimit") {
      record.time_limit = value;
    } else if (key == "StartTime") {
      record.start_time = value;
    } else if (key == "EndTime") {
      record.end_time = value;
    } else if (key == "NodeList") {
      record.node_list = value;
    } else if (key == "BatchHost") {
      record.batch_host = value;
    } else if (key == "StdOut") {
      record.std_out = value;
    } else if (key == "StdErr") {
      record.std_err = value;
    } else if (key == "UserId") {
      record.user_id = value;
    } else if (key == "Comment") {
      record.comment = value;
    }
  }
  return record;
}

}  // namespace

SlurmExit ParseSlurmExit(std::string_view text) {
  SlurmExit exit;
  text = Trim(text);
  std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    exit.code = ParseInt(text);
    return exit;
  }
  exit.code = ParseInt(text.substr(0, colon));
  exit.signal = ParseInt(text.substr(colon + 1));
  return exit;
}

std::string NormalizeSlurmState(std::string_view text) {
  std::string state = AsciiUpper(Trim(text));
  std::size_t space = state.find(' ');
  if (space != std::string::npos) state.resize(space);  // "CANCELLED BY 0"
  while (!state.empty() && state.back() == '+') state.pop_back();
  static const std::pair<const char*, const char*> kCompact[] = {
      {"BF", "BOOT_FAIL"},     {"CA", "CANCELLED"},    {"CD", "COMPLETED"},
      {"CF", "CONFIGURING"},   {"CG", "COMPLETING"},   {"DL", "DEADLINE"},
      {"F", "FAILED"},         {"NF", "NODE_FAIL"},    {"OOM", "OUT_OF_MEMORY"},
      {"PD", "PENDING"},       {"PR", "PREEMPTED"},    {"R", "RUNNING"},
      {"RD", "RESV_DEL_HOLD"}, {"RF", "REQUEUE_FED"},  {"RH", "REQUEUE_HOLD"},
      {"RQ", "REQUEUED"},      {"RS", "RESIZING"},     {"RV", "REVOKED"},
      {"SI", "SIGNALING"},     {"SE", "SPECIAL_EXIT"}, {"SO", "STAGE_OUT"},
      {"ST", "STOPPED"},       {"S", "SUSPENDED"},     {"TO", "TIMEOUT"}};
  for (const auto& [code, name] : kCompact) {
    if (state == code) return name;
  }
  return state;
}

bool IsTerminalSlurmState(const std::string& state) {
  static const char* const kTerminal[] = {"COMPLETED",     "FAILED",    "TIMEOUT",     "CANCELLED",
                                          "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",   "BOOT_FAIL",
                                          "DEADLINE",      "REVOKED",   "SPECIAL_EXIT"};
  for (const char* name : kTerminal) {
    if (state == name) return true;
  }
  return false;
}

std::vector<SlurmJobRecord> ParseScontrolJobs(std::string_view text) {
  std::vector<SlurmJobRecord> records;
  // A record starts at a line beginning with "JobId="; continuation lines (the
  // multi-line format) are indented.
  std::string current;
  auto flush = [&]() {
    if (current.empty()) return;
    std::vector<std::pair<std::string, std::string>> pairs = SplitKeyValues(current);
    SlurmJobRecord record = RecordFromPairs(pairs);
    current.clear();
    if (record.job_id.empty()) return;
    // A job array's task is known as ARRAYJOB_TASK; its pending tasks share one record.
    std::string array_job, array_tasks;
    for (const auto& [key, value] : pairs) {
      if (key == "ArrayJobId") array_job = value;
      if (key == "ArrayTaskId") array_tasks = value;
    }
    std::vector<long> tasks;
    if (!array_job.empty() && ExpandArrayTaskIds(array_tasks, &tasks)) {
      for (long task : tasks) {
        SlurmJobRecord one = record;
        one.job_id = array_job + "_" + std::to_string(task);
        records.push_back(std::move(one));
      }
      return;
    }
    records.push_back(std::move(record));
  };
  for (std::string_view line : SplitLines(text)) {
    std::string_view trimmed = Trim(line);
    if (trimmed.rfind("JobId=", 0) == 0) {
      flush();
      current = std::string(trimmed);
    } else if (!trimmed.empty() && !current.empty()) {
      current += " ";
      current += trimmed;
    }
  }
  flush();
  return records;
}

bool IsInvalidJobIdError(std::string_view text) {
  return ContainsNoCase(text, "Invalid job id specified");
}

std::vector<SlurmAcctRecord> ParseSacct(std::string_view text) {
  std::vector<SlurmAcctRecord> records;
  for (std::string_view line : SplitLines(text)) {
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> fields;
    std::size_t start = 0;
    // Nine '|'-separated fields, then JobName (which may itself contain '|').
    while (fields.size() < 9) {
      std::size_t bar = line.find('|', start);
      if (bar == std::string_view::npos) break;
      fields.push_back(line.substr(start, bar - start));
      start = bar + 1;
    }
    if (fields.size() < 9) continue;  // not a row of this format
    fields.push_back(line.substr(start));
    SlurmAcctRecord record;
    record.id = std::string(Trim(fields[0]));
    std::size_t dot = record.id.find('.');
    if (dot != std::string::npos) record.step = record.id.substr(dot + 1);
    record.state_text = std::string(Trim(fields[1]));
    record.state = NormalizeSlurmState(record.state_text);
    std::string upper = AsciiUpper(record.state_text);
    std::size_t by = upper.find(" BY ");
    if (by != std::string::npos)
      record.cancelled_by = std::string(Trim(record.state_text.substr(by + 4)));
    record.exit = ParseSlurmExit(fields[2]);
    record.derived_exit = ParseSlurmExit(fields[3]);
    record.reason = std::string(Trim(fields[4]));
    record.start = std::string(Trim(fields[5]));
    record.end = std::string(Trim(fields[6]));
    record.elapsed = std::string(Trim(fields[7]));
    record.node_list = std::string(Trim(fields[8]));
    record.name = std::string(Trim(fields[9]));
    if (record.id.empty()) continue;
    records.push_back(std::move(record));
  }
  return records;
}

bool IsAccountingDisabledError(std::string_view text) {
  return ContainsNoCase(text, "accounting storage is disabled") ||
         ContainsNoCase(text, "accounting_storage/none");
}

SlurmConfigFacts ParseSlurmConfig(std::string_view text) {
  SlurmConfigFacts facts;
  for (std::string_view line : SplitLines(text)) {
    std::size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    // `scontrol show config` prints "Key = value"; slurm.conf has "Key=value" with keys
    // in any case.
    std::string key = AsciiUpper(Trim(line.substr(0, eq)));
    std::string_view value = Trim(line.substr(eq + 1));
    std::string_view first = value.substr(0, value.find(' '));
    if (key == "MINJOBAGE") {
      facts.min_job_age_seconds = ParseInt(first);
    } else if (key == "KILLWAIT") {
      facts.kill_wait_seconds = ParseInt(first);
    } else if (key == "ACCOUNTINGSTORAGETYPE") {
      facts.accounting = !first.empty() && first != "accounting_storage/none" && first != "(null)";
    } else if (key == "CLUSTERNAME") {
      facts.cluster_name = std::string(first);
    }
  }
  return facts;
}

SlurmConfigFacts ParseSlurmConfFile(std::string_view text) {
  SlurmConfigFacts facts = ParseSlurmConfig(text);
  // Slurm's defaults for what the file does not set.
  if (!facts.min_job_age_seconds) facts.min_job_age_seconds = 300;
  if (!facts.kill_wait_seconds) facts.kill_wait_seconds = 30;
  if (!facts.accounting) facts.accounting = false;
  return facts;
}

std::string NewEndMarkerToken() {
  unsigned char bytes[16] = {};
  std::size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof bytes) {
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      while (got < sizeof bytes) {
        ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      ::close(fd);
    }
  }
  if (got < sizeof bytes) {
    // No randomness: a token a payload cannot guess cannot be made, so none is (no end
    // marker; the scheduler alone decides).
    return "";
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

std::string EndMarkerEcho(const std::string& token) {
  return std::string("echo \"") + kEndMarkerPattern + " ${exit_code} (token " + token + ")\"";
}

std::string EndMarkerTokenOfScript(std::string_view script) {
  const std::string head = std::string("echo \"") + kEndMarkerPattern + " ${exit_code} (token ";
  std::string token;
  for (std::string_view line : SplitLines(script)) {
    line = Trim(line);
    if (line.size() <= head.size() + 2 || line.substr(0, head.size()) != head ||
        line.substr(line.size() - 2) != ")\"") {
      continue;
    }
    std::string_view candidate = line.substr(head.size(), line.size() - head.size() - 2);
    bool hex = !candidate.empty() && std::all_of(candidate.begin(), candidate.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c));
    });
    if (hex) token = std::string(candidate);
  }
  return token;
}

std::string EndMarkerScanPattern(const std::string& token) {
  return token.empty() ? std::string() : "(token " + token + ")";
}

std::optional<int> ParseEndMarker(std::string_view line, std::string_view token) {
  if (token.empty()) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  constexpr std::string_view kPrefix = "[trtllm-run] job finished with exit code ";
  const std::string suffix = " (token " + std::string(token) + ")";
  if (line.size() <= kPrefix.size() + suffix.size() || line.substr(0, kPrefix.size()) != kPrefix ||
      line.substr(line.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  std::string_view code = line.substr(kPrefix.size(), line.size() - kPrefix.size() - suffix.size());
  // The script prints $exit_code: digits only (bash's $? is 0..255).
  if (code.empty() || code.size() > 3 || !std::all_of(code.begin(), code.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    return std::nullopt;
  }
  return ParseInt(code);
}

std::optional<int> LastEndMarker(const std::vector<std::string>& lines, std::string_view token) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (std::optional<int> code = ParseEndMarker(*it, token)) return code;
  }
  return std::nullopt;
}

namespace {

// "+ x", "++ x", "0: + x" (srun -l labels the rank).
bool IsShellTraceLine(std::string_view line) {
  std::size_t pos = 0;
  while (pos < line.size() && line[pos] == ' ') ++pos;
  std::size_t digits = pos;
  while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9') ++pos;
  pos = pos > digits && line.substr(pos, 2) == ": " ? pos + 2 : digits;
  std::size_t pluses = pos;
  while (pos < line.size() && line[pos] == '+') ++pos;
  return pos > pluses && pos < line.size() && line[pos] == ' ';
}

}  // namespace

std::string LastProgramLine(const std::vector<std::string>& tail) {
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    if (it->find_first_not_of(" \t\r") == std::string::npos || IsShellTraceLine(*it)) continue;
    return *it;
  }
  return "";
}

std::optional<StepExitLine> ParseStepExitLine(std::string_view line) {
  static constexpr std::string_view kPrefix = "[trtllm-run] step ";
  static constexpr std::string_view kMiddle = ": exit code ";
  std::size_t pos = line.find(kPrefix);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(pos + kPrefix.size());
  std::size_t middle = rest.rfind(kMiddle);
  if (middle == std::string_view::npos) return std::nullopt;
  std::optional<int> code = ParseInt(rest.substr(middle + kMiddle.size()));
  if (!code) return std::nullopt;
  return StepExitLine{std::string(rest.substr(0, middle)), *code};
}

std::optional<SrunTaskExit> ParseSrunTaskExit(std::string_view line) {
  static constexpr std::string_view kPrefix = "srun: error: ";
  std::size_t pos = line.find(kPrefix);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(pos + kPrefix.size());
  std::size_t node_end = rest.find(": task");
  std::size_t exit_at = rest.find(kSrunTaskExitPattern);
  if (node_end == std::string_view::npos || exit_at == std::string_view::npos ||
      exit_at < node_end) {
    return std::nullopt;
  }
  std::optional<int> code = ParseInt(rest.substr(exit_at + sizeof(kSrunTaskExitPattern) - 1));
  if (!code) return std::nullopt;
  SrunTaskExit exit;
  exit.node = std::string(Trim(rest.substr(0, node_end)));
  exit.tasks = std::string(Trim(rest.substr(node_end + 2, exit_at - node_end - 2)));
  exit.exit_code = *code;
  if (exit.node.empty() || exit.node.find(' ') != std::string::npos) return std::nullopt;
  return exit;
}

const std::vector<std::string>& SlurmOomPatterns() {
  static const std::vector<std::string> kPatterns = {
      "exceeded memory limit",      // slurmstepd, JobAcctGatherParams=OverMemoryKill (tested here)
      "Exceeded job memory limit",  // slurmstepd, same
      "oom_kill event",             // slurmstepd with cgroups: "Detected 1 oom_kill event in ..."
      "oom-kill event",             // older wording of the same
      "Out Of Memory",              // srun: "task 0: Out Of Memory"
  };
  return kPatterns;
}

std::optional<CancelLine> ParseCancelLine(std::string_view line) {
  std::string upper = AsciiUpper(line);
  std::size_t at = upper.find("CANCELLED AT");
  if (at == std::string::npos) return std::nullopt;
  CancelLine cancel;
  std::size_t due = upper.find(" DUE TO ", at);
  if (due != std::string::npos) {
    std::size_t start = due + 8;
    std::size_t end = upper.find("***", start);
    if (end == std::string::npos) end = upper.size();
    cancel.due_to = std::string(Trim(std::string_view(upper).substr(start, end - start)));
  }
  std::size_t by = upper.find(" BY ", at);
  if (by != std::string::npos) {
    auto token_at = [&](std::size_t start) {
      while (start < line.size() && line[start] == ' ') ++start;
      std::size_t end = upper.find_first_of(" *", start);
      if (end == std::string::npos) end = upper.size();
      return std::make_pair(start, end);
    };
    auto [start, end] = token_at(by + 4);
    if (upper.compare(start, end - start, "UID") == 0) std::tie(start, end) = token_at(end);
    cancel.by = std::string(line.substr(start, end - start));
  }
  return cancel;
}

std::vector<std::string> JobOutputPatterns(const std::vector<std::string>& failure,
                                           const std::vector<std::string>& success,
                                           const std::string& end_token) {
  std::vector<std::string> patterns = {"hang detected", EndMarkerScanPattern(end_token),
                                       kSlurmCancelledPattern};
  const std::vector<std::string>& oom = SlurmOomPatterns();
  patterns.insert(patterns.end(), oom.begin(), oom.end());
  patterns.insert(patterns.end(), failure.begin(), failure.end());
  patterns.insert(patterns.end(), success.begin(), success.end());
  patterns.push_back(kSrunTaskExitPattern);
  return patterns;
}

}  // namespace trtllm_run
