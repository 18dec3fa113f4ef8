// Readers of work dirs and MCP handles against hostile directories, on the real binary
// and the real MCP server: a cases dir naming itself, FIFOs and /dev/zero where a handle
// file should be, supervisor.log made a symlink, a directory component swapped for a
// symlink while `logs` and `case_log` read, and 1 TB (sparse) logs for `logs --tail`,
// `logs`, `attach` and `case_log`, which must stay bounded and stop on Ctrl-C/SIGTERM.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "mcp_test_client.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/workdir.h"

// Whether this test (and so the trtllm-run it runs, built alike) is under AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
#define TRTLLM_RUN_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRTLLM_RUN_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef TRTLLM_RUN_TEST_UNDER_ASAN
#define TRTLLM_RUN_TEST_UNDER_ASAN 0
#endif

namespace trtllm_run_test {
namespace {

namespace fs = std::filesystem;

// A prepared work dir as trtllm-run writes one (job_spec.json) under <root>/work_dirs/.
struct WorkDir {
  TempDir root{"trtllm_readers"};
  std::string dir;
  trtllm_run::JobSpec spec;
  explicit WorkDir(const std::string& log_name = "m_local.log") {
    dir = root.path() + "/work_dirs/m_20260101_000000";
    fs::create_directories(dir);
    spec.scenario = "local_direct";
    spec.workflow_type = "custom";
    spec.model_name = "m";
    spec.work_dir = dir;
    spec.log_file = dir + "/" + log_name;
    spec.direct_cmd = "true";
    spec.repo_root = root.path();
    REQUIRE(trtllm_run::WriteJobSpec(spec).ok());
  }
  // A result.json: the run is over.
  void Finish() {
    trtllm_run::RunResult result;
    result.status = trtllm_run::RunStatus::kPassed;
    result.workflow_type = "custom";
    result.scenario = "local_direct";
    result.model_name = "m";
    result.work_dir = dir;
    result.log_file = spec.log_file;
    result.reason = "test";
    REQUIRE(trtllm_run::WriteResult(result).ok());
  }
};

// A sparse file of `size` bytes of zeros followed by `tail`.
void MakeSparse(const std::string& path, off_t size, const std::string& tail = "") {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, size) == 0);
  if (!tail.empty()) {
    REQUIRE(::pwrite(fd, tail.data(), tail.size(), size) == static_cast<ssize_t>(tail.size()));
  }
  ::close(fd);
}

// trtllm-run `args` with its memory bounded to 1.5 GB (reading a log whole fails at once),
// its stdout to /dev/null when `quiet`; `exec` keeps the pid, so a signal reaches
// trtllm-run. The bound is `ulimit -v`, except under AddressSanitizer, whose shadow memory
// needs terabytes of address space: there ASan's own hard_rss_limit_mb kills the process.
CliOptions Bounded(const std::vector<std::string>& args, bool quiet) {
#if TRTLLM_RUN_TEST_UNDER_ASAN
  std::string line =
      "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1500\" exec \"$0\"";
#else
  std::string line = "ulimit -v 1500000; exec \"$0\"";
#endif
  for (std::size_t i = 0; i < args.size(); ++i) line += " \"$" + std::to_string(i + 1) + "\"";
  if (quiet) line += " >/dev/null";
  CliOptions options;
  options.program = "/bin/sh";
  options.args = {"-c", line, TRTLLM_RUN_BIN};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.timeout_seconds = 30;
  return options;
}

std::string HandleArg(const std::string& handle, const std::string& extra = "") {
  return "{\"handle\":" + Quoted(handle) + (extra.empty() ? "" : "," + extra) + "}";
}

// A spawn record naming no live process (mcp_exec.json / mcp_cases.json).
const char kDeadRecord[] =
    "{\"supervisor_pid\": 0, \"supervisor_start_time\": 0, \"started_at\": "
    "\"2026-01-01T00:00:00Z\", \"argv\": []}\n";

