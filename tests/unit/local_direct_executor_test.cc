// The built local_direct plugin, loaded through the Registry as the CLI loads it, run
// against real bash processes: verdicts, timings, logs, cancellation, and that nothing
// it started is left running.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "trtllm_run/registry.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/scenario.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Live (not zombie) processes whose command line starts with `prefix`.
int CountProcesses(const std::string& prefix) {
  int count = 0;
  DIR* dir = ::opendir("/proc");
  while (dir != nullptr) {
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    int pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::string base = "/proc/" + std::to_string(pid);
    std::string cmdline = ReadWhole(base + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    std::string stat = ReadWhole(base + "/stat");
    std::size_t close = stat.rfind(')');
    bool zombie = close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
    if (!zombie && cmdline.compare(0, prefix.size(), prefix) == 0) ++count;
  }
  if (dir != nullptr) ::closedir(dir);
  return count;
}

// A `sleep` argument unique to this test process and call.
std::string UniqueSleep(int seconds) {
  static int counter = 0;
  return std::to_string(seconds) + "." + std::to_string(::getpid()) + std::to_string(++counter);
}

class Fixture {
 public:
  Fixture() {
    char tmpl[] = "/tmp/trtllm_run_local_direct_XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir_ = tmpl;
    Status loaded =
        registry_.LoadPlugin(std::string(BUILTIN_PLUGIN_DIR) + "/executor_local_direct.so");
    INFO(loaded.ToString());
    REQUIRE(loaded.ok());
    Result<std::shared_ptr<Executor>> executor = registry_.CreateExecutor("local_direct");
    REQUIRE(executor.ok());
    executor_ = executor.value();
    scenario_ = MakeLocalScenario();
  }
  ~Fixture() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  JobPlan Plan(const std::string& command) const {
    JobPlan plan;
    plan.workflow_type = "custom";
    plan.model_name = "unit_model";
    plan.command = command;
    plan.repo_root = dir_;
    plan.monitor_timeout_seconds = 30;
    plan.failure_patterns = {"Error", "Traceback"};
    return plan;
  }

  // Validates, prepares and executes `plan`; `tweak` may change the spec before running.
  RunResult Run(const JobPlan& plan, CancellationToken* token = nullptr, int grace = 5) {
    REQUIRE(executor_->Validate(CaseRequest{}, plan, Placement{}).ok());
    std::string work_dir = dir_ + "/work_" + std::to_string(++runs_);
    std::filesystem::create_directories(work_dir);
    spec_ = JobSpec{};
    spec_.scenario = "local_direct";
    spec_.work_dir = work_dir;
    spec_.log_file = work_dir + "/unit_model_local.log";
    Status prepared = executor_->Prepare(CaseRequest{}, plan, Placement{}, &spec_);
    INFO(prepared.ToString());
    REQUIRE(prepared.ok());
    CancellationToken own;
    ExecContext context;
    context.scenario = scenario_.get();
    context.cancel = token ? token : &own;
    terminal_.str("");
    progress_.str("");
    context.terminal = &terminal_;
    context.progress = &progress_;
    context.kill_grace_seconds = grace;
    context.poll_interval_seconds = 0.1;
    Clock::time_point start = Clock::now();
    RunResult result = executor_->Execute(spec_, context);
    seconds_ = std::chrono::duration<double>(Clock::now() - start).count();
    UNSCOPED_INFO("status " << RunStatusName(result.status) << " reason: " << result.reason
                            << "\nprogress:\n"
                            << progress_.str() << "log:\n"
                            << ReadWhole(spec_.log_file));
    return result;
  }

  const std::string& dir() const { return dir_; }
  std::shared_ptr<Executor> executor() const { return executor_; }
  const JobSpec& spec() const { return spec_; }
  std::string terminal() const { return terminal_.str(); }
  std::string log() const { return ReadWhole(spec_.log_file); }
  double seconds() const { return seconds_; }

 private:
  std::string dir_;
  Registry registry_;
  std::shared_ptr<Executor> executor_;
  std::unique_ptr<Scenario> scenario_;
  JobSpec spec_;
  std::ostringstream terminal_;
  std::ostringstream progress_;
  double seconds_ = 0;
  int runs_ = 0;
};

TEST_CASE("local_direct: Validate names what is wrong", "[local_direct]") {
  Fixture f;
  JobPlan plan = f.Plan("  \n ");
  Status empty = f.executor()->Validate(CaseRequest{}, plan, Placement{});
  CHECK(empty.code() == StatusCode::kInvalidInput);
  CHECK_THAT(empty.message(), Catch::Contains("no command"));
  CHECK_THAT(empty.hint(), Catch::Contains("--custom-cmd"));

  plan = f.Plan("true");
  plan.repo_root = f.dir() + "/missing";
  Status root = f.executor()->Validate(CaseRequest{}, plan, Placement{});
  CHECK(root.code() == StatusCode::kInvalidInput);
  CHECK_THAT(root.message(), Catch::Contains(f.dir() + "/missing"));

  CHECK(f.executor()->Validate(CaseRequest{}, f.Plan("true"), Placement{}).ok());
  CHECK(f.executor()->Name() == "local_direct");
}

TEST_CASE("local_direct: Prepare writes the minimal job_spec.json", "[local_direct]") {
  Fixture f;
  JobPlan plan = f.Plan("echo 'hi there' | tr a-z A-Z");
  plan.env = {{"FOO", "bar"}, {"BAZ", "x y"}};
  plan.monitor_timeout_seconds = 1234;
  std::string work_dir = f.dir() + "/wd";
  std::filesystem::create_directories(work_dir);
  JobSpec spec;
  spec.scenario = "local_direct";
  spec.work_dir = work_dir;
  spec.log_file = work_dir + "/unit_model_local.log";
  REQUIRE(f.executor()->Prepare(CaseRequest{}, plan, Placement{}, &spec).ok());
  Result<JobSpec> read = ReadJobSpec(work_dir);
  REQUIRE(read.ok());
  CHECK(read->scenario == "local_direct");
  CHECK(read->direct_cmd == "echo 'hi there' | tr a-z A-Z");
  CHECK(read->custom_env == std::vector<EnvVar>{{"FOO", "bar"}, {"BAZ", "x y"}});
  CHECK(read->monitor_timeout_seconds == 1234);
  CHECK(read->work_dir == work_dir);
  CHECK(read->log_file == work_dir + "/unit_model_local.log");
  CHECK(read->model_name == "unit_model");
  CHECK(read->workflow_type == "custom");
  CHECK(read->repo_root == f.dir());
  CHECK(read->failure_patterns == std::vector<std::string>{"Error", "Traceback"});
}

TEST_CASE("local_direct: a passing command", "[local_direct]") {
  Fixture f;
  RunResult r = f.Run(f.Plan("echo out; echo err >&2; pwd; printf 'no newline'"));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.signal);
  std::string expected = "out\nerr\n" + f.dir() + "\nno newline";
  CHECK(f.log() == expected);
  CHECK(f.terminal() == expected);
  CHECK(r.log_bytes_written == expected.size());
  CHECK(r.log_bytes_read == expected.size());
  CHECK(r.log_tail == std::vector<std::string>{"out", "err", f.dir(), "no newline"});
  CHECK(r.log_file == f.spec().log_file);
  CHECK(r.work_dir == f.spec().work_dir);
  CHECK(r.command == "echo out; echo err >&2; pwd; printf 'no newline'");
  CHECK(r.model_name == "unit_model");
  CHECK(r.workflow_type == "custom");
  CHECK(r.scenario == "local_direct");
  CHECK(r.monitor_timeout_seconds == 30);
  CHECK_FALSE(r.started_at.empty());
  CHECK_FALSE(r.finished_at.empty());
  CHECK(r.duration_seconds >= 0);
  CHECK(r.duration_seconds < 5);
  CHECK(r.diagnosis.empty());
}

