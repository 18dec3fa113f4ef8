// local_slurm on the real test cluster (tests/services/slurm.sh): the Slurm run library
// (slurm_run.h) with batch scripts of the rendered shape, and the executor through the
// trtllm-run binary. Every job must be gone from the queue when a verdict is returned.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/workdir.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

struct LocalCase {
  TempDir dir{"trtllm_local_slurm"};
  JobSpec spec;
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;

  LocalCase(const std::string& name, const std::vector<std::string>& steps,
            const std::string& sbatch = "") {
    spec = SlurmTestSpec(dir.path(), name, "local_slurm");
    WriteTextFile(spec.script_path, BatchScript(dir.path(), name, steps, sbatch));
    ::chmod(spec.script_path.c_str(), 0755);
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 5;
  }
  RunResult Run() { return ExecuteSlurmJob(spec, context); }
  std::string Describe(const RunResult& r) const {
    return std::string(RunStatusName(r.status)) + ": " + r.reason + "\n--- progress\n" +
           progress.str() + "--- diagnosis\n" + r.diagnosis;
  }
};

}  // namespace

TEST_CASE("local_slurm: a passing job is PASSED, the job id is on disk at once", "[slurm]") {
  EnsureSlurm();
  LocalCase c("pass", {"echo hello from the job; echo '1 passed in 0.01s'"});
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  std::string id = r.details["job_id"];
  REQUIRE(!id.empty());
  CHECK(ReadTextFile(c.spec.work_dir + "/slurm_job_id") == id + "\n");
  Result<RunState> state = ReadRunState(c.spec.work_dir);
  REQUIRE(state.ok());
  CHECK(state->job_id == id);
  CHECK(r.log_file == c.spec.work_dir + "/pass_auto_test_" + id + ".out");
  CHECK(ReadTextFile(r.log_file).find("hello from the job") != std::string::npos);
  CHECK(c.terminal.str().find("hello from the job") != std::string::npos);
  CHECK(JobActiveStates(id).empty());
  CHECK(r.details["job_state"] == "COMPLETED");
}

TEST_CASE("local_slurm: a failing step is FAILED with the step and the exit code", "[slurm]") {
  EnsureSlurm();
  LocalCase c("fail", {"echo first ok",
                       "echo 'FAILED tests/test_x.py::test_one - AssertionError: 1 != 2'; exit 3",
                       "echo never"});
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 3);
  CHECK(r.details["failing_step"].find("step1") != std::string::npos);
  CHECK(r.diagnosis.find("tests/test_x.py::test_one") != std::string::npos);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

TEST_CASE("local_slurm: 'hang detected' cancels the job: HANG_DETECTED, job gone", "[slurm]") {
  EnsureSlurm();
  LocalCase c("hang", {"echo starting; sleep 2; echo 'NCCL watchdog: Hang Detected on rank 0'; "
                       "sleep 600"});
  auto start = std::chrono::steady_clock::now();
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kHangDetected);
  CHECK(r.reason == "log line \"0: NCCL watchdog: Hang Detected on rank 0\"; job " +
                        r.details["job_id"] + " was cancelled with scancel and left the queue");
  CHECK(JobActiveStates(r.details["job_id"]).empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(120));
}

TEST_CASE("local_slurm: monitor_timeout cancels the job: TIMEOUT, job gone", "[slurm]") {
  EnsureSlurm();
  LocalCase c("mto", {"echo started; sleep 600"});
  c.spec.monitor_timeout_seconds = 6;
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kTimeout);
  CHECK(r.reason.find("monitor_timeout_seconds=6") != std::string::npos);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

TEST_CASE("local_slurm: Slurm's own time limit is TIMEOUT (takes ~90 s)", "[slurm][slow]") {
  EnsureSlurm();
  LocalCase c("slurmto", {"echo started; sleep 600"}, "#SBATCH --time=1");
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kTimeout);
  CHECK(r.details["job_state"] == "TIMEOUT");
  CHECK(r.diagnosis.find("time") != std::string::npos);
}

TEST_CASE("local_slurm: a step over its --mem is OUT_OF_MEMORY", "[slurm]") {
  EnsureSlurm();
  // Memory enforcement on the test cluster is OverMemoryKill (no cgroups): the step is
  // killed and slurmstepd says "exceeded memory limit"; sacct shows FAILED, not
  // OUT_OF_MEMORY. The verdict must still be OUT_OF_MEMORY.
  LocalCase c("oom",
              {"python3 -c 'import time\na=[]\nfor i in range(200): "
               "a.append(bytearray(20*1024*1024)); time.sleep(0.1)'"},
              "#SBATCH --mem=100M");
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kOutOfMemory);
  CHECK(r.reason.find("memory limit") != std::string::npos);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