// The server's peak resident memory in kB (VmHWM), 0 when unknown.
long PeakRssKb(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// Every tool answers in time, and the server still ends on SIGTERM.
void CheckAnswersThenEnds(McpProcess& server, const std::vector<std::string>& handles,
                          const std::string& repo) {
  int id = 10;
  rapidjson::Document listed =
      server.Call(++id, "list_cases", "{\"repo_root\":" + Quoted(repo) + "}", "", 5);
  INFO("list_cases: " << JsonText(listed).substr(0, 2000) << "\nstderr: " << server.Stderr());
  REQUIRE_FALSE(listed.HasParseError());
  CHECK(listed.HasMember("result"));
  for (const std::string& handle : handles) {
    INFO(handle);
    for (const char* tool : {"case_status", "case_log"}) {
      INFO(tool);
      rapidjson::Document answer = server.Call(++id, tool, HandleArg(handle), "", 5);
      INFO(JsonText(answer).substr(0, 2000));
      REQUIRE_FALSE(answer.HasParseError());
      CHECK(answer.HasMember("result"));
    }
  }
  CHECK(PeakRssKb(server.pid()) < 400 * 1024);
  CheckOnlyMessages(server);
  REQUIRE(::kill(server.pid(), SIGTERM) == 0);
  CHECK(server.Wait(5));
}

}  // namespace

TEST_CASE("readers: a cases dir whose files name itself never makes the MCP server recurse",
          "[workdir][mcp]") {
  TempDir repo("trtllm_readers_self");
  const std::string cases = repo.path() + "/work_dirs/cases_20260101_000000";
  const std::string handle = repo.path() + "/work_dirs/mcp_cases_self";
  fs::create_directories(cases);
  fs::create_directories(handle + "/run");
  // A combined result that is not JSON but says "cases"; a log and a state naming itself.
  WriteTextFile(cases + "/result.json", "{\"kind\": \"cases\", not json");
  WriteTextFile(cases + "/supervisor.log", "[case 1] trtllm-run: work dir " + cases + "\n");
  WriteTextFile(cases + "/cases_state.json",
                "{\"supervisor_pid\": 0, \"host\": \"x\", \"work_dirs\": [\"" + cases + "\"]}\n");
  WriteTextFile(handle + "/mcp_cases.json", kDeadRecord);
  WriteTextFile(handle + "/supervisor.log", "[case 1] trtllm-run: work dir " + handle + "\n");
  WriteTextFile(handle + "/run/cases_state.json",
                "{\"supervisor_pid\": 0, \"host\": \"x\", \"work_dirs\": [\"" + handle + "\"]}\n");
  McpProcess server(repo.path());
  server.Initialize();
  CheckAnswersThenEnds(server, {cases, handle}, repo.path());

  CliRun status = RunCli({"status", cases});
  INFO(status.Describe());
  CHECK(status.term_signal == 0);
  CliRun list = RunCli({"list", "--repo-root", repo.path()});
  INFO(list.Describe());
  CHECK(list.exit_code == 0);
}

