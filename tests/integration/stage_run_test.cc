// Running a CI stage (stage/stage_run.h) with real pytest and pytest-timeout, on
// local_direct and on the test Slurm cluster: shards as concurrent jobs, one merged JUnit
// with every test once, reruns by CI's policy, flaky tests with <flakyFailure>.
#include "stage/stage_run.h"

#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "cli_harness.h"
#include "history/history_query.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "slurm_test_util.h"
#include "stage/stage_junit.h"
#include "trtllm_run/runtime.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;
using trtllm_run::StagePlan;
using trtllm_run::StageShard;
using trtllm_run::StageTest;

namespace {

const std::string kFile = "test_stage_shapes.py::";

StageTest Test(const std::string& name, bool isolation = false, int timeout_seconds = 0) {
  StageTest test;
  test.id = kFile + name;
  test.isolation = isolation;
  test.timeout_seconds = timeout_seconds;
  test.expected_seconds = 1;
  return test;
}

// The fixture checkout: tests/integration/defs holds the shapes file.
void MakeRepo(const std::string& repo) {
  fs::create_directories(repo + "/tests/integration/defs");
  for (const char* file : {"test_stage_shapes.py", "test_selected.py"}) {
    fs::copy_file(SourceDir() + "/tests/fixtures/stage_run/defs/" + file,
                  repo + "/tests/integration/defs/" + file);
  }
}

// Three splits: every outcome, an ISOLATION test, a per-test TIMEOUT, a crash that leaves
// a test unfinished and the next one never started, a waived test.
StagePlan ThreeSplitPlan(const std::string& name) {
  StagePlan plan;
  plan.stage_name = name;
  plan.test_db_context = "l0_fixture";
  plan.split_count = 3;
  plan.splits = {1, 2, 3};
  StageShard one, two, three;
  one.split_id = 1;
  one.tests = {Test("test_pass_a"), Test("test_fail_always"), Test("test_flaky")};
  two.split_id = 2;
  two.tests = {Test("test_pass_b"), Test("test_skip"), Test("test_timeout", false, 3),
               Test("test_flaky_twice")};
  three.split_id = 3;
  three.tests = {Test("test_crash"), Test("test_after_crash"),
                 Test("TestIsolated::test_iso[small]", true),
                 Test("TestIsolated::test_iso[large.1]", true)};
  // A line with a selector: its own pytest, reported as the test it selected.
  StageTest selected;
  selected.id = "test_selected.py -k \"one\"";
  three.tests.push_back(selected);
  plan.shards = {one, two, three};
  StageTest waived = Test("test_waived");
  waived.waived_reason = "https://nvbugs/5555";
  plan.waived = {waived};
  // A plan may also leave a waived test in its shard, marked: still one test, never run.
  three.tests.push_back(waived);
  plan.shards[2] = three;
  return plan;
}

std::string Str(const rapidjson::Value& object, const char* key) {
  return object.HasMember(key) && object[key].IsString() ? object[key].GetString() : "";
}

// Every check of the stage's outcome that does not depend on where it ran.
void CheckStageOutcome(const trtllm_run::StageRunResult& result) {
  INFO(result.reason);
  CHECK(result.status == "FAILED");
  CHECK(trtllm_run::ExitCodeForStage(result) == 1);
  std::map<std::string, const trtllm_run::stage::StageTestResult*> by_id;
  for (const auto& test : result.tests) {
    CHECK(by_id.count(test.id) == 0);  // every test once
    by_id[test.id] = &test;
  }
  REQUIRE(by_id.size() == 13);
  // The selector line became the one test it selected; test_two was deselected.
  CHECK(by_id.count("test_selected.py::test_one") == 1);
  CHECK(by_id.count("test_selected.py::test_two") == 0);
  CHECK(by_id.count("test_selected.py -k \"one\"") == 0);
  if (by_id.count("test_selected.py::test_one")) {
    CHECK(trtllm_run::stage::VerdictOf(*by_id["test_selected.py::test_one"]) ==
          trtllm_run::stage::StageTestVerdict::kPassed);
  }
  auto verdict = [&](const std::string& name) {
    REQUIRE(by_id.count(kFile + name));
    return std::string(trtllm_run::stage::StageTestVerdictName(
        trtllm_run::stage::VerdictOf(*by_id[kFile + name])));
  };
  auto attempts = [&](const std::string& name) { return by_id[kFile + name]->attempts.size(); };
  auto note = [&](const std::string& name) { return by_id[kFile + name]->rerun_note; };
  CHECK(verdict("test_pass_a") == "passed");
  CHECK(attempts("test_pass_a") == 1);
  // Failed in seconds: 2 reruns, 3 attempts, still failed.
  CHECK(verdict("test_fail_always") == "failed");
  CHECK(attempts("test_fail_always") == 3);
  CHECK(note("test_fail_always").rfind("rerun 2 times: failed after", 0) == 0);
  // pytest-timeout's 3 s (the list's TIMEOUT) is a failure of 3 s: 2 reruns.
  CHECK(verdict("test_timeout") == "failed");
  CHECK(attempts("test_timeout") == 3);
  CHECK(by_id[kFile + "test_timeout"]->attempts[0].message.find("Timeout") != std::string::npos);
  CHECK(by_id[kFile + "test_timeout"]->attempts[0].seconds < 30);
  // Fails once, passes on the first rerun: flaky, one rerun used of two.
  CHECK(verdict("test_flaky") == "flaky");
  CHECK(attempts("test_flaky") == 2);
  CHECK(verdict("test_flaky_twice") == "flaky");
  CHECK(attempts("test_flaky_twice") == 3);
  CHECK(verdict("test_skip") == "skipped");
  // Unfinished: 0 reruns; the test after it never started: 1 rerun, then passed.
  CHECK(verdict("test_crash") == "failed");
  CHECK(attempts("test_crash") == 1);
  CHECK(note("test_crash").rfind("not eligible for rerun", 0) == 0);
  CHECK(verdict("test_after_crash") == "passed");
  CHECK(attempts("test_after_crash") == 1);
  CHECK(note("test_after_crash").rfind("rerun 1 time: listed but never run", 0) == 0);
  CHECK(verdict("TestIsolated::test_iso[small]") == "passed");
  CHECK(verdict("TestIsolated::test_iso[large.1]") == "passed");
  CHECK(verdict("test_waived") == "waived");
  CHECK(attempts("test_waived") == 0);

  CHECK(result.counts.total == 13);
  CHECK(result.counts.passed == 8);
  CHECK(result.counts.flaky == 2);
  CHECK(result.counts.failed == 3);
  CHECK(result.counts.skipped == 1);
  CHECK(result.counts.waived == 1);

  // The merged JUnit: one suite named after the stage, every test once, the flakes marked.
  auto merged = trtllm_run::stage::ReadJUnitFile(result.junit_path);
  REQUIRE(merged.ok());
  CHECK(merged->size() == 13);
  std::string xml = ReadTextFile(result.junit_path);
  CHECK(xml.find("<testsuite name=\"" + result.stage_name + "\"") != std::string::npos);
  std::size_t flaky_failures = 0;
  for (std::size_t at = xml.find("<flakyFailure"); at != std::string::npos;
       at = xml.find("<flakyFailure", at + 1)) {
    ++flaky_failures;
  }
  CHECK(flaky_failures == 3);  // test_flaky once, test_flaky_twice twice
  CHECK(xml.find("waived: https://nvbugs/5555") != std::string::npos);

  // The waived test was never handed to pytest.
  for (const auto& entry : fs::directory_iterator(result.run_dir + "/junit")) {
    if (entry.path().extension() != ".progress") continue;
    CHECK(ReadTextFile(entry.path().string()).find("test_waived") == std::string::npos);
  }
  // result.json: the counts and per-test outcomes.
  rapidjson::Document doc;
  doc.Parse(ReadTextFile(result.run_dir + "/result.json").c_str());
  REQUIRE(doc.IsObject());
  CHECK(Str(doc, "status") == "FAILED");
  CHECK(doc["counts"]["flaky"].GetInt() == 2);
  CHECK(doc["counts"]["waived"].GetInt() == 1);
  REQUIRE(doc["tests"].Size() == 13);
  for (const auto& test : doc["tests"].GetArray()) {
    if (Str(test, "id") == std::string(kFile) + "test_fail_always") {
      CHECK(test["reruns"].GetInt() == 2);
      CHECK(test["attempts"].Size() == 3);
    }
  }
}

trtllm_run::StageRunOptions Options(const std::string& repo, std::ostream* progress) {
  trtllm_run::StageRunOptions options;
  options.shared.repo_root = repo;
  options.python = "/usr/bin/python3";  // the Debian pytest and pytest-timeout
  options.progress = progress;
  return options;
}

}  // namespace

