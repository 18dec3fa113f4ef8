// remote_slurm through the real loopback sshd (tests/services/sshd.sh) to the real test
// cluster: the key user (sshtest) and the password user (slurmpw). The "remote" repo is a
// local bare git repository the remote users can read; the remote work dirs live in their
// homes. One SSH master connection serves a whole run.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm/alloc/slurm_alloc.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";
const char kPassword[] = "trtllm-test-pw";  // tests/services/sshd.sh's test secret

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// A bare repo with one commit on `main` (scripts/build_wheel.py succeeds) and one on
// `broken` (it fails), owned by the remote user (git refuses repos of other owners).
class OriginRepo {
 public:
  explicit OriginRepo(const std::string& owner = "sshtest") {
    ::chmod(dir_.path().c_str(), 0755);
    path_ = dir_.path() + "/TensorRT-LLM.git";
    std::string work = dir_.path() + "/seed";
    std::string script =
        "set -e\n"
        "git init -q -b main " +
        work +
        "\n"
        "cd " +
        work +
        "\n"
        "git config user.email t@example.com && git config user.name test\n"
        "mkdir -p scripts\n"
        "printf 'import os, sys\\nprint(\"building the wheel\")\\n"
        "sys.exit(1 if os.path.exists(\"BUILD_SHOULD_FAIL\") else 0)\\n' > scripts/build_wheel.py\n"
        "echo readme > README.md\n"
        "git add -A && git commit -q -m main\n"
        "git checkout -q -b broken\n"
        "echo 'error: this branch does not build' > BUILD_SHOULD_FAIL\n"
        "git add -A && git commit -q -m broken\n"
        "git clone -q --bare " +
        work + " " + path_ +
        "\n"
        "chmod -R a+rX " +
        dir_.path() +
        "\n"
        "chown -R " +
        owner + " " + path_ + "\n";
    int status = 0;
    std::string out = Shell("bash -c " + ShellQuote(script) + " 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_{"trtllm_origin"};
  std::string path_;
};

struct RemoteCase {
  TempDir dir{"trtllm_remote_slurm"};
  std::string user;
  std::string remote_root;  // removed afterwards
  std::string ssh_config;
  JobSpec spec;
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;

  RemoteCase(const std::string& remote_user, const std::string& name,
             const std::vector<std::string>& steps, const std::string& repo_url,
             const std::string& sbatch = "")
      : user(remote_user) {
    remote_root = "/home/" + user + "/trtllm_test_" + RandomName();
    ssh_config = dir.path() + "/ssh_config";
    std::string config = "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n  User " +
                         user + "\n  UserKnownHostsFile " + kSshDir +
                         "/known_hosts\n  StrictHostKeyChecking yes\n";
    if (user == "sshtest") {
      config += "  IdentityFile " + std::string(kSshDir) + "/id_ed25519\n  IdentitiesOnly yes\n";
    } else {
      config += "  PubkeyAuthentication no\n  PreferredAuthentications password\n";
    }
    WriteTextFile(ssh_config, config);
    spec = SlurmTestSpec(dir.path(), name, "remote_slurm");
    spec.ssh_host = "trtllm-test-login";
    spec.slurm_user = user;
    spec.extra["ssh_config_file"] = ssh_config;
    spec.remote_repo_path = remote_root + "/TensorRT-LLM";
    spec.remote_work_dir =
        spec.remote_repo_path + "/work_dirs/" + fs::path(dir.path()).filename().string();
    spec.repo_url = repo_url;
    spec.repo_branch = "main";
    WriteTextFile(spec.script_path, BatchScript(spec.remote_work_dir, name, steps, sbatch));
    ::chmod(spec.script_path.c_str(), 0755);
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 5;
  }
  ~RemoteCase() { Shell("rm -rf " + ShellQuote(remote_root)); }
  RunResult Run() { return ExecuteSlurmJob(spec, context); }
  std::string Describe(const RunResult& r) const {
    return std::string(RunStatusName(r.status)) + ": " + r.reason + "\n--- progress\n" +
           progress.str() + "--- diagnosis\n" + r.diagnosis;
  }
};

}  // namespace

TEST_CASE("remote_slurm: key user: repo cloned, build job, PASSED, one SSH connection", "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCase c("sshtest", "rpass", {"echo hello from $(whoami) in $PWD; echo '2 passed'"},
               origin.path());
  c.spec.build_project = true;
  RunResult r = c.Run();
  INFO(c.Describe(r));
  REQUIRE(r.status == RunStatus::kPassed);
  CHECK(r.details["ssh_connections"] == "1");
  CHECK(!r.details["build_job_id"].empty());
  std::string id = r.details["job_id"];
  CHECK(ReadTextFile(c.spec.work_dir + "/slurm_job_id") == id + "\n");
  // The output was copied into the local work dir as it grew.
  CHECK(r.log_file == c.spec.work_dir + "/rpass_auto_test_" + id + ".out");
  CHECK(ReadTextFile(r.log_file).find("hello from sshtest") != std::string::npos);
  CHECK(c.terminal.str().find("hello from sshtest") != std::string::npos);
  CHECK(fs::exists(c.spec.remote_repo_path + "/scripts/build_wheel.py"));
  CHECK(Shell("runuser -u sshtest -- git -C " + c.spec.remote_repo_path +
              " rev-parse --abbrev-ref HEAD") == "main\n");
  CHECK(JobActiveStates(id).empty());
  CHECK(Shell("stat -c %U " + c.spec.remote_work_dir) == "sshtest\n");

