// `trtllm-run run --cases FILE` through the real binary: many cases planned first (a bad
// one stops everything before any work dir or job exists), run within the concurrency
// bounds, Slurm jobs followed by ONE shared watcher, the combined reports, Ctrl-C.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString() : "<missing>";
}

// The combined result.json of the run: the only cases_* dir under work_dirs.
rapidjson::Document ReadCombined(const std::string& repo, std::string* run_dir = nullptr) {
  std::string found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind("cases_", 0) == 0) found = entry.path().string();
  }
  if (run_dir) *run_dir = found;
  return ReadResultJson(found);
}

std::vector<std::string> WorkDirs(const std::string& repo) {
  std::vector<std::string> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(repo + "/work_dirs", error)) {
    if (entry.path().filename().string().rfind("cases_", 0) != 0) {
      dirs.push_back(entry.path().string());
    }
  }
  return dirs;
}

std::map<std::string, int> Counts(const rapidjson::Value& combined) {
  std::map<std::string, int> counts;
  for (const auto& item : combined["cases"].GetArray()) ++counts[Str(item, "status")];
  return counts;
}

// Max number of [start, end] intervals open at once, from "start T" / "end T" lines.
int MaxOverlap(const std::string& events) {
  std::vector<std::pair<long long, int>> points;
  std::istringstream in(events);
  std::string kind;
  long long at;
  while (in >> kind >> at) points.push_back({at, kind == "start" ? 1 : -1});
  std::sort(points.begin(), points.end());  // an end before a start at the same instant
  int open = 0, most = 0;
  for (const auto& point : points) most = std::max(most, open += point.second);
  return most;
}

}  // namespace

TEST_CASE("run --cases: local_direct cases within --max-parallel-local, table, JSON, JUnit",
          "[cli][multi]") {
  TempDir repo("trtllm_cases");
  const std::string events = repo.path() + "/events";
  std::string record = "echo start $(date +%s%N) >> " + events + "; sleep 1; echo end $(date " +
                       "+%s%N) >> " + events;
  WriteTextFile(repo.path() + "/cases.yaml",
                "defaults:\n  scenario: local_direct\n  monitor_timeout: 1m\ncases:\n"
                "  - {name: one, custom_cmd: '" +
                    record +
                    "'}\n"
                    "  - {name: two, custom_cmd: '" +
                    record +
                    "'}\n"
                    "  - {name: three, custom_cmd: '" +
                    record +
                    "; exit 1'}\n"
                    "  - {name: four, custom_cmd: '" +
                    record + "'}\n");
  const std::string junit = repo.path() + "/junit.xml";
  CliRun run = RunCli({"run", "--cases", repo.path() + "/cases.yaml", "--repo-root", repo.path(),
                       "--max-parallel-local", "2", "--junit", junit, "--json"});
  INFO(run.Describe());
  CHECK(run.exit_code == 1);  // FAILED is the most severe verdict
  CHECK(MaxOverlap(ReadTextFile(events)) == 2);

  // The table on stderr, the combined JSON on stdout and in the run dir.
  CHECK(run.stderr_text.find("job id") != std::string::npos);
  CHECK(run.stderr_text.find("4 cases: FAILED 1 PASSED 3") != std::string::npos);
  rapidjson::Document printed;
  printed.Parse(run.stdout_text.c_str());
  REQUIRE(!printed.HasParseError());
  std::string run_dir;
  rapidjson::Document combined = ReadCombined(repo.path(), &run_dir);
  REQUIRE(combined.IsObject());
  CHECK(Str(printed, "run_dir") == run_dir);
  CHECK(combined["exit_code"].GetInt() == 1);
  CHECK(combined["max_parallel_local"].GetInt() == 2);
  CHECK(combined["counts"]["PASSED"].GetInt() == 3);
  CHECK(combined["counts"]["FAILED"].GetInt() == 1);
  REQUIRE(combined["cases"].Size() == 4);
  const rapidjson::Value& third = combined["cases"][2];
  CHECK(Str(third, "name") == "three");
  CHECK(Str(third, "status") == "FAILED");
  CHECK(Str(third, "scenario") == "local_direct");

  // Each case has its own work dir with job_spec.json and result.json, as single runs.
  std::vector<std::string> dirs = WorkDirs(repo.path());
  CHECK(dirs.size() == 4);
  for (const auto& item : combined["cases"].GetArray()) {
    std::string work_dir = Str(item, "work_dir");
    CHECK(fs::exists(work_dir + "/job_spec.json"));
    rapidjson::Document own = ReadResultJson(work_dir);
    REQUIRE(own.IsObject());
    CHECK(Str(own, "status") == Str(item, "status"));
  }
  std::string xml = ReadTextFile(junit);
  CHECK(xml.find("tests=\"4\" failures=\"1\"") != std::string::npos);
  CHECK(xml.find("name=\"three\"") != std::string::npos);
}

