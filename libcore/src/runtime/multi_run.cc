// Many cases in one run (multi_run.h): planning all first, the bounded scheduler over
// Runtime::Execute with one executor session per scenario. The cases file is read in
// cases_file.cc, the combined reports are written in cases_report.cc.
#include "trtllm_run/multi_run.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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
#include <streambuf>
#include <thread>

#include "model/dir_util.h"
#include "model/plugin_call.h"
#include "placement/routing.h"
#include "runtime/cases_array.h"
#include "runtime/cases_dir.h"
#include "runtime/cases_report.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/supervise/progress.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---- Progress lines from many threads ----

// How a LineStream shows its lines on a terminal (a file or pipe gets every line whole).
enum class TerminalLines {
  kAll,       // every line, cut to the terminal's width
  kProblems,  // only lines that say warning or error, cut likewise: a case's own lines
};

// Written in a line before the part that a terminal must show whole (a case's verdict):
// the part before it is what gets cut. Never shown.
constexpr char kKeepWhole = '\x1f';

// An ostream whose complete lines go to `target` with `prefix`, one whole line at a time
// under `mu` (shared by every stream writing to the same target). On a terminal a line
// is cut to its width, so that one line stays one line on screen: at its end, or before
// its kKeepWhole part, which stays whole.
class LineStream : public std::ostream {
 public:
  // `before_line` (may be empty) runs under `mu` before each line, e.g. to erase a live
  // status line on the same terminal.
  LineStream(std::ostream* target, std::mutex* mu, std::string prefix,
             std::function<void()> before_line = {},
             TerminalLines on_terminal = TerminalLines::kAll)
      : std::ostream(&buffer_),
        buffer_(target, mu, std::move(prefix), std::move(before_line),
                IsTerminalStream(target) ? TerminalWidth(target) : 0, on_terminal) {}
  ~LineStream() override { buffer_.Flush(); }

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream* target, std::mutex* mu, std::string prefix,
           std::function<void()> before_line, std::size_t width, TerminalLines on_terminal)
        : target_(target),
          mu_(mu),
          prefix_(std::move(prefix)),
          before_line_(std::move(before_line)),
          width_(width),
          on_terminal_(on_terminal) {}
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
    // Whether a terminal shows `line` (TerminalLines).
    bool Shown(const std::string& line) const {
      if (width_ == 0 || on_terminal_ == TerminalLines::kAll) return true;
      return line.find("warning") != std::string::npos || line.find("error") != std::string::npos;
    }
    void Emit() {
      if (target_ != nullptr && Shown(line_)) {
        std::string text = prefix_ + line_;
        while (!text.empty() && text.back() == '\n') text.pop_back();
        std::string kept;  // shown whole after the cut
        if (std::size_t mark = text.rfind(kKeepWhole); mark != std::string::npos) {
          kept = text.substr(mark + 1);
          text.erase(mark);
          if (width_ > 0 && kept.size() + 4 > width_) {  // too narrow: cut it too
            text += kept;
            kept.clear();
          }
        }
        // The last column would wrap; the kept part needs its room, "..." too.
        if (width_ > 4 && text.size() + kept.size() >= width_) {
          std::size_t cut = width_ - 4 > kept.size() ? width_ - 4 - kept.size() : 0;
          while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
          text = text.substr(0, cut) + "...";
        }
        text += kept;
        std::lock_guard<std::mutex> lock(*mu_);
        if (before_line_) before_line_();
        *target_ << text << '\n';
        target_->flush();
      }
      line_.clear();
    }
    std::ostream* target_;
    std::mutex* mu_;
    std::string prefix_;
    std::function<void()> before_line_;
    std::size_t width_;  // 0: not a terminal
    TerminalLines on_terminal_;
    std::string line_;
  };
  Buffer buffer_;
};

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

// The live table of a cases run, from its two runners (each writes its part under the
// output mutex): the scheduler's cases and the job arrays' (cases_array.h).
struct BoardParts {
  std::size_t scheduled[3] = {0, 0, 0};  // the scheduler's cases: pending, running, done
  std::string slowest;                   // the scheduler's case running longest
  ArrayBoardCounts arrays;
};

