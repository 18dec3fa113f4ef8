// trtllm-run status / attach / cancel: a work dir seen later, from another process
// (workdir.h: job_spec.json + run_state.json + result.json), or the directory of a
// `run --cases` run (cases_dir.h, cmd_cases.cc).
#include <fcntl.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"
#include "trtllm_run/workdir_cancel.h"
#include "trtllm_run/workdir_state.h"

namespace trtllm_run::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Parses "<subcommand> [options] WORK_DIR" (cli.h Parse); `work_dir` gets the absolute,
// normalized path. Returns an exit code when parsing ended the command (--help, an error).
std::optional<int> ParseWithWorkDir(const std::string& subcommand, int argc, char** argv,
                                    const po::options_description& visible, po::variables_map* vm,
                                    std::string* work_dir) {
  CommandUsage usage;
  usage.positional = "WORK_DIR";
  if (std::optional<int> done = Parse(subcommand, argc, argv, visible, vm, usage)) return done;
  Result<std::string> named = WorkDirArgument(Positional(*vm));
  if (!named.ok()) return Fail(subcommand, named.status());
  *work_dir = named.value();
  return std::nullopt;
}

// The work dir's files as ReadWorkDirState reads them (nobody else is asked).
Result<WorkDirInfo> Inspect(const std::string& work_dir) {
  WorkDirStateOptions files_only;
  files_only.log_lines = 0;
  Result<WorkDirState> state = ReadWorkDirState(work_dir, files_only);
  if (!state.ok()) return state.status();
  return std::move(state.value().info);
}

void Line(std::ostream& out, const std::string& label, const std::string& value) {
  std::string head = label + ":";
  head.resize(std::max<std::size_t>(head.size() + 1, 12), ' ');
  out << head << value << "\n";
}