TEST_CASE("run --cases: a plain list of test ids with shared options", "[cli][multi]") {
  TempDir repo("trtllm_cases");
  TempDir bin("trtllm_cases_bin");
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_a.py",
                "def test_ok():\n    pass\n\ndef test_bad():\n    assert False\n");
  // A pytest stand-in: passes test_ok, fails anything else.
  WriteTextFile(bin.path() + "/pytest",
                "#!/bin/bash\ncase \"$*\" in\n"
                "  *test_ok*) echo \"$* PASSED\"; echo '1 passed in 0.01s'; exit 0;;\n"
                "  *) echo \"FAILED $* - assert False\"; echo '1 failed in 0.01s'; exit 1;;\n"
                "esac\n");
  ::chmod((bin.path() + "/pytest").c_str(), 0755);
  WriteTextFile(repo.path() + "/ids.txt",
                "# smoke list\n\ntests/test_a.py::test_ok\ntests/test_a.py::test_bad   # known\n");
  CliOptions options;
  options.args = {"run",        "--cases",        repo.path() + "/ids.txt",
                  "--scenario", "local_direct",   "--repo-root",
                  repo.path(),  "--skip-install", "true"};
  options.cwd = repo.path();
  options.env = {{"PATH", bin.path() + ":" + std::string(::getenv("PATH"))}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 2);
  CHECK(Str(combined["cases"][0], "name") == "tests/test_a.py::test_ok");
  CHECK(Str(combined["cases"][0], "status") == "PASSED");
  CHECK(Str(combined["cases"][1], "name") == "tests/test_a.py::test_bad");
  CHECK(Str(combined["cases"][1], "status") == "FAILED");
  CHECK(Str(combined["cases"][1], "origin").find("ids.txt:4") != std::string::npos);
}

