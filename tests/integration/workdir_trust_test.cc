// `trtllm-run status / attach / cancel / exec` on work dirs whose files were written or
// changed by someone else: whatever run_state.json, slurm_job_id, job_spec.json or the
// log and lock paths name, the real binary acts only on the run of that work dir. Every
// victim is a process, a Slurm job, a container or a file this test made itself.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

int Counter() {
  static int counter = 0;
  return ++counter;
}

// A `sleep 300.<unique>` in a session and process group of its own: the process that a
// forged run_state.json points at.
class Victim {
 public:
  Victim() {
    marker_ = "300." + std::to_string(::getpid()) + std::to_string(Counter());
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setsid();
      ::execlp("sleep", "sleep", marker_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !Alive(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(Alive());
    start_time_ = trtllm_run::ProcessStartTime(pid_);
    REQUIRE(start_time_ > 0);
  }
  ~Victim() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  bool Alive() const { return ProcessWithMarkerAlive("sleep " + marker_); }
  int pid() const { return pid_; }
  std::uint64_t start_time() const { return start_time_; }

 private:
  std::string marker_;
  int pid_ = -1;
  std::uint64_t start_time_ = 0;
};

// A work dir as trtllm-run writes one (job_spec.json), in a fresh temp dir.
struct ForgedWorkDir {
  TempDir root{"trtllm_trust"};
  std::string dir;
  trtllm_run::JobSpec spec;
  explicit ForgedWorkDir(const std::string& scenario, const std::string& model = "m",
                         const std::string& name = "m_20260101_000000") {
    dir = root.path() + "/work_dirs/" + name;
    fs::create_directories(dir);
    spec.scenario = scenario;
    spec.workflow_type = "custom";
    spec.model_name = model;
    spec.work_dir = dir;
    spec.log_file = dir + "/" + model + "_local.log";
    spec.direct_cmd = "true";
    spec.repo_root = root.path();
  }
  void Write() { REQUIRE(trtllm_run::WriteJobSpec(spec).ok()); }
  void RunState(const std::string& json) { WriteTextFile(dir + "/run_state.json", json); }
  bool HasResult() const { return fs::exists(dir + "/result.json"); }
};

std::string Num(std::uint64_t n) { return std::to_string(n); }

TEST_CASE("workdir trust: cancel signals no process that run_state.json names without proof",
          "[workdir][cli]") {
  struct Forgery {
    const char* what;
    // run_state.json from the victim's pid and start time and a pid of no process
    std::string (*run_state)(const std::string& v, const std::string& start,
                             const std::string& dead);
    const char* named;  // what the refusal must name
  };
  // Where a group 1 could be reached, the recorded start time differs from init's, so
  // that even the old code never signals group 1.
  const std::vector<Forgery> forgeries = {
      {"a supervisor pid without a start time",
       [](const std::string& v, const std::string&, const std::string&) {
         return R"({"scenario": "local_direct", "supervisor_pid": )" + v + "}";
       },
       "supervisor_start_time"},
      {"a supervisor pid with its true start time, not holding the work dir's lock",
       [](const std::string& v, const std::string& start, const std::string&) {
         return R"({"scenario": "local_direct", "supervisor_pid": )" + v +
                R"(, "supervisor_start_time": )" + start + "}";
       },
       ".lock"},
      {"the job's group with its true start time, without this run's marker",
       [](const std::string& v, const std::string& start, const std::string& dead) {
         return R"({"scenario": "local_direct", "supervisor_pid": )" + dead +
                R"(, "supervisor_start_time": 1, "pid": )" + v + R"(, "pgid": )" + v +
                R"(, "pid_start_time": )" + start + "}";
       },
       "TRTLLM_RUN_WORK_DIR"},
      {"the job's group without a start time",
       [](const std::string& v, const std::string&, const std::string& dead) {
         return R"({"scenario": "local_direct", "supervisor_pid": )" + dead +
                R"(, "supervisor_start_time": 1, "pid": )" + v + R"(, "pgid": )" + v + "}";
       },
       "pid_start_time"},
      {"process group 1",
       [](const std::string& v, const std::string& start, const std::string& dead) {
         return R"({"scenario": "local_direct", "supervisor_pid": )" + dead +
                R"(, "supervisor_start_time": 1, "pid": )" + v +
                R"(, "pgid": 1, "pid_start_time": )" + start + "}";
       },
       "pgid 1"},
  };
  for (const Forgery& forgery : forgeries) {
    INFO(forgery.what);
    Victim victim;
    ForgedWorkDir work("local_direct");
    work.Write();
    work.RunState(forgery.run_state(Num(victim.pid()), Num(victim.start_time()), Num(DeadPid())));
    CliOptions options;
    options.args = {"cancel", "--kill-grace", "1", "--wait", "1", work.dir};
    options.timeout_seconds = 60;
    CliRun cancel = RunCli(options);
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains(forgery.named));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(victim.Alive());
    CHECK_FALSE(work.HasResult());
  }
}

// A local_direct run in the background (the test's own job, marked sleep).
struct BackgroundRun {
  CliOptions options;
  CliRun run;
  std::thread thread;
  explicit BackgroundRun(CliOptions o) : options(std::move(o)) {
    thread = std::thread([this] { run = RunCli(options); });
  }
  ~BackgroundRun() { Join(); }
  void Join() {
    if (thread.joinable()) thread.join();
  }
};

TEST_CASE("workdir trust: a copied work dir acts on its own files and not on the original's run",
          "[workdir][cli]") {
  TempDir root{"trtllm_trust_copy"};
  const long n = static_cast<long>(::getpid()) * 1000 + Counter();
  const std::string marker = "sleep 60." + std::to_string(n);
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_direct",
                  "--custom-cmd",
                  "echo started; sleep 60.$((" + std::to_string(n - 1) + "+1))",
                  "--repo-root",
                  root.path(),
                  "--kill-grace",
                  "1"};
  options.timeout_seconds = 120;
  BackgroundRun job(options);
  for (int i = 0; i < 1200 && !ProcessWithMarkerAlive(marker); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(ProcessWithMarkerAlive(marker));
  std::string original = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(original.empty());
  TempDir elsewhere{"trtllm_trust_copy_dst"};
  const std::string copy = elsewhere.path() + "/copied_work_dir";
  fs::copy(original, copy, fs::copy_options::recursive);

  CliRun cancel = RunCli({"cancel", "--kill-grace", "1", "--wait", "5", copy});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 2);
  CHECK_THAT(cancel.stderr_text, Catch::Contains("job_spec.json"));
  CHECK_THAT(cancel.stderr_text, Catch::Contains(original));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(ProcessWithMarkerAlive(marker));  // the original run goes on
  CHECK_FALSE(fs::exists(original + "/result.json"));
  CHECK_FALSE(fs::exists(copy + "/result.json"));