// The scheduler's part of the board: how many of its cases run, wait and are done (the
// array cases, `in_arrays`, are the arrays' part), and its case running longest.
// `states[i]`: 0 pending, 1 running, 2 done.
template <typename State>
void ScheduledBoardPart(const MultiRunResult& run, const std::vector<State>& states,
                        const std::vector<bool>& in_arrays,
                        const std::vector<Clock::time_point>& case_started, BoardParts* parts) {
  std::size_t counts[3] = {0, 0, 0};
  std::optional<std::size_t> slowest;
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (in_arrays[i]) continue;
    int state = static_cast<int>(states[i]);
    ++counts[state];
    if (state == 1 && (!slowest || case_started[i] < case_started[*slowest])) slowest = i;
  }
  std::copy(std::begin(counts), std::end(counts), std::begin(parts->scheduled));
  parts->slowest.clear();
  if (slowest) {
    // Only what is fixed before the case starts: its worker writes the rest.
    const CaseOutcome& outcome = run.cases[*slowest];
    parts->slowest =
        "slowest: case " + std::to_string(outcome.entry.index) +
        (outcome.entry.name.empty() ? std::string() : " " + outcome.entry.name) + " (" +
        outcome.scenario + ") " +
        Seconds(std::chrono::duration<double>(Clock::now() - case_started[*slowest]).count());
  }
}

// "running R, pending P, done D/N": array tasks in Slurm's queue are pending, with their
// pending reasons after it ("(Slurm: 3 JobArrayTaskLimit)").
ProgressSnapshot BoardSnapshot(const BoardParts& parts, std::size_t total,
                               Clock::time_point started) {
  ProgressSnapshot snapshot;
  snapshot.state = "running " + std::to_string(parts.scheduled[1] + parts.arrays.running) +
                   ", pending " + std::to_string(parts.scheduled[0] + parts.arrays.queued) +
                   ", done " + std::to_string(parts.scheduled[2] + parts.arrays.done) + "/" +
                   std::to_string(total);
  std::string reasons;
  for (const auto& [reason, tasks] : parts.arrays.queued_reasons) {
    reasons += (reasons.empty() ? "" : ", ") + std::to_string(tasks) + " " + reason;
  }
  if (!reasons.empty()) snapshot.state += " (Slurm: " + reasons + ")";
  snapshot.elapsed_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  snapshot.last_line = parts.slowest;
  return snapshot;
}

}  // namespace

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

namespace {

// One session per scenario whose executor offers one; the executors outlive them.
struct Session {
  std::shared_ptr<Executor> executor;
  std::unique_ptr<LineStream> progress;  // the session's own lines (its own thread)
  std::unique_ptr<ExecutorSession> session;
  int cases = 0;
};

// Makes the run dir (into run->run_dir) and writes what later processes read
// (cases_dir.h) before any case starts; `run_lock` proves this process supervises.
Status SetUpRunDir(const std::vector<CaseEntry>& cases, const std::vector<PlannedCase>& planned,
                   const MultiRunOptions& options, std::ostream& progress, MultiRunResult* run,
                   std::unique_ptr<WorkDirLock>* run_lock, CasesState* cases_state) {
  std::string run_dir = options.run_dir;
  if (run_dir.empty()) {
    const std::string root = planned.front().request.repo_root.value_or(".");
    run_dir = (fs::path(root) / "work_dirs" / ("cases_" + LocalTimestamp())).string();
  }
  Result<std::string> made = CreateUniqueDir(run_dir, "run dir");
  if (!made.ok()) return made.status();
  run->run_dir = made.value();
  // What later processes read (cases_dir.h): the lock proves this process supervises.
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(run->run_dir);
  if (!lock.ok()) return lock.status();
  *run_lock = std::move(lock.value());
  cases_state->supervisor_pid = static_cast<int>(::getpid());
  cases_state->supervisor_start_time = ProcessStartTime(cases_state->supervisor_pid);
  cases_state->host = HostName();
  cases_state->started_at = run->started_at;
  cases_state->work_dirs.resize(cases.size());
  std::vector<CaseEntry> inputs = cases;  // as given, with the repo root they resolved to
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i].request.repo_root = planned[i].request.repo_root;
  }
  for (const Status& written :
       {WriteCasesInput(run->run_dir, inputs), WriteCasesState(run->run_dir, *cases_state)}) {
    if (!written.ok()) progress << "trtllm-run: warning: " << written.ToString() << "\n";
  }
  return Status::Ok();
}