TEST_CASE("run --cases: bad cases files are exit 2 before anything is written", "[cli][multi]") {
  TempDir repo("trtllm_cases");
  WriteTextFile(repo.path() + "/cases.yaml",
                "- {custom_cmd: 'echo ok', scenario: local_direct}\n"
                "- {custom_cmd: 'echo ok', scenario: local_direct, requird_devices: 2}\n");
  CliRun run = RunCli({"run", "--cases", repo.path() + "/cases.yaml", "--repo-root", repo.path()});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("cases.yaml:2") != std::string::npos);
  CHECK(run.stderr_text.find("requird_devices") != std::string::npos);
  CHECK(!fs::exists(repo.path() + "/work_dirs"));

  CliRun missing = RunCli({"run", "--cases", repo.path() + "/nope.yaml"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.stderr_text.find("nope.yaml") != std::string::npos);
  CliRun zero = RunCli({"run", "--cases", repo.path() + "/cases.yaml", "--max-parallel", "0"});
  CHECK(zero.exit_code == 2);
  CliRun stray = RunCli({"run", "--custom-cmd", "echo", "--max-parallel", "3"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.stderr_text.find("need --cases") != std::string::npos);
}

// ---- On the test cluster ----

namespace {

std::vector<std::string> SlurmArgs(const std::string& repo, const std::string& cases) {
  return {"run",
          "--cases",
          cases,
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

// Jobs of this user whose name contains `marker`, in the queue or in accounting.
std::string JobsNamed(const std::string& marker) {
  return Shell(
      "{ squeue -h -u $(id -un) -o %j; sacct -n -X -S now-10minutes -o JobName%200; } "
      "2>/dev/null | grep -F " +
      trtllm_run::ShellQuote(marker) + " || true");
}

}  // namespace

TEST_CASE("run --cases: 30 Slurm cases, every verdict right, one shared watcher",
          "[slurm][cli][multi]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_slurm");
  TempDir bin("trtllm_cases_bin");
  // Every scontrol call is logged: the proof that one watcher asked for all jobs.
  const std::string real_scontrol = Shell("command -v scontrol | tr -d '\\n'");
  REQUIRE(!real_scontrol.empty());
  const std::string log = bin.path() + "/scontrol.log";
  WriteTextFile(bin.path() + "/scontrol",
                "#!/bin/bash\necho \"$*\" >> " + log + "\nexec " + real_scontrol + " \"$@\"\n");
  ::chmod((bin.path() + "/scontrol").c_str(), 0755);

  const std::string marker = UniqueMarker("mc30");
  std::map<std::string, std::string> expected;
  std::string yaml = "cases:\n";
  for (int i = 1; i <= 30; ++i) {
    std::string name = marker + "_" + std::to_string(i), command, status, extra;
    if (i % 10 == 3 || i % 10 == 6) {
      command = "echo working; exit 1", status = "FAILED";
    } else if (i == 9 || i == 19) {
      command = "echo started; sleep 300", status = "TIMEOUT", extra = ", monitor_timeout: 6s";
    } else if (i == 29) {
      command = "echo starting; echo 'NCCL watchdog: Hang Detected on rank 0'; sleep 300";
      status = "HANG_DETECTED";
    } else {
      command = "echo case " + std::to_string(i) + " ok", status = "PASSED";
    }
    expected[name] = status;
    yaml += "  - {name: " + name + ", model_name: " + name + ", custom_cmd: \"" + command + "\"" +
            extra + "}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  CliOptions options;
  options.args = SlurmArgs(repo.path(), repo.path() + "/cases.yaml");
  options.env = {{"PATH", bin.path() + ":" + std::string(::getenv("PATH"))}};
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 5);  // HANG_DETECTED is the most severe verdict present
  CHECK(run.seconds < 150);

  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 30);
  std::vector<std::string> ids;
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == expected[Str(item, "name")]);
    std::string id = Str(item, "job_id");
    CHECK(!id.empty());
    ids.push_back(id);
    CHECK(JobActiveStates(id).empty());
    CHECK(WaitForFileText(Str(item, "work_dir") + "/slurm_job_id", 1) == id);
  }
  CHECK(Counts(combined) ==
        std::map<std::string, int>{
            {"PASSED", 21}, {"FAILED", 6}, {"TIMEOUT", 2}, {"HANG_DETECTED", 1}});
  // One session, one watcher for all 30 jobs: the 30 cases share a shape, so they are the
  // 30 tasks of ONE job array (before job arrays by default: 30 sbatch calls).
  REQUIRE(combined["sessions"].Size() == 1);
  const rapidjson::Value& stats = combined["sessions"][0]["stats"];
  CHECK(Str(stats, "watchers") == "1");
  CHECK(Str(stats, "jobs") == "30");
  CHECK(Str(stats, "submits") == "1");
  CHECK(Str(stats, "arrays") == "1");
  CHECK(Str(stats, "plain_jobs") == "0");
  std::set<std::string> arrays;
  for (const std::string& id : ids) arrays.insert(id.substr(0, id.find('_')));
  CHECK(arrays.size() == 1);
  // The watcher's queries: batched ones ask the controller for all jobs at once (no id
  // argument); a watcher per case would only ever ask for its one job (`show job ID`).
  std::istringstream calls(ReadTextFile(log));
  std::string line;
  int batched = 0, single = 0;
  while (std::getline(calls, line)) {
    if (line == "--local -o show job") ++batched;
    if (line.rfind("--local -o show job ", 0) == 0) ++single;
  }
  INFO("batched " << batched << ", single-job " << single << "\n" << ReadTextFile(log));
  CHECK(batched >= 1);
  // One watcher asks about once a second at most, whatever the number of jobs; thirty
  // watchers would ask thirty times as often.
  CHECK(batched + single <= 2 * run.seconds + 10);
  CHECK(std::to_string(batched + single) == Str(stats, "controller_queries"));
}

TEST_CASE("run --cases: one bad case among good ones: exit 2, nothing submitted or written",
          "[slurm][cli][multi]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_slurm");
  const std::string marker = UniqueMarker("mcbad");
  WriteTextFile(repo.path() + "/cases.yaml",
                "- {model_name: " + marker +
                    "_a, custom_cmd: 'echo a'}\n"
                    "- {model_name: " +
                    marker +
                    "_b, custom_cmd: 'echo b', partition: no_such_part}\n"
                    "- {model_name: " +
                    marker + "_c, custom_cmd: 'echo c'}\n");
  CliRun run = RunCli(SlurmArgs(repo.path(), repo.path() + "/cases.yaml"));
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("cases.yaml:2 (case 2)") != std::string::npos);
  CHECK(run.stderr_text.find("no_such_part") != std::string::npos);
  CHECK(run.stderr_text.find("nothing was prepared or submitted") != std::string::npos);
  CHECK(!fs::exists(repo.path() + "/work_dirs"));
  CHECK(JobsNamed(marker).empty());
}

