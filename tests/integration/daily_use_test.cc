// Daily use on the real binary: `list` and `logs` of work dirs (untrusted input: no
// symlink followed out, control characters escaped), `run --rerun-failed CASES_DIR`,
// `plan --cases FILE`, and status / attach / cancel of a `cases_*` dir.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

namespace {

CliRun Cli(std::vector<std::string> args, double timeout = 60) {
  CliOptions options;
  options.args = std::move(args);
  options.timeout_seconds = timeout;
  return RunCli(options);
}

// The work dirs (not cases dirs) under <repo>/work_dirs, sorted by name.
std::vector<std::string> WorkDirs(const std::string& repo, const std::string& prefix) {
  std::vector<std::string> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

const char kCases[] =
    "- {name: good, custom_cmd: 'echo fine'}\n"
    "- {name: bad, custom_cmd: 'echo oops; printf \"\\033[31mred\\n\"; exit 3'}\n"
    "- {name: good2, custom_cmd: 'true'}\n";

}  // namespace

TEST_CASE(
    "daily use: list shows the recent work dirs, --json, symlinks and control "
    "characters are not trusted",
    "[cli][daily]") {
  TempDir repo("trtllm_list");
  TempDir outside("trtllm_list_out");
  CliRun pass = Cli({"run", "--custom-cmd", "echo hi", "--scenario", "local_direct", "--repo-root",
                     repo.path(), "--model-name", "first"});
  REQUIRE(pass.exit_code == 0);
  CliRun fail = Cli({"run", "--custom-cmd", "exit 1", "--scenario", "local_direct", "--repo-root",
                     outside.path(), "--model-name", "elsewhere"});
  REQUIRE(fail.exit_code == 1);
  // A symlink to another repo's work dir, and a directory whose name holds an escape.
  fs::create_symlink(WorkDirs(outside.path(), "elsewhere")[0],
                     repo.path() + "/work_dirs/linked_out");
  fs::copy(WorkDirs(repo.path(), "first")[0], repo.path() + "/work_dirs/evil\x1b[2Jname",
           fs::copy_options::recursive);

  CliRun list = Cli({"list", "--repo-root", repo.path()});
  INFO(list.Describe());
  REQUIRE(list.exit_code == 0);
  CHECK_THAT(list.stdout_text, Catch::Contains("first_") && Catch::Contains("custom") &&
                                   Catch::Contains("local_direct") && Catch::Contains("PASSED"));
  CHECK_THAT(list.stdout_text, !Catch::Contains("linked_out") && !Catch::Contains("elsewhere"));
  CHECK_THAT(list.stdout_text, Catch::Contains("evil\\x1B[2Jname"));
  CHECK(list.stdout_text.find('\x1b') == std::string::npos);

  CliRun json = Cli({"list", "--repo-root", repo.path(), "--json"});
  INFO(json.Describe());
  REQUIRE(json.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(json.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc["runs"].IsArray());
  CHECK(doc["runs"].Size() == 2);
  CHECK(std::string(doc["runs"][0]["status"].GetString()) == "PASSED");
  CHECK(doc["runs"][0].HasMember("age_seconds"));

  CliRun missing = Cli({"list", "--repo-root", repo.path() + "/nope"});
  CHECK(missing.exit_code == 2);
}

TEST_CASE(
    "daily use: logs prints a work dir's log escaped, --tail N, -f to the verdict, a "
    "log symlinked out is refused",
    "[cli][daily]") {
  TempDir repo("trtllm_logs");
  CliRun run = Cli({"run", "--custom-cmd", "echo one; printf '\\033[31mtwo\\n'; echo three",
                    "--scenario", "local_direct", "--repo-root", repo.path()});
  REQUIRE(run.exit_code == 0);
  const std::string dir = FindSingleWorkDir(repo.path());
  CliRun logs = Cli({"logs", dir});
  INFO(logs.Describe());
  CHECK(logs.exit_code == 0);
  CHECK_THAT(logs.stdout_text, Catch::Contains("one\n\\x1B[31mtwo\nthree\n"));
  CHECK(logs.stdout_text.find('\x1b') == std::string::npos);

  CliRun tail = Cli({"logs", "--tail", "2", dir});
  INFO(tail.Describe());
  CHECK(tail.exit_code == 0);
  CHECK_THAT(tail.stdout_text, !Catch::Contains("one") && Catch::Contains("three"));

  // -f on a running job: every line, and the end once the verdict is written.
  CliRun slow_plan = Cli({"plan", "--custom-cmd", "echo start; sleep 2; echo end", "--scenario",
                          "local_direct", "--repo-root", repo.path(), "--model-name", "slow"});
  REQUIRE(slow_plan.exit_code == 0);
  const std::string slow = WorkDirs(repo.path(), "slow")[0];
  std::thread exec([&] { Cli({"exec", slow}); });
  CliRun follow = Cli({"logs", "-f", slow}, 30);
  exec.join();
  INFO(follow.Describe());
  CHECK(follow.exit_code == 0);
  CHECK_THAT(follow.stdout_text, Catch::Contains("start") && Catch::Contains("end"));

  // A log that is a symlink out of the work dir is never read.
  TempDir outside("trtllm_logs_out");
  WriteTextFile(outside.path() + "/secret", "SECRET\n");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") {
      fs::remove(entry.path());
      fs::create_symlink(outside.path() + "/secret", entry.path());
    }
  }
  CliRun refused = Cli({"logs", dir});
  INFO(refused.Describe());
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.stdout_text + refused.stderr_text, !Catch::Contains("SECRET"));
}