TEST_CASE("local_slurm: an external scancel is CANCELLED, naming who", "[slurm]") {
  EnsureSlurm();
  LocalCase c("extcancel", {"echo running; sleep 600"});
  std::thread canceller([&] {
    std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 60);
    WaitForJobState(id, "RUNNING", 120);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Shell("scancel " + id);
  });
  RunResult r = c.Run();
  canceller.join();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kCancelled);
  CHECK_FALSE(r.user_interrupt);
  CHECK(r.cancelled_by.find("root") != std::string::npos);
  CHECK(ExitCodeFor(r) == kExitCancelled);
}

TEST_CASE("local_slurm: SIGINT (the cancellation token) scancels, job gone, exit 130", "[slurm]") {
  EnsureSlurm();
  LocalCase c("sigint", {"echo running; sleep 600"});
  std::thread interrupter([&] {
    std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 60);
    WaitForJobState(id, "RUNNING", 120);
    c.cancel.Cancel(SIGINT);
  });
  RunResult r = c.Run();
  interrupter.join();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kCancelled);
  CHECK(r.user_interrupt);
  CHECK(ExitCodeFor(r) == 130);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

TEST_CASE(
    "local_slurm: a job purged from the controller before the first poll is judged "
    "right (accounting)",
    "[slurm]") {
  EnsureSlurm();
  // MinJobAge is 20 s on trtllm-test (jobs go ~30 s after their end): the first query
  // comes 45 s after the job's end line, when only accounting knows the job.
  ScopedEnv delay(kFirstPollDelayEnv, "45");
  LocalCase fail("purgedfail", {"echo ok", "exit 4"});
  RunResult r = fail.Run();
  INFO(fail.Describe(r));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 4);
  CHECK(r.details["job_state_source"] == "sacct");
  CHECK(r.details["failing_step"].find("step1") != std::string::npos);
}

TEST_CASE("local_slurm: without accounting (trtllm-noacct), normal and purged jobs", "[slurm]") {
  EnsureSlurm();
  ScopedEnv conf("SLURM_CONF", "/etc/slurm-noacct/slurm.conf");
  {
    LocalCase pass("noacctpass", {"echo '1 passed'"});
    RunResult r = pass.Run();
    INFO(pass.Describe(r));
    CHECK(r.status == RunStatus::kPassed);
    CHECK(r.details["accounting"] == "disabled");
  }
  // MinJobAge is 10 s there: the controller forgets the job before the first query, and
  // the verdict comes from the job's own end line.
  ScopedEnv delay(kFirstPollDelayEnv, "30");
  LocalCase pass("noacctpurged", {"echo '1 passed'"});
  RunResult r = pass.Run();
  INFO(pass.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(r.reason.find("purged after MinJobAge") != std::string::npos);

  LocalCase fail("noacctpurgedfail", {"echo ok", "exit 9"});
  r = fail.Run();
  INFO(fail.Describe(r));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 9);
  CHECK(r.reason.find("step1") != std::string::npos);
}

TEST_CASE("local_slurm: sbatch refusing the job is ERROR with sbatch's message", "[slurm]") {
  EnsureSlurm();
  LocalCase c("badgres", {"echo never"}, "#SBATCH --gres=foo:1");
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kError);
  CHECK(r.reason.find("sbatch refused the job") != std::string::npos);
  CHECK(r.reason.find("Invalid generic resource") != std::string::npos);
  CHECK(r.diagnosis.find("omit --gres") != std::string::npos);
  CHECK_FALSE(fs::exists(c.spec.work_dir + "/slurm_job_id"));
}

TEST_CASE("local_slurm: cancel from another process stops the recorded job", "[slurm]") {
  EnsureSlurm();
  LocalCase c("othercancel", {"echo running; sleep 600"});
  std::thread runner([&] { c.Run(); });
  std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 60);
  WaitForJobState(id, "RUNNING", 120);
  ExecContext context;
  Status cancelled = CancelSlurmJob(c.spec, context);
  CHECK(cancelled.ok());
  CHECK(JobActiveStates(id).empty());
  runner.join();
}