TEST_CASE("run --cases: Ctrl-C cancels every job: CANCELLED, exit 130, queue empty",
          "[slurm][cli][multi]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_slurm");
  WriteTextFile(repo.path() + "/cases.yaml",
                "- custom_cmd: 'echo one; sleep $((600 + 41))'\n"
                "- custom_cmd: 'echo two; sleep $((600 + 42))'\n"
                "- custom_cmd: 'echo three; sleep $((600 + 43))'\n"
                "- custom_cmd: 'echo four; sleep $((600 + 44))'\n");
  CliOptions options;
  options.args = SlurmArgs(repo.path(), repo.path() + "/cases.yaml");
  options.signal = SIGINT;
  options.signal_when_process = "sleep 64";  // a job runs (two fit on the cluster at once)
  options.timeout_seconds = 180;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.signal_sent);
  CHECK(run.exit_code == 130);
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 4);
  for (const auto& item : combined["cases"].GetArray()) {
    CHECK(Str(item, "status") == "CANCELLED");
    std::string id = Str(item, "job_id");
    if (!id.empty()) CHECK(JobActiveStates(id).empty());
  }
  for (const char* sleep : {"sleep 641", "sleep 642", "sleep 643", "sleep 644"}) {
    CHECK(WaitNoProcessWithMarker(sleep, 10));
  }
}

namespace {

// `text` as a YAML single-quoted scalar.
std::string YamlQuoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::optional<int> ExitCodeOf(const rapidjson::Value& item) {
  const rapidjson::Value& result = item["result"];
  if (!result.HasMember("exit_code") || !result["exit_code"].IsInt()) return std::nullopt;
  return result["exit_code"].GetInt();
}

}  // namespace

TEST_CASE(
    "run --cases: a job's own end line is not its end: forged, guessed, mid-line or early "
    "markers are not PASSED",
    "[slurm][cli][multi][end_marker]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_slurm");
  const std::string marker = UniqueMarker("mcend");
  const std::string line = "[trtllm-run] job finished with exit code 0";
  struct Case {
    std::string command;
    const char* status;
    std::optional<int> exit_code;
  };
  const std::vector<Case> cases = {
      // The case: PASSED in 2.4 s with the job still RUNNING, left unwatched.
      {"echo '" + line + "'; sleep 15; exit 1", "FAILED", 1},
      // A guessed token, an empty one.
      {"echo '" + line + " (token 00112233445566778899aabbccddeeff)'; echo '" + line +
           " (token )'; sleep 5; exit 3",
       "FAILED", 3},
      // The marker inside a line.
      {"echo 'x " + line + "'; sleep 5; exit 4", "FAILED", 4},
      // An end marker followed by the real failure at once.
      {"echo '" + line + "'; exit 5", "FAILED", 5},
      // A payload that learned the script's token from the batch script in its work dir
      // (a learned token is required: without one the command ends with 1, not 6): only
      // the scheduler's record of the job ends it.
      {"t=$(grep -ho '(token [0-9a-f]\\{32\\})' work_dirs/" + marker +
           "_4_*/*.slurm | tail -n 1); echo \"" + line + " $t\"; sleep 5; exit 6",
       "FAILED", 6},
      {"echo all good", "PASSED", 0},
  };
  std::string yaml = "cases:\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string name = marker + "_" + std::to_string(i);
    yaml += "  - {name: " + name + ", model_name: " + name +
            ", custom_cmd: " + YamlQuoted(cases[i].command) + "}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  CliOptions options;
  options.args = SlurmArgs(repo.path(), repo.path() + "/cases.yaml");
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK(run.seconds >= 15);  // the first case's verdict waited for its real end
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == cases.size());
  for (const auto& item : combined["cases"].GetArray()) {
    std::string name = Str(item, "name");
    std::size_t i = std::stoul(name.substr(name.rfind('_') + 1));
    INFO(name << " (" << cases[i].command << "): " << Str(item["result"], "reason") << "\n"
              << ReadTextFile(Str(item["result"], "log_file")));
    CHECK(Str(item, "status") == cases[i].status);
    CHECK(ExitCodeOf(item) == cases[i].exit_code);
    CHECK(JobActiveStates(Str(item, "job_id")).empty());  // none left running unwatched
  }
}

