// `--repeat N` and `--reuse-passed` through the real binary: 20 Slurm jobs of a seeded test
// that fails with probability 0.3, spread over the test cluster's two nodes of `multi`;
// local repeats run in turn, accepted by --repeat-pass-rate; a cases run and a CI stage
// rerun with --reuse-passed on the same commit skip what passed (and run what failed), and
// run everything on another commit; the flags' bad input is exit 2 with nothing run.
#include <rapidjson/document.h>
#include <sqlite3.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Str(const rapidjson::Value& object, const char* key) {
  return object.IsObject() && object.HasMember(key) && object[key].IsString()
             ? object[key].GetString()
             : "";
}

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  return doc;
}

long long QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  long long value = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

// The seeded test: run i passes unless random.seed(25000 + i) draws below 0.3. Over runs
// 1..20 that is 14 passes; the failing runs are computed here by the same Python.
const char kSeeded[] =
    "python3 -c 'import os, random; i = int(os.environ[\"TRTLLM_RUN_REPEAT_INDEX\"]); "
    "random.seed(25000 + i); ok = random.random() >= 0.3; "
    "print(\"run\", i, \"on\", os.environ.get(\"SLURMD_NODENAME\", \"here\"), "
    "\"ok\" if ok else \"seeded failure\"); raise SystemExit(0 if ok else 1)'";

std::vector<int> SeededFailures(int runs) {
  const std::string out =
      Shell("python3 -c 'import random\nfor i in range(1, " + std::to_string(runs + 1) +
            "):\n    random.seed(25000 + i)\n    if random.random() < 0.3: print(i)'");
  std::vector<int> failing;
  std::size_t at = 0;
  while (at < out.size()) {
    std::size_t end = out.find('\n', at);
    if (end == std::string::npos) end = out.size();
    if (end > at) failing.push_back(std::stoi(out.substr(at, end - at)));
    at = end + 1;
  }
  return failing;
}

// `git init` and one commit of everything in `repo`; its sha.
std::string Commit(const std::string& repo, const std::string& message) {
  int status = -1;
  Shell("cd '" + repo +
            "' && git init -q 2>/dev/null; git add -A && git -c user.name=t -c "
            "user.email=t@example.com commit -q --allow-empty -m '" +
            message + "' 2>&1",
        &status);
  REQUIRE(status == 0);
  std::string sha = Shell("git -C '" + repo + "' rev-parse HEAD");
  while (!sha.empty() && sha.back() == '\n') sha.pop_back();
  REQUIRE(sha.size() == 40);
  return sha;
}

}  // namespace

