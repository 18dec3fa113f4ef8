// Many cases in one run (multi_run.h): the cases file, planning all first, the bounded
// scheduler over Runtime::Execute with one executor session per scenario, and the
// combined reports.
#include "trtllm_run/multi_run.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <string_view>
#include <thread>

#include "commands/command_parse.h"
#include "model/input_limits.h"
#include "model/json_util.h"
#include "model/yaml_util.h"
#include "os/process.h"
#include "runtime/cases_dir.h"
#include "runtime/dir_util.h"
#include "runtime/plugin_call.h"
#include "supervise/progress.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---- Cases files ----

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

// ---- Progress lines from many threads ----

// An ostream whose complete lines go to `target` with `prefix`, one whole line at a time
// under `mu` (shared by every stream writing to the same target).
class LineStream : public std::ostream {
 public:
  // `before_line` (may be empty) runs under `mu` before each line, e.g. to erase a live
  // status line on the same terminal.
  LineStream(std::ostream* target, std::mutex* mu, std::string prefix,
             std::function<void()> before_line = {})
      : std::ostream(&buffer_), buffer_(target, mu, std::move(prefix), std::move(before_line)) {}
  ~LineStream() override { buffer_.Flush(); }

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream* target, std::mutex* mu, std::string prefix,
           std::function<void()> before_line)
        : target_(target),
          mu_(mu),
          prefix_(std::move(prefix)),
          before_line_(std::move(before_line)) {}
    void Flush() {
      if (!line_.empty()) Emit();
    }

   protected:
    int_type overflow(int_type c) override {
      if (c == traits_type::eof()) return traits_type::not_eof(c);
      line_ += static_cast<char>(c);
      if (c == '\n') Emit();
      return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      for (std::streamsize i = 0; i < n; ++i) overflow(static_cast<unsigned char>(s[i]));
      return n;
    }

   private:
    void Emit() {
      if (target_ != nullptr) {
        std::lock_guard<std::mutex> lock(*mu_);
        if (before_line_) before_line_();
        *target_ << prefix_ << line_;
        if (line_.back() != '\n') *target_ << '\n';
        target_->flush();
      }
      line_.clear();
    }
    std::ostream* target_;
    std::mutex* mu_;
    std::string prefix_;
    std::function<void()> before_line_;
    std::string line_;
  };
  Buffer buffer_;
};

std::string CaseLabel(const CaseOutcome& outcome) {
  if (!outcome.entry.name.empty()) return outcome.entry.name;
  if (!outcome.result.model_name.empty()) return outcome.result.model_name;
  return "case " + std::to_string(outcome.entry.index);
}

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1fs", seconds);
  return buffer;
}

RunResult NotRunResult(const PlannedCase& planned, RunStatus status, const std::string& reason,
                       const CancellationToken* cancel) {
  RunResult result;
  result.status = status;
  result.reason = reason;
  result.scenario = planned.scenario;
  result.workflow_type = planned.plan.workflow_type;
  result.model_name = planned.plan.model_name;
  result.command = planned.plan.command;
  result.started_at = result.finished_at = NowIso8601();
  if (status == RunStatus::kCancelled && cancel != nullptr) {
    result.user_interrupt = cancel->signal() == SIGINT;
    result.cancelled_by = cancel->signal() ? SignalName(cancel->signal()) : "request";
  } else {
    result.errors.push_back(reason);
  }
  return result;
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

namespace {

// The live table of a cases run: how many cases run, wait and are done, and the case
// running longest. `states[i]`: 0 pending, 1 running, 2 done.
template <typename State>
ProgressSnapshot BoardSnapshot(const MultiRunResult& run, const std::vector<State>& states,
                               const std::vector<Clock::time_point>& case_started,
                               Clock::time_point started) {
  std::size_t counts[3] = {0, 0, 0};
  std::optional<std::size_t> slowest;
  for (std::size_t i = 0; i < states.size(); ++i) {
    int state = static_cast<int>(states[i]);
    ++counts[state];
    if (state == 1 && (!slowest || case_started[i] < case_started[*slowest])) slowest = i;
  }
  ProgressSnapshot snapshot;
  snapshot.state = "running " + std::to_string(counts[1]) + ", pending " +
                   std::to_string(counts[0]) + ", done " + std::to_string(counts[2]) + "/" +
                   std::to_string(states.size());
  snapshot.elapsed_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (slowest) {
    // Only what is fixed before the case starts: its worker writes the rest.
    const CaseOutcome& outcome = run.cases[*slowest];
    snapshot.last_line =
        "slowest: case " + std::to_string(outcome.entry.index) +
        (outcome.entry.name.empty() ? std::string() : " " + outcome.entry.name) + " (" +
        outcome.scenario + ") " +
        Seconds(std::chrono::duration<double>(Clock::now() - case_started[*slowest]).count());
  }
  return snapshot;
}

}  // namespace

Result<std::vector<CaseEntry>> LoadCasesFile(const std::string& path, const CaseRequest& shared) {
  Result<std::string> text = ReadFileLimited(path, kMaxCasesFileBytes, "cases file");
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kInvalidInput) return text.status();  // too large
    return Status::InvalidInput("--cases: " + text.status().message(),
                                "give a YAML/JSON list of cases or a list of test ids");
  }
  return ParseCasesText(text.value(), path, shared);
}