TEST_CASE("run --cases: a hang line then exit 0 is HANG_DETECTED on Slurm, every time",
          "[slurm][cli][multi][hang]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_slurm");
  const std::string marker = UniqueMarker("mchang");
  std::string yaml = "cases:\n";
  for (int i = 0; i < 5; ++i) {
    std::string name = marker + "_" + std::to_string(i);
    yaml += "  - {name: " + name + ", model_name: " + name +
            ", custom_cmd: \"echo 'hang detected'; exit 0\"}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", yaml);
  CliOptions options;
  options.args = SlurmArgs(repo.path(), repo.path() + "/cases.yaml");
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 5);
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 5);
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == "HANG_DETECTED");
    CHECK(Str(item["result"], "reason").find("hang detected") != std::string::npos);
  }
}

TEST_CASE(
    "run --cases: a Slurm job's end line frees its --max-parallel place before the "
    "controller confirms its end",
    "[slurm][cli][multi]") {
  EnsureSlurm();
  TempDir repo("trtllm_cases_place");
  TempDir bin("trtllm_cases_place_bin");
  // Every controller answer arrives 2 s late, telling the state from before the wait: the
  // confirmation of case 1's end comes well after its end line, and case 2 must not wait
  // for it.
  const std::string real_scontrol = Shell("command -v scontrol | tr -d '\\n'");
  REQUIRE(!real_scontrol.empty());
  WriteTextFile(bin.path() + "/scontrol",
                "#!/bin/bash\ncase \"$*\" in *'show job'*) ;; *) exec " + real_scontrol +
                    " \"$@\" ;; esac\nout=$(" + real_scontrol +
                    " \"$@\")\nrc=$?\nsleep 2\nprintf '%s\\n' \"$out\"\nexit $rc\n");
  ::chmod((bin.path() + "/scontrol").c_str(), 0755);
  const std::string marker = UniqueMarker("place");
  WriteTextFile(repo.path() + "/cases.yaml",
                "cases:\n  - {name: " + marker + "_1, model_name: m, custom_cmd: 'sleep 2'}\n" +
                    "  - {name: " + marker + "_2, model_name: m, custom_cmd: 'sleep 2'}\n");
  CliOptions options;
  options.args = SlurmArgs(repo.path(), repo.path() + "/cases.yaml");
  options.args.insert(options.args.end(), {"--max-parallel", "1"});
  // The per-case scheduler's places (TRTLLM_RUN_SLURM_ARRAYS=0, the escape hatch; `stage`
  // always): as a job array, the throttle (%1) is Slurm's and no place of ours is held.
  options.env = {{"PATH", bin.path() + ":" + std::string(::getenv("PATH"))},
                 {"TRTLLM_RUN_SLURM_ARRAYS", "0"}};
  options.timeout_seconds = 240;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string& err = run.stderr_text;
  const std::size_t second_submitted = err.find("[case 2] [local_slurm] job: submitted job");
  const std::size_t first_verdict = err.find("(case 1) " + marker + "_1: PASSED");
  REQUIRE(second_submitted != std::string::npos);
  REQUIRE(first_verdict != std::string::npos);
  CHECK(second_submitted < first_verdict);
  rapidjson::Document combined = ReadCombined(repo.path());
  REQUIRE(combined.IsObject());
  CHECK(Counts(combined) == std::map<std::string, int>{{"PASSED", 2}});
  // The one Slurm session (sdk/slurm/session.h) with this host as its one destination: one
  // watcher, no SSH connection, no remote stage, no per-destination summary line.
  REQUIRE(combined["sessions"].Size() == 1);
  const rapidjson::Value& stats = combined["sessions"][0]["stats"];
  CHECK(Str(stats, "destinations") == "1");
  CHECK(Str(stats, "remote_destinations") == "0");
  CHECK(Str(stats, "watchers") == "1");
  CHECK(Str(stats, "connections") == "0");
  CHECK(Str(stats, "preflights") == "0");
  CHECK(Str(stats, "transfers") == "0");
  CHECK(Str(stats, "submits") == "2");
  CHECK(Str(stats, "jobs") == "2");
  for (const auto& item : combined["cases"].GetArray()) {
    const rapidjson::Value& details = item["result"]["details"];
    CHECK(Str(details, "shared_session") == "true");
    CHECK(Str(details, "ssh_connections") == "<missing>");
  }
  CHECK(err.find("one shared session per destination") == std::string::npos);
}