TEST_CASE("run --repeat 20 on Slurm: a seeded 0.3 failure rate, Wilson interval, two nodes",
          "[slurm][history][repeat]") {
  EnsureSlurm();
  TempDir repo("trtllm_repeat_slurm");
  const std::string store = repo.path() + "/history.sqlite";
  const std::string run_dir = repo.path() + "/repeat_run";
  const std::vector<int> failing = SeededFailures(20);
  REQUIRE(failing.size() == 6);  // 14 of 20 pass: the rate the interval must hold
  CliOptions options;
  options.args = {"run",       "--scenario",        "local_slurm", "--repo-root",
                  repo.path(), "--partition",       "multi",       "--container-runtime",
                  "none",      "--container-image", "none",        "--custom-cmd",
                  kSeeded,     "--repeat",          "20",          "--run-dir",
                  run_dir,     "--history",         store,         "--json"};
  options.cwd = repo.path();
  options.timeout_seconds = 540;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);  // not all 20 passed, no rate accepted
  CHECK(Contains(run.stderr_text, "14/20 passed (70.0%, Wilson 95% 48.1%..85.5%): FAILED"));

  rapidjson::Document doc = ParseJson(ReadTextFile(run_dir + "/result.json"));
  REQUIRE(doc.IsObject());
  REQUIRE(doc.HasMember("repeat"));
  REQUIRE(doc["repeat"].Size() == 1);
  const rapidjson::Value& summary = doc["repeat"][0];
  CHECK(summary["runs"].GetInt() == 20);
  CHECK(summary["passed"].GetInt() == 14);
  CHECK(Str(summary, "status") == "FAILED");
  CHECK(summary["wilson_95"][0].GetDouble() < 0.7);
  CHECK(summary["wilson_95"][1].GetDouble() > 0.7);
  CHECK(summary["wilson_95"][0].GetDouble() == Approx(0.481027).margin(1e-6));
  // The 6 failures by signature (Slurm's reason names the node, so one per node at most).
  REQUIRE(summary["failures"].Size() >= 1);
  REQUIRE(summary["failures"].Size() <= 2);
  int failure_count = 0;
  std::vector<int> failed_runs;
  for (const auto& failure : summary["failures"].GetArray()) {
    failure_count += failure["count"].GetInt();
    CHECK(Contains(Str(failure, "signature"), "exit code N"));
    CHECK(Contains(run.stderr_text, std::to_string(failure["count"].GetInt()) + "x "));
    for (const auto& index : failure["runs"].GetArray()) failed_runs.push_back(index.GetInt());
  }
  CHECK(failure_count == 6);
  std::sort(failed_runs.begin(), failed_runs.end());
  CHECK(failed_runs == failing);  // deterministic per run index
  CHECK(summary["duration_seconds"]["min"].GetDouble() <=
        summary["duration_seconds"]["median"].GetDouble());
  CHECK(summary["duration_seconds"]["median"].GetDouble() <=
        summary["duration_seconds"]["max"].GetDouble());
  // Spread over the cluster: the runs' recorded node lists name both nodes of `multi`.
  std::set<std::string> nodes;
  for (const auto& each : summary["each"].GetArray()) nodes.insert(Str(each, "nodes"));
  INFO("nodes: " << [&] {
    std::string all;
    for (const std::string& node : nodes) all += node + " ";
    return all;
  }());
  CHECK(nodes.size() > 1);
  CHECK(summary["nodes"].Size() > 1);
  CHECK(summary["each"].Size() == 20);
  // --json printed the same document.
  rapidjson::Document printed = ParseJson(run.stdout_text);
  REQUIRE(printed.IsObject());
  CHECK(printed["repeat"][0]["passed"].GetInt() == 14);
  // Each run is in the history under the one command, with its node.
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases WHERE kind = 'run'") == 20);
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases WHERE verdict = 'PASSED'") == 14);
  CHECK(QueryInt(store, "SELECT COUNT(DISTINCT name) FROM cases") == 1);
  CHECK(QueryInt(store, "SELECT COUNT(DISTINCT nodes) FROM cases WHERE nodes <> ''") > 1);
}

TEST_CASE("run --repeat locally: runs in turn, --repeat-pass-rate accepts a rate",
          "[history][repeat][cli]") {
  TempDir repo("trtllm_repeat_local");
  const std::string store = repo.path() + "/history.sqlite";
  // Runs 3 and 7 fail: 8 of 10.
  const std::string command =
      "echo start $TRTLLM_RUN_REPEAT_INDEX >> " + repo.path() +
      "/order.txt; sleep 0.2; echo end $TRTLLM_RUN_REPEAT_INDEX >> " + repo.path() +
      "/order.txt; case $TRTLLM_RUN_REPEAT_INDEX in 3|7) echo boom 42; exit 1;; esac";
  auto repeat = [&](const std::string& rate, const std::string& dir) {
    CliOptions options;
    options.args = {"run",
                    "--scenario",
                    "local_direct",
                    "--repo-root",
                    repo.path(),
                    "--custom-cmd",
                    command,
                    "--repeat",
                    "10",
                    "--run-dir",
                    repo.path() + "/" + dir,
                    "--history",
                    store};
    if (!rate.empty()) options.args.insert(options.args.end(), {"--repeat-pass-rate", rate});
    options.cwd = repo.path();
    options.timeout_seconds = 240;
    return RunCli(options);
  };
  CliRun accepted = repeat("0.8", "accepted");
  INFO(accepted.Describe());
  CHECK(accepted.exit_code == 0);
  CHECK(Contains(accepted.stderr_text,
                 "8/10 passed (80.0%, Wilson 95% 49.0%..94.3%), required 80.0%: PASSED"));
  CHECK(Contains(accepted.stderr_text, "2x "));
  CHECK(Contains(accepted.stderr_text, "(run 3, 7)"));
  // In turn: every run ended before the next started.
  const std::string order = ReadTextFile(repo.path() + "/order.txt");
  std::string expected;
  for (int i = 1; i <= 10; ++i) {
    expected += "start " + std::to_string(i) + "\nend " + std::to_string(i) + "\n";
  }
  CHECK(order == expected);
  rapidjson::Document doc = ParseJson(ReadTextFile(repo.path() + "/accepted/result.json"));
  REQUIRE(doc.IsObject());
  CHECK(doc["repeat"][0]["required_pass_rate"].GetDouble() == 0.8);
  CHECK(Str(doc["repeat"][0], "status") == "PASSED");
  CHECK(doc["repeat"][0]["nodes"].Size() == 0);  // local runs: no node list

  CliRun refused = repeat("0.9", "refused");
  INFO(refused.Describe());
  CHECK(refused.exit_code == 1);
  CHECK(Contains(refused.stderr_text, "required 90.0%: FAILED"));
  CliRun strict = repeat("", "strict");
  CHECK(strict.exit_code == 1);
  CHECK(Contains(strict.stderr_text, "8/10 passed (80.0%, Wilson 95% 49.0%..94.3%): FAILED"));
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 30);
}