// One session per scenario of `planned` whose executor offers one (else its cases run
// through Execute() on threads of their own), and the scenarios whose jobs share this
// host's GPUs (ExecutorTraits::host_bound).
void OpenSessions(Runtime& runtime, const std::vector<PlannedCase>& planned,
                  const std::vector<bool>& in_arrays, const MultiRunOptions& options,
                  CancellationToken* cancel, std::mutex* out_mu,
                  const std::function<void()>& clear_board, std::ostream& progress,
                  std::map<std::string, Session>* sessions, std::set<std::string>* host_bound) {
  for (std::size_t i = 0; i < planned.size(); ++i) {
    if (in_arrays[i]) continue;  // RunArrayCases follows them
    const PlannedCase& plan = planned[i];
    auto [it, inserted] = sessions->try_emplace(plan.scenario);
    ++it->second.cases;
    if (!inserted) continue;
    Result<std::shared_ptr<Executor>> executor = runtime.registry().CreateExecutor(plan.scenario);
    if (!executor.ok()) continue;  // Execute() reports it per case
    if (executor.value()->Traits().host_bound) host_bound->insert(plan.scenario);
    it->second.progress = std::make_unique<LineStream>(options.progress, out_mu, "", clear_board);
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
  for (const auto& [scenario, session] : *sessions) {
    progress << "trtllm-run: " << session.cases << " " << scenario
             << " case(s): " << (session.session ? "one shared session" : "one worker thread each")
             << "\n";
  }
}

// Each session's report (with its Stats()) into run->sessions; ends the sessions.
void CloseSessions(std::map<std::string, Session>* sessions, MultiRunResult* run) {
  for (auto& entry : *sessions) {
    // Named, not structured bindings: C++17 lambdas cannot capture those.
    const std::string& scenario = entry.first;
    Session& session = entry.second;
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
    run->sessions.push_back(std::move(report));
    session.session.reset();  // ends its watcher thread before the executor goes
  }
}

// What the scheduler of a cases run and its worker threads share with RunCases.
struct RunContext {
  Runtime& runtime;
  const MultiRunOptions& options;
  const std::vector<PlannedCase>& planned;
  const std::map<std::string, Session>& sessions;
  const std::set<std::string>& host_bound;
  CancellationToken* cancel;
  std::mutex& out_mu;  // the lines of `options.progress`
  ProgressReporter& board;
  BoardParts& board_parts;  // guarded by out_mu
  const std::function<void()>& clear_board;
  std::ostream& progress;
  CasesState& cases_state;
  std::mutex& state_mu;  // `cases_state` and its file
  Clock::time_point started;
  const std::vector<bool>& in_arrays;    // cases RunArrayCases runs, not the scheduler
  std::atomic<std::size_t>& done_total;  // verdicts so far, both runners together
};

// Records the verdict `result` of case `i` in `run` and prints its line on `progress`
// (the caller's own stream: a LineStream is one thread's).
void ReportVerdict(const RunContext& ctx, std::size_t i, RunResult result, std::ostream& progress,
                   MultiRunResult* run) {
  CaseOutcome& outcome = run->cases[i];
  outcome.result = std::move(result);
  auto job = outcome.result.details.find("job_id");
  if (job != outcome.result.details.end()) outcome.job_id = job->second;
  if (ctx.options.on_verdict) ctx.options.on_verdict(outcome);
  const std::size_t done = ++ctx.done_total;
  progress << "trtllm-run: [" << done << "/" << ctx.planned.size() << "] " << outcome.entry.origin
           << " " << CaseLabel(outcome) << kKeepWhole << ": "
           << RunStatusName(outcome.result.status)
           << (outcome.job_id.empty() ? "" : " (job " + outcome.job_id + ")") << " in "
           << Seconds(outcome.result.duration_seconds) << "\n";
}

// Joins the threads of the cases in `*finished` (each has passed its last lock of the
// scheduler's mutex, held in `*lock`, so each join waits only for the thread to return),
// unlocking while it joins.
void JoinFinished(std::unique_lock<std::mutex>* lock, std::vector<std::size_t>* finished,
                  std::map<std::size_t, std::thread>* threads) {
  if (finished->empty()) return;
  std::vector<std::thread> ending;
  for (std::size_t index : *finished) {
    auto it = threads->find(index);
    if (it == threads->end()) continue;
    ending.push_back(std::move(it->second));
    threads->erase(it);
  }
  finished->clear();
  lock->unlock();
  for (std::thread& thread : ending) thread.join();
  lock->lock();
}

// Runs every case of `run->cases` (entry and scenario set), each on a thread of its own,
// while fewer than --max-parallel (host-bound scenarios: --max-parallel-local) run.
void ScheduleCases(const RunContext& ctx, MultiRunResult* run_result) {
  MultiRunResult& run = *run_result;
  const MultiRunOptions& options = ctx.options;
  std::ostream& progress = ctx.progress;
  CancellationToken* cancel = ctx.cancel;
  const std::size_t n = ctx.planned.size();
  enum class State { kPending, kRunning, kDone };
  std::vector<State> states(n, State::kPending);
  // Cases whose job is ending (ExecContext::job_ending): their place went to the next case
  // while their verdict waits for the controller.
  std::vector<bool> place_freed(n, false);
  std::vector<Clock::time_point> case_started(n);
  std::mutex mu;
  std::condition_variable changed;
  int running = 0, running_local = 0;
  std::size_t done = 0;
  // Case threads by case index, joined as their cases finish: a finished thread that is
  // not joined keeps its stack (and what its malloc arena holds) until the run ends.
  std::map<std::size_t, std::thread> threads;
  std::vector<std::size_t> finished;  // guarded by mu: cases whose thread is about to end

  auto is_host_bound = [&](const std::string& scenario) {
    return ctx.host_bound.count(scenario) > 0;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!ctx.in_arrays[i]) continue;
    states[i] = State::kDone;  // RunArrayCases' own
    ++done;
  }
  auto finish = [&](std::size_t i, RunResult result) {
    std::lock_guard<std::mutex> lock(mu);
    ReportVerdict(ctx, i, std::move(result), progress, &run);
    states[i] = State::kDone;
    if (!place_freed[i]) {
      --running;
      if (is_host_bound(run.cases[i].scenario)) --running_local;
    }
    ++done;
    finished.push_back(i);
    changed.notify_all();
  };

  auto run_case = [&](std::size_t i) -> RunResult {
    const PlannedCase& plan = ctx.planned[i];
    if (cancel->cancelled()) {  // never started: no work dir is made for it
      return NotRunResult(plan, RunStatus::kCancelled, "cancelled before the case started", cancel);
    }
    Result<PreparedCase> prepared = ctx.runtime.PreparePlanned(plan);
    if (!prepared.ok()) {
      return NotRunResult(plan, RunStatus::kError,
                          "preparing the work dir failed: " + prepared.status().ToString(), cancel);
    }
    {
      std::lock_guard<std::mutex> lock(ctx.state_mu);
      ctx.cases_state.work_dirs[i] = prepared->spec.work_dir;
      Status written = RecordCaseOfRun(prepared->spec.work_dir, run.run_dir);
      if (written.ok()) written = WriteCasesState(run.run_dir, ctx.cases_state);
      if (!written.ok()) progress << "trtllm-run: warning: " << written.ToString() << "\n";
    }
    // On a terminal a case shows one line, its verdict's (`finish`), and its problems:
    // its other lines (submitted, running, ...) are the live board's job.
    LineStream case_progress(options.progress, &ctx.out_mu,
                             "[case " + std::to_string(run.cases[i].entry.index) + "] ",
                             ctx.clear_board, TerminalLines::kProblems);
    RunOptions run_options;
    run_options.terminal = nullptr;  // the job's output stays in its work dir
    run_options.progress = &case_progress;
    run_options.cancel = cancel;
    run_options.kill_grace_seconds = options.kill_grace_seconds;
    run_options.finalize = options.finalize;
    run_options.job_ending = [&, i] {
      std::lock_guard<std::mutex> lock(mu);
      if (states[i] != State::kRunning || place_freed[i]) return;
      place_freed[i] = true;
      --running;
      if (is_host_bound(run.cases[i].scenario)) --running_local;
      changed.notify_all();
    };
    auto session = ctx.sessions.find(plan.scenario);
    if (session != ctx.sessions.end()) run_options.session = session->second.session.get();
    return ctx.runtime.Execute(prepared.value(), run_options);
  };
  // A worker thread's entry: what its case throws ends that case as ERROR, not the process.
  auto work = [&](std::size_t i) {
    RunResult result;
    try {
      result = run_case(i);
    } catch (...) {
      result = NotRunResult(ctx.planned[i], RunStatus::kError,
                            "running the case failed: " + CurrentExceptionText(), cancel);
    }
    finish(i, std::move(result));
  };

  {
    std::unique_lock<std::mutex> lock(mu);
    while (done < n) {
      JoinFinished(&lock, &finished, &threads);
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
        if (ctx.board.live()) {
          std::lock_guard<std::mutex> out_lock(ctx.out_mu);
          ScheduledBoardPart(run, states, ctx.in_arrays, case_started, &ctx.board_parts);
          ctx.board.Update(BoardSnapshot(ctx.board_parts, n, ctx.started));
        }
        continue;
      }
      states[next] = State::kRunning;
      case_started[next] = Clock::now();
      ++running;
      if (is_host_bound(run.cases[next].scenario)) ++running_local;
      threads.emplace(next, std::thread(work, next));
    }
  }
  for (auto& [index, thread] : threads) thread.join();
  {
    std::lock_guard<std::mutex> out_lock(ctx.out_mu);
    ctx.board.Clear();
  }
}

}  // namespace