TEST_CASE("stage on local_direct: 3 shards at once, merged JUnit, CI's reruns, flakes shown",
          "[stage][cli]") {
  TempDir repo("trtllm_stage_local");
  MakeRepo(repo.path());
  auto runtime = trtllm_run::Runtime::Create({});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  trtllm_run::StageRunOptions options = Options(repo.path(), &progress);
  options.shared.scenario = "local_direct";
  auto result = trtllm_run::RunStage(*runtime.value(), ThreeSplitPlan("Fixture-Local-1"), options);
  INFO(progress.str());
  REQUIRE(result.ok());
  CheckStageOutcome(result.value());
  // Round 0: the three shards; reruns: one case per shard with something to rerun.
  int first_round = 0;
  for (const auto& run : result->shard_runs) first_round += run.round == 0 ? 1 : 0;
  CHECK(first_round == 3);
}

TEST_CASE("stage on local_direct: every shard job and test attempt recorded in the history",
          "[stage][history]") {
  TempDir repo("trtllm_stage_history");
  MakeRepo(repo.path());
  auto runtime = trtllm_run::Runtime::Create({});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  trtllm_run::StageRunOptions options = Options(repo.path(), &progress);
  options.shared.scenario = "local_direct";
  auto result = trtllm_run::RunStage(*runtime.value(), ThreeSplitPlan("Fixture-Hist-1"), options);
  INFO(progress.str());
  REQUIRE(result.ok());
  const std::vector<trtllm_run::history::CaseRecord> records =
      trtllm_run::history::StageRecordsOf(result.value());
  CHECK(records.size() == result->shard_runs.size());
  auto store = trtllm_run::history::OpenSqliteStore(repo.path() + "/history.sqlite");
  REQUIRE(store.ok());
  for (const auto& record : records) {
    CHECK(record.stage == "Fixture-Hist-1");
    CHECK(record.scenario == "local_direct");
    REQUIRE(store.value()->Record(record).ok());
  }
  // Every attempt of every test that ran, with pytest's durations.
  std::size_t attempts = 0;
  for (const auto& test : result->tests) attempts += test.attempts.size();
  auto rows = store.value()->RowCounts();
  REQUIRE(rows.ok());
  CHECK(rows->second == static_cast<std::int64_t>(attempts));
  auto fail_always = store.value()->Outcomes(kFile + "test_fail_always", 0);
  REQUIRE(fail_always.ok());
  REQUIRE(fail_always->size() == 3);
  std::set<int> rounds;
  for (const auto& row : fail_always.value()) {
    CHECK(row.outcome == "failed");
    CHECK(row.shard == 1);
    CHECK(row.duration_seconds.has_value());
    CHECK_FALSE(row.signature.empty());
    rounds.insert(row.attempt);
  }
  CHECK(rounds == std::set<int>{0, 1, 2});
  // Never started in round 0 (its shard's pytest died on test_crash), run in round 1: its one
  // attempt is round 1's, in the rerun job's record.
  auto after_crash = store.value()->Outcomes(kFile + "test_after_crash", 0);
  REQUIRE(after_crash.ok());
  REQUIRE(after_crash->size() == 1);
  CHECK(after_crash->at(0).attempt == 1);
  CHECK(after_crash->at(0).outcome == "passed");
  // The flaky ones are what `history flaky` names; the always-failing one is not.
  auto counts = store.value()->CountsByCommit("");
  REQUIRE(counts.ok());
  std::set<std::string> flaky;
  for (const auto& test : trtllm_run::history::FindFlaky(counts.value()))
    flaky.insert(test.node_id);
  CHECK(flaky == std::set<std::string>{kFile + "test_flaky", kFile + "test_flaky_twice"});
}