TEST_CASE("run --repeat and --reuse-passed: bad values are exit 2 and nothing runs",
          "[history][repeat][cli]") {
  TempDir repo("trtllm_repeat_bad");
  const std::string marker = repo.path() + "/ran";
  const std::string store = repo.path() + "/history.sqlite";
  auto expect_2 = [&](std::vector<std::string> extra, const std::string& message) {
    CliOptions options;
    options.args = {"run",          "--scenario",      "local_direct", "--repo-root", repo.path(),
                    "--custom-cmd", "touch " + marker, "--history",    store};
    options.args.insert(options.args.end(), extra.begin(), extra.end());
    options.cwd = repo.path();
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK(Contains(run.stderr_text, message));
    CHECK_FALSE(fs::exists(marker));
    CHECK_FALSE(fs::exists(repo.path() + "/work_dirs"));
    CHECK_FALSE(fs::exists(store));
  };
  expect_2({"--repeat", "0"}, "--repeat '0' is not a number of runs from 1 to 1000");
  expect_2({"--repeat", "-3"}, "--repeat '-3' is not a number of runs from 1 to 1000");
  expect_2({"--repeat", "1001"}, "--repeat '1001' is not a number of runs from 1 to 1000");
  expect_2({"--repeat", "99999999999999999999999"}, "is not a number of runs from 1 to 1000");
  expect_2({"--repeat", "ten"}, "--repeat 'ten' is not a number of runs");
  expect_2({"--repeat", "3x"}, "--repeat '3x' is not a number of runs");
  expect_2({"--repeat", "5", "--repeat-pass-rate", "1.5"},
           "--repeat-pass-rate '1.5' is not a rate from 0 to 1");
  expect_2({"--repeat", "5", "--repeat-pass-rate", "-0.1"},
           "--repeat-pass-rate '-0.1' is not a rate from 0 to 1");
  expect_2({"--repeat", "5", "--repeat-pass-rate", "nan"},
           "--repeat-pass-rate 'nan' is not a rate from 0 to 1");
  expect_2({"--repeat", "5", "--repeat-pass-rate", "90%"},
           "--repeat-pass-rate '90%' is not a rate from 0 to 1");
  expect_2({"--repeat-pass-rate", "0.9"}, "--repeat-pass-rate goes with --repeat N");
  expect_2({"--reuse-passed"}, "--reuse-passed needs --cases FILE");
  WriteTextFile(repo.path() + "/cases.txt", "touch " + marker + "\n");
  expect_2({"--cases", repo.path() + "/cases.txt", "--reuse-passed", "--repeat", "2"},
           "give --repeat N or --reuse-passed, not both");
  CliOptions off;
  off.args = {"run",         "--cases",   repo.path() + "/cases.txt", "--scenario",  "local_direct",
              "--repo-root", repo.path(), "--reuse-passed",           "--no-history"};
  off.cwd = repo.path();
  CliRun run = RunCli(off);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(Contains(run.stderr_text, "--reuse-passed reads the history, and it is off"));
  CHECK_FALSE(fs::exists(marker));
  CliRun stage = RunCli({"stage", "Fixture", "--repo-root", repo.path(), "--repeat", "0"});
  CHECK(stage.exit_code == 2);
  CHECK(Contains(stage.stderr_text, "--repeat '0' is not a number of runs from 1 to 1000"));
}

