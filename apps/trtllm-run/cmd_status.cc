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
#include <thread>

#include "cli.h"
#include "runtime/cases_dir.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

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
  std::error_code error;
  *work_dir = std::filesystem::absolute(Positional(*vm), error).lexically_normal().string();
  while (work_dir->size() > 1 && work_dir->back() == '/') work_dir->pop_back();
  return std::nullopt;
}

Result<WorkDirInfo> Inspect(const std::string& work_dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(work_dir, error)) {
    return Status::NotFound("work dir '" + work_dir + "' does not exist",
                            "give a directory under <repo>/work_dirs/ made by trtllm-run");
  }
  Result<WorkDirInfo> info = InspectWorkDir(work_dir);
  if (!info.ok()) {
    return Status::InvalidInput(
        "'" + work_dir + "' is not a trtllm-run work dir: " + info.status().message(),
        "a work dir holds job_spec.json, written when a case is prepared");
  }
  return info;
}

// The size of the work dir's log, 0 when it cannot be opened as one (OpenWorkDirFile).
std::uint64_t LogSize(const WorkDirInfo& info) {
  if (info.log_file.empty()) return 0;
  Result<int> fd = OpenWorkDirFile(info.work_dir, info.log_file);
  if (!fd.ok()) return 0;
  struct stat st;
  std::uint64_t size = ::fstat(fd.value(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  ::close(fd.value());
  return size;
}

// The last non-empty line of the log's last 8 KiB.
std::string LastLogLine(const WorkDirInfo& info) {
  if (info.log_file.empty()) return "";
  Result<int> opened = OpenWorkDirFile(info.work_dir, info.log_file);
  if (!opened.ok()) return "";
  int fd = opened.value();
  struct stat st;
  std::uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::uint64_t start = size > 8192 ? size - 8192 : 0;
  std::string text(static_cast<std::size_t>(size - start), '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), static_cast<off_t>(start));
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  std::size_t newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

std::string ContainerName(const WorkDirInfo& info) {
  if (info.state && !info.state->container_name.empty()) return info.state->container_name;
  return info.spec.container_name;
}

// What the work dir's executor says about its job (Executor::DescribeJob): asked for a
// run of this host that has not finished. A problem reaching the executor is returned
// in `problem`, and the description is empty.
JobDescription DescribeWithExecutor(const po::variables_map& vm, const WorkDirInfo& info,
                                    std::string* problem) {
  if (info.phase == WorkDirPhase::kFinished || !info.same_host) return {};
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) {
    *problem = "the executor was not asked: " + runtime.status().ToString();
    return {};
  }
  Result<std::shared_ptr<Executor>> executor =
      runtime.value()->registry().CreateExecutor(info.spec.scenario);
  if (!executor.ok()) {
    *problem = "the executor was not asked: " + executor.status().ToString();
    return {};
  }
  try {
    return executor.value()->DescribeJob(info.spec, info.state ? &*info.state : nullptr);
  } catch (const std::exception& e) {
    *problem = "executor " + info.spec.scenario + " could not describe the job: " + e.what();
  } catch (...) {
    *problem = "executor " + info.spec.scenario + " could not describe the job";
  }
  return {};
}

void Line(std::ostream& out, const std::string& label, const std::string& value) {
  std::string head = label + ":";
  head.resize(std::max<std::size_t>(head.size() + 1, 12), ' ');
  out << head << value << "\n";
}

std::string StatusJson(const WorkDirInfo& info, const std::string& container_state) {
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  auto str = [&](const char* key, const std::string& value) {
    w.Key(key);
    w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  w.StartObject();
  str("work_dir", info.work_dir);
  str("phase", WorkDirPhaseName(info.phase));
  str("scenario", info.spec.scenario);
  str("log_file", info.log_file);
  w.Key("log_bytes");
  w.Uint64(LogSize(info));
  w.Key("supervisor_alive");
  w.Bool(info.supervisor_alive);
  w.Key("job_process_alive");
  w.Bool(info.job_process_alive);
  w.Key("same_host");
  w.Bool(info.same_host);
  str("container_name", ContainerName(info));
  str("container_state", container_state);
  w.Key("job_id");
  if (info.state && !info.state->job_id.empty()) {
    w.String(info.state->job_id.c_str());
  } else {
    w.Null();
  }
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

int GraceOf(const WorkDirInfo& info, int fallback) {
  if (!info.state) return fallback;
  auto it = info.state->extra.find("kill_grace_seconds");
  if (it == info.state->extra.end()) return fallback;
  try {
    return std::min(3600, std::max(0, std::stoi(it->second)));  // read from the work dir
  } catch (const std::exception&) {
    return fallback;
  }
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
  Result<WorkDirInfo> inspected = Inspect(work_dir);
  if (!inspected.ok()) return Fail("status", inspected.status());
  const WorkDirInfo& info = inspected.value();
  std::string executor_problem;
  const JobDescription described = DescribeWithExecutor(vm, info, &executor_problem);
  const std::string& container_state = described.container_state;
  if (vm["json"].as<bool>()) {
    std::cout << StatusJson(info, container_state);
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
  const RunState& state = *info.state;
  if (!info.same_host) {
    Line(out, "supervisor",
         "pid " + std::to_string(state.supervisor_pid) + " on host " + state.host +
             " (another host: not checked from here)");
  } else {
    Line(out, "supervisor",
         "pid " + std::to_string(state.supervisor_pid) +
             (info.supervisor_alive ? " alive" : " gone"));
    if (state.pid > 0) {
      Line(out, "process",
           "pid " + std::to_string(state.pid) + (info.job_process_alive ? " alive" : " gone"));
    }
  }
  if (!ContainerName(info).empty()) {
    Line(out, "container",
         ContainerName(info) + (container_state.empty() ? "" : " (" + container_state + ")"));
  }
  if (!state.job_id.empty()) Line(out, "job id", state.job_id);
  if (!state.started_at.empty()) Line(out, "started", state.started_at);
  if (!state.state.empty()) Line(out, "run state", state.state);
  if (info.log_file.empty()) {
    Line(out, "log file", info.log_refused);
  } else {
    Line(out, "log file", info.log_file + " (" + std::to_string(LogSize(info)) + " bytes)");
  }
  std::string last = LastLogLine(info);
  if (!last.empty()) Line(out, "last line", last);
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

  Result<WorkDirInfo> inspected = Inspect(work_dir);
  if (!inspected.ok()) return Fail("cancel", inspected.status());
  WorkDirInfo info = inspected.value();
  const bool json = vm["json"].as<bool>();
  std::ostream& text = json ? std::cerr : std::cout;
  if (info.phase == WorkDirPhase::kFinished) {
    text << "nothing to cancel: " << work_dir
         << " already finished: " << RunStatusName(info.result->status) << "\n";
    if (json) std::cout << CancelJson(work_dir, false, &*info.result);
    return 0;
  }
  if (info.phase == WorkDirPhase::kNotStarted) {
    text << "nothing to cancel: nothing was started in " << work_dir << "\n";
    if (json) std::cout << CancelJson(work_dir, false, nullptr);
    return 0;
  }
  if (!info.same_host) {
    return Fail("cancel", Status::ExecutionError(
                              "the job of " + work_dir + " is supervised on host " +
                                  info.state->host + ", not on " + HostName(),
                              "run `trtllm-run cancel " + work_dir + "` on " + info.state->host));
  }

  // Everything below acts on processes, containers or jobs the work dir names: only on
  // this directory's own run, and only on what is proven to be that run's.
  Status located = CheckWorkDirLocation(info.spec, work_dir);
  if (!located.ok()) return Fail("cancel", located);
  if (!info.supervisor_unproven.empty()) {
    return Fail("cancel", Status::InvalidInput(
                              "refusing to signal the supervisor recorded in " + work_dir + ": " +
                                  info.supervisor_unproven,
                              "trtllm-run signals only processes proven to be the run of this "
                              "work dir; if the process is yours, stop it yourself"));
  }

  // 1. Ask the supervising trtllm-run to stop the job: it cancels as on Ctrl-C and
  //    writes the verdict.
  if (info.supervisor_alive) {
    int supervisor = info.state->supervisor_pid;
    double wait = wait_flag ? *wait_flag : GraceOf(info, 30) + 30.0;
    std::cerr << "trtllm-run cancel: asking trtllm-run (pid " << supervisor
              << ") to stop the job (SIGTERM); waiting up to " << wait << "s\n";
    ::kill(supervisor, SIGTERM);
    Clock::time_point end =
        Clock::now() + std::chrono::milliseconds(static_cast<long long>(wait * 1000));
    while (Clock::now() < end) {
      Result<WorkDirInfo> now = Inspect(work_dir);
      if (now.ok() && (now->phase == WorkDirPhase::kFinished || !now->supervisor_alive)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // 2. Whatever the supervisor did: the executor stops what is left of the job.
  Result<std::unique_ptr<Runtime>> runtime = MakeRuntime(vm);
  if (!runtime.ok()) return Fail("cancel", runtime.status());
  Status stopped = Status::Ok();
  Result<std::shared_ptr<Executor>> executor =
      runtime.value()->registry().CreateExecutor(info.spec.scenario);
  if (!executor.ok()) {
    stopped = executor.status();
  } else {
    std::unique_ptr<Scenario> scenario = MakeLocalScenario();
    CancellationToken token;
    ExecContext context;
    context.scenario = scenario.get();
    context.cancel = &token;
    context.progress = &std::cerr;
    context.kill_grace_seconds = kill_grace;
    stopped = executor.value()->Cancel(info.spec, context);
  }

  // 3. The verdict: the supervisor's, else CANCELLED written here.
  Result<WorkDirInfo> final_info = Inspect(work_dir);
  if (final_info.ok() && final_info->result) {
    text << "cancelled: " << work_dir << ": " << RunStatusName(final_info->result->status) << " ("
         << final_info->result->reason << ")\n";
    if (json && stopped.ok()) std::cout << CancelJson(work_dir, true, &*final_info->result);
  } else if (stopped.ok()) {
    RunResult result;
    result.status = RunStatus::kCancelled;
    result.cancelled_by = "trtllm-run cancel";
    result.reason = "cancelled with `trtllm-run cancel`; the supervising trtllm-run (pid " +
                    std::to_string(info.state->supervisor_pid) +
                    ") had ended without a verdict, so the job was stopped directly";
    result.workflow_type = info.spec.workflow_type;
    result.scenario = info.spec.scenario;
    result.model_name = info.spec.model_name;
    result.command = info.spec.direct_cmd;
    result.work_dir = info.work_dir;
    result.log_file = info.log_file;
    result.monitor_timeout_seconds = info.spec.monitor_timeout_seconds;
    result.started_at = info.state->started_at;
    result.finished_at = NowIso8601();
    if (!ContainerName(info).empty()) result.details["container_name"] = ContainerName(info);
    if (!info.state->job_id.empty()) result.details["job_id"] = info.state->job_id;
    Status written = WriteResult(result);
    if (!written.ok()) return Fail("cancel", written);
    text << "cancelled: " << work_dir << ": CANCELLED (" << result.reason << ")\n";
    if (json) std::cout << CancelJson(work_dir, true, &result);
  }
  if (!stopped.ok()) return Fail("cancel", stopped);
  return 0;
}

}  // namespace trtllm_run::cli
