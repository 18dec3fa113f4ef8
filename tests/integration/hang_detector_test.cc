// TensorRT-LLM's own hang detector (tensorrt_llm/_torch/pyexecutor/hang_detector.py)
// prints a "hang detected" line, dumps stacks and kills its own process: exit 137. On
// every executor a job whose log holds that line is HANG_DETECTED whatever follows it:
// the SIGKILL, the OOM killer, Slurm's FAILED or memory-limit records.
//
// The Slurm cases also run with the job's output read less often than the scheduler is
// asked (as on a login node whose view of the shared filesystem lags behind slurmctld),
// so that the job has surely ended before the line is seen: the verdict then comes from
// the scheduler's records and the job's lines, not from trtllm-run's own scancel.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/slurm/watch.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

const char kHangLine[] =
    "[TRT-LLM] hang detected: no progress for 300 s, dumping stacks and killing the process";

// The detector's ending as a command: the line, a stack, then SIGKILL of its own process,
// a child of the job's shell (as python is), which then exits with its status, 137. Not
// the shell itself: in a container that would be PID 1, which SIGKILL from inside the
// container cannot end.
std::string HangThenSelfKill() {
  return std::string("bash -c 'echo \"") + kHangLine +
         "\"; echo \"Thread 0x7f3a (most recent call first):\"; kill -9 $$'; code=$?; "
         "echo \"the worker exited with code $code\"; exit $code";
}

// The line, then the process keeps allocating until a memory limit kills it (python: the
// Slurm node's memory enforcement samples once a second, so the growth must last).
std::string HangThenPythonOom() {
  return std::string("echo '") + kHangLine +
         "'; python3 -c 'import time\na=[]\nfor i in range(200): "
         "a.append(bytearray(20*1024*1024)); time.sleep(0.1)'";
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
};

Outcome RunAndRead(const TempDir& root, CliOptions options) {
  Outcome out;
  out.run = RunCli(options);
  INFO(out.run.Describe());
  out.work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(out.work_dir.empty());
  out.result = ReadResultJson(out.work_dir);
  REQUIRE(out.result.IsObject());
  return out;
}

void CheckHangVerdict(const Outcome& o) {
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 5);
  CHECK(Str(o.result, "status") == "HANG_DETECTED");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains(kHangLine));
}

