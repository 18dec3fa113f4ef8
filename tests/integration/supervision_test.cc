// The supervision loop through the real CLI: a local job's end is seen at once (not at
// a poll interval), the live progress line on a terminal and plain lines in pipes, and
// output that cannot be written to the terminal is reported in result.json.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::vector<std::string> RunArgs(const TempDir& root, const std::string& command) {
  return {"run", "--scenario", "local_direct", "--custom-cmd", command, "--repo-root", root.path()};
}

// Runs trtllm-run with `args` through a shell command line: `TRTLLM_RUN_BIN args...` +
// `suffix` (a redirection), or under script(1) (a pseudo-terminal) when `on_terminal`.
CliRun RunThroughShell(const std::vector<std::string>& args, const std::string& suffix,
                       bool on_terminal) {
  std::string command = Quote(TRTLLM_RUN_BIN);
  for (const std::string& arg : args) command += " " + Quote(arg);
  command += suffix;
  CliOptions options;
  options.program = "/usr/bin/env";
  options.args = on_terminal ? std::vector<std::string>{"script", "-qec", command, "/dev/null"}
                             : std::vector<std::string>{"bash", "-c", command};
  options.timeout_seconds = 60;
  return RunCli(options);
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

std::string Errors(const rapidjson::Value& doc) {
  std::string all;
  if (doc.HasMember("errors") && doc["errors"].IsArray()) {
    for (const auto& e : doc["errors"].GetArray()) all += std::string(e.GetString()) + "\n";
  }
  return all;
}

TEST_CASE("supervision: the end of a job that closed its output is seen at once, not polled",
          "[local_direct][cli][supervision]") {
  // The output pipe reaches EOF at once; only the process's own end tells that it is
  // over 0.1 s later. A poll-interval loop sees it at its next 0.5 s tick.
  TempDir root;
  CliOptions options;
  options.args = RunArgs(root, "exec >/dev/null 2>&1; sleep 0.1");
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document result = ReadResultJson(FindSingleWorkDir(root.path()));
  REQUIRE(result.IsObject());
  CHECK(Str(result, "status") == "PASSED");
  double seconds = result["duration_seconds"].GetDouble();
  CHECK(seconds >= 0.1);
  CHECK(seconds < 0.4);
}

TEST_CASE("supervision: `run --custom-cmd true` costs no poll interval",
          "[local_direct][cli][supervision]") {
  for (int i = 0; i < 8; ++i) {
    TempDir root;
    CliOptions options;
    options.args = RunArgs(root, "true");
    options.timeout_seconds = 60;
    CliRun run = RunCli(options);
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    rapidjson::Document result = ReadResultJson(FindSingleWorkDir(root.path()));
    REQUIRE(result.IsObject());
    CHECK(result["duration_seconds"].GetDouble() < 0.3);
  }
}

TEST_CASE("supervision: local_direct draws one live status line on a terminal",
          "[local_direct][cli][supervision][progress]") {
  TempDir root;
  CliRun live = RunThroughShell(RunArgs(root, "echo first; sleep 2.5; echo second"), "", true);
  INFO(live.Describe());
  CHECK(live.exit_code == 0);
  // Redrawn in place: carriage return + erase line, then state, elapsed/limit, pid, the
  // last log line; at least two draws (elapsed 0s, then later).
  const std::string redraw = "\r\033[K[local_direct] running ";
  std::size_t first = live.stdout_text.find(redraw);
  REQUIRE(first != std::string::npos);
  CHECK(live.stdout_text.find(redraw, first + 1) != std::string::npos);
  CHECK_THAT(live.stdout_text, Catch::Contains(" / 1h00m00s limit | pid "));
  CHECK_THAT(live.stdout_text, Catch::Contains("| first"));
  CHECK_THAT(live.stdout_text, Catch::Contains("second\r\n"));
}

TEST_CASE("supervision: piped, local_direct progress is plain lines without control characters",
          "[local_direct][cli][supervision][progress]") {
  TempDir root;
  CliOptions options;
  options.args = RunArgs(root, "echo first; sleep 1; echo second");
  options.timeout_seconds = 60;
  CliRun plain = RunCli(options);
  INFO(plain.Describe());
  CHECK(plain.exit_code == 0);
  CHECK_THAT(plain.stderr_text, Catch::Contains("\n[local_direct] running 0s / 1h00m00s limit"));
  for (char c : plain.stderr_text + plain.stdout_text) {
    INFO("control character " << static_cast<int>(c));
    CHECK((c == '\n' || static_cast<unsigned char>(c) >= 0x20));
  }
  CHECK(plain.stdout_text == "first\nsecond\n");  // progress never in the job's output
}

TEST_CASE("supervision: output the terminal cannot take is reported, not dropped",
          "[local_direct][cli][supervision]") {
  TempDir root;
  // stdout (the job's terminal) is /dev/full: every write fails with ENOSPC.
  CliRun run = RunThroughShell(RunArgs(root, "echo kept in the log"), " >/dev/full", false);
  INFO(run.Describe());
  rapidjson::Document result = ReadResultJson(FindSingleWorkDir(root.path()));
  REQUIRE(result.IsObject());
  CHECK(Str(result, "status") == "PASSED");
  CHECK(ReadTextFile(Str(result, "log_file")) == "kept in the log\n");
  CHECK_THAT(Errors(result), Catch::Contains("writing the job's output to the terminal failed"));
  CHECK_THAT(Errors(result), Catch::Contains("No space left on device"));
}

}  // namespace
}  // namespace trtllm_run_test
