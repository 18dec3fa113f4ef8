// Jobs stuck in the Slurm queue, through the trtllm-run binary on the real test cluster
// trtllm-test (tests/services/slurm.sh):
//   - a reason waiting cannot clear (PartitionDown: the `maint` partition is down) ->
//     scancel at once, ERROR naming the reason and the fix. trtllm-run refuses
//     --partition maint before submission, so the job is planned for `batch` and sbatch
//     is pointed at maint by $SBATCH_PARTITION, which overrides the script's #SBATCH line;
//   - --max-pending with a job that waits for a reservation 30 days ahead (reason
//     Reservation, which waiting clears) -> scancel after the bound, ERROR "still pending
//     after N: Reservation". The reservation lies far beyond any job's time limit, so the
//     other tests' jobs on the node are not held back by it;
//   - a second reason waiting cannot clear (DependencyNeverSatisfied): the job pends on
//     that reservation, and the test then makes it depend on a job that failed
//     (`scontrol update Dependency=afterok:...`; 22.05's sbatch takes no dependency from
//     the environment, and the cluster's EnforcePartLimits=ALL refuses the limit reasons
//     at submission, so they never pend here).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

CliOptions PendingCli(const std::string& verb, const std::string& repo,
                      std::vector<std::string> args) {
  CliOptions options;
  options.args = {verb,          "--repo-root",        repo,   "--scenario",
                  "local_slurm", "--skip-install",     "true", "--container-runtime",
                  "none",        "--container-image",  "none", "--partition",
                  "batch",       "--required-devices", "0"};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.cwd = repo;
  options.timeout_seconds = 120;
  return options;
}

std::string Field(const rapidjson::Document& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "";
}