Result<std::vector<PlannedCase>> PlanCases(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                           std::ostream* progress) {
  runtime.SetProbeCache(true);  // one Slurm probe per cluster for all cases
  std::vector<PlannedCase> planned;
  std::vector<std::string> problems;
  bool all_input = true;
  for (const CaseEntry& entry : cases) {
    Result<PlannedCase> plan = runtime.Plan(entry.request);
    if (!plan.ok()) {
      problems.push_back(entry.origin + (entry.name.empty() ? "" : " '" + entry.name + "'") + ": " +
                         plan.status().ToString());
      all_input = all_input && (plan.status().code() == StatusCode::kInvalidInput ||
                                plan.status().code() == StatusCode::kNotFound);
      continue;
    }
    planned.push_back(std::move(plan.value()));
  }
  runtime.SetProbeCache(false);
  if (!problems.empty()) {
    std::string message = std::to_string(problems.size()) + " of " + std::to_string(cases.size()) +
                          " cases cannot be planned; nothing was prepared or submitted:";
    for (const std::string& problem : problems) message += "\n  " + problem;
    if (all_input) return Status::InvalidInput(message);
    return Status::ExecutionError(message);
  }
  if (progress) {
    *progress << "trtllm-run: planned " << planned.size() << " cases" << std::endl;
  }
  return planned;
}

