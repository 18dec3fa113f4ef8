// Faults on the real services and the real filesystem:
//   - two trtllm-run processes on one work dir: the second refuses, touching nothing;
//   - a corrupted job_spec.json: every reader names the file and what is wrong, exit 2;
//   - a full filesystem (a small tmpfs) while job_spec.json or result.json is written;
//   - slurmctld killed and restarted during a watch (the dedicated trtllm-fault cluster
//     of tests/services/slurm.sh, never a shared one);
//   - sshd killed and restarted during a remote watch (an extra sshd instance of
//     tests/services/sshd.sh, never the shared one on port 2222).
// The service tests carry [fault] as well: ctest runs them one at a time (RUN_SERIAL).
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/slurm/watch.h"
#include "trtllm_run/workdir.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Every file under `dir` (relative path -> contents), to prove a command changed nothing.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files[fs::relative(entry.path(), dir).string()] = ReadTextFile(entry.path().string());
    }
  }
  return files;
}

// Plans a local_direct case under `repo_root`; returns its work dir.
std::string PlanCase(const std::string& repo_root, const std::string& command) {
  CliRun plan = RunCli(
      {"plan", "--repo-root", repo_root, "--scenario", "local_direct", "--custom-cmd", command});
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(repo_root);
  REQUIRE(!work_dir.empty());
  return work_dir;
}

bool WaitForFile(const std::string& path, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A tmpfs of `size` mounted on a fresh directory; unmounted and removed on destruction.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const std::string& size) {
    char pattern[] = "/tmp/trtllm_fault_tmpfs_XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
    std::string options = "size=" + size;
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    INFO("mount -t tmpfs -o " << options << " " << path_ << ": " << std::strerror(errno));
    REQUIRE(mounted_);
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
    ::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  // Fills the filesystem to the last byte with `name`.
  void Fill(const std::string& name) {
    Shell("head -c 100M /dev/zero > " + ShellQuote(path_ + "/" + name) + " 2>/dev/null");
  }

 private:
  std::string path_;
  bool mounted_ = false;
};

// Temporary files WriteFileAtomic leaves when it fails to clean up ("<dir>/.<name>.tmp.*").
std::vector<std::string> TempFilesUnder(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (Contains(entry.path().filename().string(), ".tmp.")) found.push_back(entry.path());
  }
  return found;
}

}  // namespace

TEST_CASE("fault: a second trtllm-run on a running work dir refuses and touches nothing",
          "[fault]") {
  TempDir repo("trtllm_fault_lock");
  std::string marker = UniqueMarker("faultlock");
  std::string work_dir = PlanCase(repo.path(), "sleep 4; echo '1 passed' # " + marker);

  CliRun first;
  std::thread runner([&] { first = RunCli({"exec", work_dir}); });
  REQUIRE(WaitForFile(RunStatePath(work_dir), 30));
  Result<RunState> state = ReadRunState(work_dir);
  REQUIRE(state.ok());

  std::map<std::string, std::string> before = Snapshot(work_dir);
  CliRun second = RunCli({"exec", work_dir});
  INFO(second.Describe());
  CHECK(second.exit_code == 2);
  CHECK(Contains(second.stderr_text, "work dir " + work_dir + " is in use"));
  CHECK(Contains(second.stderr_text, "pid " + std::to_string(state->supervisor_pid)));
  std::map<std::string, std::string> after = Snapshot(work_dir);
  after.erase("custom_local.log");  // the first run's own output may grow meanwhile
  before.erase("custom_local.log");
  CHECK(after == before);

  // Readers still work while the lock is held.
  CliRun status = RunCli({"status", work_dir});
  CHECK(status.exit_code == 0);
  CHECK(Contains(status.stdout_text, "running"));

  runner.join();
  INFO(first.Describe());
  CHECK(first.exit_code == 0);
  CHECK(Contains(first.stderr_text, "PASSED"));

  // A finished work dir is not run again.
  before = Snapshot(work_dir);
  CliRun again = RunCli({"exec", work_dir});
  INFO(again.Describe());
  CHECK(again.exit_code == 2);
  CHECK(Contains(again.stderr_text, work_dir + "/result.json exists"));
  CHECK(Snapshot(work_dir) == before);

  // A finished work dir without a lock file (made before there was one) gets none.
  fs::remove(work_dir + "/.lock");
  CliRun old = RunCli({"exec", work_dir});
  CHECK(old.exit_code == 2);
  CHECK(!fs::exists(work_dir + "/.lock"));
}