  // A second run in the same remote repo fetches and checks out instead of cloning.
  RemoteCase again("sshtest", "rpass2", {"echo again"}, origin.path());
  again.remote_root = c.remote_root;
  again.spec.remote_repo_path = c.spec.remote_repo_path;
  again.spec.remote_work_dir = c.spec.remote_repo_path + "/work_dirs/second";
  WriteTextFile(again.spec.script_path,
                BatchScript(again.spec.remote_work_dir, "rpass2", {"echo again"}));
  r = again.Run();
  INFO(again.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  bool updated = false;
  for (const std::string& note : r.notes)
    updated = updated || note.find("updated ") != std::string::npos;
  CHECK(updated);
  again.remote_root.clear();  // removed by `c`
}

TEST_CASE("remote_slurm: a failing build is BUILD_FAILED and nothing is submitted", "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCase c("sshtest", "rbuild", {"echo never"}, origin.path());
  c.spec.repo_branch = "broken";
  c.spec.build_project = true;
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kError);
  CHECK(r.reason.rfind("BUILD_FAILED", 0) == 0);
  CHECK_FALSE(fs::exists(c.spec.work_dir + "/slurm_job_id"));
  CHECK(ReadTextFile(r.log_file).find("building the wheel") != std::string::npos);
}

TEST_CASE("remote_slurm: key user: FAILED, HANG_DETECTED, TIMEOUT, OUT_OF_MEMORY", "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  {
    RemoteCase c("sshtest", "rfail", {"echo ok", "echo 'FAILED tests/t.py::test_a - boom'; exit 5"},
                 origin.path());
    RunResult r = c.Run();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kFailed);
    CHECK(r.exit_code == 5);
    CHECK(r.diagnosis.find("tests/t.py::test_a") != std::string::npos);
  }
  {
    RemoteCase c("sshtest", "rhang", {"echo go; sleep 1; echo 'hang detected'; sleep 600"},
                 origin.path());
    RunResult r = c.Run();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kHangDetected);
    CHECK(r.reason == "log line \"0: hang detected\"; job " + r.details["job_id"] +
                          " was cancelled with scancel and left the queue");
    CHECK(JobActiveStates(r.details["job_id"]).empty());
  }
  {
    RemoteCase c("sshtest", "rmto", {"echo go; sleep 600"}, origin.path());
    c.spec.monitor_timeout_seconds = 8;
    RunResult r = c.Run();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kTimeout);
    CHECK(JobActiveStates(r.details["job_id"]).empty());
  }
  {
    RemoteCase c("sshtest", "room",
                 {"python3 -c 'import time\na=[]\nfor i in range(200): "
                  "a.append(bytearray(20*1024*1024)); time.sleep(0.1)'"},
                 origin.path(), "#SBATCH --mem=100M");
    RunResult r = c.Run();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kOutOfMemory);
  }
}

