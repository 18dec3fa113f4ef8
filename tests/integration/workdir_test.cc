// `trtllm-run status / attach / cancel` on local_direct work dirs, from another process,
// as a user would: running, finished, abandoned (the supervisor was killed), not a work
// dir. The local_docker variants are in docker_test.cc.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "cli_harness.h"
#include "result_schema.h"
#include "trtllm_run/sdk/job_spec.h"

namespace trtllm_run_test {
namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember(key) || !doc[key].IsString()) return "<missing>";
  return doc[key].GetString();
}

// A `sleep` whose process carries a marker that no command line of trtllm-run or bash
// holds: the command says `sleep 30.$((N-1+1))`, only the running sleep is "sleep 30.N".
struct Sleep {
  std::string command;  // in the command
  std::string marker;   // in the running sleep only
};
Sleep MakeSleep(int seconds) {
  static int counter = 0;
  long n = static_cast<long>(::getpid()) * 1000 + ++counter;
  return {"sleep " + std::to_string(seconds) + ".$((" + std::to_string(n - 1) + "+1))",
          "sleep " + std::to_string(seconds) + "." + std::to_string(n)};
}

struct Background {
  CliOptions options;
  CliRun run;
  std::thread thread;
  explicit Background(CliOptions o) : options(std::move(o)) {
    thread = std::thread([this] { run = RunCli(options); });
  }
  ~Background() {
    if (thread.joinable()) thread.join();
  }
  void Join() { thread.join(); }
};

CliOptions Case(const TempDir& root, const std::string& command) {
  CliOptions options;
  options.args = {"run",          "--scenario",   "local_direct",
                  "--custom-cmd", command,        "--repo-root",
                  root.path(),    "--kill-grace", "1"};
  options.timeout_seconds = 90;  // the longest job here sleeps 60 s
  return options;
}

// status, attach, cancel: each returns within seconds here. A bound well under the
// suite's 300 s makes one that never returns (an attach that misses the end of a run)
// fail the test on its own.
CliRun Quick(std::vector<std::string> args) {
  CliOptions options;
  options.args = std::move(args);
  options.timeout_seconds = 20;
  return RunCli(options);
}

