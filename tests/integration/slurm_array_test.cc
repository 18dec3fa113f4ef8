// `run --cases` with TRTLLM_RUN_SLURM_ARRAYS=1 on the real test cluster: cases of one
// shape are tasks of ONE job array, each task running its own case's script and judged
// through the array's records; a case of another shape is a plain job.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

rapidjson::Document ReadCombined(const std::string& repo) {
  std::string found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind("cases_", 0) == 0) found = entry.path().string();
  }
  return ReadResultJson(found);
}

std::vector<std::string> ArrayArgs(const std::string& repo) {
  return {"run",
          "--cases",
          repo + "/cases.yaml",
          "--scenario",
          "local_slurm",
          "--repo-root",
          repo,
          "--partition",
          "batch",
          "--skip-install",
          "true",
          "--container-runtime",
          "none",
          "--container-image",
          "none",
          "--kill-grace",
          "5"};
}

// `text` as a YAML single-quoted scalar.
std::string YamlQuoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

TEST_CASE(
    "run --cases with arrays: 4 same-shape cases are one array of 4 tasks and the odd "
    "one a plain job and every verdict is right",
    "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array");
  const std::string marker = UniqueMarker("arr");
  // A name with shell metacharacters: it must reach neither a shell nor sbatch unquoted.
  const std::string odd_name = marker + "_$(touch pwned1) `touch pwned2`;x'\"";
  std::map<std::string, std::string> expected = {{marker + "_pass1", "PASSED"},
                                                 {marker + "_pass2", "PASSED"},
                                                 {odd_name, "FAILED"},
                                                 {marker + "_hang", "TIMEOUT"},
                                                 {marker + "_other", "PASSED"}};
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n"
                "  - {name: " +
                    marker + "_pass1, model_name: " + marker +
                    "_p1, custom_cmd: 'echo ok one'}\n"
                    "  - {name: " +
                    marker + "_pass2, model_name: " + marker +
                    "_p2, custom_cmd: 'echo ok two'}\n"
                    "  - {name: " +
                    YamlQuoted(odd_name) + ", model_name: " + marker +
                    "_f, custom_cmd: 'echo failing; exit 3'}\n"
                    "  - {name: " +
                    marker + "_hang, model_name: " + marker +
                    "_t, custom_cmd: 'echo started; sleep 300', monitor_timeout: 6s}\n"
                    "  - {name: " +
                    marker + "_other, model_name: " + marker +
                    "_o, custom_cmd: 'echo other shape', time_limit: '7'}\n");
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code != 0);
  CHECK(run.exit_code != 2);

  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 5);
  std::set<std::string> arrays;
  std::string plain;
  int tasks = 0;
  for (const auto& item : combined["cases"].GetArray()) {
    const std::string name = Str(item, "name");
    INFO(name + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == expected[name]);
    const std::string id = Str(item, "job_id");
    const std::string work_dir = Str(item, "work_dir");
    CHECK(WaitForFileText(work_dir + "/slurm_job_id", 1) == id);
    CHECK(JobActiveStates(id).empty());
    if (name == marker + "_other") {
      plain = id;
      CHECK(id.find('_') == std::string::npos);
      continue;
    }
    REQUIRE(id.find('_') != std::string::npos);
    arrays.insert(id.substr(0, id.find('_')));
    ++tasks;
    // Each task ran its own case's script and wrote where that case's verdict looked.
    const std::string log = ReadTextFile(Str(item["result"], "log_file"));
    if (name == marker + "_pass1") CHECK(log.find("ok one") != std::string::npos);
    if (name == marker + "_pass2") CHECK(log.find("ok two") != std::string::npos);
    if (name == odd_name) CHECK(log.find("failing") != std::string::npos);
  }
  CHECK(tasks == 4);
  REQUIRE(arrays.size() == 1);
  CHECK(!plain.empty());
  const std::string array_id = *arrays.begin();
  // Accounting shows one array job with 4 task rows (ARRAY_0 ...; slurmdbd may keep the
  // last task under the array's own row, ARRAY_[1-3%32]).
  std::string listed;
  int rows = 0;
  for (int tries = 0; tries < 20 && rows < 4; ++tries) {
    if (tries > 0) Shell("sleep 0.5");
    listed = Shell("sacct -n -X -P -j " + array_id + " -o JobID");
    rows = 0;
    for (std::size_t at = 0; (at = listed.find(array_id + "_", at)) != std::string::npos; ++at) {
      ++rows;
    }
  }
  INFO(listed);
  CHECK(rows == 4);
  CHECK(listed.find(array_id + "_0\n") != std::string::npos);
  // Two submissions: the array and the odd one.
  REQUIRE(combined["sessions"].Size() == 1);
  CHECK(Str(combined["sessions"][0]["stats"], "submits") == "2");
  CHECK(Str(combined["sessions"][0]["stats"], "arrays") == "1");
  // No shell ever ran the name's metacharacters.
  CHECK(Shell("find " + trtllm_run::ShellQuote(repo.path()) + " -name 'pwned*' | wc -l") == "0\n");
}

