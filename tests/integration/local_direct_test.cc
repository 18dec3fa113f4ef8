// local_direct through the real CLI, as a user runs it: verdicts and exit codes,
// result.json, the log and the terminal, quoting, environment, signals, and that no
// process of the job survives the verdict.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

// A `sleep` argument (seconds.unique digits) that marks the job's processes.
std::string SleepArg(int seconds) {
  static int counter = 0;
  return std::to_string(seconds) + "." + std::to_string(::getpid()) + std::to_string(++counter);
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

// Runs `trtllm-run run --custom-cmd CMD --repo-root ROOT [extra...]`.
CliRun RunCase(const TempDir& root, const std::string& command, std::vector<std::string> extra = {},
               CliOptions options = {}) {
  options.args = {"run",   "--scenario",  "local_direct", "--custom-cmd",
                  command, "--repo-root", root.path()};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  return RunCli(options);
}

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
  std::string log;
};

Outcome RunAndRead(const TempDir& root, const std::string& command,
                   std::vector<std::string> extra = {}, CliOptions options = {}) {
  Outcome out;
  out.run = RunCase(root, command, std::move(extra), options);
  INFO(out.run.Describe());
  out.work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(out.work_dir.empty());
  out.result = ReadResultJson(out.work_dir);
  REQUIRE_FALSE(out.result.HasParseError());
  REQUIRE(out.result.IsObject());
  out.log = ReadTextFile(Str(out.result, "log_file"));
  return out;
}

TEST_CASE("local_direct CLI: a passing command", "[local_direct][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, "echo hello from the job; echo to stderr >&2",
                         {"--model-name", "Demo-Model"});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 0);
  CHECK(Str(o.result, "status") == "PASSED");
  CHECK(o.result["exit_code"].GetInt() == 0);
  CHECK(o.result["signal"].IsNull());
  // The work dir is <root>/work_dirs/<model>_<YYYYmmdd_HHMMSS> and holds the files.
  CHECK_THAT(o.work_dir, Catch::StartsWith(root.path() + "/work_dirs/demo_model_"));
  CHECK(Str(o.result, "work_dir") == o.work_dir);
  CHECK(Str(o.result, "log_file") == o.work_dir + "/demo_model_local.log");
  CHECK_FALSE(ReadTextFile(o.work_dir + "/job_spec.json").empty());
  // Job output on stdout and in the log, byte for byte; the summary on stderr.
  CHECK(o.log == "hello from the job\nto stderr\n");
  CHECK(o.run.stdout_text == o.log);
  CHECK_THAT(o.run.stderr_text, Catch::Contains("PASSED"));
  CHECK(o.result["log_bytes_written"].GetUint64() == o.log.size());
  CHECK(o.result["log_bytes_read"].GetUint64() == o.log.size());
  REQUIRE(o.result["log_tail"].IsArray());
  REQUIRE(o.result["log_tail"].Size() == 2);
  CHECK(std::string(o.result["log_tail"][1].GetString()) == "to stderr");
  CHECK(o.result["duration_seconds"].GetDouble() >= 0);
  CHECK(Str(o.result, "command") == "echo hello from the job; echo to stderr >&2");
  CHECK(Str(o.result, "scenario") == "local_direct");
  CHECK(Str(o.result, "model_name") == "demo_model");
}

TEST_CASE("local_direct CLI: exit 3 is FAILED, exit code 1, result exit_code 3",
          "[local_direct][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, "echo about to fail; exit 3");
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 1);
  CHECK(Str(o.result, "status") == "FAILED");
  CHECK(o.result["exit_code"].GetInt() == 3);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("code 3"));
}

TEST_CASE("local_direct CLI: an OOM message with a failing exit is OUT_OF_MEMORY",
          "[local_direct][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, "echo 'torch.OutOfMemoryError: CUDA out of memory.'; exit 1");
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 7);
  CHECK(Str(o.result, "status") == "OUT_OF_MEMORY");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("CUDA out of memory"));
}

TEST_CASE("local_direct CLI: --monitor-timeout ends the job as TIMEOUT", "[local_direct][cli]") {
  TempDir root;
  std::string s = SleepArg(30);
  Outcome o = RunAndRead(root, "echo started; sleep " + s, {"--monitor-timeout", "2s"});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 4);
  CHECK(Str(o.result, "status") == "TIMEOUT");
  CHECK(o.result["monitor_timeout_seconds"].GetInt() == 2);
  CHECK(o.run.seconds >= 2.0);
  CHECK(o.run.seconds < 5.0);  // within ~3 s of the limit
  CHECK(o.log == "started\n");
  CHECK_FALSE(ProcessWithMarkerAlive("sleep " + s));
  KillProcessesWithMarker("sleep " + s);
}

TEST_CASE("local_direct CLI: 'Hang Detected' in the output is HANG_DETECTED",
          "[local_direct][cli]") {
  TempDir root;
  std::string s = SleepArg(30);
  Outcome o = RunAndRead(root, "echo step 1; echo 'NCCL watchdog: Hang Detected'; sleep " + s);
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 5);
  CHECK(Str(o.result, "status") == "HANG_DETECTED");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("NCCL watchdog: Hang Detected"));
  CHECK(o.run.seconds < 5.0);
  CHECK_FALSE(ProcessWithMarkerAlive("sleep " + s));
  KillProcessesWithMarker("sleep " + s);
}