Result<MultiRunResult> RunCases(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                const MultiRunOptions& options) {
  if (cases.empty()) return Status::InvalidInput("no cases to run");
  if (options.max_parallel < 1 || options.max_parallel_local < 1) {
    return Status::InvalidInput("--max-parallel and --max-parallel-local must be >= 1");
  }
  std::mutex out_mu;
  // On a terminal, one live line (the table of the run) under the case lines.
  ProgressReporter board(options.progress, IsTerminalStream(options.progress), "cases");
  auto clear_board = [&board] { board.Clear(); };
  LineStream progress(options.progress, &out_mu, "", clear_board);
  Result<std::vector<PlannedCase>> planned = PlanCases(runtime, cases, &progress);
  if (!planned.ok()) return planned.status();

  MultiRunResult run;
  run.cases_file = options.cases_file;
  run.max_parallel = options.max_parallel;
  run.max_parallel_local = options.max_parallel_local;
  run.started_at = NowIso8601();
  auto started = Clock::now();
  std::string run_dir = options.run_dir;
  if (run_dir.empty()) {
    const std::string root = planned->front().request.repo_root.value_or(".");
    run_dir = (fs::path(root) / "work_dirs" / ("cases_" + LocalTimestamp())).string();
  }
  Result<std::string> made = CreateUniqueDir(run_dir, "run dir");
  if (!made.ok()) return made.status();
  run.run_dir = made.value();
  // What later processes read (cases_dir.h): the lock proves this process supervises.
  Result<std::unique_ptr<WorkDirLock>> run_lock = WorkDirLock::Acquire(run.run_dir);
  if (!run_lock.ok()) return run_lock.status();
  CasesState cases_state;
  cases_state.supervisor_pid = static_cast<int>(::getpid());
  cases_state.supervisor_start_time = ProcessStartTime(cases_state.supervisor_pid);
  cases_state.host = HostName();
  cases_state.started_at = run.started_at;
  cases_state.work_dirs.resize(cases.size());
  std::mutex state_mu;
  std::vector<CaseEntry> inputs = cases;  // as given, with the repo root they resolved to
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].request.repo_root = planned.value()[i].request.repo_root;
  }
  for (const Status& written :
       {WriteCasesInput(run.run_dir, inputs), WriteCasesState(run.run_dir, cases_state)}) {
    if (!written.ok()) progress << "trtllm-run: warning: " << written.ToString() << "\n";
  }

  CancellationToken own_cancel;
  CancellationToken* cancel = options.cancel ? options.cancel : &own_cancel;

  // One session per scenario whose executor offers one; the executors outlive them.
  struct Session {
    std::shared_ptr<Executor> executor;
    std::unique_ptr<LineStream> progress;  // the session's own lines (its own thread)
    std::unique_ptr<ExecutorSession> session;
    int cases = 0;
  };
  std::map<std::string, Session> sessions;
  // Scenarios whose jobs share this host's GPUs (ExecutorTraits::host_bound).
  std::set<std::string> host_bound;
  for (const PlannedCase& plan : planned.value()) {
    auto [it, inserted] = sessions.try_emplace(plan.scenario);
    ++it->second.cases;
    if (!inserted) continue;
    Result<std::shared_ptr<Executor>> executor = runtime.registry().CreateExecutor(plan.scenario);
    if (!executor.ok()) continue;  // Execute() reports it per case
    if (executor.value()->Traits().host_bound) host_bound.insert(plan.scenario);
    it->second.progress = std::make_unique<LineStream>(options.progress, &out_mu, "", clear_board);
    SessionOptions session_options;
    session_options.cancel = cancel;
    session_options.progress = it->second.progress.get();
    session_options.kill_grace_seconds = options.kill_grace_seconds;
    it->second.executor = executor.value();
    Result<std::unique_ptr<ExecutorSession>> session =
        GuardPluginCall(ExecutorLabel(plan.scenario), "NewSession()",
                        [&] { return executor.value()->NewSession(session_options); });
    if (session.ok()) {
      it->second.session = std::move(session.value());
    } else {  // its cases run through Execute() on threads of their own
      progress << "trtllm-run: warning: " << session.status().ToString() << "\n";
    }
  }
  for (const auto& [scenario, session] : sessions) {
    progress << "trtllm-run: " << session.cases << " " << scenario
             << " case(s): " << (session.session ? "one shared session" : "one worker thread each")
             << "\n";
  }

  const std::size_t n = planned->size();
  run.cases.resize(n);
  enum class State { kPending, kRunning, kDone };
  std::vector<State> states(n, State::kPending);
  std::vector<Clock::time_point> case_started(n);
  std::mutex mu;
  std::condition_variable changed;
  int running = 0, running_local = 0;
  std::size_t done = 0;
  std::vector<std::thread> threads;

  auto is_host_bound = [&](const std::string& scenario) { return host_bound.count(scenario) > 0; };
  auto finish = [&](std::size_t i, RunResult result) {
    CaseOutcome& outcome = run.cases[i];
    outcome.result = std::move(result);
    auto job = outcome.result.details.find("job_id");
    if (job != outcome.result.details.end()) outcome.job_id = job->second;
    std::lock_guard<std::mutex> lock(mu);
    states[i] = State::kDone;
    --running;
    if (is_host_bound(outcome.scenario)) --running_local;
    ++done;
    progress << "trtllm-run: [" << done << "/" << n << "] " << outcome.entry.origin << " "
             << CaseLabel(outcome) << ": " << RunStatusName(outcome.result.status)
             << (outcome.job_id.empty() ? "" : " (job " + outcome.job_id + ")") << " in "
             << Seconds(outcome.result.duration_seconds) << "\n";
    changed.notify_all();
  };

  auto run_case = [&](std::size_t i) -> RunResult {
    const PlannedCase& plan = planned.value()[i];
    if (cancel->cancelled()) {  // never started: no work dir is made for it
      return NotRunResult(plan, RunStatus::kCancelled, "cancelled before the case started", cancel);
    }
    Result<PreparedCase> prepared = runtime.PreparePlanned(plan);
    if (!prepared.ok()) {
      return NotRunResult(plan, RunStatus::kError,
                          "preparing the work dir failed: " + prepared.status().ToString(), cancel);
    }
    {
      std::lock_guard<std::mutex> lock(state_mu);
      cases_state.work_dirs[i] = prepared->spec.work_dir;
      Status written = WriteCasesState(run.run_dir, cases_state);
      if (!written.ok()) progress << "trtllm-run: warning: " << written.ToString() << "\n";
    }
    LineStream case_progress(options.progress, &out_mu,
                             "[case " + std::to_string(run.cases[i].entry.index) + "] ",
                             clear_board);
    RunOptions run_options;
    run_options.terminal = nullptr;  // the job's output stays in its work dir
    run_options.progress = &case_progress;
    run_options.cancel = cancel;
    run_options.kill_grace_seconds = options.kill_grace_seconds;
    auto session = sessions.find(plan.scenario);
    if (session != sessions.end()) run_options.session = session->second.session.get();
    return runtime.Execute(prepared.value(), run_options);
  };
  // A worker thread's entry: what its case throws ends that case as ERROR, not the process.
  auto work = [&](std::size_t i) {
    RunResult result;
    try {
      result = run_case(i);
    } catch (...) {
      result = NotRunResult(planned.value()[i], RunStatus::kError,
                            "running the case failed: " + CurrentExceptionText(), cancel);
    }
    finish(i, std::move(result));
  };

  for (std::size_t i = 0; i < n; ++i) {
    run.cases[i].entry = cases[i];
    run.cases[i].scenario = planned.value()[i].scenario;
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    while (done < n) {
      std::size_t next = n;
      for (std::size_t i = 0; i < n && next == n; ++i) {
        if (states[i] != State::kPending) continue;
        if (running >= options.max_parallel) break;
        bool local = is_host_bound(run.cases[i].scenario);
        if (local && running_local >= options.max_parallel_local) continue;
        next = i;
      }
      if (next == n) {
        changed.wait_for(lock, std::chrono::seconds(1));
        if (board.live()) {
          std::lock_guard<std::mutex> out_lock(out_mu);
          board.Update(BoardSnapshot(run, states, case_started, started));
        }
        continue;
      }
      states[next] = State::kRunning;
      case_started[next] = Clock::now();
      ++running;
      if (is_host_bound(run.cases[next].scenario)) ++running_local;
      threads.emplace_back(work, next);
    }
  }
  for (std::thread& thread : threads) thread.join();
  {
    std::lock_guard<std::mutex> out_lock(out_mu);
    board.Clear();
  }

  for (auto& [scenario, session] : sessions) {
    SessionReport report;
    report.scenario = scenario;
    report.cases = session.cases;
    if (session.session) {
      Result<std::map<std::string, std::string>> stats = GuardPluginCall(
          ExecutorLabel(scenario), "Stats()", [&] { return session.session->Stats(); });
      if (stats.ok()) {
        report.stats = std::move(stats.value());
      } else {
        report.stats["error"] = stats.status().ToString();
      }
    }
    run.sessions.push_back(std::move(report));
    session.session.reset();  // ends its watcher thread before the executor goes
  }
  run.finished_at = NowIso8601();
  run.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  Status written = WriteFileAtomic(run.run_dir + "/result.json", CasesToJson(run));
  if (!written.ok()) progress << "trtllm-run: error: " << written.ToString() << "\n";
  progress.flush();
  return run;
}

