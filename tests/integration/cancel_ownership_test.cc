// `trtllm-run cancel` scancels a Slurm job only once the controller's record proves it
// the run of the work dir (ProveSlurmJobOwnership, slurm_run.h): the caller's uid, the
// token recorded at submit in the job's comment, the output path under the work dir.
// Every victim is a job of the real test cluster that this test submitted itself.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;
using trtllm_run::CancellationToken;
using trtllm_run::ExecContext;
using trtllm_run::JobSpec;
using trtllm_run::RunResult;

// Another run: a local_slurm job submitted by the run library (with its token), running
// `sleep 600` until the test cancels it.
struct OtherRun {
  TempDir dir{"trtllm_owner_victim"};
  JobSpec spec;
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;
  RunResult result;
  std::thread runner;
  std::string job_id;

  OtherRun() {
    spec = SlurmTestSpec(dir.path(), "victim", "local_slurm");
    WriteTextFile(spec.script_path, BatchScript(dir.path(), "victim", {"echo running; sleep 600"}));
    ::chmod(spec.script_path.c_str(), 0755);
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 2;
    runner = std::thread([this] { result = trtllm_run::ExecuteSlurmJob(spec, context); });
    job_id = WaitForFileText(spec.work_dir + "/slurm_job_id", 60);
    WaitForJobState(job_id, "RUNNING", 120);
  }
  ~OtherRun() {
    cancel.Cancel(SIGTERM);
    if (runner.joinable()) runner.join();
  }
};

// A work dir trtllm-run never ran: job_spec.json, a run_state.json whose supervisor is
// gone (so that cancel goes straight to the job), and the job id it names.
struct ForgedSlurmWorkDir {
  TempDir root{"trtllm_owner_forged"};
  std::string dir;
  JobSpec spec;
  explicit ForgedSlurmWorkDir(const std::string& job_id) {
    dir = root.path() + "/work_dirs/forged_20260101_000000";
    fs::create_directories(dir);
    spec = SlurmTestSpec(dir, "forged", "local_slurm");
    REQUIRE(trtllm_run::WriteJobSpec(spec).ok());
    WriteTextFile(dir + "/run_state.json",
                  R"({"scenario": "local_slurm", "supervisor_pid": )" + std::to_string(DeadPid()) +
                      R"(, "supervisor_start_time": 1, "job_id": ")" + job_id + R"("})");
    WriteTextFile(dir + "/slurm_job_id", job_id + "\n");
  }
  bool HasResult() const { return fs::exists(dir + "/result.json"); }
};

CliRun Cancel(const std::string& work_dir) {
  CliOptions options;
  options.args = {"cancel", "--kill-grace", "1", "--wait", "1", work_dir};
  options.timeout_seconds = 90;
  return RunCli(options);
}

}  // namespace