TEST_CASE("local_direct CLI: SIGINT cancels the job, exit 130, child gone", "[local_direct][cli]") {
  TempDir root;
  std::string s = SleepArg(60);
  CliOptions options;
  options.signal = SIGINT;
  options.signal_after_seconds = 0.2;
  options.signal_when_process = "sleep " + s;
  Outcome o = RunAndRead(root, "sleep " + s, {}, options);
  INFO(o.run.Describe());
  REQUIRE(o.run.signal_sent);
  CHECK(o.run.exit_code == 130);
  CHECK(Str(o.result, "status") == "CANCELLED");
  CHECK(Str(o.result, "cancelled_by") == "SIGINT");
  CHECK(o.result["user_interrupt"].GetBool());
  CHECK(o.run.seconds - o.run.signal_sent_at < 3.0);
  CHECK_FALSE(ProcessWithMarkerAlive("sleep " + s));
  KillProcessesWithMarker("sleep " + s);
}

TEST_CASE("local_direct CLI: SIGTERM cancels the job, exit 6", "[local_direct][cli]") {
  TempDir root;
  std::string s = SleepArg(60);
  CliOptions options;
  options.signal = SIGTERM;
  options.signal_when_process = "sleep " + s;
  Outcome o = RunAndRead(root, "sleep " + s, {}, options);
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 6);
  CHECK(Str(o.result, "status") == "CANCELLED");
  CHECK(Str(o.result, "cancelled_by") == "SIGTERM");
  CHECK_FALSE(o.result["user_interrupt"].GetBool());
  CHECK_FALSE(ProcessWithMarkerAlive("sleep " + s));
  KillProcessesWithMarker("sleep " + s);
}

TEST_CASE("local_direct CLI: the command string reaches bash -c unchanged", "[local_direct][cli]") {
  TempDir root;
  const std::string command =
      "X=\"double \\\"q\\\" and 'single'\"; echo \"$X\" | tr a-z A-Z\n"
      "echo 'it'\\''s $HOME literally' \"$(echo sub | rev)\" `printf back`\n"
      "printf '%s|' \"$TRTLLM_RUN_QUOTING_VAR\" $TRTLLM_RUN_QUOTING_VAR; echo\n"
      "echo \"cwd=$(pwd)\"; echo tab\\\there; echo \"multi\n"
      "line\"";
  CliOptions options;
  options.env = {{"TRTLLM_RUN_QUOTING_VAR", "a  b * 'c'"}};
  CliRun cli = RunCase(root, command, {}, options);
  INFO(cli.Describe());
  REQUIRE(cli.exit_code == 0);

  CliOptions direct = options;
  direct.program = "/bin/bash";
  direct.args = {"-c", command};
  direct.cwd = root.path();
  CliRun bash = RunCli(direct);
  REQUIRE(bash.exit_code == 0);
  CHECK(cli.stdout_text == bash.stdout_text);
  CHECK_THAT(cli.stdout_text, Catch::Contains("cwd=" + root.path()));
  CHECK_THAT(cli.stdout_text, Catch::Contains("DOUBLE \"Q\" AND 'SINGLE'"));
}

TEST_CASE("local_direct CLI: --custom-env values reach the command", "[local_direct][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, "printf '%s|%s|' \"$FOO\" \"$BAZ\"; env | grep -c '^BAZ=x y$'",
                         {"--custom-env", "FOO=bar BAZ=\"x y\""});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 0);
  CHECK(o.run.stdout_text == "bar|x y|1\n");
  CHECK(o.log == "bar|x y|1\n");
}

TEST_CASE("local_direct CLI: a background grandchild is gone after the verdict",
          "[local_direct][cli]") {
  TempDir root;
  std::string s = SleepArg(100);
  Outcome o = RunAndRead(root, "sleep " + s + " & echo started background");
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 0);
  CHECK(Str(o.result, "status") == "PASSED");
  CHECK(o.run.stdout_text == "started background\n");
  CHECK_FALSE(ProcessWithMarkerAlive("sleep " + s));
  KillProcessesWithMarker("sleep " + s);
}

TEST_CASE("local_direct CLI: large output is complete on stdout, in the log and the tail",
          "[local_direct][cli]") {
  TempDir root;
  Outcome o = RunAndRead(root, "seq 1 200000");
  INFO(o.run.Describe().substr(0, 2000));
  CHECK(o.run.exit_code == 0);
  std::string expected;
  for (int i = 1; i <= 200000; ++i) expected += std::to_string(i) + "\n";
  CHECK(o.log.size() == expected.size());
  CHECK((o.log == expected));
  CHECK((o.run.stdout_text == expected));
  CHECK(o.result["log_bytes_read"].GetUint64() == expected.size());
  REQUIRE(o.result["log_tail"].Size() == 20);
  CHECK(std::string(o.result["log_tail"][19].GetString()) == "200000");
  CHECK(std::string(o.result["log_tail"][0].GetString()) == "199981");
}

}  // namespace
}  // namespace trtllm_run_test