TEST_CASE("remote_slurm: external scancel is CANCELLED, SIGINT scancels, job gone", "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  {
    RemoteCase c("sshtest", "rext", {"echo running; sleep 600"}, origin.path());
    std::thread canceller([&] {
      std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 90);
      WaitForJobState(id, "RUNNING", 120);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      Shell("scancel " + id);
    });
    RunResult r = c.Run();
    canceller.join();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kCancelled);
    CHECK_FALSE(r.user_interrupt);
  }
  {
    RemoteCase c("sshtest", "rint", {"echo running; sleep 600"}, origin.path());
    std::thread interrupter([&] {
      std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 90);
      WaitForJobState(id, "RUNNING", 120);
      c.cancel.Cancel(SIGINT);
    });
    RunResult r = c.Run();
    interrupter.join();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kCancelled);
    CHECK(r.user_interrupt);
    CHECK(JobActiveStates(r.details["job_id"]).empty());
  }
}

TEST_CASE("remote_slurm: a dropped master connection is re-established, the watch resumes",
          "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCase c("sshtest", "rdrop", {"echo before; sleep 8; echo after; echo '1 passed'"},
               origin.path());
  std::thread killer([&] {
    std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 90);
    WaitForJobState(id, "RUNNING", 120);
    // The master is the ssh process whose argv names this test's config file.
    for (int pid : PidsWithMarker("ControlMaster=yes")) {
      std::string cmdline = ReadTextFile("/proc/" + std::to_string(pid) + "/cmdline");
      if (cmdline.find(c.ssh_config) != std::string::npos) ::kill(pid, SIGKILL);
    }
  });
  RunResult r = c.Run();
  killer.join();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(ReadTextFile(r.log_file).find("after") != std::string::npos);
  CHECK(r.details["ssh_connections"] == "2");
}