// ---- Through the trtllm-run binary: jobs rendered by trtllm-run (container_runtime none).

namespace {

std::vector<std::string> RunArgs(const std::string& repo, std::vector<std::string> command) {
  std::vector<std::string> args = {
      "run",   "--scenario",     "local_slurm", "--repo-root",         repo,   "--partition",
      "batch", "--skip-install", "true",        "--container-runtime", "none", "--container-image",
      "none"};
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

}  // namespace

TEST_CASE("local_slurm CLI: a custom command is PASSED, exit 0, job id in the work dir",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_slurm_cli");
  CliRun run = RunCli(RunArgs(repo.path(), {"--custom-cmd", "echo hello from slurm"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "PASSED");
  std::string id = WaitForFileText(work_dir + "/slurm_job_id", 1);
  CHECK(!id.empty());
  CHECK(JobActiveStates(id).empty());
  CHECK(run.stdout_text.find("hello from slurm") != std::string::npos);
}

TEST_CASE("local_slurm CLI: a failing pytest (stand-in) is FAILED with the test names",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_slurm_cli");
  TempDir bin("trtllm_slurm_bin");
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_a.py", "def test_ok():\n    pass\n");
  WriteTextFile(bin.path() + "/pytest",
                "#!/bin/bash\necho 'tests/test_a.py::test_ok PASSED'\n"
                "echo 'tests/test_a.py::test_bad FAILED'\n"
                "echo 'FAILED tests/test_a.py::test_bad - assert 1 == 2'\nexit 1\n");
  ::chmod((bin.path() + "/pytest").c_str(), 0755);
  CliOptions options;
  options.args = RunArgs(repo.path(), {"--test-cmd", "pytest tests/test_a.py -v"});
  options.cwd = repo.path();
  options.env = {{"PATH", bin.path() + ":" + std::string(::getenv("PATH"))}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  std::string work_dir = FindSingleWorkDir(repo.path());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "FAILED");
  CHECK(std::string(result["diagnosis"].GetString()).find("tests/test_a.py::test_bad") !=
        std::string::npos);
}

TEST_CASE("local_slurm CLI: SIGINT to trtllm-run cancels the job: exit 130, gone from squeue",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_slurm_cli");
  CliOptions options;
  options.args = RunArgs(repo.path(), {"--custom-cmd", "echo started; sleep $((600 + 13))"});
  options.signal = SIGINT;
  options.signal_when_process = "sleep 613";
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.signal_sent);
  CHECK(run.exit_code == 130);
  std::string work_dir = FindSingleWorkDir(repo.path());
  std::string id = WaitForFileText(work_dir + "/slurm_job_id", 1);
  REQUIRE(!id.empty());
  CHECK(JobActiveStates(id).empty());
  CHECK(PidsWithMarker("sleep 613").empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "CANCELLED");
}

TEST_CASE("local_slurm CLI: persistent mode reuses one allocation, release ends it",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir state("trtllm_slurm_state");  // a private allocation state dir
  TempDir repo("trtllm_slurm_cli");
  CliOptions options;
  options.args = RunArgs(repo.path(), {"--custom-cmd", "echo step ran", "--persistent-mode", "true",
                                       "--alloc-time-limit", "10"});
  options.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun first = RunCli(options);
  INFO(first.Describe());
  REQUIRE(first.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo.path());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  std::string allocation = result["details"]["allocation_id"].GetString();
  CHECK(std::string(result["details"]["allocation_reused"].GetString()) == "false");
  CHECK(JobState(allocation) == "RUNNING");

  TempDir repo2("trtllm_slurm_cli");
  options.args[4] = repo2.path();  // --repo-root
  CliRun second = RunCli(options);
  INFO(second.Describe());
  CHECK(second.exit_code == 0);
  rapidjson::Document again = ReadResultJson(FindSingleWorkDir(repo2.path()));
  REQUIRE(again.IsObject());
  CHECK(std::string(again["details"]["allocation_id"].GetString()) == allocation);
  CHECK(std::string(again["details"]["allocation_reused"].GetString()) == "true");
  CHECK(ReadTextFile(again["log_file"].GetString()).find("step ran") != std::string::npos);

  // An allocation idle past its limit is released by the next run, which makes a new one.
  std::string state_file;
  for (const auto& entry : fs::directory_iterator(state.path() + "/trtllm-run/allocations")) {
    if (entry.path().extension() == ".json") state_file = entry.path().string();
  }
  REQUIRE(!state_file.empty());
  std::string text = ReadTextFile(state_file);
  std::size_t at = text.find("\"last_used_at\"");
  REQUIRE(at != std::string::npos);
  std::size_t end = text.find_first_of(",\n}", at);
  WriteTextFile(state_file, text.substr(0, at) + "\"last_used_at\": 1" + text.substr(end));
  TempDir repo3("trtllm_slurm_cli");
  options.args[4] = repo3.path();
  CliRun third = RunCli(options);
  INFO(third.Describe());
  CHECK(third.exit_code == 0);
  rapidjson::Document fresh = ReadResultJson(FindSingleWorkDir(repo3.path()));
  REQUIRE(fresh.IsObject());
  CHECK(std::string(fresh["details"]["allocation_reused"].GetString()) == "false");
  std::string old_allocation = allocation;
  allocation = fresh["details"]["allocation_id"].GetString();
  CHECK(allocation != old_allocation);
  CHECK(JobActiveStates(old_allocation).empty());

  CliOptions list;
  list.args = {"release", "--list"};
  list.env = options.env;
  CliRun listed = RunCli(list);
  CHECK(listed.stdout_text.find("allocation " + allocation) != std::string::npos);
  CliOptions release;
  release.args = {"release"};
  release.env = options.env;
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
  CHECK(released.stdout_text.find("released allocation " + allocation) != std::string::npos);
  CHECK(JobActiveStates(allocation).empty());
}

TEST_CASE(
    "local_slurm CLI: after trtllm-run crashed, `cancel WORK_DIR` stops the job from the "
    "id on disk",
    "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_slurm_cli");
  CliOptions options;
  options.args = RunArgs(repo.path(), {"--custom-cmd", "echo started; sleep $((600 + 15))"});
  options.signal = SIGKILL;  // the supervisor dies without cancelling anything
  options.signal_when_process = "sleep 615";
  options.timeout_seconds = 180;
  CliRun crashed = RunCli(options);
  INFO(crashed.Describe());
  REQUIRE(crashed.signal_sent);
  std::string work_dir = FindSingleWorkDir(repo.path());
  std::string id = WaitForFileText(work_dir + "/slurm_job_id", 1);
  REQUIRE(!id.empty());
  CHECK(JobState(id) == "RUNNING");  // the crash left it running

  CliRun cancel = RunCli({"cancel", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  CHECK(JobActiveStates(id).empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "CANCELLED");
}

namespace {

// This host's scenario, except that the scheduler's query commands fail the first
// `failures` times as an overloaded or restarting controller makes them fail.
class FlakyScenario : public Scenario {
 public:
  explicit FlakyScenario(int failures) : inner_(MakeLocalScenario()), left_(failures) {}
  std::string Name() const override { return "flaky"; }
  bool IsRemote() const override { return false; }
  using Scenario::Run;
  Result<CommandOutput> Run(const Command& command, Deadline deadline) override {
    const std::vector<std::string>& argv = command.argv;
    bool query = false;
    for (const std::string& word : argv) {
      query = query || word == "scontrol" || word == "sacct" ||
              word.find("scontrol --local -o show job") != std::string::npos;
    }
    bool config = std::find(argv.begin(), argv.end(), "config") != argv.end();
    if (query && !config && left_ > 0) {
      --left_;
      ++injected_;
      CommandOutput out;
      out.exit_code = 1;
      out.stderr_text = "slurm_load_jobs error: Socket timed out on send/recv operation\n";
      return out;
    }
    return inner_->Run(command, deadline);
  }
  Result<std::unique_ptr<ChildProcess>> Start(const Command& command) override {
    return inner_->Start(command);
  }
  int injected() const { return injected_; }

 private:
  std::unique_ptr<Scenario> inner_;
  int left_;
  int injected_ = 0;
};

}  // namespace

TEST_CASE("local_slurm: failing scheduler queries are retried, never turned into a verdict",
          "[slurm]") {
  EnsureSlurm();
  // The job ends while the controller "times out"; the verdict still comes from what the
  // scheduler says once it answers again.
  FlakyScenario flaky(4);
  LocalCase c("flaky", {"echo ok", "exit 6"});
  c.context.scenario = &flaky;
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(flaky.injected() == 4);
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 6);
  CHECK(c.progress.str().find("Socket timed out") != std::string::npos);
}