TEST_CASE("stage on local_slurm: 3 splits are 3 concurrent jobs, reruns by the policy",
          "[stage][slurm]") {
  EnsureSlurm();
  TempDir repo("trtllm_stage_slurm");
  MakeRepo(repo.path());
  auto runtime = trtllm_run::Runtime::Create({});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  trtllm_run::StageRunOptions options = Options(repo.path(), &progress);
  options.shared.scenario = "local_slurm";
  options.shared.partition = "batch";
  options.shared.skip_install = true;
  options.shared.container_runtime = "none";
  options.shared.container_image = "none";
  const std::string marker = "Fixture-Slurm-" + std::to_string(::getpid());
  // 1 GPU a job: the test cluster's 2 nodes of 2 fake GPUs hold all 3 at once.
  StagePlan plan = ThreeSplitPlan(marker);
  plan.gpu_count = 1;
  auto result = trtllm_run::RunStage(*runtime.value(), plan, options);
  INFO(progress.str());
  REQUIRE(result.ok());
  CheckStageOutcome(result.value());
  // The three shard jobs started within 10 s of each other (sacct's Start).
  std::vector<long> starts;
  for (const auto& run : result->shard_runs) {
    if (run.round != 0) continue;
    REQUIRE(!run.job_id.empty());
    std::string start = Shell("sacct -n -X -j " + run.job_id +
                              " -o Start%30 | head -1 | xargs -I{} date -d {} +%s");
    INFO(run.job_id << " start " << start);
    REQUIRE(!start.empty());
    starts.push_back(std::stol(start));
  }
  REQUIRE(starts.size() == 3);
  long spread = *std::max_element(starts.begin(), starts.end()) -
                *std::min_element(starts.begin(), starts.end());
  CHECK(spread <= 10);
  // One watcher for the shards' jobs.
  REQUIRE(result->sessions.size() == 1);
  CHECK(result->sessions[0].stats.at("watchers") == "1");
}

