// A recorded pid that was reused: the kernel gives a freed pid to a LATER process, so the
// live process's start time is after the recorded one. Every check that a recorded
// process is still "ours" must judge such a process not ours (workdir.h), not only one
// whose start time is later than the recorded one.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "scratch_work_dir.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

// `sleep 30` leading its own process group, SIGTERM ignored, with `env_entry` as its only
// environment; returns once it runs sleep (the pipe's write end closes on exec).
pid_t StartSleep(const std::string& env_entry) {
  int sync_pipe[2];
  REQUIRE(::pipe2(sync_pipe, O_CLOEXEC) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::setpgid(0, 0);
    ::signal(SIGTERM, SIG_IGN);
    char* env[] = {const_cast<char*>(env_entry.c_str()), nullptr};
    ::execle("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr), env);
    ::_exit(127);
  }
  ::setpgid(child, child);
  ::close(sync_pipe[1]);
  char byte;
  while (::read(sync_pipe[0], &byte, 1) > 0) {
  }
  ::close(sync_pipe[0]);
  return child;
}

}  // namespace

TEST_CASE("a reused pid (live process started after the recorded one) is not the recorded one",
          "[workdir]") {
  ScratchWorkDir dir;
  const std::uint64_t self_start = ProcessStartTime(::getpid());
  REQUIRE(self_start > 1);

  SECTION("SameProcessAlive") {
    CHECK(SameProcessAlive(::getpid(), self_start));
    CHECK_FALSE(SameProcessAlive(::getpid(), self_start - 1));
    CHECK_FALSE(SameProcessAlive(::getpid(), self_start + 1));
  }

  SECTION("the supervisor: holding the lock, but started after the recorded start time") {
    // This process holds the work dir's lock as a supervisor does; only the start time
    // tells it from the recorded supervisor.
    Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(dir.path());
    REQUIRE(lock.ok());
    RunState state = NewRunState("local_direct");
    REQUIRE(state.supervisor_start_time == self_start);
    state.supervisor_start_time = self_start - 1;  // the recorded one started earlier
    CHECK(CheckRecordedSupervisor(state, dir.path()).verdict == RecordedProcess::kGone);
    REQUIRE(WriteRunState(dir.path(), state).ok());
    Result<WorkDirInfo> info = InspectWorkDir(dir.path());
    REQUIRE(info.ok());
    CHECK_FALSE(info->supervisor_alive);
    CHECK(info->phase == WorkDirPhase::kAbandoned);
    state.supervisor_start_time = self_start;  // the control: the true start time
    CHECK(CheckRecordedSupervisor(state, dir.path()).verdict == RecordedProcess::kProven);
  }

  SECTION("the job's process: marked with this work dir, started after the recorded time") {
    pid_t child = StartSleep(WorkDirMarkerEntry(dir.path()));
    const std::uint64_t child_start = ProcessStartTime(child);
    REQUIRE(child_start > 1);
    RunState state;
    state.pid = state.pgid = child;
    state.pid_start_time = child_start - 1;  // the recorded job started earlier
    CHECK(CheckRecordedJobLeader(state, dir.path()).verdict == RecordedProcess::kGone);
    state.pid_start_time = child_start;  // the control: the true start time
    CHECK(CheckRecordedJobLeader(state, dir.path()).verdict == RecordedProcess::kProven);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
}

}  // namespace trtllm_run