TEST_CASE("run --cases --reuse-passed: passed cases SKIPPED on the same commit, not on another",
          "[history][reuse][cli]") {
  TempDir repo("trtllm_reuse_cases");
  const std::string store = repo.path() + "/history.sqlite";
  const std::string count = repo.path() + "/count";
  fs::create_directories(count);
  // Each case appends a line to its own counter file, so what ran shows.
  WriteTextFile(repo.path() + "/cases.yaml", "- name: pass_a\n  custom_cmd: echo x >> " + count +
                                                 "/a\n"
                                                 "- name: pass_b\n  custom_cmd: echo x >> " +
                                                 count +
                                                 "/b\n"
                                                 "- name: fail_c\n  custom_cmd: echo x >> " +
                                                 count +
                                                 "/c; exit 1\n"
                                                 "- custom_cmd: echo x >> " +
                                                 count + "/unnamed\n");
  const std::string first_sha = Commit(repo.path(), "first");
  auto cases = [&](const std::string& dir, bool reuse) {
    CliOptions options;
    options.args = {"run",        "--cases",      repo.path() + "/cases.yaml",
                    "--scenario", "local_direct", "--repo-root",
                    repo.path(),  "--run-dir",    repo.path() + "/" + dir,
                    "--history",  store,          "--json"};
    if (reuse) options.args.push_back("--reuse-passed");
    options.cwd = repo.path();
    options.timeout_seconds = 120;
    return RunCli(options);
  };
  auto lines = [&](const std::string& name) {
    std::string text = fs::exists(count + "/" + name) ? ReadTextFile(count + "/" + name) : "";
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  };
  CliRun first = cases("first", false);
  INFO(first.Describe());
  CHECK(first.exit_code == 1);
  rapidjson::Document doc = ParseJson(first.stdout_text);
  REQUIRE(doc.IsObject());
  std::map<std::string, std::string> work_dir_of;
  for (const auto& c : doc["cases"].GetArray()) work_dir_of[Str(c, "name")] = Str(c, "work_dir");
  REQUIRE_FALSE(work_dir_of["pass_a"].empty());

  // Before: without --reuse-passed everything runs again; with it, a and b are SKIPPED.
  CliRun second = cases("second", true);
  INFO(second.Describe());
  CHECK(second.exit_code == 1);  // fail_c ran and failed again
  CHECK(lines("a") == 1);
  CHECK(lines("b") == 1);
  CHECK(lines("c") == 2);
  CHECK(lines("unnamed") == 2);  // no name: never reused
  doc = ParseJson(second.stdout_text);
  REQUIRE(doc.IsObject());
  std::map<std::string, const rapidjson::Value*> by_name;
  for (const auto& c : doc["cases"].GetArray()) by_name[Str(c, "name")] = &c;
  REQUIRE(by_name.count("pass_a"));
  CHECK(Str(*by_name["pass_a"], "status") == "SKIPPED");
  REQUIRE(by_name["pass_a"]->HasMember("result"));
  const std::string reason = Str((*by_name["pass_a"])["result"], "reason");
  CHECK(reason.rfind("passed on " + first_sha + " at 20", 0) == 0);
  CHECK(Contains(reason, " (" + work_dir_of["pass_a"] + ")"));
  CHECK(Str(*by_name["pass_b"], "status") == "SKIPPED");
  CHECK(Str(*by_name["fail_c"], "status") == "FAILED");
  CHECK(ReadTextFile(repo.path() + "/second/result.json").find("passed on " + first_sha) !=
        std::string::npos);
  // Only what ran is recorded: 4 + 2 rows.
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 6);

  // Another commit: nothing passed there, everything runs.
  WriteTextFile(repo.path() + "/change.txt", "x\n");
  const std::string second_sha = Commit(repo.path(), "second");
  REQUIRE(second_sha != first_sha);
  CliRun third = cases("third", true);
  INFO(third.Describe());
  CHECK(third.exit_code == 1);
  CHECK(lines("a") == 2);
  CHECK(lines("b") == 2);
  CHECK(lines("c") == 3);

  // All passed before on this commit: nothing runs, exit 0.
  WriteTextFile(repo.path() + "/cases.yaml",
                "- name: pass_a\n  custom_cmd: echo x >> " + count + "/a\n");
  CliRun none = cases("fourth", true);
  INFO(none.Describe());
  CHECK(none.exit_code == 0);
  CHECK(lines("a") == 2);
  CHECK(Contains(none.stderr_text, "nothing to run"));
}