TEST_CASE("local_direct: custom_env reaches the command", "[local_direct]") {
  Fixture f;
  JobPlan plan = f.Plan("printf '%s|%s' \"$FOO\" \"$BAZ\"");
  plan.env = {{"FOO", "bar"}, {"BAZ", "x y"}};
  RunResult r = f.Run(plan);
  CHECK(r.status == RunStatus::kPassed);
  CHECK(f.log() == "bar|x y");
}

TEST_CASE("local_direct: a non-zero exit is FAILED with the exit code", "[local_direct]") {
  Fixture f;
  RunResult r = f.Run(f.Plan("echo 'Traceback (most recent call last):'; exit 3"));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.reason, Catch::Contains("exited with code 3"));
  CHECK_THAT(r.reason, Catch::Contains("Traceback (most recent call last):"));
  CHECK_FALSE(r.diagnosis.empty());
}

TEST_CASE("local_direct: a command killed by a signal is FAILED with the signal",
          "[local_direct]") {
  Fixture f;
  RunResult r = f.Run(f.Plan("kill -SEGV $$"));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.signal == SIGSEGV);
  CHECK_FALSE(r.exit_code);
  CHECK_THAT(r.reason, Catch::Contains("SIGSEGV"));
}

TEST_CASE("local_direct: out-of-memory messages make OUT_OF_MEMORY", "[local_direct]") {
  Fixture f;
  for (const char* line :
       {"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "RuntimeError: CUDA out of memory.", "NCCL WARN Cuda failure 'out of memory'"}) {
    RunResult r = f.Run(f.Plan(std::string("echo step 1; echo \"") + line + "\"; exit 1"));
    CHECK(r.status == RunStatus::kOutOfMemory);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.reason, Catch::Contains(line));
    CHECK_THAT(r.diagnosis, Catch::Contains("batch size"));
  }
  // Exit 0 wins over any message.
  RunResult ok = f.Run(f.Plan("echo 'CUDA out of memory (recovered)'"));
  CHECK(ok.status == RunStatus::kPassed);
}

