// run_state.json and InspectWorkDir: the contract executors write and status/attach/
// cancel read, checked against real processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "scratch_work_dir.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

TEST_CASE("RunState round-trips through run_state.json", "[workdir]") {
  ScratchWorkDir dir;
  RunState state = NewRunState("local_docker");
  CHECK(state.supervisor_pid == ::getpid());
  CHECK(state.supervisor_start_time == ProcessStartTime(::getpid()));
  CHECK(state.host == HostName());
  state.pid = 12;
  state.pgid = 12;
  state.pid_start_time = 99;
  state.container_name = "m_auto_test_1_abc";
  state.container_engine = "unix:///tmp/d.sock";
  state.job_id = "4242";
  state.log_file = dir.path() + "/m_4242.out";
  state.extra["kill_grace_seconds"] = "7";
  REQUIRE(WriteRunState(dir.path(), state).ok());
  Result<RunState> back = ReadRunState(dir.path());
  REQUIRE(back.ok());
  CHECK(back->scenario == "local_docker");
  CHECK(back->state == "running");
  CHECK(back->supervisor_pid == state.supervisor_pid);
  CHECK(back->supervisor_start_time == state.supervisor_start_time);
  CHECK(back->pid == 12);
  CHECK(back->pgid == 12);
  CHECK(back->pid_start_time == 99);
  CHECK(back->container_name == "m_auto_test_1_abc");
  CHECK(back->container_engine == "unix:///tmp/d.sock");
  CHECK(back->job_id == "4242");
  CHECK(back->log_file == state.log_file);
  CHECK(back->extra == std::map<std::string, std::string>{{"kill_grace_seconds", "7"}});
  CHECK_FALSE(back->updated_at.empty());
}