TEST_CASE("stage on local_slurm: a 2-GPU job runs each pytest once, not once per task",
          "[stage][slurm]") {
  EnsureSlurm();
  TempDir repo("trtllm_stage_slurm_gpus");
  MakeRepo(repo.path());
  auto runtime = trtllm_run::Runtime::Create({});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  trtllm_run::StageRunOptions options = Options(repo.path(), &progress);
  options.shared.scenario = "local_slurm";
  options.shared.partition = "batch";
  options.shared.skip_install = true;
  options.shared.container_runtime = "none";
  options.shared.container_image = "none";
  StagePlan plan;
  plan.stage_name = "Fixture-Gpus-" + std::to_string(::getpid());
  plan.splits = {1};
  plan.gpu_count = 2;  // a custom command of 2 GPUs is launched as 2 tasks
  StageShard shard;
  shard.split_id = 1;
  shard.tests = {Test("test_pass_a"), Test("test_flaky")};
  plan.shards = {shard};
  auto result = trtllm_run::RunStage(*runtime.value(), plan, options);
  INFO(progress.str());
  REQUIRE(result.ok());
  CHECK(result->status == "PASSED");
  CHECK(result->counts.flaky == 1);  // a second copy would have used up the flaky's seed
  // Each test started once per run: no second copy of a shard's pytest.
  for (const auto& entry : fs::directory_iterator(result->run_dir + "/junit")) {
    if (entry.path().extension() != ".progress") continue;
    std::istringstream lines(ReadTextFile(entry.path().string()));
    std::map<std::string, int> starts_of;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("start ", 0) == 0) ++starts_of[line];
    }
    for (const auto& [line, count] : starts_of) {
      INFO(entry.path().string() << ": " << line);
      CHECK(count == 1);
    }
  }
  // The jobs asked for the stage's GPUs.
  std::string gres =
      Shell("sacct -n -X -j " + result->shard_runs[0].job_id + " -o AllocTRES%80 | head -1");
  CHECK(gres.find("gres/gpu=2") != std::string::npos);
}

TEST_CASE("stage: a shard job that failed while its JUnit says every test passed is no PASS",
          "[stage][cli]") {
  // The job's own files cannot make a stage PASSED alone: pytest here writes its JUnit
  // (every test passed), then a conftest hook ends the process with exit code 1.
  TempDir repo("trtllm_stage_forged");
  const std::string defs = repo.path() + "/tests/integration/defs";
  fs::create_directories(defs);
  WriteTextFile(defs + "/conftest.py",
                "import os\n\n\ndef pytest_unconfigure(config):\n    os._exit(1)\n");
  WriteTextFile(defs + "/test_ok.py", "def test_ok():\n    assert True\n");
  StagePlan plan;
  plan.stage_name = "Fixture-Forged-1";
  plan.test_db_context = "l0_fixture";
  plan.split_count = 1;
  plan.splits = {1};
  StageShard shard;
  shard.split_id = 1;
  StageTest test;
  test.id = "test_ok.py::test_ok";
  test.expected_seconds = 1;
  shard.tests = {test};
  plan.shards = {shard};
  auto runtime = trtllm_run::Runtime::Create({});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  trtllm_run::StageRunOptions options = Options(repo.path(), &progress);
  options.shared.scenario = "local_direct";
  auto result = trtllm_run::RunStage(*runtime.value(), plan, options);
  INFO(progress.str());
  REQUIRE(result.ok());
  CHECK(result->counts.passed == 1);  // what the JUnit file says
  CHECK(result->status == "ERROR");
  bool named = false;
  for (const std::string& warning : result->warnings) {
    named |= warning.find("show no failing test") != std::string::npos;
  }
  CHECK(named);
}