TEST_CASE("remote_slurm: password user: PASSED, the password is in no argv, file or log",
          "[sshd]") {
  EnsureSshd();
  OriginRepo origin("slurmpw");
  RemoteCase c("slurmpw", "rpw", {"echo hello from $(whoami); sleep 3; echo '1 passed'"},
               origin.path());
  std::string password_file = c.dir.path() + "/../trtllm_pw_" + RandomName();
  WriteTextFile(password_file, std::string(kPassword) + "\n");
  ::chmod(password_file.c_str(), 0600);
  ScopedEnv file(kSlurmPasswordFileEnv, password_file);
  std::atomic<bool> done{false};
  std::atomic<int> leaks{0}, samples{0};
  std::thread watcher([&] {
    while (!done) {
      std::string ps = Shell("ps -eo args");
      ++samples;
      if (ps.find(kPassword) != std::string::npos) ++leaks;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  RunResult r = c.Run();
  done = true;
  watcher.join();
  fs::remove(password_file);
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kPassed);
  CHECK(ReadTextFile(r.log_file).find("hello from slurmpw") != std::string::npos);
  CHECK(r.details["ssh_connections"] == "1");
  CHECK(samples > 5);
  CHECK(leaks == 0);
  int status = 0;
  Shell("grep -rqF " + ShellQuote(kPassword) + " " + ShellQuote(c.spec.work_dir) + " " +
            ShellQuote(c.remote_root),
        &status);
  CHECK(status == 1);  // grep: no match anywhere
  CHECK(c.progress.str().find(kPassword) == std::string::npos);
  CHECK(c.terminal.str().find(kPassword) == std::string::npos);
  CHECK(r.reason.find(kPassword) == std::string::npos);
}

TEST_CASE("remote_slurm: a wrong password or unreachable host is ERROR, nothing submitted",
          "[sshd]") {
  EnsureSshd();
  OriginRepo origin("slurmpw");
  RemoteCase c("slurmpw", "rbadpw", {"echo never"}, origin.path());
  ScopedEnv env(kSlurmPasswordEnv, "not-the-password");
  RunResult r = c.Run();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kError);
  CHECK(r.reason.find("cannot connect to trtllm-test-login") != std::string::npos);
  CHECK(r.reason.find("not-the-password") == std::string::npos);
  CHECK_FALSE(fs::exists(c.spec.work_dir + "/slurm_job_id"));
}

// ---- Through the trtllm-run binary: jobs rendered by trtllm-run (container_runtime none).

namespace {

struct RemoteCli {
  TempDir repo{"trtllm_remote_cli"};
  std::string user;
  std::string remote_root;
  std::string ssh_config;
  explicit RemoteCli(const std::string& remote_user) : user(remote_user) {
    remote_root = "/home/" + user + "/trtllm_cli_" + RandomName();
    ssh_config = repo.path() + "/ssh_config";
    std::string config =
        "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
        "  UserKnownHostsFile " +
        std::string(kSshDir) + "/known_hosts\n";
    config += user == "sshtest"
                  ? "  IdentityFile " + std::string(kSshDir) + "/id_ed25519\n  IdentitiesOnly yes\n"
                  : "  PubkeyAuthentication no\n";
    WriteTextFile(ssh_config, config);
  }
  ~RemoteCli() { Shell("rm -rf " + ShellQuote(remote_root)); }
  std::vector<std::string> Args(const std::string& origin, std::vector<std::string> more) const {
    std::vector<std::string> args = {"run",
                                     "--scenario",
                                     "remote_slurm",
                                     "--ssh-host",
                                     "trtllm-test-login",
                                     "--slurm-user",
                                     user,
                                     "--ssh-config-file",
                                     ssh_config,
                                     "--repo-root",
                                     repo.path(),
                                     "--remote-repo-path",
                                     remote_root + "/TensorRT-LLM",
                                     "--repo-url",
                                     origin,
                                     "--repo-branch",
                                     "main",
                                     "--partition",
                                     "batch",
                                     "--skip-install",
                                     "true",
                                     "--container-runtime",
                                     "none",
                                     "--container-image",
                                     "none"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
};

}  // namespace

TEST_CASE("remote_slurm CLI: key user, build job, PASSED through trtllm-run", "[sshd][cli]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCli cli("sshtest");
  CliOptions options;
  options.args = cli.Args(origin.path(),
                          {"--custom-cmd", "echo hello from $(whoami)", "--build-project", "true"});
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(cli.repo.path());
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "PASSED");
  CHECK(std::string(result["details"]["ssh_connections"].GetString()) == "1");
  CHECK(ReadTextFile(result["log_file"].GetString()).find("hello from sshtest") !=
        std::string::npos);
}

TEST_CASE(
    "remote_slurm CLI: password user with --password-file, the password is in no argv, "
    "file or log",
    "[sshd][cli]") {
  EnsureSshd();
  OriginRepo origin("slurmpw");
  RemoteCli cli("slurmpw");
  TempDir secret_dir("trtllm_pw");
  std::string password_file = secret_dir.path() + "/password";
  WriteTextFile(password_file, std::string(kPassword) + "\n");
  ::chmod(password_file.c_str(), 0600);
  CliOptions options;
  options.args =
      cli.Args(origin.path(), {"--custom-cmd", "echo hello from $(whoami); sleep 3",
                               "--build-project", "false", "--password-file", password_file});
  options.unset_env = {kSlurmPasswordEnv, kSlurmPasswordFileEnv};
  options.timeout_seconds = 300;
  std::atomic<bool> done{false};
  std::atomic<int> leaks{0}, samples{0};
  std::thread sampler([&] {
    while (!done) {
      if (Shell("ps -eo args").find(kPassword) != std::string::npos) ++leaks;
      ++samples;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  CliRun run = RunCli(options);
  done = true;
  sampler.join();
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK(samples > 5);
  CHECK(leaks == 0);
  CHECK(run.stdout_text.find(kPassword) == std::string::npos);
  CHECK(run.stderr_text.find(kPassword) == std::string::npos);
  std::string work_dir = FindSingleWorkDir(cli.repo.path());
  REQUIRE(!work_dir.empty());
  CHECK(ReadTextFile(ReadResultJson(work_dir)["log_file"].GetString()).find("hello from slurmpw") !=
        std::string::npos);
  int status = 0;
  Shell("grep -rqF " + ShellQuote(kPassword) + " " + ShellQuote(cli.repo.path()) + " " +
            ShellQuote(cli.remote_root),
        &status);
  CHECK(status == 1);  // no match in the work dir, the request or the remote files
}

TEST_CASE("remote_slurm CLI: SIGINT cancels the remote job: exit 130, gone from squeue",
          "[sshd][cli]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCli cli("sshtest");
  CliOptions options;
  options.args = cli.Args(origin.path(), {"--custom-cmd", "echo started; sleep $((600 + 14))",
                                          "--build-project", "false"});
  options.signal = SIGINT;
  options.signal_when_process = "sleep 614";
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.signal_sent);
  CHECK(run.exit_code == 130);
  std::string work_dir = FindSingleWorkDir(cli.repo.path());
  std::string id = WaitForFileText(work_dir + "/slurm_job_id", 1);
  REQUIRE(!id.empty());
  CHECK(JobActiveStates(id).empty());
}

TEST_CASE(
    "remote_slurm: release_allocation false holds the allocation for the next run, "
    "release ends it",
    "[sshd]") {
  EnsureSshd();
  TempDir state("trtllm_remote_state");
  ScopedEnv state_dir("XDG_RUNTIME_DIR", state.path());
  OriginRepo origin;
  std::string allocation;
  std::string remote_root;
  for (int run = 0; run < 2; ++run) {
    RemoteCase c("sshtest", "rheld" + std::to_string(run),
                 {"echo step in $SLURM_JOB_ID; echo '1 passed'"}, origin.path());
    if (run == 1) {
      c.remote_root = remote_root;
      c.spec.remote_repo_path = remote_root + "/TensorRT-LLM";
      c.spec.remote_work_dir = c.spec.remote_repo_path + "/work_dirs/second";
      WriteTextFile(c.spec.script_path,
                    BatchScript(c.spec.remote_work_dir, "rheld1",
                                {"echo step in $SLURM_JOB_ID; echo '1 passed'"}));
    }
    // The allocation records the ssh config it was made with: keep one that outlives
    // the runs, for `trtllm-run release`.
    std::string config = state.path() + "/ssh_config";
    WriteTextFile(config, ReadTextFile(c.ssh_config));
    c.spec.extra["ssh_config_file"] = config;
    c.spec.extra["release_allocation"] = "false";
    c.spec.extra["alloc_time_limit"] = "10";
    RunResult r = c.Run();
    INFO(c.Describe(r));
    CHECK(r.status == RunStatus::kPassed);
    CHECK(r.details["ssh_connections"] == "1");
    CHECK(r.details["allocation_reused"] == (run == 0 ? "false" : "true"));
    if (run == 0) {
      allocation = r.details["allocation_id"];
      remote_root = c.remote_root;
      c.remote_root.clear();  // kept for the second run
    } else {
      CHECK(r.details["allocation_id"] == allocation);
    }
    CHECK(ReadTextFile(r.log_file).find("step in " + allocation) != std::string::npos);
    CHECK(JobState(allocation) == "RUNNING");
  }
  std::vector<HeldAllocation> held = ListHeldAllocations();
  REQUIRE(held.size() == 1);
  CHECK(held[0].host == "trtllm-test-login");
  CliOptions release;
  release.args = {"release"};
  release.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
  CHECK(JobActiveStates(allocation).empty());
  CHECK(ListHeldAllocations().empty());
}

// Takes the whole of node localhost for the scope, so that a request for it pends
// (Resources, or Priority behind other jobs) for a reason waiting clears.
class NodeBlocker {
 public:
  NodeBlocker() {
    int status = 0;
    id_ = Shell(
        "sbatch --parsable -p batch -w localhost --exclusive --time=3 --output=/dev/null "
        "--job-name=trtllm-blocker-" +
            std::to_string(::getpid()) + " --wrap 'sleep 170' 2>&1",
        &status);
    while (!id_.empty() && (id_.back() == '\n' || id_.back() == ' ')) id_.pop_back();
    INFO("blocker: " << id_);
    REQUIRE(status == 0);
    WaitForJobState(id_, "RUNNING", 120);
  }
  ~NodeBlocker() { Shell("scancel " + id_ + " 2>&1"); }

 private:
  std::string id_;
};

// A remote held allocation's salloc streams over SSH (Scenario::Start) as a local one
// streams here: its request id comes from its "Pending job allocation" line, and it is
// withdrawn like a local one.
TEST_CASE(
    "remote_slurm: a held allocation's salloc pending on a down partition ends at once, "
    "ERROR naming PartitionDown",
    "[sshd]") {
  EnsureSshd();
  TempDir state("trtllm_remote_state");
  ScopedEnv state_dir("XDG_RUNTIME_DIR", state.path());
  OriginRepo origin;
  RemoteCase c("sshtest", "rheldpend", {"echo never runs"}, origin.path());
  c.spec.extra["release_allocation"] = "false";
  c.spec.extra["alloc_time_limit"] = "10";
  c.spec.partition = "maint";
  auto started = std::chrono::steady_clock::now();
  RunResult r = c.Run();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kError);
  CHECK(seconds < 60);  // not the 10 minutes of the monitor timeout
  CHECK(r.reason.find("was pending with reason PartitionDown (its partition is down), which "
                      "waiting cannot clear; it was cancelled with scancel and left the queue") !=
        std::string::npos);
  CHECK(r.diagnosis.find("Fix: give a --partition that is up") != std::string::npos);
  const std::string request = r.details["allocation_request_id"];
  REQUIRE(!request.empty());
  CHECK(JobActiveStates(request).empty());
  CHECK(ListHeldAllocations().empty());
}

TEST_CASE(
    "remote_slurm: max_pending bounds a held allocation's salloc wait: ERROR naming the "
    "reason",
    "[sshd]") {
  EnsureSshd();
  NodeBlocker blocker;
  TempDir state("trtllm_remote_state");
  ScopedEnv state_dir("XDG_RUNTIME_DIR", state.path());
  OriginRepo origin;
  RemoteCase c("sshtest", "rheldwait", {"echo never runs"}, origin.path());
  c.spec.extra["release_allocation"] = "false";
  c.spec.extra["alloc_time_limit"] = "10";
  c.spec.max_pending_seconds = 3;
  auto started = std::chrono::steady_clock::now();
  RunResult r = c.Run();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kError);
  CHECK(seconds < 60);
  CHECK(r.reason.rfind("still pending after 3s: ", 0) == 0);
  CHECK(r.reason.find("the held allocation request, job ") != std::string::npos);
  const std::string request = r.details["allocation_request_id"];
  REQUIRE(!request.empty());
  CHECK(JobActiveStates(request).empty());
  CHECK(ListHeldAllocations().empty());
}

TEST_CASE("remote_slurm: Ctrl-C while a held allocation's salloc pends withdraws the request",
          "[sshd]") {
  EnsureSshd();
  NodeBlocker blocker;
  TempDir state("trtllm_remote_state");
  ScopedEnv state_dir("XDG_RUNTIME_DIR", state.path());
  OriginRepo origin;
  RemoteCase c("sshtest", "rheldint", {"echo never runs"}, origin.path());
  c.spec.extra["release_allocation"] = "false";
  c.spec.extra["alloc_time_limit"] = "10";
  std::thread interrupt([&] {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    c.cancel.Cancel(SIGINT);
  });
  auto started = std::chrono::steady_clock::now();
  RunResult r = c.Run();
  interrupt.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(c.Describe(r));
  CHECK(r.status == RunStatus::kCancelled);
  CHECK(r.reason.find("cancelled while waiting for the allocation") != std::string::npos);
  CHECK(seconds < 60);
  // No request of the run is left in the queue.
  CHECK(Shell("squeue -h -u sshtest -n trtllm-run-held -t PD -o %i") == "");
  CHECK(ListHeldAllocations().empty());
}

TEST_CASE("remote_slurm: cancel proves the job on the login node: a forged copy is refused",
          "[sshd]") {
  EnsureSshd();
  OriginRepo origin;
  RemoteCase c("sshtest", "rown", {"echo running; sleep 600"}, origin.path());
  RunResult result;
  std::thread runner([&] { result = c.Run(); });
  const std::string id = WaitForFileText(c.spec.work_dir + "/slurm_job_id", 90);
  REQUIRE_FALSE(id.empty());
  WaitForJobState(id, "RUNNING", 120);
  // A work dir naming the job, holding its token, but whose remote work dir is elsewhere.
  TempDir forged_dir{"trtllm_remote_forged"};
  JobSpec forged = c.spec;
  forged.work_dir = forged_dir.path();
  forged.remote_work_dir = c.remote_root + "/elsewhere";
  WriteTextFile(forged.work_dir + "/slurm_job_id", id + "\n");
  WriteTextFile(forged.work_dir + "/" + kSlurmJobTokenFile,
                ReadTextFile(c.spec.work_dir + "/" + kSlurmJobTokenFile));
  ExecContext context;
  Status refused = CancelSlurmJob(forged, context);
  INFO(refused.ToString());
  CHECK(refused.code() == StatusCode::kInvalidInput);
  CHECK_THAT(refused.message(), Catch::Contains("is not under " + forged.remote_work_dir));
  CHECK_THAT(refused.message(), !Catch::Contains("UserId"));  // sshtest asks for sshtest's job
  CHECK(JobState(id) == "RUNNING");
  Status stopped = CancelSlurmJob(c.spec, context);
  INFO(stopped.ToString());
  CHECK(stopped.ok());
  CHECK(JobActiveStates(id).empty());
  runner.join();
  INFO(c.Describe(result));
  CHECK(result.status == RunStatus::kCancelled);
}