TEST_CASE("readers: FIFOs and /dev/zero as handle files neither hang nor grow the MCP server",
          "[workdir][mcp]") {
  TempDir repo("trtllm_readers_fifo");
  auto make = [&](const std::string& name) {
    std::string dir = repo.path() + "/work_dirs/" + name;
    fs::create_directories(dir + "/run");
    return dir;
  };
  std::vector<std::string> handles;
  // MCP run_cases handles: the combined result and the supervisor's log are not files.
  std::string fifo = make("mcp_fifo");
  WriteTextFile(fifo + "/mcp_cases.json", kDeadRecord);
  REQUIRE(::mkfifo((fifo + "/run/result.json").c_str(), 0644) == 0);
  REQUIRE(::mkfifo((fifo + "/supervisor.log").c_str(), 0644) == 0);
  handles.push_back(fifo);
  std::string zero = make("mcp_zero");
  WriteTextFile(zero + "/mcp_cases.json", kDeadRecord);
  fs::create_symlink("/dev/zero", zero + "/run/result.json");
  fs::create_symlink("/dev/zero", zero + "/supervisor.log");
  handles.push_back(zero);
  // `run --cases` dirs: result.json as a FIFO, as /dev/zero.
  std::string cases_fifo = make("cases_fifo");
  REQUIRE(::mkfifo((cases_fifo + "/result.json").c_str(), 0644) == 0);
  WriteTextFile(cases_fifo + "/cases_state.json", "{\"work_dirs\": []}\n");
  std::string cases_zero = make("cases_zero");
  fs::create_symlink("/dev/zero", cases_zero + "/result.json");
  WriteTextFile(cases_zero + "/cases_state.json", "{\"work_dirs\": []}\n");
  // A run_cases handle whose run/ is a symlink to a directory with a real result.
  std::string elsewhere = make("elsewhere");
  WriteTextFile(elsewhere + "/run/result.json",
                "{\"kind\": \"cases\", \"exit_code\": 0, \"cases\": []}\n");
  std::string linked = repo.path() + "/work_dirs/mcp_linked";
  fs::create_directories(linked);
  WriteTextFile(linked + "/mcp_cases.json", kDeadRecord);
  fs::create_symlink(elsewhere + "/run", linked + "/run");
  handles.push_back(linked);

  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document state = server.Call(1, "case_status", HandleArg(linked), "", 5);
  REQUIRE_FALSE(state.HasParseError());
  CHECK(Str(Structured(state), "status") != "PASSED");  // not read through run -> elsewhere
  CheckAnswersThenEnds(server, handles, repo.path());

  for (const std::string& dir : {cases_fifo, cases_zero}) {
    CliOptions status = Bounded({"status", dir}, false);
    status.timeout_seconds = 10;
    CliRun s = RunCli(status);
    INFO(s.Describe());
    CHECK_FALSE(s.timed_out);
    CHECK(s.term_signal == 0);
  }
}

TEST_CASE("readers: run_case never appends supervisor.log through a symlink", "[workdir][mcp]") {
  TempDir repo("trtllm_readers_append");
  TempDir outside("trtllm_readers_precious");
  const std::string precious = outside.path() + "/precious.txt";
  WriteTextFile(precious, "precious\n");
  McpProcess server(repo.path());
  server.Initialize();
  std::string args =
      "{\"custom_cmd\":\"echo appended\",\"scenario\":\"local_direct\","
      "\"model_name\":\"append\",\"repo_root\":" +
      Quoted(repo.path()) + "}";
  std::string handle = Str(Structured(server.Call(1, "plan_case", args)), "handle");
  REQUIRE_FALSE(handle.empty());
  fs::create_symlink(precious, handle + "/supervisor.log");
  rapidjson::Document run = server.Call(2, "run_case", HandleArg(handle));
  CHECK_THAT(ToolErrorText(run), Catch::Contains("supervisor.log"));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // what a started exec would write
  CHECK(ReadTextFile(precious) == "precious\n");
  CHECK_FALSE(fs::exists(handle + "/result.json"));
}

TEST_CASE("readers: a directory component swapped for a symlink never leads logs or case_log out",
          "[workdir][mcp]") {
  TempDir outside("trtllm_readers_outside");
  WriteTextFile(outside.path() + "/x.log", "SECRET outside the work dir\n");
  WorkDir work;
  work.spec.log_file = work.dir + "/sub/x.log";
  REQUIRE(trtllm_run::WriteJobSpec(work.spec).ok());
  fs::create_directories(work.dir + "/sub");
  WriteTextFile(work.dir + "/sub/x.log", "inside\n");
  fs::create_symlink(outside.path(), work.dir + "/swap");
  const std::string sub = work.dir + "/sub", swap = work.dir + "/swap";
  std::atomic<bool> stop{false};
  std::thread swapper([&] {  // sub <-> swap: now the real directory, now the symlink
    while (!stop.load())
      ::renameat2(AT_FDCWD, sub.c_str(), AT_FDCWD, swap.c_str(), RENAME_EXCHANGE);
  });
  struct Join {
    std::atomic<bool>* stop;
    std::thread* thread;
    ~Join() {
      stop->store(true);
      thread->join();
    }
  } join{&stop, &swapper};

  // 100 CLI processes (each ~0.25 s under the sanitizers) and 600 calls of one MCP server:
  // both read through workdir_files.cc's openat2, so the in-process calls carry the count.
  int leaked = 0, inside = 0;
  for (int i = 0; i < 100; ++i) {
    CliOptions logs;
    logs.args = {"logs", work.dir};
    logs.timeout_seconds = 10;
    CliRun run = RunCli(logs);
    if (run.stdout_text.find("SECRET") != std::string::npos) ++leaked;
    if (run.stdout_text == "inside\n") ++inside;
  }
  CHECK(leaked == 0);
  CHECK(inside > 0);

  McpProcess server(work.root.path());
  server.Initialize();
  int mcp_leaked = 0, mcp_inside = 0;
  for (int id = 1; id <= 600; ++id) {
    rapidjson::Document page = server.Call(id, "case_log", HandleArg(work.dir), "", 10);
    REQUIRE_FALSE(page.HasParseError());
    std::string text = JsonText(page);
    if (text.find("SECRET") != std::string::npos) ++mcp_leaked;
    if (text.find("inside\\n") != std::string::npos) ++mcp_inside;
  }
  CHECK(mcp_leaked == 0);
  CHECK(mcp_inside > 0);
}