TEST_CASE("ReadRunState: absent is kNotFound, garbage names the file", "[workdir]") {
  ScratchWorkDir dir;
  CHECK(ReadRunState(dir.path()).status().code() == StatusCode::kNotFound);
  std::ofstream(RunStatePath(dir.path())) << "{\"scenario\": 3}";
  Result<RunState> bad = ReadRunState(dir.path());
  CHECK(bad.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(bad.status().ToString(), Catch::Contains("run_state.json"));
}

TEST_CASE("ProcessStartTime / SameProcessAlive tell a live process from a dead pid", "[workdir]") {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::uint64_t start = ProcessStartTime(child);
  CHECK(start > 0);
  CHECK(SameProcessAlive(child, start));
  CHECK(SameProcessAlive(child, 0));
  CHECK_FALSE(SameProcessAlive(child, start + 1));  // a reuse of the pid would differ
  ::kill(child, SIGKILL);
  // A zombie counts as gone.
  for (int i = 0; i < 100 && ProcessStartTime(child) != 0; ++i) ::usleep(10000);
  CHECK(ProcessStartTime(child) == 0);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(SameProcessAlive(child, start));
}

TEST_CASE("InspectWorkDir: not started, running, abandoned, finished", "[workdir]") {
  ScratchWorkDir dir;
  Result<WorkDirInfo> info = InspectWorkDir(dir.path());
  REQUIRE(info.ok());
  CHECK(info->phase == WorkDirPhase::kNotStarted);

  // This test process supervises: it holds the work dir's lock, as Runtime::Execute does.
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(dir.path());
  REQUIRE(lock.ok());
  RunState state = NewRunState("local_direct");
  REQUIRE(WriteRunState(dir.path(), state).ok());
  info = InspectWorkDir(dir.path());
  REQUIRE(info.ok());
  CHECK(info->phase == WorkDirPhase::kRunning);
  CHECK(info->supervisor_alive);
  CHECK(info->log_file == dir.path() + "/m_local.log");
  lock.value().reset();
  info = InspectWorkDir(dir.path());  // alive, but no longer proven to be this run's
  REQUIRE(info.ok());
  CHECK_FALSE(info->supervisor_alive);
  CHECK_THAT(info->supervisor_unproven, Catch::Contains(".lock"));

  state.supervisor_start_time += 1;  // "the supervisor" is now a different process
  REQUIRE(WriteRunState(dir.path(), state).ok());
  info = InspectWorkDir(dir.path());
  REQUIRE(info.ok());
  CHECK(info->phase == WorkDirPhase::kAbandoned);

  state.host = "some-other-host";  // pids mean nothing there: assume it runs
  REQUIRE(WriteRunState(dir.path(), state).ok());
  info = InspectWorkDir(dir.path());
  REQUIRE(info.ok());
  CHECK(info->phase == WorkDirPhase::kRunning);
  CHECK_FALSE(info->same_host);

  RunResult result;
  result.status = RunStatus::kFailed;
  result.work_dir = dir.path();
  REQUIRE(WriteResult(result).ok());
  info = InspectWorkDir(dir.path());
  REQUIRE(info.ok());
  CHECK(info->phase == WorkDirPhase::kFinished);
  CHECK(info->result->status == RunStatus::kFailed);
  CHECK(std::string(WorkDirPhaseName(info->phase)) == "finished");
}

TEST_CASE("InspectWorkDir: a directory without job_spec.json is not a work dir", "[workdir]") {
  char pattern[] = "/tmp/workdir_state_test_XXXXXX";
  REQUIRE(::mkdtemp(pattern) != nullptr);
  Result<WorkDirInfo> info = InspectWorkDir(pattern);
  CHECK_FALSE(info.ok());
  CHECK_THAT(info.status().ToString(), Catch::Contains("job_spec.json"));
  ::rmdir(pattern);
}

TEST_CASE("StopRecordedJob stops the proven group, spares a reused pid and an unmarked one",
          "[workdir]") {
  ScratchWorkDir dir;
  const std::string marker = WorkDirMarkerEntry(dir.path());
  // A `sleep` leading its own group, SIGTERM ignored (it needs the SIGKILL after the grace
  // period), with or without this work dir's marker in its environment. The pipe's write
  // end closes on exec, but exec closes it before the new image's environment shows in
  // /proc/PID/environ: the start waits for a ready variable to show there too.
  const std::string ready = "TRTLLM_RUN_TEST_READY=1";
  auto start_sleep = [&](bool marked) {
    int sync_pipe[2];
    REQUIRE(::pipe2(sync_pipe, O_CLOEXEC) == 0);
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::setpgid(0, 0);
      ::signal(SIGTERM, SIG_IGN);
      char* env[] = {const_cast<char*>(ready.c_str()), const_cast<char*>(marker.c_str()), nullptr};
      char* ready_env[] = {const_cast<char*>(ready.c_str()), nullptr};
      ::execle("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr), marked ? env : ready_env);
      ::_exit(127);
    }
    ::setpgid(child, child);
    ::close(sync_pipe[1]);
    char byte;
    while (::read(sync_pipe[0], &byte, 1) > 0) {
    }
    ::close(sync_pipe[0]);
    for (int tries = 0; tries < 1000 && !ProcessEnvironmentHas(child, ready); ++tries) {
      ::usleep(10 * 1000);
    }
    REQUIRE(ProcessEnvironmentHas(child, ready));
    return child;
  };
  pid_t unmarked = start_sleep(false);
  RunState state;
  state.pid = state.pgid = unmarked;
  state.pid_start_time = ProcessStartTime(unmarked);
  REQUIRE(state.pid_start_time > 0);
  Status refused = StopRecordedJob(state, dir.path(), 0.2);
  CHECK(refused.code() == StatusCode::kInvalidInput);
  CHECK_THAT(refused.message(), Catch::Contains(kWorkDirMarkerVariable));
  CHECK(ProcessStartTime(unmarked) == state.pid_start_time);
  state.pid_start_time += 1;  // a reuse of the recorded pid: gone, nothing is signalled
  CHECK(StopRecordedJob(state, dir.path(), 0.2).ok());
  CHECK(ProcessStartTime(unmarked) == state.pid_start_time - 1);
  state.pgid = 1;
  CHECK_THAT(StopRecordedJob(state, dir.path(), 0.2).message(), Catch::Contains("pgid 1"));
  ::kill(unmarked, SIGKILL);
  ::waitpid(unmarked, nullptr, 0);

  pid_t child = start_sleep(true);
  std::uint64_t start = ProcessStartTime(child);
  REQUIRE(start > 0);
  CHECK(ProcessEnvironmentHas(child, marker));
  CHECK_FALSE(ProcessEnvironmentHas(child, marker + "x"));
  state.pid = state.pgid = child;
  state.pid_start_time = start;
  CHECK(StopRecordedJob(state, dir.path(), 0.2).ok());
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

}  // namespace
}  // namespace trtllm_run