TEST_CASE(
    "daily use: run --rerun-failed runs again the cases that did not pass, with their "
    "inputs",
    "[cli][daily][cases]") {
  TempDir repo("trtllm_rerun");
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases, kCases);
  CliRun first = Cli({"run", "--cases", cases, "--scenario", "local_direct", "--repo-root",
                      repo.path(), "--run-dir", repo.path() + "/first"});
  INFO(first.Describe());
  REQUIRE(first.exit_code == 1);

  // From another directory: the stored inputs carry their repo root.
  CliOptions options;
  options.args = {"run", "--rerun-failed", repo.path() + "/first", "--run-dir",
                  repo.path() + "/second"};
  options.cwd = "/";
  options.timeout_seconds = 60;
  CliRun rerun = RunCli(options);
  INFO(rerun.Describe());
  CHECK(rerun.exit_code == 1);
  CHECK_THAT(rerun.stderr_text, Catch::Contains("rerunning 1 case(s)"));
  const std::string result = ReadTextFile(repo.path() + "/second/result.json");
  CHECK_THAT(result, Catch::Contains("\"name\": \"bad\"") && !Catch::Contains("\"good\""));
  CHECK_THAT(ReadTextFile(repo.path() + "/second/cases.json"), Catch::Contains("exit 3"));

  // Flags given now win over the stored inputs: the failing case passes with another command.
  CliRun fixed = Cli({"run", "--rerun-failed", repo.path() + "/second", "--custom-cmd", "true",
                      "--run-dir", repo.path() + "/third"});
  INFO(fixed.Describe());
  CHECK(fixed.exit_code == 0);
  CliRun none = Cli({"run", "--rerun-failed", repo.path() + "/third"});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.stderr_text, Catch::Contains("nothing to rerun"));
  CliRun not_cases = Cli({"run", "--rerun-failed", repo.path()});
  CHECK(not_cases.exit_code == 2);
}