  CliRun status = RunCli({"status", copy});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("copied or moved"));

  CliRun real = RunCli({"cancel", "--kill-grace", "1", original});
  INFO(real.Describe());
  CHECK(real.exit_code == 0);
  job.Join();
  CHECK(job.run.exit_code == 6);
  CHECK(WaitNoProcessWithMarker(marker, 5));
  KillProcessesWithMarker(marker);
}

TEST_CASE("workdir trust: status and attach read only regular log files inside the work dir",
          "[workdir][cli]") {
  // The last line of /etc/passwd: what the old code printed as the log's "last line".
  std::string passwd = ReadTextFile("/etc/passwd");
  while (!passwd.empty() && passwd.back() == '\n') passwd.pop_back();
  const std::string passwd_last = passwd.substr(passwd.rfind('\n') + 1);
  REQUIRE_FALSE(passwd_last.empty());
  const std::string dead = Num(DeadPid());

  ForgedWorkDir work("local_direct");
  work.Write();
  const std::string fifo = work.dir + "/fifo.log";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string link = work.dir + "/link.log";
  fs::create_symlink("/etc/passwd", link);
  struct Case {
    std::string log_file;
    const char* what;
  };
  for (const Case& c :
       {Case{"/etc/passwd", "a file outside the work dir"},
        Case{link, "a symlink out of the work dir"}, Case{fifo, "a FIFO inside the work dir"}}) {
    INFO(c.what);
    work.RunState(R"({"scenario": "local_direct", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1, "log_file": ")" + c.log_file + R"("})");
    CliOptions status;
    status.args = {"status", work.dir};
    status.timeout_seconds = 15;
    CliRun s = RunCli(status);
    INFO(s.Describe());
    CHECK_FALSE(s.timed_out);
    CHECK(s.exit_code == 0);
    CHECK(s.stdout_text.find(passwd_last) == std::string::npos);
    CHECK_THAT(s.stdout_text, Catch::Contains("not read"));

    CliOptions attach;
    attach.args = {"attach", "--wait-start", "0", work.dir};
    attach.timeout_seconds = 15;
    CliRun a = RunCli(attach);
    INFO(a.Describe());
    CHECK_FALSE(a.timed_out);
    CHECK(a.exit_code == 2);
    CHECK(a.stdout_text.find(passwd_last) == std::string::npos);
    CHECK_THAT(a.stderr_text, Catch::Contains(c.log_file));
  }
}