TEST_CASE("local_direct: the monitor timeout ends the whole group as TIMEOUT", "[local_direct]") {
  Fixture f;
  std::string s = UniqueSleep(30);
  JobPlan plan = f.Plan("sleep " + s + " & sleep " + s + "; echo never");
  plan.monitor_timeout_seconds = 1;
  RunResult r = f.Run(plan);
  CHECK(r.status == RunStatus::kTimeout);
  CHECK(f.seconds() >= 1.0);
  CHECK(f.seconds() < 2.5);
  CHECK(r.signal == SIGTERM);
  CHECK_THAT(r.reason, Catch::Contains("monitor_timeout_seconds=1"));
  CHECK_THAT(r.diagnosis, Catch::Contains("--monitor-timeout"));
  CHECK(CountProcesses("sleep " + s) == 0);
  CHECK(f.log().find("never") == std::string::npos);
}

TEST_CASE("local_direct: SIGKILL follows SIGTERM after the grace period", "[local_direct]") {
  Fixture f;
  std::string s = UniqueSleep(31);
  JobPlan plan = f.Plan("trap '' TERM; echo started; sleep " + s + "; sleep " + s);
  plan.monitor_timeout_seconds = 1;
  RunResult r = f.Run(plan, nullptr, /*grace=*/1);
  CHECK(r.status == RunStatus::kTimeout);
  CHECK(f.seconds() >= 2.0);
  CHECK(f.seconds() < 4.0);
  CHECK(r.signal == SIGKILL);
  CHECK_THAT(r.reason, Catch::Contains("SIGKILL"));
  CHECK(CountProcesses("sleep " + s) == 0);
}

TEST_CASE("local_direct: 'hang detected' in the log stops the job as HANG_DETECTED",
          "[local_direct]") {
  Fixture f;
  std::string s = UniqueSleep(32);
  RunResult r =
      f.Run(f.Plan("echo warming up; echo '[watchdog] Hang Detected on rank 2'; sleep " + s));
  CHECK(r.status == RunStatus::kHangDetected);
  CHECK(f.seconds() < 2.0);
  CHECK_THAT(r.reason, Catch::Contains("[watchdog] Hang Detected on rank 2"));
  CHECK_THAT(r.diagnosis, Catch::Contains("NCCL"));
  CHECK(CountProcesses("sleep " + s) == 0);
  CHECK(r.log_tail.back() == "[watchdog] Hang Detected on rank 2");
}

TEST_CASE("local_direct: a hang reported just before a failing exit is HANG_DETECTED",
          "[local_direct]") {
  Fixture f;
  RunResult r = f.Run(f.Plan("echo 'HANG DETECTED: aborting'; exit 134"));
  CHECK(r.status == RunStatus::kHangDetected);
  // Either it exited first, or the watcher saw the line first and stopped it.
  CHECK((r.exit_code == 134 || r.signal == SIGTERM));
  CHECK_THAT(r.reason, Catch::Contains("HANG DETECTED: aborting"));
}

