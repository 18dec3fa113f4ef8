// --reuse-passed (history/reuse_passed.h) over a real SQLite store: the newest outcome of
// each test on a commit (and stage), each case name's newest verdict, and which test-list
// ids they let skip, exact ids and lines pytest expanded ("<line>::<name>") alike.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "history/history_store.h"
#include "history/reuse_passed.h"
#include "plan_test_support.h"

namespace trtllm_run::history {
namespace {

using plan_test::TempDir;

const std::string kCommit(40, 'c');

CaseRecord StageShard(const std::string& stage, const std::string& commit, const std::string& at,
                      int round, std::vector<TestRecord> tests) {
  CaseRecord record;
  record.kind = "stage";
  record.name = stage + " shard 1";
  record.stage = stage;
  record.commit = commit;
  record.attempt = round;
  record.verdict = "PASSED";
  record.recorded_at = at;
  record.work_dir = "/w/" + stage + "/" + at + "/" + std::to_string(round);
  record.tests = std::move(tests);
  return record;
}

TestRecord Outcome(const std::string& id, const std::string& outcome, int attempt = 0) {
  TestRecord test;
  test.node_id = id;
  test.outcome = outcome;
  test.attempt = attempt;
  return test;
}

TEST_CASE("reuse-passed: the newest outcome per test on a commit and stage decides",
          "[history][reuse]") {
  TempDir dir("trtllm_reuse");
  Result<std::unique_ptr<HistoryStore>> opened = OpenSqliteStore(dir / "history.sqlite");
  REQUIRE(opened.ok());
  HistoryStore& store = *opened.value();
  const std::string t1 = "2026-12-01T10:00:00Z", t2 = "2026-12-01T11:00:00Z";
  // Stage S, first run: a passes; b fails then passes on the rerun (same time); c passes
  // then, on a later run, fails; d is skipped; a -k line expanded into two passing tests,
  // a directory line into one pass and one failure.
  REQUIRE(store
              .Record(StageShard(
                  "S", kCommit, t1, 0,
                  {Outcome("t.py::a", "passed"), Outcome("t.py::b", "failed"),
                   Outcome("t.py::c", "passed"), Outcome("t.py::d", "skipped"),
                   Outcome("u/x.py -k \"p or q\"::test_p", "passed"),
                   Outcome("u/x.py -k \"p or q\"::test_q", "passed"),
                   Outcome("u/dir::test_1", "passed"), Outcome("u/dir::test_2", "failed")}))
              .ok());
  REQUIRE(store.Record(StageShard("S", kCommit, t1, 1, {Outcome("t.py::b", "passed", 1)})).ok());
  REQUIRE(store.Record(StageShard("S", kCommit, t2, 0, {Outcome("t.py::c", "failed")})).ok());
  // Another stage and another commit: never S's passes.
  REQUIRE(store.Record(StageShard("T", kCommit, t2, 0, {Outcome("t.py::e", "passed")})).ok());
  REQUIRE(store.Record(StageShard("S", std::string(40, 'd'), t2, 0, {Outcome("t.py::f", "passed")}))
              .ok());

  Result<std::vector<LatestOutcome>> latest = store.LatestTestOutcomes(kCommit, "S");
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 8);
  CHECK(latest->front().id == "t.py::a");  // id order
  const std::vector<std::string> ids = {
      "t.py::a", "t.py::b", "t.py::c",   "t.py::d", "t.py::e", "t.py::f", "u/x.py -k \"p or q\"",
      "u/dir",   "u",       "t.py::a[1]"};
  std::map<std::string, std::string> reused = PassedBefore(ids, *latest, kCommit);
  CHECK(reused.size() == 3);
  CHECK(reused["t.py::a"] == "passed on " + kCommit + " at " + t1 + " (/w/S/" + t1 + "/0)");
  CHECK(reused["t.py::b"] == "passed on " + kCommit + " at " + t1 + " (/w/S/" + t1 + "/1)");
  CHECK(reused.count("t.py::c") == 0);               // its newest outcome failed
  CHECK(reused.count("t.py::d") == 0);               // skipped is no pass
  CHECK(reused.count("t.py::e") == 0);               // another stage
  CHECK(reused.count("t.py::f") == 0);               // another commit
  CHECK(reused.count("u/x.py -k \"p or q\"") == 1);  // every expanded test passed
  CHECK(reused.count("u/dir") == 0);                 // one expanded test failed
  CHECK(reused.count("u") == 0);           // "u/dir::..." is not "u::...": no prefix match
  CHECK(reused.count("t.py::a[1]") == 0);  // exact ids only

  // Any stage (nullopt): e counts, the stage column is not a filter.
  latest = store.LatestTestOutcomes(kCommit, std::nullopt);
  REQUIRE(latest.ok());
  CHECK(PassedBefore({"t.py::e"}, *latest, kCommit).size() == 1);
  // No commit: nothing is the same commit.
  CHECK(PassedBefore(ids, *latest, "").empty());
}

TEST_CASE("reuse-passed: a case name's newest verdict on the commit", "[history][reuse]") {
  TempDir dir("trtllm_reuse_cases");
  Result<std::unique_ptr<HistoryStore>> opened = OpenSqliteStore(dir / "history.sqlite");
  REQUIRE(opened.ok());
  HistoryStore& store = *opened.value();
  auto record = [&](const std::string& kind, const std::string& name, const std::string& verdict,
                    const std::string& at) {
    CaseRecord c;
    c.kind = kind;
    c.name = name;
    c.verdict = verdict;
    c.commit = kCommit;
    c.recorded_at = at;
    c.work_dir = "/w/" + name + "/" + at;
    REQUIRE(store.Record(c).ok());
  };
  record("case", "ok", "PASSED", "2026-12-01T10:00:00Z");
  record("case", "broke", "PASSED", "2026-12-01T10:00:00Z");
  record("case", "broke", "FAILED", "2026-12-01T11:00:00Z");
  record("run", "fixed", "FAILED", "2026-12-01T10:00:00Z");
  record("run", "fixed", "PASSED", "2026-12-01T11:00:00Z");
  record("stage", "S shard 1", "PASSED", "2026-12-01T11:00:00Z");  // not a case
  Result<std::vector<LatestOutcome>> verdicts = store.LatestCaseVerdicts(kCommit);
  REQUIRE(verdicts.ok());
  REQUIRE(verdicts->size() == 3);
  std::map<std::string, std::string> reused =
      PassedBefore({"ok", "broke", "fixed", "S shard 1"}, *verdicts, kCommit);
  CHECK(reused.size() == 2);
  CHECK(reused["ok"] ==
        "passed on " + kCommit + " at 2026-12-01T10:00:00Z (/w/ok/2026-12-01T10:00:00Z)");
  CHECK(reused.count("fixed") == 1);
  CHECK(reused.count("broke") == 0);
}

}  // namespace
}  // namespace trtllm_run::history