void CheckHangVerdict(RunResult r, const std::string& progress) {
  INFO(RunStatusName(r.status) << ": " << r.reason << "\n--- progress\n" << progress);
  CHECK(r.status == RunStatus::kHangDetected);
  CHECK_THAT(r.reason, Catch::Contains(kHangLine));
  CHECK(ExitCodeFor(r) == 5);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

// The pid of the trtllm-run process (not the job's) whose command line holds `marker`.
int TrtllmRunPid(const std::string& marker) {
  std::error_code error;
  fs::path binary = fs::canonical(TRTLLM_RUN_BIN, error);
  for (int pid : PidsWithMarker(marker)) {
    if (fs::canonical("/proc/" + std::to_string(pid) + "/exe", error) == binary) return pid;
  }
  return 0;
}

// A job that has trtllm-run miss its end: it prints "started MARKER", waits for a file,
// then runs `rest`. Held runs trtllm-run with it, stops trtllm-run (SIGSTOP, as a loaded
// machine gives it no CPU) once the first line is in the log, lets the job go on and
// continues trtllm-run only after the job has ended: trtllm-run then reads the job's
// last lines and its exit together, and the verdict comes from how it ended.
struct Held {
  std::string marker = UniqueMarker("hangheld");
  std::string go;
  explicit Held(const TempDir& root) : go(root.path() + "/" + marker + ".go") {}
  std::string Command(const std::string& rest) const {
    return "echo started " + marker + "; while [ ! -e " + go + " ]; do sleep 0.1; done; " + rest;
  }
  // `options` must run Command(...) with --model-name held.
  Outcome Run(const TempDir& root, const CliOptions& options) const {
    Outcome o;
    std::thread runner([&] { o.run = RunCli(options); });
    std::string work_dir;
    for (int i = 0; i < 900; ++i) {
      work_dir = FindSingleWorkDir(root.path());
      if (!work_dir.empty() &&
          ReadTextFile(work_dir + "/held_local.log").find("started " + marker) !=
              std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int pid = TrtllmRunPid(marker);
    bool held = pid > 0 && ::kill(pid, SIGSTOP) == 0;
    WriteTextFile(go, "");
    // The job (and a docker client) end meanwhile; only the held trtllm-run is left.
    bool ended = false;
    for (int i = 0; held && i < 600 && !ended; ++i) {
      std::vector<int> pids = PidsWithMarker(marker);
      ended = pids.size() == 1 && pids[0] == pid;
      if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (pid > 0) ::kill(pid, SIGCONT);
    runner.join();
    INFO(o.run.Describe());
    REQUIRE(held);
    REQUIRE(ended);
    o.work_dir = FindSingleWorkDir(root.path());
    REQUIRE(o.work_dir == work_dir);
    o.result = ReadResultJson(work_dir);
    REQUIRE(o.result.IsObject());
    return o;
  }
};

// ---------------------------------------------------------------- local_direct

CliOptions LocalDirect(const TempDir& root, const std::string& command) {
  CliOptions options;
  options.args = {"run",   "--scenario",  "local_direct", "--custom-cmd",
                  command, "--repo-root", root.path()};
  options.timeout_seconds = 60;
  return options;
}

TEST_CASE("hang detector, local_direct: the line, then SIGKILL (exit 137): HANG_DETECTED",
          "[hang][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, LocalDirect(root, HangThenSelfKill()));
  CheckHangVerdict(o);
  // It ended by itself or was stopped on the line; either way no other verdict.
  CHECK((o.result["exit_code"].IsNull() || o.result["exit_code"].GetInt() == 137 ||
         o.result["signal"].IsInt()));
}

TEST_CASE("hang detector, local_direct: the line, an OOM message, exit 137 before trtllm-run acts",
          "[hang][cli]") {
  // The watchdog fired while the process was failing its allocations, and the job ended
  // before trtllm-run read the line: the hang, not the OOM message after it, decides.
  TempDir root;
  Held held(root);
  CliOptions options =
      LocalDirect(root, held.Command(std::string("echo '") + kHangLine +
                                     "'; echo 'torch.OutOfMemoryError: CUDA out of memory.'; "
                                     "bash -c 'kill -9 $$'; code=$?; echo \"the worker exited "
                                     "with code $code\"; exit $code"));
  options.args.insert(options.args.end(), {"--model-name", "held"});
  Outcome o = held.Run(root, options);
  CheckHangVerdict(o);
  CHECK(o.result["exit_code"].IsInt());
  CHECK(o.result["exit_code"].GetInt() == 137);  // it ended by itself: not stopped
}

// ---------------------------------------------------------------- local_docker

constexpr const char* kImage = "trtllm-run-test:busybox";  // tests/services/docker.sh

CliOptions LocalDocker(const TempDir& root, const TempDir& home, const std::string& command,
                       std::vector<std::string> extra = {}) {
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_docker",
                  "--container-image",
                  kImage,
                  "--docker-pull",
                  "never",
                  "--build-project",
                  "false",
                  "--skip-install",
                  "true",
                  "--repo-root",
                  root.path(),
                  "--kill-grace",
                  "2",
                  "--custom-cmd",
                  command};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.env = {{"HOME", home.path()}};
  options.timeout_seconds = 120;
  return options;
}

TEST_CASE("hang detector, local_docker: the line, then SIGKILL (exit 137): HANG_DETECTED",
          "[hang][docker]") {
  TempDir root("hang_docker_repo"), home("hang_docker_home");
  Outcome o = RunAndRead(root, LocalDocker(root, home, HangThenSelfKill()));
  CheckHangVerdict(o);
  CHECK(Str(o.result["details"], "container_removed") == "true");
}

TEST_CASE("hang detector, local_docker: the line, then the OOM killer: HANG_DETECTED",
          "[hang][docker]") {
  // bash keeps the whole command substitution in memory: 300 MB against a 64 MiB limit.
  TempDir root("hang_docker_repo"), home("hang_docker_home");
  Outcome o = RunAndRead(
      root, LocalDocker(root, home,
                        std::string("echo '") + kHangLine +
                            "'; x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo survived",
                        {"--docker-memory", "64m"}));
  CheckHangVerdict(o);
  CHECK(Str(o.result["details"], "container_removed") == "true");
}

TEST_CASE("hang detector, local_docker: the line, then the OOM killer before trtllm-run acts",
          "[hang][docker]") {
  // trtllm-run reads the line only after the container ended: the verdict comes from the
  // container's record (State.OOMKilled) and the log.
  TempDir root("hang_docker_repo"), home("hang_docker_home");
  Held held(root);
  Outcome o =
      held.Run(root, LocalDocker(root, home,
                                 held.Command(std::string("echo '") + kHangLine +
                                              "'; x=$(head -c 300000000 /dev/zero | tr '\\0' a); "
                                              "echo survived"),
                                 {"--docker-memory", "64m", "--model-name", "held"}));
  // The container's record says OOMKilled, and the hang line still decides the verdict.
  // Under a slow (sanitizer) build trtllm-run may also have read the line in time and sent
  // docker stop itself; the reason then names that instead of the OOM killer.
  CheckHangVerdict(o);
  CHECK(Str(o.result["details"], "oom_killed") == "true");
  const std::string reason = Str(o.result, "reason");
  CHECK((reason.find("OOM killer") != std::string::npos ||
         reason.find("docker stop") != std::string::npos));
  CHECK(Str(o.result["details"], "container_removed") == "true");
}

// ---------------------------------------------------------------- local_slurm

TEST_CASE("hang detector, local_slurm CLI: the line, then SIGKILL (exit 137): HANG_DETECTED",
          "[hang][slurm][cli]") {
  EnsureSlurm();
  TempDir repo("hang_slurm_cli");
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_slurm",
                  "--repo-root",
                  repo.path(),
                  "--partition",
                  "batch",
                  "--skip-install",
                  "true",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--custom-cmd",
                  HangThenSelfKill()};
  options.timeout_seconds = 180;
  Outcome o = RunAndRead(repo, options);
  CheckHangVerdict(o);
  CHECK(JobActiveStates(WaitForFileText(o.work_dir + "/slurm_job_id", 1)).empty());
}

// Submits a batch script of the rendered shape to the cluster of $SLURM_CONF and watches
// it with the output read only every `log_interval` seconds, while the scheduler is
// asked from 1 s on: the job ends before its lines are seen.
RunResult WatchWithLaggingLog(const std::string& name, const std::vector<std::string>& steps,
                              const std::string& sbatch, double log_interval,
                              double first_query_delay, std::string* progress_text) {
  TempDir dir("trtllm_hang_slurm");
  std::string script = dir.path() + "/" + name + ".slurm";
  WriteTextFile(script, BatchScript(dir.path(), name, steps, sbatch));
  std::unique_ptr<Scenario> scenario = MakeLocalScenario();
  SlurmClient client(scenario.get());
  Result<std::string> id = client.Submit(script, dir.path());
  INFO(id.status().ToString());
  REQUIRE(id.ok());
  SlurmWatchJob job;
  job.job_id = id.value();
  job.out_path = dir.path() + "/" + name + "_auto_test_" + job.job_id + ".out";
  job.err_path = dir.path() + "/" + name + "_auto_test_" + job.job_id + ".err";
  job.local_out = job.out_path;
  job.local_err = job.err_path;
  job.end_marker_token = EndMarkerTokenOfScript(ReadTextFile(script));
  job.success_patterns = {"passed"};
  job.failure_patterns = {"FAILED", "ERROR"};
  job.monitor_timeout_seconds = 600;
  job.workflow_type = "custom";
  job.scenario = "local_slurm";
  job.time_limit = "00:10:00";
  std::ostringstream progress;
  SlurmWatchOptions options;
  options.log_interval = log_interval;
  options.first_query_delay = first_query_delay;
  options.kill_grace_seconds = 5;
  options.progress = &progress;
  SlurmWatcher watcher(&client, options);
  watcher.Add(job);
  std::optional<RunResult> verdict;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (!verdict && std::chrono::steady_clock::now() < deadline) {
    for (SlurmVerdict& v : watcher.Poll(nullptr, 5.0)) verdict = std::move(v.result);
  }
  *progress_text = progress.str();
  INFO(progress.str());
  if (!verdict) Shell("scancel " + job.job_id);
  REQUIRE(verdict.has_value());
  return *verdict;
}

TEST_CASE("hang detector, local_slurm: the line, then SIGKILL, seen only after the job ended",
          "[hang][slurm]") {
  EnsureSlurm();
  std::string progress;
  RunResult r = WatchWithLaggingLog("hangkill", {HangThenSelfKill()}, "", 60, 0, &progress);
  CheckHangVerdict(r, progress);
  CHECK(r.details["job_state"] == "FAILED");
  CHECK(r.details["end_line_exit_code"] == "137");
}

TEST_CASE("hang detector, local_slurm: the line, then the step over its --mem: not OOM",
          "[hang][slurm]") {
  EnsureSlurm();
  // Slurm records FAILED with slurmstepd's "exceeded memory limit" lines, which alone
  // make OUT_OF_MEMORY; the hang line before them wins.
  std::string progress;
  RunResult r =
      WatchWithLaggingLog("hangoom", {HangThenPythonOom()}, "#SBATCH --mem=100M", 60, 0, &progress);
  CheckHangVerdict(r, progress);
  CHECK_THAT(r.reason, Catch::Contains("exceeded memory limit"));  // what followed it
  CHECK(r.details["accounting"] == "recorded");
}

TEST_CASE("hang detector, trtllm-noacct: the line, then OOM, judged from the job's lines alone",
          "[hang][slurm]") {
  EnsureSlurm();
  // No accounting and MinJobAge 10 s: the first query (40 s in) finds the job purged, so
  // its own lines (the hang line, slurmstepd's memory-limit and cancel lines, the end
  // line with exit code 137) are all the evidence.
  ScopedEnv conf("SLURM_CONF", "/etc/slurm-noacct/slurm.conf");
  std::string progress;
  RunResult r = WatchWithLaggingLog("noaccthangoom", {HangThenPythonOom()}, "#SBATCH --mem=100M",
                                    120, 4, &progress);
  CheckHangVerdict(r, progress);
  CHECK(r.details["accounting"] == "disabled");
  CHECK_THAT(r.reason, Catch::Contains("purged after MinJobAge"));
}

// ---------------------------------------------------------------- remote_slurm

const char kSshDir[] = "/run/trtllm-test-sshd";  // tests/services/sshd.sh

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// A remote_slurm job of the test user sshtest over the loopback sshd, its repo cloned
// from a bare repository here, its output read every `poll_seconds` (the scheduler is
// asked from 1 s on).
struct RemoteJob {
  TempDir dir{"trtllm_hang_remote"};
  TempDir origin{"trtllm_hang_origin"};
  std::string remote_root = "/home/sshtest/trtllm_hang_" + RandomName();
  JobSpec spec;
  std::ostringstream terminal, progress;

  RemoteJob(const std::string& name, const std::vector<std::string>& steps,
            const std::string& sbatch) {
    ::chmod(origin.path().c_str(), 0755);
    std::string repo = origin.path() + "/TensorRT-LLM.git";
    // Owned by the remote user: git refuses repositories of other owners.
    std::string seed = origin.path() + "/seed";
    std::string script = "set -e\ngit init -q -b main " + seed + "\ncd " + seed +
                         "\ngit config user.email t@example.com\ngit config user.name test\n"
                         "echo readme > README.md\ngit add -A\ngit commit -q -m main\n"
                         "git clone -q --bare . " +
                         repo + "\nchmod -R a+rX " + origin.path() + "\nchown -R sshtest " + repo +
                         "\n";
    int status = 0;
    std::string out = Shell("bash -c " + ShellQuote(script) + " 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
    std::string ssh_config = dir.path() + "/ssh_config";
    WriteTextFile(ssh_config,
                  "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                  "  User sshtest\n  UserKnownHostsFile " +
                      std::string(kSshDir) +
                      "/known_hosts\n  StrictHostKeyChecking yes\n"
                      "  IdentityFile " +
                      kSshDir + "/id_ed25519\n  IdentitiesOnly yes\n");
    spec = SlurmTestSpec(dir.path(), name, "remote_slurm");
    spec.workflow_type = "custom";
    spec.ssh_host = "trtllm-test-login";
    spec.slurm_user = "sshtest";
    spec.extra["ssh_config_file"] = ssh_config;
    spec.remote_repo_path = remote_root + "/TensorRT-LLM";
    spec.remote_work_dir =
        spec.remote_repo_path + "/work_dirs/" + fs::path(dir.path()).filename().string();
    spec.repo_url = repo;
    spec.repo_branch = "main";
    WriteTextFile(spec.script_path, BatchScript(spec.remote_work_dir, name, steps, sbatch));
    ::chmod(spec.script_path.c_str(), 0755);
  }
  ~RemoteJob() { Shell("rm -rf " + ShellQuote(remote_root)); }

  RunResult Run(double poll_seconds) {
    CancellationToken cancel;
    ExecContext context;
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 5;
    context.poll_interval_seconds = poll_seconds;
    return ExecuteSlurmJob(spec, context);
  }
};

TEST_CASE("hang detector, remote_slurm: the line, then SIGKILL (exit 137): HANG_DETECTED",
          "[hang][sshd]") {
  EnsureSshd();
  RemoteJob job("rhangkill", {HangThenSelfKill()}, "");
  RunResult r = job.Run(30);
  CheckHangVerdict(r, job.progress.str());
  // The streamed output shows the hang line within a follower tick, so the watcher's
  // scancel can stop the job before its script writes the end line (seen once in a loaded
  // sanitizer run; usually the job ends first). Either way the hang line wins; whenever the
  // end line was written it carries the SIGKILL's 137.
  INFO(r.reason);
  if (r.details.count("end_line_exit_code") != 0) {
    CHECK(r.details["end_line_exit_code"] == "137");
  } else {
    CHECK_THAT(r.reason, Catch::Contains("was cancelled with scancel"));
  }
}

TEST_CASE("hang detector, remote_slurm: the line, then the step over its --mem: not OOM",
          "[hang][sshd]") {
  EnsureSshd();
  RemoteJob job("rhangoom", {HangThenPythonOom()}, "#SBATCH --mem=100M");
  RunResult r = job.Run(30);
  CheckHangVerdict(r, job.progress.str());
  // The streamed output shows the hang line within a follower tick, so the watcher's
  // scancel can come before slurmstepd's memory check (once a second) kills the step.
  // Either way the hang line wins; when the limit was hit first, the reason says so
  // (the local_slurm test above makes that order certain with a lagging log).
  if (r.reason.find("was cancelled with scancel") == std::string::npos) {
    CHECK_THAT(r.reason, Catch::Contains("exceeded memory limit"));
  }
}

}  // namespace