int ExitCodeForCases(const MultiRunResult& result) {
  static const RunStatus kBySeverity[] = {
      RunStatus::kError,  RunStatus::kOutOfMemory, RunStatus::kHangDetected, RunStatus::kTimeout,
      RunStatus::kFailed, RunStatus::kCancelled,   RunStatus::kSkipped};
  bool interrupted = false;
  for (const CaseOutcome& outcome : result.cases) {
    interrupted = interrupted || outcome.result.user_interrupt;
  }
  if (interrupted) return kExitUserInterrupt;
  for (RunStatus status : kBySeverity) {
    for (const CaseOutcome& outcome : result.cases) {
      if (outcome.result.status == status) return ExitCodeFor(outcome.result);
    }
  }
  return kExitPassed;
}

std::string CasesToJson(const MultiRunResult& result) {
  rapidjson::StringBuffer buffer;
  json::Writer writer(buffer);
  writer.SetIndent(' ', 2);
  writer.StartObject();
  json::WriteKey(&writer, "schema_version");
  writer.Int(1);
  json::WriteKey(&writer, "kind");
  json::WriteString(&writer, "cases");
  json::WriteKey(&writer, "status");
  int exit_code = ExitCodeForCases(result);
  json::WriteString(&writer, exit_code == kExitPassed ? "PASSED" : "NOT_PASSED");
  json::WriteKey(&writer, "exit_code");
  writer.Int(exit_code);
  json::WriteKey(&writer, "cases_file");
  json::WriteString(&writer, result.cases_file);
  json::WriteKey(&writer, "run_dir");
  json::WriteString(&writer, result.run_dir);
  json::WriteKey(&writer, "started_at");
  json::WriteString(&writer, result.started_at);
  json::WriteKey(&writer, "finished_at");
  json::WriteString(&writer, result.finished_at);
  json::WriteKey(&writer, "duration_seconds");
  writer.Double(result.duration_seconds);
  json::WriteKey(&writer, "max_parallel");
  writer.Int(result.max_parallel);
  json::WriteKey(&writer, "max_parallel_local");
  writer.Int(result.max_parallel_local);
  json::WriteKey(&writer, "counts");
  writer.StartObject();
  json::WriteKey(&writer, "total");
  writer.Int(static_cast<int>(result.cases.size()));
  for (RunStatus status :
       {RunStatus::kPassed, RunStatus::kFailed, RunStatus::kTimeout, RunStatus::kHangDetected,
        RunStatus::kCancelled, RunStatus::kOutOfMemory, RunStatus::kError, RunStatus::kSkipped}) {
    int count = 0;
    for (const CaseOutcome& outcome : result.cases) count += outcome.result.status == status;
    json::WriteKey(&writer, RunStatusName(status));
    writer.Int(count);
  }
  writer.EndObject();
  json::WriteKey(&writer, "sessions");
  writer.StartArray();
  for (const SessionReport& session : result.sessions) {
    writer.StartObject();
    json::WriteKey(&writer, "scenario");
    json::WriteString(&writer, session.scenario);
    json::WriteKey(&writer, "cases");
    writer.Int(session.cases);
    json::WriteKey(&writer, "shared");
    writer.Bool(!session.stats.empty());
    json::WriteKey(&writer, "stats");
    writer.StartObject();
    for (const auto& [key, value] : session.stats) {
      json::WriteKey(&writer, key);
      json::WriteString(&writer, value);
    }
    writer.EndObject();
    writer.EndObject();
  }
  writer.EndArray();
  json::WriteKey(&writer, "cases");
  writer.StartArray();
  for (const CaseOutcome& outcome : result.cases) {
    writer.StartObject();
    json::WriteKey(&writer, "index");
    writer.Int(outcome.entry.index);
    json::WriteKey(&writer, "name");
    json::WriteString(&writer, CaseLabel(outcome));
    json::WriteKey(&writer, "origin");
    json::WriteString(&writer, outcome.entry.origin);
    json::WriteKey(&writer, "scenario");
    json::WriteString(&writer, outcome.scenario);
    json::WriteKey(&writer, "status");
    json::WriteString(&writer, RunStatusName(outcome.result.status));
    json::WriteKey(&writer, "exit_code");
    writer.Int(ExitCodeFor(outcome.result));
    json::WriteKey(&writer, "job_id");
    json::WriteString(&writer, outcome.job_id);
    json::WriteKey(&writer, "work_dir");
    json::WriteString(&writer, outcome.result.work_dir);
    json::WriteKey(&writer, "duration_seconds");
    writer.Double(outcome.result.duration_seconds);
    json::WriteKey(&writer, "result");
    rapidjson::Document doc;
    doc.Parse(ResultToJson(outcome.result).c_str());
    if (doc.HasParseError()) {
      writer.Null();
    } else {
      doc.Accept(writer);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string CasesToJUnit(const MultiRunResult& result) {
  int failures = 0, skipped = 0;
  for (const CaseOutcome& outcome : result.cases) {
    skipped += outcome.result.status == RunStatus::kSkipped;
    failures +=
        outcome.result.status != RunStatus::kPassed && outcome.result.status != RunStatus::kSkipped;
  }
  char total_time[64];
  std::snprintf(total_time, sizeof total_time, "%.3f", std::max(0.0, result.duration_seconds));
  auto attr = [](const char* name, const std::string& value) {
    return std::string(" ") + name + "=\"" + XmlEscape(value) + "\"";
  };
  const std::string tests = std::to_string(result.cases.size());
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + attr("tests", tests) + attr("failures", std::to_string(failures)) +
         attr("errors", "0") + attr("time", total_time) + ">\n";
  xml += "  <testsuite" + attr("name", "trtllm-run") + attr("tests", tests) +
         attr("failures", std::to_string(failures)) + attr("errors", "0") +
         attr("skipped", std::to_string(skipped)) + attr("time", total_time) +
         attr("timestamp", result.started_at) + ">\n";
  xml += "    <properties>\n      <property" + attr("name", "run_dir") +
         attr("value", result.run_dir) + "/>\n    </properties>\n";
  for (const CaseOutcome& outcome : result.cases) {
    const RunResult& r = outcome.result;
    char seconds[64];
    std::snprintf(seconds, sizeof seconds, "%.3f", std::max(0.0, r.duration_seconds));
    std::string scenario = outcome.scenario.empty() ? "unknown" : outcome.scenario;
    std::string workflow = r.workflow_type.empty() ? "unknown" : r.workflow_type;
    xml += "    <testcase" + attr("classname", "trtllm-run." + scenario + "." + workflow) +
           attr("name", CaseLabel(outcome)) + attr("time", seconds) + ">\n";
    xml += "      <properties>\n";
    auto property = [&](const std::string& name, const std::string& value) {
      xml += "        <property" + attr("name", name) + attr("value", value) + "/>\n";
    };
    property("status", RunStatusName(r.status));
    property("origin", outcome.entry.origin);
    property("work_dir", r.work_dir);
    property("log_file", r.log_file);
    if (!outcome.job_id.empty()) property("job_id", outcome.job_id);
    xml += "      </properties>\n";
    if (r.status == RunStatus::kSkipped) {
      xml += "      <skipped" + attr("message", r.reason) + "/>\n";
    } else if (r.status != RunStatus::kPassed) {
      xml += "      " + FailureElement(r) + "\n";
    }
    std::string out;
    for (const std::string& line : r.log_tail) out += line + "\n";
    xml += "      <system-out>" + XmlEscape(out) + "</system-out>\n";
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string FormatCasesTable(const MultiRunResult& result) {
  std::vector<std::vector<std::string>> rows = {
      {"#", "case", "scenario", "job id", "status", "tests", "duration", "work dir"}};
  std::map<std::string, int> counts;
  for (const CaseOutcome& outcome : result.cases) {
    std::string label = CaseLabel(outcome);
    if (label.size() > 48) label = label.substr(0, 45) + "...";
    rows.push_back({std::to_string(outcome.entry.index), label, outcome.scenario,
                    outcome.job_id.empty() ? "-" : outcome.job_id,
                    RunStatusName(outcome.result.status),
                    outcome.result.tests ? FormatTestCounts(*outcome.result.tests) : "-",
                    Seconds(outcome.result.duration_seconds),
                    outcome.result.work_dir.empty() ? "-" : outcome.result.work_dir});
    ++counts[RunStatusName(outcome.result.status)];
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    text += line + "\n";
  }
  text += std::to_string(result.cases.size()) + " cases:";
  for (const auto& [status, count] : counts) text += " " + status + " " + std::to_string(count);
  text += "\ncombined result: " + result.run_dir + "/result.json";
  return text;
}

}  // namespace trtllm_run