TEST_CASE("daily use: plan --cases plans every case into a table and submits nothing",
          "[cli][daily][cases]") {
  TempDir repo("trtllm_plan_cases");
  const std::string cases = repo.path() + "/cases.yaml";
  WriteTextFile(cases, kCases);
  CliRun plan =
      Cli({"plan", "--cases", cases, "--scenario", "local_direct", "--repo-root", repo.path()});
  INFO(plan.Describe());
  CHECK(plan.exit_code == 0);
  CHECK_THAT(plan.stdout_text, Catch::Contains("good2") && Catch::Contains("local_direct") &&
                                   Catch::Contains("3 cases planned"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));

  WriteTextFile(cases,
                "- {name: a, custom_cmd: x, monitor_timeout: 2x}\n- {name: b, custom_cmd: y}\n"
                "- {name: c, custom_cmd: z, test_cmd: t.py}\n");
  CliRun bad =
      Cli({"plan", "--cases", cases, "--scenario", "local_direct", "--repo-root", repo.path()});
  INFO(bad.Describe());
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.stderr_text, Catch::Contains("2 of 3 cases cannot be planned") &&
                                  Catch::Contains("'a'") && Catch::Contains("'c'"));
  CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
}

TEST_CASE("daily use: status, attach and cancel of a cases dir", "[cli][daily][cases]") {
  TempDir repo("trtllm_cases_dir");
  const std::string cases = repo.path() + "/cases.yaml";
  const std::string marker = UniqueMarker("casesdir");
  WriteTextFile(cases,
                "- {name: quick, custom_cmd: 'true'}\n- {name: slow, custom_cmd: 'sleep 60 #" +
                    marker + "'}\n");
  const std::string run_dir = repo.path() + "/run";
  CliRun background;
  std::thread runner([&] {
    background = Cli({"run", "--cases", cases, "--scenario", "local_direct", "--repo-root",
                      repo.path(), "--run-dir", run_dir, "--kill-grace", "2"},
                     120);
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!ProcessWithMarkerAlive(marker) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CliRun status = Cli({"status", run_dir});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text,
             Catch::Contains("running") && Catch::Contains("slow") && Catch::Contains("PASSED"));
  CliRun json = Cli({"status", "--json", run_dir});
  CHECK_THAT(json.stdout_text, Catch::Contains("\"kind\": \"cases\""));

  CliRun cancel = Cli({"cancel", run_dir}, 90);
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  runner.join();
  INFO(background.Describe());
  CHECK(background.exit_code == 6);  // CANCELLED
  CHECK(WaitNoProcessWithMarker(marker, 10));

  CliRun attach = Cli({"attach", run_dir});
  INFO(attach.Describe());
  CHECK(attach.exit_code == 6);
  CHECK_THAT(attach.stderr_text, Catch::Contains("CANCELLED"));
  CliRun after = Cli({"status", run_dir});
  CHECK_THAT(after.stdout_text, Catch::Contains("finished"));
  KillProcessesWithMarker(marker);
}

TEST_CASE("daily use: a forged cases_state.json cannot make cancel signal another process",
          "[cli][daily][cases]") {
  TempDir dir("trtllm_forged_cases");
  const std::string marker = UniqueMarker("forgedcases");
  CliOptions sleeper;
  sleeper.program = "/bin/bash";
  sleeper.args = {"-c", "(exec -a 'sleep 60 " + marker + "' sleep 60) >/dev/null 2>&1 &"};
  RunCli(sleeper);
  std::vector<int> pids;
  for (int i = 0; i < 50 && pids.empty(); ++i) {
    pids = PidsWithMarker(marker);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(pids.size() == 1);
  std::string stat = ReadTextFile("/proc/" + std::to_string(pids[0]) + "/stat");
  std::string after = stat.substr(stat.rfind(')') + 2);
  std::istringstream fields(after);
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  fs::create_symlink("/etc", dir.path() + "/linked");
  WriteTextFile(dir.path() + "/cases_state.json",
                "{\"supervisor_pid\": " + std::to_string(pids[0]) +
                    ", \"supervisor_start_time\": " + field + ", \"host\": \"" + host +
                    "\", \"work_dirs\": [\"" + dir.path() + "/linked\"]}\n");
  CliRun status = Cli({"status", dir.path()});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("abandoned") && Catch::Contains("missing"));
  CliRun cancel = Cli({"cancel", "--wait", "1", dir.path()});
  INFO(cancel.Describe());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(ProcessWithMarkerAlive(marker));
  KillProcessesWithMarker(marker);
}