TEST_CASE("run --cases with arrays: scancel of one case's task cancels that case alone",
          "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_cancel");
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n"
                "  - {name: a, model_name: ca, custom_cmd: 'echo a; sleep $((600 + 71))'}\n"
                "  - {name: b, model_name: cb, custom_cmd: 'echo b; sleep 8'}\n");
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.timeout_seconds = 180;
  // Cancel case a's work dir (its task) from outside once it runs.
  // Cancel case a's task (ARRAY_0, from its work dir) with scancel once it runs.
  const std::string cancel_log = repo.path() + "/cancel.log";
  const std::string canceller =
      "(for i in $(seq 240); do d=$(ls -d " + trtllm_run::ShellQuote(repo.path()) +
      "/work_dirs/ca_* 2>/dev/null | head -1); if [ -s \"$d/slurm_job_id\" ] && "
      "pgrep -f 'sleep 67[1]' >/dev/null; then id=$(cat \"$d/slurm_job_id\"); echo $id; "
      "scancel -- \"$id\"; exit 0; fi; sleep 0.5; done) </dev/null >" +
      cancel_log + " 2>&1 &";
  Shell(canceller);
  CliRun run = RunCli(options);
  INFO(run.Describe());
  INFO("cancelled: " + ReadTextFile(cancel_log));
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  std::map<std::string, std::string> status;
  for (const auto& item : combined["cases"].GetArray()) {
    status[Str(item, "name")] = Str(item, "status");
    CHECK(Str(item, "job_id").find('_') != std::string::npos);
  }
  CHECK(status["a"] == "CANCELLED");
  CHECK(status["b"] == "PASSED");
  CHECK(ReadTextFile(cancel_log).find("_0") != std::string::npos);
  CHECK(WaitNoProcessWithMarker("sleep 671", 10));
}

namespace {

// The accounting row of one array task: "STATE" of `sacct -X -j TASK` ("" when none yet).
std::string TaskAccountingState(const std::string& task_id) {
  std::string state;
  for (int tries = 0; tries < 20 && state.empty(); ++tries) {
    if (tries > 0) Shell("sleep 0.5");
    state = Shell("sacct -n -X -P -j " + task_id + " -o State | head -n 1");
    while (!state.empty() && (state.back() == '\n' || state.back() == ' ')) state.pop_back();
  }
  return state;
}

}  // namespace

TEST_CASE(
    "run --cases with arrays: a task silent past silence_timeout is HANG_DETECTED and its "
    "task alone is scancelled",
    "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_silence");
  const std::string marker = UniqueMarker("arsil");
  // Both cases share a shape (one array); the first goes silent after one line.
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n"
                "  - {name: quiet, model_name: " +
                    marker +
                    "_q, custom_cmd: 'echo started; sleep $((600 + 73))', silence_timeout: 5s}\n"
                    "  - {name: chatty, model_name: " +
                    marker +
                    "_c, custom_cmd: 'for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 1; "
                    "done', silence_timeout: 5s}\n");
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 5);  // HANG_DETECTED
  CHECK(run.seconds < 90);    // the watchdog, not the 673 s sleep
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 2);
  std::map<std::string, std::string> status, ids;
  for (const auto& item : combined["cases"].GetArray()) {
    const std::string name = Str(item, "name");
    INFO(name + ": " + Str(item["result"], "reason"));
    status[name] = Str(item, "status");
    ids[name] = Str(item, "job_id");
    CHECK(ids[name].find('_') != std::string::npos);  // a task of the array
    if (name == "quiet") {
      CHECK(Str(item["result"], "reason").find("no output for 5s") != std::string::npos);
    }
  }
  CHECK(status["quiet"] == "HANG_DETECTED");
  CHECK(status["chatty"] == "PASSED");
  REQUIRE(ids["quiet"].substr(0, ids["quiet"].find('_')) ==
          ids["chatty"].substr(0, ids["chatty"].find('_')));
  // Its task was cancelled (not the array): accounting says so, and the payload is gone.
  CHECK(JobActiveStates(ids["quiet"]).empty());
  CHECK(TaskAccountingState(ids["quiet"]).rfind("CANCELLED", 0) == 0);
  CHECK(TaskAccountingState(ids["chatty"]) == "COMPLETED");
  CHECK(run.stderr_text.find("scancel " + ids["quiet"] + ":") != std::string::npos);
  CHECK(WaitNoProcessWithMarker("sleep 673", 10));
}