TEST_CASE("local_direct: a hang line then exit 0 is HANG_DETECTED however the race goes",
          "[local_direct][hang]") {
  // Exiting before the watcher reads the line, or stopped by it first: the same verdict.
  Fixture f;
  for (const char* command : {"echo 'hang detected'; exit 0", "echo 'hang detected'; exit 0",
                              "echo 'hang detected'; exit 0", "echo 'hang detected'; exit 0",
                              "echo 'hang detected'; exit 0", "echo 'hang detected'; sleep 1"}) {
    RunResult r = f.Run(f.Plan(command));
    INFO(command << ": " << r.reason);
    CHECK(r.status == RunStatus::kHangDetected);
    CHECK_THAT(r.reason, Catch::Contains("\"hang detected\""));
  }
}

TEST_CASE("local_direct: cancellation ends the group as CANCELLED", "[local_direct]") {
  Fixture f;
  for (int sig : {SIGINT, SIGTERM, 0}) {
    std::string s = UniqueSleep(33);
    CancellationToken token;
    std::thread canceller([&token, sig] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      token.Cancel(sig);
    });
    RunResult r = f.Run(f.Plan("sleep " + s), &token);
    canceller.join();
    INFO("signal " << sig);
    CHECK(r.status == RunStatus::kCancelled);
    CHECK(f.seconds() < 2.0);
    CHECK(r.cancelled_by == (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "request"));
    CHECK(r.user_interrupt == (sig == SIGINT));
    CHECK(CountProcesses("sleep " + s) == 0);
  }
}

TEST_CASE("local_direct: background processes are ended after the command exits",
          "[local_direct]") {
  Fixture f;
  std::string s = UniqueSleep(34);
  // The first grandchild keeps the output pipe open; its late line is still collected.
  RunResult r = f.Run(f.Plan("(sleep 0.2; echo late) & sleep " + s + " & echo early"));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(r.exit_code == 0);
  CHECK(f.log() == "early\nlate\n");
  CHECK(CountProcesses("sleep " + s) == 0);
  bool noted = false;
  for (const std::string& note : r.notes)
    noted = noted || note.find("still running") != std::string::npos;
  CHECK(noted);
  CHECK(f.seconds() < 2.0);
}

TEST_CASE("local_direct: a command that cannot start is ERROR", "[local_direct]") {
  Fixture f;
  JobPlan plan = f.Plan("true");
  REQUIRE(f.executor()->Validate(CaseRequest{}, plan, Placement{}).ok());
  std::string work_dir = f.dir() + "/wd";
  std::filesystem::create_directories(work_dir);
  JobSpec spec;
  spec.scenario = "local_direct";
  spec.work_dir = work_dir;
  spec.log_file = work_dir + "/unit_model_local.log";
  REQUIRE(f.executor()->Prepare(CaseRequest{}, plan, Placement{}, &spec).ok());
  spec.repo_root = f.dir() + "/gone";  // removed between prepare and execute
  CancellationToken token;
  ExecContext context;
  context.cancel = &token;
  RunResult r = f.executor()->Execute(spec, context);
  CHECK(r.status == RunStatus::kError);
  CHECK_THAT(r.reason, Catch::Contains(f.dir() + "/gone"));
  CHECK_FALSE(r.errors.empty());

  spec.repo_root = f.dir();
  spec.log_file = f.dir() + "/no/such/dir/x.log";
  RunResult no_log = f.executor()->Execute(spec, context);
  CHECK(no_log.status == RunStatus::kError);
  CHECK_THAT(no_log.reason, Catch::Contains(spec.log_file));
}

TEST_CASE("local_direct: output is copied to the log as it arrives", "[local_direct]") {
  Fixture f;
  std::string s = UniqueSleep(35);
  JobPlan plan = f.Plan("echo first; sleep " + s);
  plan.monitor_timeout_seconds = 2;
  CancellationToken token;
  std::string seen_while_running;
  std::thread watcher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    seen_while_running = ReadWhole(f.dir() + "/work_1/unit_model_local.log");
  });
  RunResult r = f.Run(plan, &token);
  watcher.join();
  CHECK(r.status == RunStatus::kTimeout);
  CHECK(seen_while_running == "first\n");
}

}  // namespace
}  // namespace trtllm_run