std::string JobIdOf(const rapidjson::Document& doc) {
  if (!doc.IsObject() || !doc.HasMember("details") || !doc["details"].IsObject()) return "";
  const auto& details = doc["details"];
  return details.HasMember("job_id") && details["job_id"].IsString() ? details["job_id"].GetString()
                                                                     : "";
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A reservation on localhost that starts in 30 days, deleted at the end of the scope.
// OVERLAP: the tests that make one run at the same time (ctest -j), and reservations of
// the same nodes and times are refused without it.
class FutureReservation {
 public:
  FutureReservation() : name_("trtllm_pending_" + std::to_string(::getpid())) {
    int status = 0;
    std::string out = Shell("scontrol create reservation ReservationName=" + name_ +
                                " StartTime=now+30days Duration=10 Users=root Nodes=localhost "
                                "Flags=OVERLAP 2>&1",
                            &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  ~FutureReservation() { Shell("scontrol delete ReservationName=" + name_ + " 2>&1"); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace

TEST_CASE(
    "slurm pending: a job pending on a down partition is cancelled at once, ERROR naming "
    "PartitionDown and the fix",
    "[slurm][cli]") {
  EnsureSlurm();
  TempDir repo("trtllm_pending");
  CliOptions options = PendingCli("run", repo.path(),
                                  {"--monitor-timeout", "10m", "--custom-cmd", "echo never runs"});
  options.env.push_back({"SBATCH_PARTITION", "maint"});
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds < 60);  // not the 10 minutes of the monitor timeout
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  std::string reason = Field(result, "reason");
  INFO(reason);
  CHECK(Field(result, "status") == "ERROR");
  CHECK(Contains(reason,
                 "was pending with reason PartitionDown (its partition is down), "
                 "which waiting cannot clear"));
  CHECK(Contains(reason, "was cancelled with scancel and left the queue"));
  std::string diagnosis = Field(result, "diagnosis");
  CHECK(Contains(diagnosis,
                 "The job never started: Slurm kept it pending with reason "
                 "PartitionDown (its partition is down), which waiting cannot clear. "
                 "Fix: give a --partition that is up"));
  CHECK_FALSE(Contains(diagnosis, "Empty output file"));
  CHECK((!result.HasMember("exit_code") || result["exit_code"].IsNull()));  // it never ran
  std::string job_id = JobIdOf(result);
  REQUIRE(!job_id.empty());
  CHECK(JobActiveStates(job_id).empty());
}

TEST_CASE(
    "slurm pending: --max-pending cancels a job still pending after it, ERROR naming the "
    "reason",
    "[slurm][cli]") {
  EnsureSlurm();
  FutureReservation reservation;
  TempDir repo("trtllm_pending");
  CliOptions options =
      PendingCli("run", repo.path(),
                 {"--max-pending", "5s", "--monitor-timeout", "10m", "--custom-cmd", "echo never"});
  options.env.push_back({"SBATCH_RESERVATION", reservation.name()});
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds >= 5);
  CHECK(run.seconds < 60);
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  std::string reason = Field(result, "reason");
  INFO(reason);
  CHECK(Field(result, "status") == "ERROR");
  CHECK(reason.rfind("still pending after 5s: Reservation; ", 0) == 0);
  CHECK(Contains(Field(result, "diagnosis"),
                 "The job never started: Slurm kept it pending with reason Reservation until "
                 "--max-pending ran out"));
  std::string job_id = JobIdOf(result);
  REQUIRE(!job_id.empty());
  CHECK(JobActiveStates(job_id).empty());
}

TEST_CASE(
    "slurm pending: a job whose dependency can never be satisfied is cancelled at once, "
    "ERROR naming DependencyNeverSatisfied",
    "[slurm][cli]") {
  EnsureSlurm();
  FutureReservation reservation;
  TempDir repo("trtllm_pending");
  // The dependency: a job that fails (it is known to the controller for MinJobAge).
  int status = 0;
  std::string failed = Shell(
      "sbatch --parsable --partition=cpu --mem=64M --output=/dev/null --job-name=trtllm-dep-" +
          std::to_string(::getpid()) + " --wrap false 2>&1",
      &status);
  while (!failed.empty() && (failed.back() == '\n' || failed.back() == ' ')) failed.pop_back();
  INFO("dependency job: " << failed);
  REQUIRE(status == 0);
  WaitForJobState(failed, "FAILED", 60);
  REQUIRE(JobState(failed) == "FAILED");
  const std::string name = "trtllm-depnever-" + std::to_string(::getpid());
  CliOptions options = PendingCli("run", repo.path(),
                                  {"--monitor-timeout", "10m", "--custom-cmd", "echo never runs"});
  options.env.push_back({"SBATCH_RESERVATION", reservation.name()});
  options.env.push_back({"SBATCH_JOB_NAME", name});
  // Once trtllm-run's job pends (on the reservation), it is made to depend on the failed job.
  std::string updated = "trtllm-run's job was never seen pending";
  std::thread make_hopeless([&] {
    for (int i = 0; i < 300; ++i) {
      std::string id = Shell("squeue -h -t PD -n " + name + " -o %i 2>/dev/null");
      while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
      if (!id.empty()) {
        updated = "scontrol update of job " + id + ": " +
                  Shell("scontrol update JobId=" + id + " Dependency=afterok:" + failed + " 2>&1");
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  CliRun run = RunCli(options);
  make_hopeless.join();
  INFO(updated);
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds < 90);  // not the 10 minutes of the monitor timeout
  std::string work_dir = FindSingleWorkDir(repo.path());
  REQUIRE(!work_dir.empty());
  rapidjson::Document result = ReadResultJson(work_dir);
  std::string reason = Field(result, "reason");
  INFO(reason);
  CHECK(Field(result, "status") == "ERROR");
  CHECK(Contains(reason, "was pending with reason DependencyNeverSatisfied"));
  CHECK(Contains(reason, "which waiting cannot clear"));
  CHECK(Contains(reason, "was cancelled with scancel and left the queue"));
  CHECK(Contains(Field(result, "diagnosis"),
                 "The job never started: Slurm kept it pending with reason "
                 "DependencyNeverSatisfied"));
  std::string job_id = JobIdOf(result);
  REQUIRE(!job_id.empty());
  CHECK(JobActiveStates(job_id).empty());
}

TEST_CASE("slurm pending: a --cases run bounds each case's queue wait by max_pending",
          "[slurm][cli]") {
  EnsureSlurm();
  FutureReservation reservation;
  TempDir repo("trtllm_pending");
  WriteTextFile(repo.path() + "/cases.yaml",
                "- name: waits\n  custom_cmd: echo never\n  max_pending: 5s\n");
  CliOptions options = PendingCli("run", repo.path(), {"--cases", repo.path() + "/cases.yaml"});
  options.env.push_back({"SBATCH_RESERVATION", reservation.name()});
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE_FALSE(run.timed_out);
  CHECK(run.exit_code == 3);
  CHECK(run.seconds < 60);
  CHECK(Contains(run.stdout_text + run.stderr_text, "still pending after max_pending 5s"));
}

TEST_CASE("slurm pending: a bad --max-pending is exit 2 naming it, nothing submitted",
          "[slurm][cli][bad_input]") {
  EnsureSlurm();
  TempDir repo("trtllm_pending");
  CliRun run = RunCli(
      PendingCli("run", repo.path(), {"--max-pending", "soon", "--custom-cmd", "echo never"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(Contains(run.stderr_text, "invalid max_pending 'soon'"));
  std::error_code error;
  fs::path dir = fs::path(repo.path()) / "work_dirs";
  CHECK((!fs::exists(dir, error) || fs::is_empty(dir, error)));
}