namespace {

// A checkout whose test-db context l0_reuse renders 8 tests for stage=pre_merge (one
// waived, one skipped by pytest, two flaky, one failing), split in 3 shards.
void MakeStageCheckout(const std::string& repo) {
  fs::create_directories(repo + "/tests/integration/defs");
  fs::create_directories(repo + "/tests/integration/test_lists/test-db");
  fs::copy_file(SourceDir() + "/tests/fixtures/stage_run/defs/test_stage_shapes.py",
                repo + "/tests/integration/defs/test_stage_shapes.py");
  WriteTextFile(repo + "/tests/integration/test_lists/test-db/l0_reuse.yml",
                "version: 0.0.1\n"
                "l0_reuse:\n"
                "- condition:\n"
                "    terms:\n"
                "      stage: pre_merge\n"
                "  tests:\n"
                "  - test_stage_shapes.py::test_pass_a\n"
                "  - test_stage_shapes.py::test_pass_b\n"
                "  - test_stage_shapes.py::test_fail_always\n"
                "  - test_stage_shapes.py::test_skip\n"
                "  - test_stage_shapes.py::test_flaky\n"
                "  - test_stage_shapes.py::test_flaky_twice\n"
                "  - test_stage_shapes.py::TestIsolated::test_iso[small] ISOLATION\n"
                "  - test_stage_shapes.py::test_waived\n");
  WriteTextFile(repo + "/tests/integration/test_lists/waives.txt",
                "test_stage_shapes.py::test_waived SKIP (https://nvbugs/5555)\n");
  WriteTextFile(repo + "/.gitignore", ".runs_*\nwork_dirs/\n*.sqlite*\n*.xml\n");
}

CliRun Stage(const std::string& repo, const std::string& store, const std::string& name,
             std::vector<std::string> extra) {
  CliOptions options;
  options.args = {"stage",       name,
                  "--test-db",   "l0_reuse",
                  "--match",     "stage=pre_merge",
                  "--splits",    "3",
                  "--repo-root", repo,
                  "--python",    "/usr/bin/python3",
                  "--scenario",  "local_direct",
                  "--history",   store,
                  "--json"};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.cwd = repo;
  options.timeout_seconds = 400;
  return RunCli(options);
}

std::map<std::string, const rapidjson::Value*> TestsById(const rapidjson::Document& doc) {
  std::map<std::string, const rapidjson::Value*> tests;
  if (!doc.IsObject() || !doc.HasMember("tests")) return tests;
  for (const auto& test : doc["tests"].GetArray()) tests[Str(test, "id")] = &test;
  return tests;
}

}  // namespace

TEST_CASE("stage --reuse-passed: what passed on the commit in this stage is SKIPPED",
          "[stage][history][reuse]") {
  TempDir repo("trtllm_reuse_stage");
  MakeStageCheckout(repo.path());
  const std::string store = repo.path() + "/history.sqlite";
  const std::string sha = Commit(repo.path(), "first");
  CliRun first = Stage(repo.path(), store, "Reuse-1", {});
  INFO(first.Describe());
  REQUIRE(first.exit_code == 1);  // test_fail_always
  const long long pass_a_rows = QueryInt(
      store, "SELECT COUNT(*) FROM tests WHERE node_id = 'test_stage_shapes.py::test_pass_a'");
  CHECK(pass_a_rows == 1);

  // Another stage name on the same commit reuses nothing: the stage is part of the key.
  CliRun other = Stage(repo.path(), store, "Reuse-2", {"--reuse-passed", "--no-reruns"});
  INFO(other.Describe());
  CHECK(Contains(other.stderr_text, "--reuse-passed: 0 of 7 test(s) passed on " + sha));

  const std::string junit = repo.path() + "/second.xml";
  CliRun second = Stage(repo.path(), store, "Reuse-1", {"--reuse-passed", "--junit", junit});
  INFO(second.Describe());
  CHECK(second.exit_code == 1);  // test_fail_always ran again and failed again
  CHECK(Contains(second.stderr_text, "--reuse-passed: 5 of 7 test(s) passed on " + sha));
  rapidjson::Document doc = ParseJson(second.stdout_text);
  REQUIRE(doc.IsObject());
  std::map<std::string, const rapidjson::Value*> tests = TestsById(doc);
  for (const char* id :
       {"test_stage_shapes.py::test_pass_a", "test_stage_shapes.py::test_pass_b",
        "test_stage_shapes.py::test_flaky", "test_stage_shapes.py::test_flaky_twice",
        "test_stage_shapes.py::TestIsolated::test_iso[small]"}) {
    INFO(id);
    REQUIRE(tests.count(id));
    CHECK(Str(*tests[id], "outcome") == "skipped");
    const std::string reason = Str(*tests[id], "skipped_reason");
    CHECK(reason.rfind("passed on " + sha + " at 20", 0) == 0);
    CHECK(Contains(reason, " (" + repo.path() + "/work_dirs/"));
    CHECK((*tests[id])["attempts"].Size() == 0);  // never submitted
  }
  REQUIRE(tests.count("test_stage_shapes.py::test_fail_always"));
  CHECK(Str(*tests["test_stage_shapes.py::test_fail_always"], "outcome") == "failed");
  CHECK((*tests["test_stage_shapes.py::test_fail_always"])["attempts"].Size() == 3);
  CHECK(Str(*tests["test_stage_shapes.py::test_skip"], "outcome") == "skipped");  // ran: pytest
  CHECK(Str(*tests["test_stage_shapes.py::test_skip"], "skipped_reason").empty());
  CHECK(Str(*tests["test_stage_shapes.py::test_waived"], "outcome") == "waived");
  CHECK(doc["counts"]["skipped"].GetInt() == 6);
  CHECK(Contains(ReadTextFile(junit), "<skipped message=\"passed on " + sha));
  // The reused tests did not run: no new rows for them.
  CHECK(
      QueryInt(store,
               "SELECT COUNT(*) FROM tests WHERE node_id = 'test_stage_shapes.py::test_pass_a'") ==
      pass_a_rows + 1);  // + the Reuse-2 run, which reused nothing

  // Another commit: every test runs.
  WriteTextFile(repo.path() + "/change.txt", "x\n");
  const std::string next = Commit(repo.path(), "second");
  CliRun third = Stage(repo.path(), store, "Reuse-1", {"--reuse-passed", "--no-reruns"});
  INFO(third.Describe());
  CHECK(Contains(third.stderr_text, "--reuse-passed: 0 of 7 test(s) passed on " + next));
  doc = ParseJson(third.stdout_text);
  tests = TestsById(doc);
  REQUIRE(tests.count("test_stage_shapes.py::test_pass_a"));
  CHECK(Str(*tests["test_stage_shapes.py::test_pass_a"], "outcome") == "passed");
}