std::string WaitForWorkDir(const TempDir& root, const std::string& marker) {
  for (int i = 0; i < 1200 && !ProcessWithMarkerAlive(marker); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(ProcessWithMarkerAlive(marker));
  std::string work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(work_dir.empty());
  return work_dir;
}

TEST_CASE("workdir: status, attach on a running, then finished local_direct run",
          "[workdir][cli]") {
  TempDir root;
  Sleep s = MakeSleep(2);
  Background job(Case(root, "echo one; " + s.command + "; echo two"));
  std::string work_dir = WaitForWorkDir(root, s.marker);

  CliRun status = Quick({"status", work_dir});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("state:      running"));
  CHECK_THAT(status.stdout_text, Catch::Contains(" alive"));
  CHECK_THAT(status.stdout_text, Catch::Contains("last line:  one"));

  CliRun attach = Quick({"attach", work_dir});
  INFO(attach.Describe());
  CHECK(attach.exit_code == 0);
  CHECK(attach.stdout_text == "one\ntwo\n");
  CHECK_THAT(attach.stderr_text, Catch::Contains("PASSED"));
  job.Join();
  CHECK(job.run.exit_code == 0);

  CliRun done = Quick({"status", "--json", work_dir});
  rapidjson::Document doc;
  doc.Parse(done.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(Str(doc, "phase") == "finished");
  REQUIRE(doc["result"].IsObject());
  CHECK(Str(doc["result"], "status") == "PASSED");
  // A relative path works too.
  CliOptions relative;
  relative.args = {"status", "work_dirs/" + work_dir.substr(work_dir.rfind('/') + 1)};
  relative.cwd = root.path();
  relative.timeout_seconds = 20;
  CliRun rel = RunCli(relative);
  CHECK(rel.exit_code == 0);
  CHECK_THAT(rel.stdout_text, Catch::Contains("state:      finished"));
}

TEST_CASE("workdir: Ctrl-C on attach detaches and leaves the job running", "[workdir][cli]") {
  TempDir root;
  Sleep s = MakeSleep(3);
  Background job(Case(root, "echo one; " + s.command));
  std::string work_dir = WaitForWorkDir(root, s.marker);
  CliOptions attach;
  attach.args = {"attach", work_dir};
  attach.signal = SIGINT;
  attach.signal_after_seconds = 0.5;
  attach.timeout_seconds = 20;
  CliRun detached = RunCli(attach);
  INFO(detached.Describe());
  CHECK(detached.exit_code == 130);
  CHECK_THAT(detached.stderr_text, Catch::Contains("detached"));
  CHECK(ProcessWithMarkerAlive(s.marker));
  job.Join();
  CHECK(job.run.exit_code == 0);
}

TEST_CASE("workdir: cancel asks the supervising trtllm-run to stop the job", "[workdir][cli]") {
  TempDir root;
  Sleep s = MakeSleep(60);
  Background job(Case(root, "echo one; " + s.command));
  std::string work_dir = WaitForWorkDir(root, s.marker);
  CliRun cancel = Quick({"cancel", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  job.Join();
  CHECK(job.run.exit_code == 6);
  CHECK_FALSE(ProcessWithMarkerAlive(s.marker));
  rapidjson::Document result = ReadResultJson(work_dir);
  CHECK(Str(result, "status") == "CANCELLED");
  CHECK(Str(result, "cancelled_by") == "SIGTERM");
}

TEST_CASE("workdir: a killed supervisor leaves an abandoned run that cancel cleans up",
          "[workdir][cli]") {
  TempDir root;
  Sleep s = MakeSleep(60);
  // The marker process starts half a second after the job: by then run_state.json names
  // the job's process group.
  CliOptions options = Case(root, "echo one; sleep 0.5; " + s.command);
  options.signal = SIGKILL;  // trtllm-run dies at once; its job keeps running
  options.signal_when_process = s.marker;
  CliRun killed = RunCli(options);
  REQUIRE(killed.term_signal == SIGKILL);
  std::string work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(work_dir.empty());
  REQUIRE(ProcessWithMarkerAlive(s.marker));

  CliRun status = Quick({"status", work_dir});
  INFO(status.Describe());
  CHECK_THAT(status.stdout_text, Catch::Contains("state:      abandoned"));
  CHECK_THAT(status.stdout_text, Catch::Contains(" gone"));

  CliRun attach = Quick({"attach", work_dir});
  INFO(attach.Describe());
  CHECK(attach.exit_code == 3);
  CHECK(attach.stdout_text == "one\n");
  CHECK_THAT(attach.stderr_text, Catch::Contains("ended without writing result.json"));

  CliRun cancel = Quick({"cancel", "--kill-grace", "1", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  CHECK(WaitNoProcessWithMarker(s.marker, 5));
  rapidjson::Document result = ReadResultJson(work_dir);
  CHECK(Str(result, "status") == "CANCELLED");
  CHECK(Str(result, "cancelled_by") == "trtllm-run cancel");
  std::vector<std::string> problems = ValidateResult(result);
  INFO(Join(problems));
  CHECK(problems.empty());
  CliRun after = Quick({"status", work_dir});
  CHECK_THAT(after.stdout_text, Catch::Contains("state:      finished"));
  KillProcessesWithMarker(s.marker);
}

TEST_CASE("workdir: not started, and not a work dir", "[workdir][cli]") {
  TempDir root;
  trtllm_run::JobSpec spec;
  spec.scenario = "local_direct";
  spec.work_dir = root.path();
  spec.log_file = root.path() + "/m_local.log";
  REQUIRE(trtllm_run::WriteJobSpec(spec).ok());
  CliRun status = Quick({"status", root.path()});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("state:      not started"));
  CliRun attach = Quick({"attach", "--wait-start", "0.3", root.path()});
  CHECK(attach.exit_code == 2);
  CHECK_THAT(attach.stderr_text, Catch::Contains("nothing runs in " + root.path()));
  CliRun cancel = Quick({"cancel", root.path()});
  CHECK(cancel.exit_code == 0);
  CHECK_THAT(cancel.stdout_text, Catch::Contains("nothing to cancel"));

  TempDir empty;
  CliRun not_dir = Quick({"status", empty.path()});
  CHECK(not_dir.exit_code == 2);
  CHECK_THAT(not_dir.stderr_text, Catch::Contains("is not a trtllm-run work dir"));
  CliRun missing = Quick({"status", empty.path() + "/nope"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.stderr_text, Catch::Contains("does not exist"));
  CliRun none = Quick({"status"});
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.stderr_text, Catch::Contains("WORK_DIR"));
}

}  // namespace
}  // namespace trtllm_run_test