TEST_CASE(
    "run --cases with arrays: tasks held by the array's throttle show their pending reason "
    "and each result has the task's sacct start and end",
    "[slurm][cli][multi][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_times");
  const std::string marker = UniqueMarker("artime");
  std::string yaml = "cases:\n";
  for (int i = 0; i < 3; ++i) {
    yaml += "  - {name: t" + std::to_string(i) + ", model_name: " + marker + "_" +
            std::to_string(i) + ", custom_cmd: 'sleep 2; echo done " + std::to_string(i) + "'}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  CliOptions options;
  options.args = ArrayArgs(repo.path());
  options.args.insert(options.args.end(), {"--max-parallel", "1"});  // --array=0-2%1
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  // The tasks the throttle holds wait with Slurm's own reason, named on the progress lines.
  CHECK(run.stderr_text.find("PENDING (JobArrayTaskLimit)") != std::string::npos);
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  std::vector<std::pair<std::string, std::string>> spans;
  for (const auto& item : combined["cases"].GetArray()) {
    const rapidjson::Value& result = item["result"];
    const std::string id = Str(item, "job_id");
    INFO(Str(item, "name") + " " + id);
    CHECK(Str(item, "status") == "PASSED");
    REQUIRE(result.HasMember("details"));
    const std::string start = Str(result["details"], "slurm_start");
    const std::string end = Str(result["details"], "slurm_end");
    // What accounting says of this very task.
    std::string acct = Shell("sacct -n -X -P -j " + id + " -o Start,End | head -n 1");
    while (!acct.empty() && acct.back() == '\n') acct.pop_back();
    CHECK(acct == start + "|" + end);
    CHECK(start.size() == 19);  // 2026-12-02T15:50:00
    CHECK(end.size() == 19);
    CHECK(start <= end);
    spans.emplace_back(start, end);
  }
  // One task at a time: each started no earlier than the previous one ended.
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first);
}

TEST_CASE(
    "run --repeat with arrays: the repeats are tasks of one array and the summary counts "
    "every one",
    "[slurm][cli][repeat][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_repeat");
  const std::string run_dir = repo.path() + "/repeat_run";
  CliOptions options;
  // Run 2 and 4 fail: each task runs its own repeat's script (its own index).
  options.args = {"run",
                  "--scenario",
                  "local_slurm",
                  "--repo-root",
                  repo.path(),
                  "--partition",
                  "batch",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--custom-cmd",
                  "echo run $TRTLLM_RUN_REPEAT_INDEX; case $TRTLLM_RUN_REPEAT_INDEX in 2|4) "
                  "exit 1 ;; esac",
                  "--repeat",
                  "5",
                  "--run-dir",
                  run_dir,
                  "--history",
                  repo.path() + "/history.sqlite"};
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK(run.stderr_text.find("3/5 passed") != std::string::npos);
  rapidjson::Document combined = ReadResultJson(run_dir);
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 5);
  std::set<std::string> arrays, tasks;
  for (const auto& item : combined["cases"].GetArray()) {
    const std::string id = Str(item, "job_id");
    REQUIRE(id.find('_') != std::string::npos);
    arrays.insert(id.substr(0, id.find('_')));
    tasks.insert(id);
    const std::string log = ReadTextFile(Str(item["result"], "log_file"));
    INFO(id + ": " + log);
    const bool fails =
        log.find("run 2") != std::string::npos || log.find("run 4") != std::string::npos;
    CHECK(Str(item, "status") == (fails ? "FAILED" : "PASSED"));
  }
  CHECK(arrays.size() == 1);
  CHECK(tasks.size() == 5);
  REQUIRE(combined["sessions"].Size() == 1);
  CHECK(Str(combined["sessions"][0]["stats"], "arrays") == "1");
  CHECK(Str(combined["sessions"][0]["stats"], "submits") == "1");
  REQUIRE(combined.HasMember("repeat"));
  CHECK(combined["repeat"][0]["runs"].GetInt() == 5);
  CHECK(combined["repeat"][0]["passed"].GetInt() == 3);
}