TEST_CASE("cancel ownership: a forged work dir naming another run's job: exit 2, job RUNNING",
          "[slurm][cli]") {
  EnsureSlurm();
  OtherRun other;
  REQUIRE_FALSE(other.job_id.empty());
  REQUIRE(JobState(other.job_id) == "RUNNING");
  const std::string token = ReadTextFile(other.dir.path() + "/" + trtllm_run::kSlurmJobTokenFile);
  REQUIRE(token.size() == 33);  // 32 hex digits and a newline, written at submit

  SECTION("the job id alone") {
    ForgedSlurmWorkDir forged(other.job_id);
    CliRun cancel = Cancel(forged.dir);
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains("refusing to cancel Slurm job " + other.job_id));
    CHECK_THAT(cancel.stderr_text, Catch::Contains("slurm_job_token"));
    CHECK_THAT(cancel.stderr_text, Catch::Contains("StdOut " + other.dir.path()));
    CHECK_FALSE(forged.HasResult());
  }
  SECTION("the job id and the other run's token (its comment is readable to all)") {
    ForgedSlurmWorkDir forged(other.job_id);
    WriteTextFile(forged.dir + "/" + trtllm_run::kSlurmJobTokenFile, token);
    CliRun cancel = Cancel(forged.dir);
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains("is not under " + forged.dir));
    CHECK_THAT(cancel.stderr_text, !Catch::Contains("Comment is"));
    CHECK_THAT(cancel.stderr_text, !Catch::Contains("UserId"));
    CHECK_FALSE(forged.HasResult());
  }
  SECTION("a wrong token in the run's own directory layout") {
    ForgedSlurmWorkDir forged(other.job_id);
    WriteTextFile(forged.dir + "/" + trtllm_run::kSlurmJobTokenFile,
                  "0123456789abcdef0123456789abcdef\n");
    CliRun cancel = Cancel(forged.dir);
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains("Comment is 'trtllm-run:"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(JobState(other.job_id) == "RUNNING");  // the other run goes on

  // The run's own cancel still works: proven, scancelled, gone from the queue.
  ExecContext context;
  std::ostringstream progress;
  context.progress = &progress;
  trtllm_run::Status stopped = trtllm_run::CancelSlurmJob(other.spec, context);
  INFO(stopped.ToString());
  CHECK(stopped.ok());
  CHECK(JobActiveStates(other.job_id).empty());
  other.runner.join();
  CHECK(other.result.status == trtllm_run::RunStatus::kCancelled);
}

TEST_CASE("cancel ownership: a job of another user is refused, even with every other proof",
          "[slurm][cli]") {
  EnsureSlurm();
  TempDir root{"trtllm_owner_user"};
  const std::string dir = root.path() + "/work_dirs/other_user_20260101_000000";
  fs::create_directories(dir);
  ::chmod(root.path().c_str(), 0755);
  ::chmod((root.path() + "/work_dirs").c_str(), 0755);
  ::chmod(dir.c_str(), 0777);  // sshtest writes the job's output here
  const std::string token = "00112233445566778899aabbccddeeff";
  // sshtest's job, with this work dir's token as its comment and its output in this dir.
  std::string job_id = Shell(
      "cd /tmp && runuser -u sshtest -- sbatch --parsable --partition=batch "
      "--job-name=trtllm_owner_other_user --output=" +
      dir + "/forged_auto_test_%j.out --comment=trtllm-run:" + token + " --wrap='sleep 300' 2>&1");
  while (!job_id.empty() && (job_id.back() == '\n' || job_id.back() == ' ')) job_id.pop_back();
  INFO(job_id);
  REQUIRE_FALSE(job_id.empty());
  REQUIRE(job_id.find_first_not_of("0123456789") == std::string::npos);
  REQUIRE_FALSE(JobActiveStates(job_id).empty());

  JobSpec spec = SlurmTestSpec(dir, "forged", "local_slurm");
  REQUIRE(trtllm_run::WriteJobSpec(spec).ok());
  WriteTextFile(dir + "/run_state.json",
                R"({"scenario": "local_slurm", "supervisor_pid": )" + std::to_string(DeadPid()) +
                    R"(, "supervisor_start_time": 1, "job_id": ")" + job_id + R"("})");
  WriteTextFile(dir + "/slurm_job_id", job_id + "\n");
  WriteTextFile(dir + "/" + trtllm_run::kSlurmJobTokenFile, token + "\n");

  CliRun cancel = Cancel(dir);
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 2);
  CHECK_THAT(cancel.stderr_text, Catch::Contains("UserId=sshtest(1001)"));
  CHECK_THAT(cancel.stderr_text,
             Catch::Contains("not the caller (uid " + std::to_string(::getuid()) + ")"));
  CHECK_THAT(cancel.stderr_text, !Catch::Contains("Comment is"));
  CHECK_THAT(cancel.stderr_text, !Catch::Contains("is not under"));
  CHECK_FALSE(fs::exists(dir + "/result.json"));
  CHECK_FALSE(JobActiveStates(job_id).empty());  // sshtest's job goes on
  Shell("scancel " + job_id);
}

TEST_CASE("cancel ownership: a job the controller no longer knows: nothing to cancel, said so",
          "[slurm][cli]") {
  EnsureSlurm();
  ForgedSlurmWorkDir forged("987654321");  // no such job on the test cluster
  CliRun cancel = Cancel(forged.dir);
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  CHECK_THAT(cancel.stderr_text, Catch::Contains("no longer knows Slurm job 987654321"));
  CHECK_THAT(cancel.stderr_text, Catch::Contains("nothing to cancel"));
}

TEST_CASE("cancel ownership: a forged cases dir naming another run's work dir: exit 2, run goes on",
          "[cli][cases]") {
  TempDir repo("trtllm_owner_cases");
  const std::string marker = UniqueMarker("ownercases");
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_direct",
                  "--custom-cmd",
                  "echo started; sleep 60 # " + marker,
                  "--repo-root",
                  repo.path(),
                  "--kill-grace",
                  "1"};
  options.timeout_seconds = 120;
  CliRun other;
  std::thread runner([&] { other = RunCli(options); });
  // The marker is in trtllm-run's own argv too: it is alive before its work dir exists
  // (under ASan on a loaded machine, for a while), so wait for the work dir as well.
  for (int i = 0;
       i < 300 && (!ProcessWithMarkerAlive(marker) || FindSingleWorkDir(repo.path()).empty());
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(ProcessWithMarkerAlive(marker));
  const std::string victim = FindSingleWorkDir(repo.path());
  REQUIRE_FALSE(victim.empty());

  // A cases dir beside it whose (gone) supervisor "made" the other run's work dir.
  const std::string forged = repo.path() + "/work_dirs/cases_20260101_000000";
  fs::create_directories(forged);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  WriteTextFile(forged + "/cases_state.json", "{\"supervisor_pid\": " + std::to_string(DeadPid()) +
                                                  ", \"supervisor_start_time\": 1, \"host\": \"" +
                                                  host + "\", \"work_dirs\": [\"" + victim +
                                                  "\"]}\n");
  CliRun cancel = Cancel(forged);
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 2);
  CHECK_THAT(cancel.stderr_text, Catch::Contains("is not a case of the cases run " + forged));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(ProcessWithMarkerAlive(marker));  // the other run goes on
  CHECK_FALSE(fs::exists(victim + "/result.json"));

  CliRun real = RunCli({"cancel", "--kill-grace", "1", victim});
  INFO(real.Describe());
  CHECK(real.exit_code == 0);
  runner.join();
  CHECK(other.exit_code == 6);  // CANCELLED
  CHECK(WaitNoProcessWithMarker(marker, 5));
  KillProcessesWithMarker(marker);
}

}  // namespace trtllm_run_test