TEST_CASE("readers: logs --tail of a 1 TB log reads from its end", "[workdir][cli]") {
  WorkDir work;
  std::string lines;
  for (int i = 1; i <= 10; ++i) lines += "line " + std::to_string(i) + "\n";
  MakeSparse(work.spec.log_file, off_t{1} << 40, lines);

  CliRun tail = RunCli(Bounded({"logs", "--tail", "5", work.dir}, false));
  INFO(tail.Describe());
  CHECK(tail.exit_code == 0);
  CHECK(tail.stdout_text == "line 6\nline 7\nline 8\nline 9\nline 10\n");
  CHECK(tail.seconds < 5);

  CliRun json = RunCli(Bounded({"logs", "--json", "--tail", "2", work.dir}, false));
  INFO(json.Describe());
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.stdout_text, Catch::Contains("line 9\\nline 10\\n"));

  // No newline in the last 8 MiB: it says so and prints at most that much.
  MakeSparse(work.spec.log_file, off_t{1} << 40);
  CliRun zeros = RunCli(Bounded({"logs", "--tail", "5", work.dir}, true));
  INFO(zeros.Describe());
  CHECK(zeros.exit_code == 0);
  CHECK(zeros.seconds < 10);
  CHECK_THAT(zeros.stderr_text, Catch::Contains("MiB"));
  CliRun whole_json = RunCli(Bounded({"logs", "--json", work.dir}, false));
  INFO(whole_json.Describe());
  CHECK(whole_json.exit_code == 2);
  CHECK_THAT(whole_json.stderr_text, Catch::Contains("--tail"));

  McpProcess server(work.root.path());
  server.Initialize();
  rapidjson::Document page = server.Call(
      1, "case_log", HandleArg(work.dir, "\"offset\":-65536,\"max_bytes\":262144"), "", 10);
  const rapidjson::Value& chunk = Structured(page);
  CHECK(chunk["log_bytes"].GetUint64() == (std::uint64_t{1} << 40));
  CHECK(chunk["next_offset"].GetUint64() - chunk["offset"].GetUint64() <= 65536);
  CHECK(PeakRssKb(server.pid()) < 400 * 1024);
}

TEST_CASE("readers: logs and attach of a 1 TB log stream it and stop on SIGINT/SIGTERM in 1 s",
          "[workdir][cli]") {
  WorkDir work;
  MakeSparse(work.spec.log_file, off_t{1} << 40);
  work.Finish();
  for (const char* command : {"logs", "attach"}) {
    for (int sig : {SIGINT, SIGTERM}) {
      INFO(command << " signal " << sig);
      CliOptions options = Bounded({command, work.dir}, true);
      options.signal = sig;
      options.signal_after_seconds = 1.5;
      options.timeout_seconds = 20;
      CliRun run = RunCli(options);
      INFO(run.Describe());
      CHECK_FALSE(run.timed_out);
      CHECK(run.signal_sent);
      CHECK(run.exit_code == 130);
      CHECK(run.seconds - run.signal_sent_at < 1.0);
    }
  }
}

}  // namespace trtllm_run_test