TEST_CASE(
    "run --cases --reuse-passed with arrays: reused cases are never submitted and the rest "
    "are one array",
    "[slurm][cli][reuse][slurm_array]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_reuse");
  const std::string count = repo.path() + "/count";
  fs::create_directories(count);
  std::string yaml = "cases:\n";
  for (const char* name : {"pass_a", "pass_b", "fail_c", "fail_d"}) {
    const std::string n(name);
    yaml += "  - {name: " + n + ", model_name: m_" + n + ", custom_cmd: 'echo x >> " + count + "/" +
            n + (n.rfind("fail", 0) == 0 ? "; exit 1" : "") + "'}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  int status = -1;
  Shell("cd " + trtllm_run::ShellQuote(repo.path()) +
            " && git init -q && git add -A && git -c user.name=t -c user.email=t@example.com "
            "commit -q -m first",
        &status);
  REQUIRE(status == 0);
  auto cases = [&](const std::string& dir) {
    CliOptions options;
    options.args = ArrayArgs(repo.path());
    options.args.insert(options.args.end(), {"--run-dir", repo.path() + "/" + dir, "--history",
                                             repo.path() + "/history.sqlite", "--reuse-passed"});
    options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
    options.cwd = repo.path();
    options.timeout_seconds = 180;
    return RunCli(options);
  };
  CliRun first = cases("first");
  INFO(first.Describe());
  CHECK(first.exit_code == 1);
  CliRun second = cases("second");
  INFO(second.Describe());
  CHECK(second.exit_code == 1);
  for (const char* name : {"pass_a", "pass_b"}) CHECK(ReadTextFile(count + "/" + name) == "x\n");
  for (const char* name : {"fail_c", "fail_d"}) CHECK(ReadTextFile(count + "/" + name) == "x\nx\n");
  rapidjson::Document combined = ReadResultJson(repo.path() + "/second");
  REQUIRE(combined.IsObject());
  std::map<std::string, std::string> statuses;
  std::set<std::string> arrays;
  for (const auto& item : combined["cases"].GetArray()) {
    statuses[Str(item, "name")] = Str(item, "status");
    const std::string id = Str(item, "job_id");
    if (Str(item, "status") == "SKIPPED") {
      CHECK(id.empty());  // never submitted
    } else {
      REQUIRE(id.find('_') != std::string::npos);
      arrays.insert(id.substr(0, id.find('_')));
    }
  }
  CHECK(statuses == std::map<std::string, std::string>{{"pass_a", "SKIPPED"},
                                                       {"pass_b", "SKIPPED"},
                                                       {"fail_c", "FAILED"},
                                                       {"fail_d", "FAILED"}});
  CHECK(arrays.size() == 1);
  REQUIRE(combined["sessions"].Size() == 1);
  CHECK(Str(combined["sessions"][0]["stats"], "submits") == "1");
  CHECK(Str(combined["sessions"][0]["stats"], "jobs") == "2");
}

TEST_CASE(
    "run --cases with arrays on a terminal: the live board counts queued running and done "
    "tasks with Slurm's pending reason (pty via script)",
    "[slurm][cli][multi][slurm_array][pty]") {
  EnsureSlurm();
  TempDir repo("trtllm_array_board");
  const std::string marker = UniqueMarker("arboard");
  std::string yaml = "cases:\n";
  for (int i = 0; i < 3; ++i) {
    yaml += "  - {name: b" + std::to_string(i) + ", model_name: " + marker + "_" +
            std::to_string(i) + ", custom_cmd: 'sleep 4; echo done'}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  std::string command = "stty cols 200 rows 40; exec " + std::string(TRTLLM_RUN_BIN);
  std::vector<std::string> args = ArrayArgs(repo.path());
  args.insert(args.end(), {"--max-parallel", "1", "--no-history"});  // --array=0-2%1
  for (const std::string& arg : args) command += " " + trtllm_run::ShellQuote(arg);
  const std::string transcript = repo.path() + "/typescript";
  CliOptions options;
  options.program = "/usr/bin/script";
  options.args = {"-qefc", command, transcript};
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", "1"}};
  options.cwd = repo.path();
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string screen = ReadTextFile(transcript);
  INFO(screen);
  // Before: an all-array run drew no board at all (only the scheduler's cases had one).
  // While task 0 runs, the throttle holds the other two in Slurm's queue.
  CHECK(std::regex_search(screen, std::regex("\\[cases\\] running 1, pending 2, done 0/3 "
                                             "\\(Slurm: 2 JobArrayTaskLimit\\)")));
  // Later boards count the verdicts (a task is done once judged).
  CHECK(std::regex_search(screen, std::regex("\\[cases\\] running [01], pending [0-9], done "
                                             "[12]/3")));
  // Never more running than the throttle lets run.
  CHECK_FALSE(std::regex_search(screen, std::regex("\\[cases\\] running [2-9]")));
}