TEST_CASE("fault: cancel and attach work on a work dir another trtllm-run holds", "[fault]") {
  TempDir repo("trtllm_fault_cancel");
  std::string marker = UniqueMarker("faultcancel");
  std::string work_dir = PlanCase(repo.path(), "echo started; sleep 60 # " + marker);
  CliRun first;
  std::thread runner([&] { first = RunCli({"exec", "--kill-grace", "2", work_dir}); });
  REQUIRE(WaitForFile(RunStatePath(work_dir), 30));
  for (int i = 0; i < 100 && !ProcessWithMarkerAlive(marker); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CliOptions attach;
  attach.args = {"attach", work_dir};
  attach.timeout_seconds = 60;
  CliRun attached;
  std::thread follower([&] { attached = RunCli(attach); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CliRun cancel = RunCli({"cancel", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  runner.join();
  follower.join();
  INFO(first.Describe());
  CHECK(first.exit_code == 6);  // CANCELLED
  CHECK(attached.exit_code == 6);
  CHECK(Contains(attached.stdout_text, "started"));
  CHECK(WaitNoProcessWithMarker(marker, 10));
}

TEST_CASE("fault: a corrupted job_spec.json is named by every command that reads it", "[fault]") {
  TempDir repo("trtllm_fault_spec");
  std::string work_dir = PlanCase(repo.path(), "echo '1 passed'");
  std::string spec_path = work_dir + "/job_spec.json";
  std::string good = ReadTextFile(spec_path);
  REQUIRE(Contains(good, "\"scenario\": \"local_direct\""));

  struct Corruption {
    const char* name;
    std::string text;
    std::string detail;  // what the message must say is wrong
  };
  std::string missing = good;
  missing.replace(missing.find("\"scenario\": \"local_direct\","),
                  std::string("\"scenario\": \"local_direct\",").size(), "");
  std::string wrong_type = good;
  wrong_type.replace(wrong_type.find("\"local_direct\""), std::string("\"local_direct\"").size(),
                     "42");
  const std::vector<Corruption> corruptions = {
      {"truncated", good.substr(0, good.size() / 2), "not valid JSON at byte"},
      {"not JSON", "{scenario: local_direct", "not valid JSON at byte 1"},
      {"empty", "", "not valid JSON at byte 0"},
      {"wrong type", wrong_type, "'scenario'"},
      {"missing field", missing, "required key 'scenario' is missing"},
  };
  for (const Corruption& corruption : corruptions) {
    WriteTextFile(spec_path, corruption.text);
    std::map<std::string, std::string> before = Snapshot(work_dir);
    for (const char* command : {"exec", "status", "attach", "cancel"}) {
      CliOptions options;
      options.args = {command, work_dir};
      if (std::string(command) == "attach") options.args.push_back("--wait-start=0");
      options.timeout_seconds = 30;
      CliRun run = RunCli(options);
      INFO(corruption.name << ": " << run.Describe());
      CHECK(run.exit_code == 2);
      CHECK(Contains(run.stderr_text, spec_path));
      CHECK(Contains(run.stderr_text, corruption.detail));
      CHECK(Snapshot(work_dir) == before);  // nothing written, nothing overwritten
    }
  }
}

TEST_CASE("fault: a full filesystem while writing job_spec.json leaves no work dir", "[fault]") {
  if (::geteuid() != 0) {
    WARN("skipped: mounting a tmpfs needs root (CI runs as root)");
    return;
  }
  SmallTmpfs tmpfs("64k");
  tmpfs.Fill("filler");
  for (const char* command : {"plan", "run"}) {
    CliRun run = RunCli({command, "--repo-root", tmpfs.path(), "--scenario", "local_direct",
                         "--custom-cmd", "echo '1 passed'"});
    INFO(run.Describe());
    CHECK(run.exit_code == 3);  // an I/O error: not bad input, nothing ran
    CHECK(Contains(run.stderr_text, "job_spec.json"));
    CHECK(Contains(run.stderr_text, "No space left on device"));
    // No half-written work dir and no temporary file is left.
    std::error_code error;
    CHECK(FindSingleWorkDir(tmpfs.path()).empty());
    CHECK((!fs::exists(tmpfs.path() + "/work_dirs") ||
           fs::is_empty(tmpfs.path() + "/work_dirs", error)));
    CHECK(TempFilesUnder(tmpfs.path()).empty());
  }
}

TEST_CASE("fault: a full filesystem at result.json still reports the verdict", "[fault]") {
  if (::geteuid() != 0) {
    WARN("skipped: mounting a tmpfs needs root (CI runs as root)");
    return;
  }
  SmallTmpfs tmpfs("256k");
  // The job passes, then fills the work dir's filesystem: result.json cannot be written.
  std::string fill =
      "head -c 100M /dev/zero > " + ShellQuote(tmpfs.path() + "/filler") + " 2>/dev/null || true";
  CliRun run = RunCli({"run", "--repo-root", tmpfs.path(), "--scenario", "local_direct",
                       "--custom-cmd", "echo '1 passed'; " + fill});
  INFO(run.Describe());
  std::string work_dir = FindSingleWorkDir(tmpfs.path());
  REQUIRE(!work_dir.empty());
  CHECK(run.exit_code == 0);  // the verdict stands
  CHECK(Contains(run.stderr_text, "PASSED"));
  CHECK(Contains(run.stderr_text, "cannot write " + work_dir + "/result.json"));
  CHECK(Contains(run.stderr_text, "No space left on device"));
  CHECK_FALSE(fs::exists(work_dir + "/result.json"));  // never a truncated one
  CHECK(TempFilesUnder(tmpfs.path()).empty());
  // job_spec.json, written before the disk filled, is intact.
  CHECK(Contains(ReadTextFile(work_dir + "/job_spec.json"), "\"scenario\": \"local_direct\""));
}

// ------------------------------------------------------------------ slurmctld faults

namespace {

const char kFaultConf[] = "/etc/slurm-fault/slurm.conf";
const char kFaultJobState[] = "/var/spool/slurmctld-fault/job_state";  // StateSaveLocation

std::string SlurmSh(const std::string& action) {
  int status = 0;
  std::string out =
      Shell("bash " + SourceDir() + "/tests/services/slurm.sh " + action + " 2>&1", &status);
  INFO("slurm.sh " << action << ": " << out);
  REQUIRE(status == 0);
  return out;
}

// Restarts the fault cluster's controller when a test ends, whatever happened.
struct ControllerGuard {
  ~ControllerGuard() {
    Shell("bash " + SourceDir() + "/tests/services/slurm.sh fault-start-ctld >/dev/null 2>&1");
  }
};

// A local_slurm job on the trtllm-fault cluster. Its script runs the commands directly
// (no srun: a step could not start while the controller is down) between the rendered
// script's "[trtllm-run]" start and end lines.
struct FaultCase {
  TempDir dir{"trtllm_fault_slurm"};
  JobSpec spec;
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;

  FaultCase(const std::string& name, const std::string& command) {
    spec = SlurmTestSpec(dir.path(), name, "local_slurm");
    std::string script = "#!/bin/bash\n#SBATCH --job-name=" + name +
                         "\n#SBATCH --output=" + dir.path() + "/" + name +
                         "_auto_test_%j.out\n#SBATCH --time=00:05:00\n";
    script += "echo \"[trtllm-run] job ${SLURM_JOB_ID} on $(hostname) started\"\n";
    script += "bash -c " + ShellQuote(command) + "\nexit_code=$?\n";
    script += EndMarkerEcho(NewEndMarkerToken()) + "\nexit $exit_code\n";
    WriteTextFile(spec.script_path, script);
    ::chmod(spec.script_path.c_str(), 0755);
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 5;
  }
  std::string Describe(const RunResult& r) const {
    std::string notes;
    for (const std::string& note : r.notes) notes += "  " + note + "\n";
    return std::string(RunStatusName(r.status)) + ": " + r.reason + "\n--- notes\n" + notes +
           "--- progress\n" + progress.str();
  }
  // Waits until the job runs (its start line is in the output) and the controller has
  // saved it as such (job_state in StateSaveLocation written since), then `seconds` more.
  // A controller killed before that save would recover the job as PENDING and start it a
  // second time: a fault of the test, not of the watch.
  std::string WaitRunning(double seconds) {
    std::string id = WaitForFileText(spec.work_dir + "/slurm_job_id", 60);
    REQUIRE(!id.empty());
    std::string out = spec.work_dir + "/" + spec.model_name + "_auto_test_" + id + ".out";
    for (int i = 0; i < 600 && !Contains(ReadTextFile(out), "started"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE(Contains(ReadTextFile(out), "started"));
    std::time_t started = std::time(nullptr);
    bool saved = false;
    for (int i = 0; i < 300 && !saved; ++i) {
      struct stat st;
      saved = ::stat(kFaultJobState, &st) == 0 && st.st_mtime > started;
      if (!saved) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE(saved);
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
    return id;
  }
};

}  // namespace

TEST_CASE("fault: slurmctld killed and restarted during a watch: the verdict is right",
          "[slurm][fault]") {
  EnsureSlurm();
  SlurmSh("fault-ensure");
  ScopedEnv conf("SLURM_CONF", kFaultConf);
  ControllerGuard guard;
  FaultCase c("ctldrestart", "sleep 12; echo '1 passed'");
  RunResult r;
  std::thread runner([&] { r = ExecuteSlurmJob(c.spec, c.context); });
  std::string id = c.WaitRunning(1);
  SlurmSh("fault-kill-ctld");
  // The job ends while the controller is down: the watcher sees its end line, its
  // queries fail, and it must wait for the controller instead of guessing.
  std::this_thread::sleep_for(std::chrono::seconds(16));
  SlurmSh("fault-start-ctld");
  runner.join();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(r.details["job_id"] == id);
  CHECK(Contains(c.progress.str(), "scheduler query failed (retrying)"));
  CHECK(Contains(c.progress.str(), "scheduler answers again after"));
  CHECK(JobActiveStates(id).empty());
}

TEST_CASE("fault: slurmctld down past the job's end: judged from its end line after the limit",
          "[slurm][fault]") {
  EnsureSlurm();
  SlurmSh("fault-ensure");
  ScopedEnv conf("SLURM_CONF", kFaultConf);
  ScopedEnv limit(kLostContactLimitEnv, "15");
  ControllerGuard guard;
  FaultCase c("ctlddown", "sleep 10; echo 'FAILED tests/test_x.py::test_y'; exit 1");
  RunResult r;
  std::thread runner([&] { r = ExecuteSlurmJob(c.spec, c.context); });
  c.WaitRunning(1);
  SlurmSh("fault-kill-ctld");
  runner.join();  // the controller stays down until the verdict
  SlurmSh("fault-start-ctld");
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kFailed);
  CHECK(r.exit_code == 1);
  bool noted = false;
  for (const std::string& note : r.notes) {
    if (Contains(note, "lost contact with the scheduler") && Contains(note, "end line")) {
      noted = true;
    }
  }
  CHECK(noted);
  CHECK(Contains(c.progress.str(), "scheduler query failed (retrying)"));
}

// ------------------------------------------------------------------------ sshd faults

namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";
const int kExtraPort = 2223;

std::string SshdSh(const std::string& action) {
  int status = 0;
  std::string out =
      Shell("bash " + SourceDir() + "/tests/services/sshd.sh " + action + " 2>&1", &status);
  INFO("sshd.sh " << action << ": " << out);
  REQUIRE(status == 0);
  return out;
}

struct ExtraSshdGuard {
  ~ExtraSshdGuard() {
    Shell("bash " + SourceDir() + "/tests/services/sshd.sh stop-extra " +
          std::to_string(kExtraPort) + " >/dev/null 2>&1");
  }
};

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

}  // namespace

TEST_CASE("fault: sshd restarted during a remote watch: reconnect and the right verdict",
          "[sshd][fault]") {
  EnsureSshd();
  ExtraSshdGuard guard;
  SshdSh("start-extra " + std::to_string(kExtraPort));

  TempDir dir("trtllm_fault_remote");
  std::string remote_root = "/home/sshtest/trtllm_fault_" + RandomName();
  std::string ssh_config = dir.path() + "/ssh_config";
  WriteTextFile(ssh_config, "Host trtllm-fault-login\n  HostName 127.0.0.1\n  Port " +
                                std::to_string(kExtraPort) + "\n  User sshtest\n" +
                                "  UserKnownHostsFile " + kSshDir + "/known_hosts_" +
                                std::to_string(kExtraPort) + "\n  StrictHostKeyChecking yes\n" +
                                "  IdentityFile " + kSshDir + "/id_ed25519\n" +
                                "  IdentitiesOnly yes\n");
  JobSpec spec = SlurmTestSpec(dir.path(), "sshdrestart", "remote_slurm");
  spec.ssh_host = "trtllm-fault-login";
  spec.slurm_user = "sshtest";
  spec.extra["ssh_config_file"] = ssh_config;
  spec.remote_work_dir = remote_root + "/work";
  WriteTextFile(spec.script_path,
                BatchScript(spec.remote_work_dir, "sshdrestart",
                            {"echo hello from $(whoami); sleep 16; echo '1 passed'"}));
  ::chmod(spec.script_path.c_str(), 0755);
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;
  context.cancel = &cancel;
  context.terminal = &terminal;
  context.progress = &progress;
  context.kill_grace_seconds = 5;

  RunResult r;
  std::thread runner([&] { r = ExecuteSlurmJob(spec, context); });
  std::string id = WaitForFileText(dir.path() + "/slurm_job_id", 60);
  REQUIRE(!id.empty());
  WaitForJobState(id, "RUNNING", 60);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  SshdSh("stop-extra " + std::to_string(kExtraPort));  // the master connection drops too
  std::this_thread::sleep_for(std::chrono::seconds(6));
  SshdSh("start-extra " + std::to_string(kExtraPort));
  runner.join();
  Shell("rm -rf " + ShellQuote(remote_root));

  std::string notes;
  for (const std::string& note : r.notes) notes += note + "\n";
  INFO(RunStatusName(r.status) << ": " << r.reason << "\n--- notes\n"
                               << notes << "--- progress\n"
                               << progress.str());
  CHECK(r.status == RunStatus::kPassed);
  CHECK(r.details["job_id"] == id);
  CHECK(std::stoi(r.details["ssh_connections"]) >= 2);
  CHECK(Contains(notes, "was lost and re-established"));
  CHECK(Contains(ReadTextFile(r.log_file), "1 passed"));
  CHECK(JobActiveStates(id).empty());
}