TEST_CASE("stage --repeat 2: the stage run twice in turn, one summary per test",
          "[stage][history][repeat]") {
  TempDir repo("trtllm_repeat_stage");
  MakeStageCheckout(repo.path());
  const std::string store = repo.path() + "/history.sqlite";
  const std::string dir = repo.path() + "/repeated";
  CliRun run = Stage(repo.path(), store, "Repeat-1", {"--repeat", "2", "--run-dir", dir});
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  rapidjson::Document doc = ParseJson(ReadTextFile(dir + "/result.json"));
  REQUIRE(doc.IsObject());
  CHECK(doc["repeat_count"].GetInt() == 2);
  CHECK(Str(doc, "status") == "FAILED");
  REQUIRE(doc["runs"].Size() == 2);
  CHECK(Str(doc["runs"][0], "run_dir") == dir + "/run_1");
  CHECK(Str(doc["runs"][1], "run_dir") == dir + "/run_2");
  std::map<std::string, const rapidjson::Value*> summary;
  for (const auto& s : doc["repeat"].GetArray()) summary[Str(s, "name")] = &s;
  REQUIRE(summary.count("test_stage_shapes.py::test_pass_a"));
  CHECK((*summary["test_stage_shapes.py::test_pass_a"])["passed"].GetInt() == 2);
  CHECK(Str(*summary["test_stage_shapes.py::test_pass_a"], "status") == "PASSED");
  REQUIRE(summary.count("test_stage_shapes.py::test_fail_always"));
  const rapidjson::Value& failing = *summary["test_stage_shapes.py::test_fail_always"];
  CHECK(failing["runs"].GetInt() == 2);
  CHECK(failing["passed"].GetInt() == 0);
  CHECK(Contains(Str(failing["failures"][0], "signature"), "fails on every run"));
  CHECK(summary.count("test_stage_shapes.py::test_waived") == 0);  // never a sample
  CHECK(summary.count("test_stage_shapes.py::test_skip") == 0);
  CHECK(Contains(run.stderr_text, "0/2 passed"));
  CHECK(Contains(run.stderr_text, "test(s) passed every run: FAILED"));
  // Both runs are in the history: test_pass_a passed twice.
  CHECK(QueryInt(store,
                 "SELECT COUNT(*) FROM tests WHERE node_id = 'test_stage_shapes.py::test_pass_a' "
                 "AND outcome = 'passed'") == 2);
}
