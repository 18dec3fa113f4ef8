// ChildProcess against real processes: exit codes and signals, the merged output pipe,
// environment, working directory, and that ending the group ends every descendant.
#include "trtllm_run/sdk/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

std::unique_ptr<ChildProcess> Start(const std::string& script, std::vector<EnvVar> env = {},
                                    std::string dir = "") {
  ProcessOptions options;
  options.argv = {"bash", "-c", script};
  options.env = std::move(env);
  options.working_dir = std::move(dir);
  Result<std::unique_ptr<ChildProcess>> child = ChildProcess::Spawn(options);
  INFO(child.status().ToString());
  REQUIRE(child.ok());
  return std::move(child.value());
}

// Reads the merged output until EOF (or `seconds` pass).
std::string ReadAll(ChildProcess* child, double seconds = 10) {
  std::string out;
  Clock::time_point start = Clock::now();
  while (child->output_fd() >= 0 &&
         std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    pollfd fd{child->output_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    Result<ReadState> state = child->ReadOutput(&out);
    REQUIRE(state.ok());
  }
  return out;
}

// Reads a /proc file; "" when it cannot.
std::string ReadProc(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The state letter and parent pid of `pid` from /proc/<pid>/stat.
bool ProcState(int pid, char* state, int* ppid) {
  std::string stat = ReadProc("/proc/" + std::to_string(pid) + "/stat");
  std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  return std::sscanf(stat.c_str() + close + 1, " %c %d", state, ppid) == 2;
}

std::vector<int> AllPids() {
  std::vector<int> pids;
  DIR* dir = ::opendir("/proc");
  while (dir != nullptr) {
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    int pid = std::atoi(entry->d_name);
    if (pid > 0) pids.push_back(pid);
  }
  if (dir != nullptr) ::closedir(dir);
  return pids;
}

// Live (not zombie) processes whose command line starts with `marker` (so that the
// `bash -c` that started them does not count).
int CountWithMarker(const std::string& marker) {
  int count = 0;
  for (int pid : AllPids()) {
    std::string cmdline = ReadProc("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    char state = 0;
    int ppid = 0;
    if (cmdline.compare(0, marker.size(), marker) == 0 && ProcState(pid, &state, &ppid) &&
        state != 'Z') {
      ++count;
    }
  }
  return count;
}

// Zombie children of this test process (exited, never reaped).
int OwnZombies() {
  int count = 0;
  for (int pid : AllPids()) {
    char state = 0;
    int ppid = 0;
    if (ProcState(pid, &state, &ppid) && ppid == ::getpid() && state == 'Z') ++count;
  }
  return count;
}

bool WaitForCount(const std::string& marker, int expected, double seconds) {
  Clock::time_point start = Clock::now();
  while (CountWithMarker(marker) != expected) {
    if (std::chrono::duration<double>(Clock::now() - start).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// A sleep duration unique to this test process, so leftovers can be found by cmdline.
// A minute at most: a test whose signalling fails waits for it, then fails, instead of
// hanging.
std::string UniqueSleep(int salt) {
  return std::to_string(50 + salt) + "." + std::to_string(::getpid());
}

TEST_CASE("ChildProcess reports exit codes", "[process]") {
  std::unique_ptr<ChildProcess> child = Start("exit 3");
  ProcessExit exit = child->Wait();
  REQUIRE(exit.exit_code);
  CHECK(*exit.exit_code == 3);
  CHECK_FALSE(exit.signal);
  CHECK(exit.ToString() == "exit code 3");
  // The status is kept once reaped.
  REQUIRE(child->TryWait());
  CHECK(*child->TryWait()->exit_code == 3);

  std::unique_ptr<ChildProcess> ok = Start("true");
  CHECK(ok->Wait().exit_code == 0);
}

TEST_CASE("ChildProcess reports the terminating signal", "[process]") {
  std::unique_ptr<ChildProcess> child = Start("kill -TERM $$; sleep 5");
  ProcessExit exit = child->Wait();
  REQUIRE(exit.signal);
  CHECK(*exit.signal == SIGTERM);
  CHECK_FALSE(exit.exit_code);
  CHECK(exit.ToString() == "signal 15 (SIGTERM)");
}

TEST_CASE("TryWait does not block while the child runs", "[process]") {
  std::unique_ptr<ChildProcess> child = Start("sleep 0.3; exit 7");
  Clock::time_point start = Clock::now();
  CHECK_FALSE(child->TryWait());
  CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 0.2);
  std::optional<ProcessExit> exit;
  while (!(exit = child->TryWait())) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(exit->exit_code == 7);
}

TEST_CASE("stdout and stderr arrive on the one output pipe, in order", "[process]") {
  std::unique_ptr<ChildProcess> child = Start("echo to-stdout; echo to-stderr >&2; echo again");
  std::string out = ReadAll(child.get());
  CHECK(out == "to-stdout\nto-stderr\nagain\n");
  CHECK(child->output_fd() == -1);  // closed at EOF
  CHECK(child->Wait().exit_code == 0);
}

TEST_CASE("large output is not lost", "[process]") {
  // 4 MB through a 64 KiB pipe: the child blocks until the parent reads.
  std::unique_ptr<ChildProcess> child = Start("head -c 4000000 /dev/zero | tr '\\0' x");
  std::string out = ReadAll(child.get(), 30);
  CHECK(out.size() == 4000000u);
  CHECK(out.find_first_not_of('x') == std::string::npos);
}

TEST_CASE("environment variables reach the child on top of the inherited ones", "[process]") {
  ::setenv("TRTLLM_RUN_TEST_INHERITED", "inherited value", 1);
  std::unique_ptr<ChildProcess> child =
      Start("printf '%s|%s|%s|%s' \"$FOO\" \"$BAZ\" \"$TRTLLM_RUN_TEST_INHERITED\" \"$DUP\"",
            {{"FOO", "bar"}, {"BAZ", "x y $HOME 'q'"}, {"DUP", "first"}, {"DUP", "second"}});
  CHECK(ReadAll(child.get()) == "bar|x y $HOME 'q'|inherited value|second");
  ::unsetenv("TRTLLM_RUN_TEST_INHERITED");
}

TEST_CASE("an env var given to the child overrides the inherited one", "[process]") {
  ::setenv("TRTLLM_RUN_TEST_OVERRIDE", "old", 1);
  std::unique_ptr<ChildProcess> child =
      Start("env | grep -c '^TRTLLM_RUN_TEST_OVERRIDE='; echo $TRTLLM_RUN_TEST_OVERRIDE",
            {{"TRTLLM_RUN_TEST_OVERRIDE", "new"}});
  CHECK(ReadAll(child.get()) == "1\nnew\n");
  ::unsetenv("TRTLLM_RUN_TEST_OVERRIDE");
}

TEST_CASE("argv elements reach the child byte for byte", "[process]") {
  ProcessOptions options;
  options.argv = {"printf", "<%s>\\n", "a b", "it's \"quoted\"", "$HOME", "", "line1\nline2"};
  Result<std::unique_ptr<ChildProcess>> child = ChildProcess::Spawn(options);
  REQUIRE(child.ok());
  CHECK(ReadAll(child->get()) == "<a b>\n<it's \"quoted\">\n<$HOME>\n<>\n<line1\nline2>\n");
}

TEST_CASE("the child runs in the working directory with stdin at EOF", "[process]") {
  char tmpl[] = "/tmp/trtllm_run_process_test_XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  std::string dir = tmpl;
  // `cat` would block forever on an inherited terminal or pipe; /dev/null ends it.
  std::unique_ptr<ChildProcess> child = Start("pwd; cat; echo done", {}, dir);
  CHECK(ReadAll(child.get()) == dir + "\ndone\n");
  CHECK(child->Wait().exit_code == 0);
  ::rmdir(tmpl);
}

TEST_CASE("the child inherits no file descriptor beyond stdin, stdout and stderr", "[process]") {
  // Descriptors the parent opened without O_CLOEXEC (by a library, say) must not leak
  // into jobs: a leaked pipe end can keep a reader waiting forever.
  int leaky[2];
  REQUIRE(::pipe(leaky) == 0);
  int leaky_file = ::open("/dev/null", O_RDONLY);
  REQUIRE(leaky_file >= 0);
  // `ls` (a child of bash) lists the descriptors of bash ($$), which bash got from us.
  std::unique_ptr<ChildProcess> child = Start("ls /proc/$$/fd; true");
  std::string out = ReadAll(child.get());
  ::close(leaky[0]);
  ::close(leaky[1]);
  ::close(leaky_file);
  CHECK(out == "0\n1\n2\n");
}

TEST_CASE("the child leads its own process group", "[process]") {
  std::unique_ptr<ChildProcess> child = Start("sleep 5");
  CHECK(child->pgid() == child->pid());
  CHECK(::getpgid(child->pid()) == child->pid());
  CHECK(::getpgid(child->pid()) != ::getpgrp());
  CHECK(child->GroupAlive());
}

TEST_CASE("ignored signals of the parent are reset to default in the child", "[process]") {
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &previous);
  std::unique_ptr<ChildProcess> child = Start("kill -USR1 $$; echo survived");
  ::sigaction(SIGUSR1, &previous, nullptr);
  std::string out = ReadAll(child.get());
  ProcessExit exit = child->Wait();
  CHECK(out.empty());
  REQUIRE(exit.signal);
  CHECK(*exit.signal == SIGUSR1);
}

TEST_CASE("Spawn errors name what is wrong and leave nothing running", "[process]") {
  ProcessOptions options;
  options.argv = {"trtllm-run-no-such-program-xyz"};
  Result<std::unique_ptr<ChildProcess>> missing = ChildProcess::Spawn(options);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kExecutionError);
  CHECK_THAT(missing.status().message(), Catch::Contains("trtllm-run-no-such-program-xyz"));

  options.argv = {"/nonexistent/dir/prog"};
  Result<std::unique_ptr<ChildProcess>> bad_path = ChildProcess::Spawn(options);
  REQUIRE_FALSE(bad_path.ok());
  CHECK_THAT(bad_path.status().message(), Catch::Contains("/nonexistent/dir/prog"));
  CHECK_THAT(bad_path.status().message(), Catch::Contains("No such file"));

  options.argv = {"bash", "-c", "true"};
  options.working_dir = "/nonexistent/work/dir";
  Result<std::unique_ptr<ChildProcess>> bad_dir = ChildProcess::Spawn(options);
  REQUIRE_FALSE(bad_dir.ok());
  CHECK_THAT(bad_dir.status().message(), Catch::Contains("/nonexistent/work/dir"));

  options.argv.clear();
  options.working_dir.clear();
  Result<std::unique_ptr<ChildProcess>> empty = ChildProcess::Spawn(options);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidInput);
}

TEST_CASE("a failed exec leaves no zombie behind", "[process]") {
  char tmpl[] = "/tmp/trtllm_run_not_executable_XXXXXX";
  int fd = ::mkstemp(tmpl);
  REQUIRE(fd >= 0);
  ::close(fd);
  int zombies_before = OwnZombies();
  ProcessOptions options;
  options.argv = {tmpl};  // a path, not executable: execve fails in the child
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
  ::unlink(tmpl);
  REQUIRE_FALSE(spawned.ok());
  CHECK_THAT(spawned.status().message(), Catch::Contains(tmpl));
  CHECK_THAT(spawned.status().message(), Catch::Contains("ermission denied"));
  CHECK(OwnZombies() == zombies_before);
}

TEST_CASE("signalling the group reaches grandchildren", "[process]") {
  std::string marker = UniqueSleep(1);
  std::unique_ptr<ChildProcess> child =
      Start("sleep " + marker + " & (sleep " + marker + " &); wait");
  REQUIRE(WaitForCount("sleep " + marker, 2, 5));
  CHECK(child->GroupAlive());
  CHECK(child->SignalGroup(SIGTERM));
  ProcessExit exit = child->Wait();
  CHECK(exit.signal == SIGTERM);
  CHECK(WaitForCount("sleep " + marker, 0, 5));
  // The orphaned grandchild may linger as a zombie (init here may not reap): the group
  // still counts as gone.
  Clock::time_point start = Clock::now();
  while (child->GroupAlive() && std::chrono::duration<double>(Clock::now() - start).count() < 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_FALSE(child->GroupAlive());
  CHECK_FALSE(child->SignalGroup(SIGTERM));
}

TEST_CASE("the destructor kills the whole group, even after the leader exited", "[process]") {
  std::string marker = UniqueSleep(2);
  {
    std::unique_ptr<ChildProcess> child = Start("(sleep " + marker + " &) ; exit 0");
    ProcessExit exit = child->Wait();
    CHECK(exit.exit_code == 0);
    REQUIRE(WaitForCount("sleep " + marker, 1, 5));
    CHECK(child->GroupAlive());  // the background grandchild
  }
  CHECK(WaitForCount("sleep " + marker, 0, 5));

  std::string running = UniqueSleep(3);
  {
    std::unique_ptr<ChildProcess> child = Start("sleep " + running + " & sleep " + running);
    REQUIRE(WaitForCount("sleep " + running, 2, 5));
  }
  CHECK(WaitForCount("sleep " + running, 0, 5));
}

TEST_CASE("Terminate escalates to SIGKILL when SIGTERM is ignored", "[process]") {
  std::string marker = UniqueSleep(4);
  std::unique_ptr<ChildProcess> child =
      Start("trap '' TERM; sleep " + marker + " & trap '' TERM; echo ready; wait; wait");
  // Wait until the traps are set.
  std::string out;
  Clock::time_point start = Clock::now();
  while (out.find("ready") == std::string::npos &&
         std::chrono::duration<double>(Clock::now() - start).count() < 5) {
    pollfd fd{child->output_fd(), POLLIN, 0};
    ::poll(&fd, 1, 100);
    REQUIRE(child->ReadOutput(&out).ok());
  }
  REQUIRE(out.find("ready") != std::string::npos);
  Clock::time_point term = Clock::now();
  // Bounded: a Terminate that never escalates would wait for the sleep to end.
  std::future<ProcessExit> terminated =
      std::async(std::launch::async, [&child] { return child->Terminate(0.5); });
  if (terminated.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ::kill(-child->pid(), SIGKILL);
    FAIL_CHECK("Terminate(0.5) had not returned after 10 s");
  }
  ProcessExit exit = terminated.get();
  double took = std::chrono::duration<double>(Clock::now() - term).count();
  CHECK(exit.signal == SIGKILL);
  CHECK(took >= 0.45);
  CHECK(took < 3);
  CHECK_FALSE(child->GroupAlive());
  CHECK(WaitForCount("sleep " + marker, 0, 5));
}

TEST_CASE("SignalName names common signals", "[process]") {
  CHECK(SignalName(SIGINT) == "SIGINT");
  CHECK(SignalName(SIGTERM) == "SIGTERM");
  CHECK(SignalName(SIGHUP) == "SIGHUP");
  CHECK(SignalName(SIGKILL) == "SIGKILL");
  CHECK(SignalName(64) == "signal 64");
}

}  // namespace
}  // namespace trtllm_run