std::string StatusJson(const WorkDirState& state) {
  const WorkDirInfo& info = state.info;
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  auto str_or_null = [&](const char* key, const std::string& value) {
    w.Key(key);
    if (value.empty()) {
      w.Null();
    } else {
      w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
    }
  };
  w.StartObject();
  str("work_dir", info.work_dir);
  str("phase", WorkDirPhaseName(info.phase));
  str("scenario", info.spec.scenario);
  str("log_file", info.log_file);
  w.Key("log_bytes");
  w.Uint64(state.log_bytes);
  w.Key("supervisor_alive");
  w.Bool(info.supervisor_alive);
  w.Key("job_process_alive");
  w.Bool(info.job_process_alive);
  w.Key("same_host");
  w.Bool(info.same_host);
  str("container_name", state.container_name);
  str("container_state", state.job.container_state);
  str_or_null("job_id", info.state ? info.state->job_id : "");
  str_or_null("scheduler_state", state.job.scheduler_state);
  str_or_null("scheduler_reason", state.job.scheduler_reason);
  w.Key("result");
  if (info.result) {
    rapidjson::Document doc;
    std::string text = ResultToJson(*info.result);
    doc.Parse(text.c_str());
    doc.Accept(w);
  } else {
    w.Null();
  }
  w.Key("problems");
  w.StartArray();
  for (const std::string& problem : info.problems) w.String(problem.c_str());
  if (!info.log_refused.empty()) w.String(info.log_refused.c_str());
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

// Prints the new bytes of the log (switching files when run_state.json names another), in
// chunks of 64 KiB, until its end or until `cancel_` is cancelled: memory stays constant
// and Ctrl-C is seen between chunks, however large the log. The log is opened as
// OpenWorkDirFile allows: a regular file beneath the work dir, no symlink on the way.
class LogPump {
 public:
  LogPump(std::ostream* out, std::string work_dir, const CancellationToken* cancel)
      : out_(out), work_dir_(std::move(work_dir)), cancel_(cancel) {}
  void Pump(const std::string& path) {
    if (path != path_) {
      path_ = path;
      offset_ = 0;
    }
    if (path_.empty()) return;
    Result<int> opened = OpenWorkDirFile(work_dir_, path_);
    if (!opened.ok()) return;
    int fd = opened.value();
    struct stat st;
    std::uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    if (size < offset_) offset_ = 0;  // truncated: read it again
    char buffer[65536];
    while (!cancel_->cancelled()) {
      ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(offset_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out_->write(buffer, n);
      offset_ += static_cast<std::uint64_t>(n);
    }
    out_->flush();
    ::close(fd);
  }

 private:
  std::ostream* out_;
  std::string work_dir_;
  const CancellationToken* cancel_;
  std::string path_;
  std::uint64_t offset_ = 0;
};

// What `cancel --json` prints: {"work_dir", "cancelled", "result": result.json or null}.
std::string CancelJson(const std::string& work_dir, bool cancelled, const RunResult* result) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("work_dir");
  w.String(work_dir.c_str(), static_cast<rapidjson::SizeType>(work_dir.size()));
  w.Key("cancelled");
  w.Bool(cancelled);
  w.Key("result");
  if (result) {
    rapidjson::Document doc;
    std::string text = ResultToJson(*result);
    doc.Parse(text.c_str());
    doc.Accept(w);
  } else {
    w.Null();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace

int StatusMain(int argc, char** argv) {
  po::options_description options("Status");
  options.add_options()("json", po::bool_switch(),
                        "print a JSON object (phase, run state, result) instead of text");
  options.add(PluginOptions());
  po::variables_map vm;
  std::string work_dir;
  if (auto done = ParseWithWorkDir("status", argc, argv, options, &vm, &work_dir)) return *done;
  if (IsCasesDir(work_dir)) return CasesDirStatus(work_dir, vm["json"].as<bool>());
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  WorkDirStateOptions read_options;
  if (runtime.ok()) read_options.registry = &runtime.value()->registry();
  Result<WorkDirState> read = ReadWorkDirState(work_dir, read_options);
  if (!read.ok()) return Fail("status", read.status());
  const WorkDirState& state = read.value();
  const WorkDirInfo& info = state.info;
  std::string executor_problem = state.describe_problem;
  if (!runtime.ok() && info.phase != WorkDirPhase::kFinished && info.same_host) {
    executor_problem = "the executor was not asked: " + runtime.status().ToString();
  }
  const JobDescription& described = state.job;
  const std::string& container_state = described.container_state;
  if (vm["json"].as<bool>()) {
    std::cout << StatusJson(state);
    return 0;
  }
  std::ostream& out = std::cout;
  Line(out, "work dir", info.work_dir);
  Line(out, "scenario",
       info.spec.scenario + " (" + info.spec.workflow_type + ", model " + info.spec.model_name +
           ")");
  Line(out, "state", WorkDirPhaseName(info.phase));
  for (const std::string& problem : info.problems) Line(out, "warning", problem);
  if (!executor_problem.empty()) Line(out, "warning", executor_problem);
  if (info.phase == WorkDirPhase::kFinished) {
    out << FormatSummary(*info.result) << "\n";
    return 0;
  }
  for (const auto& [label, value] : described.facts) Line(out, label, value);
  if (info.phase == WorkDirPhase::kNotStarted) {
    Line(out, "detail", "job_spec.json only: prepared (trtllm-run plan) or not started yet");
    return 0;
  }
  const RunState& run = *info.state;
  if (!info.same_host) {
    Line(out, "supervisor",
         "pid " + std::to_string(run.supervisor_pid) + " on host " + run.host +
             " (another host: not checked from here)");
  } else {
    Line(
        out, "supervisor",
        "pid " + std::to_string(run.supervisor_pid) + (info.supervisor_alive ? " alive" : " gone"));
    if (run.pid > 0) {
      Line(out, "process",
           "pid " + std::to_string(run.pid) + (info.job_process_alive ? " alive" : " gone"));
    }
  }
  if (!state.container_name.empty()) {
    Line(out, "container",
         state.container_name + (container_state.empty() ? "" : " (" + container_state + ")"));
  }
  if (!run.job_id.empty()) Line(out, "job id", run.job_id);
  if (!run.started_at.empty()) Line(out, "started", run.started_at);
  if (!run.state.empty()) Line(out, "run state", run.state);
  if (info.log_file.empty()) {
    Line(out, "log file", info.log_refused);
  } else {
    Line(out, "log file", info.log_file + " (" + std::to_string(state.log_bytes) + " bytes)");
  }
  if (!state.last_lines.empty()) Line(out, "last line", state.last_lines.back());
  if (info.phase == WorkDirPhase::kAbandoned) {
    Line(out, "detail",
         "the supervising trtllm-run is gone and wrote no result.json; `trtllm-run cancel " +
             info.work_dir + "` stops what is left");
  }
  return 0;
}

int AttachMain(int argc, char** argv) {
  po::options_description options("Attach");
  options.add_options()("json", po::bool_switch(),
                        "print result.json on stdout at the end; the log goes to stderr")(
      "wait-start", DurationValue("10s"),
      "how long to wait for a run that has not started yet (no run_state.json)")(
      "poll", DurationValue("0.25s"), "the time between looks at the log");
  po::variables_map vm;
  std::string work_dir;
  if (auto done = ParseWithWorkDir("attach", argc, argv, options, &vm, &work_dir)) return *done;
  const bool json = vm["json"].as<bool>();
  Result<double> poll_flag = DurationFlag(vm, "poll", /*fractions=*/true);
  if (!poll_flag.ok()) return Fail("attach", poll_flag.status());
  Result<double> wait_start = DurationFlag(vm, "wait-start", /*fractions=*/true);
  if (!wait_start.ok()) return Fail("attach", wait_start.status());
  const double poll = std::max(0.01, poll_flag.value());
  if (IsCasesDir(work_dir)) return CasesDirAttach(work_dir, json, poll);
  std::ostream* log_out = json ? &std::cerr : &std::cout;

  CancellationToken cancel;
  ScopedSignalCancellation on_signal(&cancel, {SIGINT, SIGTERM, SIGHUP});
  Clock::time_point began = Clock::now();
  LogPump pump(log_out, work_dir, &cancel);
  while (true) {
    Result<WorkDirInfo> inspected = Inspect(work_dir);
    if (!inspected.ok()) return Fail("attach", inspected.status());
    const WorkDirInfo& info = inspected.value();
    if (info.phase == WorkDirPhase::kNotStarted) {
      if (Seconds(Clock::now() - began) >= wait_start.value()) {
        return Fail(
            "attach",
            Status::InvalidInput(
                "nothing runs in " + work_dir + ": it has no run_state.json and no result.json",
                "prepared with `trtllm-run plan`? run it with `trtllm-run exec " + work_dir + "`"));
      }
    } else {
      if (info.log_file.empty() && !info.log_refused.empty()) {
        return Fail("attach",
                    Status::InvalidInput(info.log_refused,
                                         "attach follows only a regular file inside the work dir; "
                                         "`trtllm-run status " +
                                             work_dir + "` shows the rest"));
      }
      pump.Pump(info.log_file);
      if (cancel.cancelled()) break;  // mid-log: the verdict is not printed
      if (info.phase == WorkDirPhase::kFinished) {
        std::cerr << "\n" << FormatSummary(*info.result) << "\n";
        if (json) std::cout << ResultToJson(*info.result) << std::flush;
        return ExitCodeFor(*info.result);
      }
      if (info.phase == WorkDirPhase::kAbandoned) {
        // The supervisor may have written result.json just after we looked.
        Result<WorkDirInfo> again = Inspect(work_dir);
        if (again.ok() && again->phase == WorkDirPhase::kFinished) continue;
        std::cerr << "trtllm-run attach: error: the supervising trtllm-run (pid "
                  << info.state->supervisor_pid << ") of " << work_dir
                  << " ended without writing result.json; the verdict is unknown\n"
                  << "  hint: `trtllm-run status " << work_dir
                  << "` shows what is left; `trtllm-run cancel " << work_dir << "` stops it\n";
        return kExitError;
      }
    }
    if (cancel.cancelled()) break;
    pollfd woken{cancel.wait_fd(), POLLIN, 0};  // the poll interval, or a signal
    ::poll(&woken, 1, static_cast<int>(poll * 1000));
  }
  std::cerr << "\ntrtllm-run attach: detached; the job keeps running (`trtllm-run cancel "
            << work_dir << "` stops it)\n";
  return kExitUserInterrupt;
}

int CancelMain(int argc, char** argv) {
  po::options_description options("Cancel");
  options.add_options()("kill-grace", DurationValue("10s"),
                        "time between the stop request and the kill, when trtllm-run stops "
                        "the job itself")(
      "wait", DurationValue(),
      "how long to wait for the supervising trtllm-run to stop the job and write its verdict "
      "(default: its kill grace + 30s)")("json", po::bool_switch(),
                                         "print the verdict as result.json on stdout");
  options.add(PluginOptions());
  po::variables_map vm;
  std::string work_dir;
  if (auto done = ParseWithWorkDir("cancel", argc, argv, options, &vm, &work_dir)) return *done;
  Result<int> kill_grace_flag = KillGraceFlag(vm);
  if (!kill_grace_flag.ok()) return Fail("cancel", kill_grace_flag.status());
  const int kill_grace = kill_grace_flag.value();
  std::optional<double> wait_flag;
  if (vm.count("wait")) {
    Result<double> wait = DurationFlag(vm, "wait", /*fractions=*/true);
    if (!wait.ok()) return Fail("cancel", wait.status());
    wait_flag = wait.value();
  }
  if (IsCasesDir(work_dir)) {
    return CasesDirCancel(work_dir, wait_flag.value_or(kill_grace + 60.0), kill_grace);
  }

  // The whole protocol (ownership proof, the supervisor, the executor, the verdict) is the
  // library's (workdir_cancel.h); this prints what it did.
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("cancel", runtime.status());
  CancelWorkDirOptions cancel;
  cancel.kill_grace_seconds = kill_grace;
  cancel.wait_seconds = wait_flag;
  cancel.progress = &std::cerr;
  Result<CancelWorkDirReport> report = CancelWorkDir(runtime.value()->registry(), work_dir, cancel);
  if (!report.ok()) return Fail("cancel", report.status());
  const bool json = vm["json"].as<bool>();
  std::ostream& text = json ? std::cerr : std::cout;
  if (!report->summary.empty()) text << report->summary << "\n";
  if (json && report->stop_status.ok()) {
    std::cout << CancelJson(work_dir, report->cancelled,
                            report->result ? &*report->result : nullptr);
  }
  if (!report->stop_status.ok()) return Fail("cancel", report->stop_status);
  return 0;
}

}  // namespace trtllm_run::cli