namespace {

// RunCases, with local_slurm cases as job arrays when `slurm_arrays`.
Result<MultiRunResult> RunCasesWith(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                    const MultiRunOptions& options, bool slurm_arrays) {
  if (cases.empty()) return Status::InvalidInput("no cases to run");
  if (options.max_parallel < 1 || options.max_parallel_local < 1) {
    return Status::InvalidInput("--max-parallel and --max-parallel-local must be >= 1");
  }
  std::mutex out_mu;
  // On a terminal, one live line (the table of the run) under the case lines.
  ProgressReporter board(options.progress, IsTerminalStream(options.progress), "cases");
  const std::function<void()> clear_board = [&board] { board.Clear(); };
  LineStream progress(options.progress, &out_mu, "", clear_board);
  Result<std::vector<PlannedCase>> planned = PlanCases(runtime, cases, &progress);
  if (!planned.ok()) return planned.status();

  MultiRunResult run;
  run.cases_file = options.cases_file;
  run.max_parallel = options.max_parallel;
  run.max_parallel_local = options.max_parallel_local;
  run.started_at = NowIso8601();
  auto started = Clock::now();
  std::unique_ptr<WorkDirLock> run_lock;
  CasesState cases_state;
  TRTLLM_RUN_RETURN_IF_ERROR(
      SetUpRunDir(cases, planned.value(), options, progress, &run, &run_lock, &cases_state));
  std::mutex state_mu;

  CancellationToken own_cancel;
  CancellationToken* cancel = options.cancel ? options.cancel : &own_cancel;
  // local_slurm cases as job arrays (cases_array.h), unless `slurm_arrays` is off.
  std::vector<bool> in_arrays(planned->size(), false);
  std::vector<std::size_t> array_cases;
  for (std::size_t i = 0; i < planned->size(); ++i) {
    const PlannedCase& plan = planned.value()[i];
    if (slurm_arrays && plan.scenario == kLocalSlurmExecutor &&
        !plan.request.persistent_mode.value_or(false)) {
      in_arrays[i] = true;
      array_cases.push_back(i);
    }
  }
  std::map<std::string, Session> sessions;
  std::set<std::string> host_bound;
  OpenSessions(runtime, planned.value(), in_arrays, options, cancel, &out_mu, clear_board, progress,
               &sessions, &host_bound);

  run.cases.resize(planned->size());
  for (std::size_t i = 0; i < planned->size(); ++i) {
    run.cases[i].entry = cases[i];
    run.cases[i].scenario = planned.value()[i].scenario;
  }
  std::atomic<std::size_t> done_total{0};
  BoardParts board_parts;
  const RunContext context{runtime,  options, planned.value(), sessions,    host_bound, cancel,
                           out_mu,   board,   board_parts,     clear_board, progress,   cases_state,
                           state_mu, started, in_arrays,       done_total};
  // The scheduler's cases on one thread while the arrays' loop runs here (no thread per case).
  std::thread scheduler;
  if (array_cases.size() < planned->size()) {
    scheduler = std::thread([&] { ScheduleCases(context, &run); });
  }
  if (!array_cases.empty()) {
    LineStream array_progress(options.progress, &out_mu, "", clear_board);
    ArrayRunOptions array_options;
    array_options.run_dir = run.run_dir;
    array_options.max_parallel = options.max_parallel;
    array_options.kill_grace_seconds = options.kill_grace_seconds;
    array_options.progress = &array_progress;
    array_options.cancel = cancel;
    array_options.finalize = options.finalize;
    array_options.on_prepared = [&](std::size_t i, const std::string& work_dir) {
      std::lock_guard<std::mutex> lock(state_mu);
      cases_state.work_dirs[i] = work_dir;
      Status written = RecordCaseOfRun(work_dir, run.run_dir);
      if (!written.ok()) array_progress << "trtllm-run: warning: " << written.ToString() << "\n";
    };
    array_options.on_all_prepared = [&] {  // once, not once per case (N rewrites of N dirs)
      std::lock_guard<std::mutex> lock(state_mu);
      Status written = WriteCasesState(run.run_dir, cases_state);
      if (!written.ok()) array_progress << "trtllm-run: warning: " << written.ToString() << "\n";
    };
    array_options.on_progress = [&](const ArrayBoardCounts& counts) {
      std::lock_guard<std::mutex> lock(out_mu);
      board_parts.arrays = counts;
      if (board.live()) board.Update(BoardSnapshot(board_parts, planned->size(), started));
    };
    array_options.on_done = [&](std::size_t i, RunResult result) {
      ReportVerdict(context, i, std::move(result), array_progress, &run);
    };
    SessionReport report;
    report.scenario = kLocalSlurmExecutor;
    report.cases = static_cast<int>(array_cases.size());
    report.stats = RunArrayCases(runtime, planned.value(), array_cases, array_options);
    run.sessions.push_back(std::move(report));
  }
  if (scheduler.joinable()) scheduler.join();
  {
    std::lock_guard<std::mutex> out_lock(out_mu);
    board.Clear();  // the arrays' part may have drawn it after the scheduler cleared it
  }
  CloseSessions(&sessions, &run);
  run.finished_at = NowIso8601();
  run.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  Status written = WriteFileAtomic(run.run_dir + "/result.json", CasesToJson(run));
  if (!written.ok()) progress << "trtllm-run: error: " << written.ToString() << "\n";
  progress.flush();
  return run;
}

}  // namespace

Result<MultiRunResult> RunCases(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                const MultiRunOptions& options) {
  return RunCasesWith(runtime, cases, options, SlurmArraysEnabled());
}

Result<MultiRunResult> RunCasesPerCase(Runtime& runtime, const std::vector<CaseEntry>& cases,
                                       const MultiRunOptions& options) {
  return RunCasesWith(runtime, cases, options, /*slurm_arrays=*/false);
}

}  // namespace trtllm_run