TEST_CASE("workdir trust: exec never writes through a symlinked .lock", "[workdir][cli]") {
  TempDir root{"trtllm_trust_lock"};
  CliRun plan = RunCli({"plan", "--scenario", "local_direct", "--custom-cmd", "echo hi",
                        "--repo-root", root.path()});
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  std::string work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(work_dir.empty());
  TempDir outside{"trtllm_trust_lock_target"};
  const std::string precious = outside.path() + "/precious.txt";
  WriteTextFile(precious, "precious contents\n");
  fs::remove(work_dir + "/.lock");
  fs::create_symlink(precious, work_dir + "/.lock");

  CliRun exec = RunCli({"exec", work_dir});
  INFO(exec.Describe());
  CHECK(exec.exit_code == 2);
  CHECK_THAT(exec.stderr_text, Catch::Contains(".lock"));
  CHECK(ReadTextFile(precious) == "precious contents\n");
  CHECK_FALSE(fs::exists(work_dir + "/result.json"));
}

// ------------------------------------------------------------------------------ Slurm

TEST_CASE("workdir trust: cancel passes no forged Slurm job id to scancel", "[slurm][cli]") {
  EnsureSlurm();
  // The victim: a job of this test, pending or running, found by its unique name.
  const std::string name =
      "trtllm_trust_victim_" + std::to_string(::getpid()) + "_" + std::to_string(Counter());
  std::string victim = Shell("sbatch --parsable --partition=batch --job-name=" + name +
                             " --output=/dev/null --wrap='sleep 300' 2>&1");
  while (!victim.empty() && (victim.back() == '\n' || victim.back() == ' ')) victim.pop_back();
  REQUIRE_FALSE(victim.empty());
  REQUIRE(victim.find_first_not_of("0123456789") == std::string::npos);
  REQUIRE_FALSE(JobActiveStates(victim).empty());
  const std::string dead = Num(DeadPid());
  const std::string forged = "--name=" + name;  // scancel would read it as an option

  SECTION("from slurm_job_id") {
    ForgedWorkDir work("local_slurm");
    work.Write();
    work.RunState(R"({"scenario": "local_slurm", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1})");
    WriteTextFile(work.dir + "/slurm_job_id", forged + "\n");
    CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work.dir});
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains(forged));
    CHECK_FALSE(work.HasResult());
  }
  SECTION("from run_state.json") {
    ForgedWorkDir work("local_slurm");
    work.Write();
    work.RunState(R"({"scenario": "local_slurm", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1, "job_id": ")" + forged + R"("})");
    CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work.dir});
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains(forged));
  }
  CHECK_FALSE(JobActiveStates(victim).empty());  // the victim is still queued or running
  Shell("scancel " + victim);
}

// ------------------------------------------------------------------------------ Docker

struct VictimContainer {
  std::string name;
  explicit VictimContainer(const std::string& container_name) : name(container_name) {
    int status = 0;
    std::string out =
        Shell("docker run -d --name " + name + " trtllm-run-test:busybox sleep 300 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  ~VictimContainer() { Shell("docker rm -f " + name + " >/dev/null 2>&1"); }
  std::string State() const {
    std::string out =
        Shell("docker inspect --type container --format '{{.State.Status}}' " + name + " 2>&1");
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
};

TEST_CASE("workdir trust: cancel stops only a container this run created and labelled",
          "[docker][cli]") {
  EnsureService("docker");
  const std::string dead = Num(DeadPid());
  const std::string tag = std::to_string(::getpid()) + std::to_string(Counter());

  SECTION("a container name of another form") {
    VictimContainer victim("trtllm_trust_victim_" + tag);
    ForgedWorkDir work("local_docker");
    work.spec.container_name = victim.name;
    work.Write();
    work.RunState(R"({"scenario": "local_docker", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1, "container_name": ")" + victim.name + R"("})");
    CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work.dir});
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains(victim.name));
    CHECK(victim.State() == "running");
  }
  SECTION("this run's name form, but not labelled with this work dir") {
    // The work dir m_<tag>: the run's containers are m_auto_test_<tag>_<6 hex>.
    ForgedWorkDir work("local_docker", "m", "m_" + tag);
    VictimContainer victim("m_auto_test_" + tag + "_a1b2c3");
    work.spec.container_name = victim.name;
    work.Write();
    work.RunState(R"({"scenario": "local_docker", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1, "container_name": ")" + victim.name + R"("})");
    CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work.dir});
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains("label"));
    CHECK(victim.State() == "running");
  }
  SECTION("an engine the run did not use") {
    ForgedWorkDir work("local_docker", "m", "m_" + tag);
    VictimContainer victim("m_auto_test_" + tag + "_d4e5f6");
    work.spec.container_name = victim.name;
    work.Write();
    work.RunState(R"({"scenario": "local_docker", "supervisor_pid": )" + dead +
                  R"(, "supervisor_start_time": 1, "container_name": ")" + victim.name +
                  R"(", "container_engine": "unix:///var/run/docker.sock"})");
    CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work.dir});
    INFO(cancel.Describe());
    CHECK(cancel.exit_code == 2);
    CHECK_THAT(cancel.stderr_text, Catch::Contains("engine"));
    CHECK(victim.State() == "running");
  }
}

}  // namespace
}  // namespace trtllm_run_test
