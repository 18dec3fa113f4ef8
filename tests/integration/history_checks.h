// The history checks that hold for every backend of the store (history_store.h): run by
// history_test.cc on a SQLite file and by history_postgres_test.cc on a PostgreSQL
// database. `store` is what --history takes: a file path or a postgresql:// URL.
#ifndef TRTLLM_RUN_TESTS_INTEGRATION_HISTORY_CHECKS_H_
#define TRTLLM_RUN_TESTS_INTEGRATION_HISTORY_CHECKS_H_

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_harness.h"
#include "history/history_store.h"

namespace trtllm_run_test::history_checks {

using trtllm_run::history::CaseRecord;
using trtllm_run::history::OpenHistoryStore;
using trtllm_run::history::TestRecord;

inline std::string StageFixture() {
  return std::string(TRTLLM_RUN_SOURCE_DIR) + "/tests/fixtures/stage";
}

inline rapidjson::Document Json(const CliRun& run) {
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  return doc;
}

// ISO 8601 UTC of `days` days ago (at `minute` minutes past the hour, for order).
inline std::string DaysAgo(int days, int minute) {
  std::time_t then = std::time(nullptr) - days * 86400L;
  std::tm tm{};
  gmtime_r(&then, &tm);
  tm.tm_min = minute % 60;
  tm.tm_sec = minute / 60;
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// One recorded case holding the outcomes of one test.
inline CaseRecord Outcomes(const std::string& node_id, const std::string& commit,
                           const std::string& at, std::vector<std::pair<std::string, int>> outcomes,
                           double seconds = 1) {
  CaseRecord record;
  record.kind = "stage";
  record.name = "seeded";
  record.commit = commit;
  record.branch = "main";
  record.recorded_at = at;
  record.verdict = "PASSED";
  for (const auto& [outcome, attempt] : outcomes) {
    TestRecord test;
    test.node_id = node_id;
    test.outcome = outcome;
    test.attempt = attempt;
    test.duration_seconds = seconds;
    if (outcome == "failed") test.signature = "AssertionError: N != N";
    record.tests.push_back(test);
  }
  return record;
}

// The node ids of the tests with a pass or a failure in the store.
inline std::set<std::string> NodeIds(const std::string& store) {
  auto opened = OpenHistoryStore(store);
  REQUIRE(opened.ok());
  auto counts = opened.value()->CountsByCommit("");
  REQUIRE(counts.ok());
  std::set<std::string> ids;
  for (const auto& row : counts.value()) ids.insert(row.node_id);
  return ids;
}

// A seeded history of 50 tests (10 flaky, 5 always failing, 3 fixed, 2 mixed on unknown
// commits) classified exactly by `history flaky`, `history TEST` and `history prune`.
inline void CheckFlakyHistory(const std::string& store) {
  std::set<std::string> flaky_ids;
  {
    auto opened = OpenHistoryStore(store);
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    trtllm_run::history::HistoryStore& history = *opened.value();
    const std::vector<std::string> commits = {std::string(40, 'a'), std::string(40, 'b'),
                                              std::string(40, 'c')};
    int minute = 0;
    auto record = [&](const CaseRecord& one) { REQUIRE(history.Record(one).ok()); };
    // 30 steady tests: passed on every commit.
    for (int i = 0; i < 30; ++i) {
      for (const std::string& commit : commits) {
        record(Outcomes("steady.py::test_" + std::to_string(i), commit, DaysAgo(2, minute++),
                        {{"passed", 0}, {"passed", 0}}));
      }
    }
    // 3 fixed: failed on commit a, passed on b and c (a fix is not a flake).
    for (int i = 0; i < 3; ++i) {
      const std::string id = "fixed.py::test_" + std::to_string(i);
      record(Outcomes(id, commits[0], DaysAgo(2, minute++), {{"failed", 0}, {"failed", 0}}));
      record(Outcomes(id, commits[1], DaysAgo(2, minute++), {{"passed", 0}}));
      record(Outcomes(id, commits[2], DaysAgo(2, minute++), {{"passed", 0}}));
    }
    // 2 with both outcomes where the commit is not known: not evidence of a flake.
    for (int i = 0; i < 2; ++i) {
      record(Outcomes("nocommit.py::test_" + std::to_string(i), "", DaysAgo(2, minute++),
                      {{"passed", 0}, {"failed", 0}}));
    }
    // 5 always failing, skips among them.
    for (int i = 0; i < 5; ++i) {
      for (const std::string& commit : commits) {
        record(Outcomes("broken.py::test_" + std::to_string(i), commit, DaysAgo(2, minute++),
                        {{"failed", 0}, {"failed", 1}, {"failed", 2}, {"skipped", 0}}));
      }
    }
    // 5 flaky on one commit: i+1 failures among 10 runs of commit b.
    for (int i = 0; i < 5; ++i) {
      const std::string id = "mixed.py::test_" + std::to_string(i);
      flaky_ids.insert(id);
      std::vector<std::pair<std::string, int>> outcomes;
      for (int run = 0; run < 10; ++run) outcomes.push_back({run <= i ? "failed" : "passed", 0});
      record(Outcomes(id, commits[1], DaysAgo(i == 4 ? 40 : 3, minute++), outcomes));
    }
    // 5 that passed only on a rerun (each on its own commit: a failure then a rerun's pass).
    for (int i = 0; i < 5; ++i) {
      const std::string id = "rerun.py::test_" + std::to_string(i);
      flaky_ids.insert(id);
      record(Outcomes(id, commits[static_cast<std::size_t>(i % 3)], DaysAgo(1, minute++),
                      {{"failed", 0}, {"passed", 1}}));
      record(Outcomes(id, commits[static_cast<std::size_t>((i + 1) % 3)], DaysAgo(1, minute++),
                      {{"passed", 0}}));
    }
  }
  CHECK(NodeIds(store).size() == 50);

  CliRun run = RunCli({"history", "flaky", "--history", store, "--json"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  rapidjson::Document doc = Json(run);
  REQUIRE(doc.IsObject());
  std::set<std::string> found;
  double previous = 2;
  for (const auto& test : doc["flaky"].GetArray()) {
    found.insert(test["node_id"].GetString());
    CHECK(test["flake_rate"].GetDouble() <= previous);  // ranked
    previous = test["flake_rate"].GetDouble();
  }
  CHECK(found == flaky_ids);
  REQUIRE(doc["flaky"].Size() == 10);
  // The highest rate: 5 failures of 10 runs (the rerun tests: 1 of 3).
  CHECK(std::string(doc["flaky"][0]["node_id"].GetString()) == "mixed.py::test_4");
  CHECK(doc["flaky"][0]["failed"].GetInt() == 5);
  CHECK(doc["flaky"][0]["passed"].GetInt() == 5);
  CHECK(doc["flaky"][0]["mixed_commits"].GetInt() == 1);

  // --days 30: mixed.py::test_4's outcomes are 40 days old.
  run = RunCli({"history", "flaky", "--days", "30", "--history", store});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK(run.stdout_text.find("9 flaky tests since ") == 0);
  CHECK(run.stdout_text.find("mixed.py::test_4") == std::string::npos);
  CHECK(run.stdout_text.find("rerun.py::test_0") != std::string::npos);

  // One test's record.
  run = RunCli({"history", "rerun.py::test_2", "--history", store});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK(run.stdout_text.find("rerun.py::test_2: 2 passed, 1 failed of 3 runs (pass rate 66.7%)\n"
                             "duration: p50 1.00 s, p90 1.00 s\n") == 0);
  CHECK(run.stdout_text.find("rerun 1") != std::string::npos);
  CHECK(run.stdout_text.find(std::string(10, 'c') + " (main)") != std::string::npos);
  CHECK(run.stdout_text.find("failure signatures:\n      1  AssertionError: N != N\n") !=
        std::string::npos);

  // Prune: what is older than 30 days goes.
  run = RunCli({"history", "prune", "--older-than", "30", "--history", store});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK(run.stdout_text.find("pruned 1 case recorded before") == 0);
  CHECK(NodeIds(store).count("mixed.py::test_4") == 0);
  CHECK(NodeIds(store).size() == 49);
}

// Durations seeded for a stage's tests, exported by `history export-durations`, and taken
// by `plan --stage` (--durations FILE, --durations history, and the fallback of a checkout
// without .test_durations). `dir`: a scratch directory.
inline void CheckDurationsExport(const std::string& store, const std::string& dir) {
  // The stage's tests as the plan lists them.
  CliRun plan = RunCli({"plan", "--repo-root", StageFixture(), "--stage", "DGX_B200-4_GPUs-PyTorch",
                        "--json", "--no-history"});
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  rapidjson::Document before = Json(plan);
  REQUIRE(before.IsObject());
  std::map<std::string, double> seeded;
  {
    auto opened = OpenHistoryStore(store);
    INFO(opened.status().ToString());
    REQUIRE(opened.ok());
    int i = 0;
    for (const auto& shard : before["shards"].GetArray()) {
      for (const auto& test : shard["tests"].GetArray()) {
        const std::string id = test["id"].GetString();
        if (id.find("::") == std::string::npos || id.find(' ') != std::string::npos) continue;
        const double seconds = 1000 + 10 * i++;
        seeded[id] = seconds;
        // Two runs whose mean is `seconds`; a skip's duration does not count.
        CaseRecord one =
            Outcomes(id, std::string(40, 'a'), DaysAgo(1, i), {{"passed", 0}}, seconds - 5);
        one.tests.push_back(one.tests.front());
        one.tests.back().outcome = "failed";
        one.tests.back().duration_seconds = seconds + 5;
        TestRecord skipped = one.tests.front();
        skipped.outcome = "skipped";
        skipped.duration_seconds = 0;
        one.tests.push_back(skipped);
        REQUIRE(opened.value()->Record(one).ok());
      }
    }
  }
  REQUIRE(seeded.size() >= 4);

  const std::string file = dir + "/.test_durations";
  CliRun exported = RunCli({"history", "export-durations", file, "--history", store});
  INFO(exported.Describe());
  REQUIRE(exported.exit_code == 0);
  rapidjson::Document durations;
  durations.Parse(ReadTextFile(file).c_str());
  REQUIRE(durations.IsObject());
  CHECK(durations.MemberCount() == seeded.size());
  for (const auto& [id, seconds] : seeded) {
    REQUIRE(durations.HasMember(id.c_str()));
    CHECK(durations[id.c_str()].GetDouble() == Approx(seconds));
  }

  // The split uses them: every seeded test's expected seconds is its exported duration.
  auto check_plan = [&](std::vector<std::string> args, const std::string& source) {
    args.insert(args.begin(), {"plan", "--repo-root", StageFixture(), "--stage",
                               "DGX_B200-4_GPUs-PyTorch", "--json"});
    CliRun run = RunCli(args);
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    rapidjson::Document doc = Json(run);
    REQUIRE(doc.IsObject());
    CHECK(std::string(doc["durations_source"].GetString()) == source);
    CHECK(run.stderr_text.find("durations: " + source + "\n") != std::string::npos);
    std::size_t matched = 0;
    for (const auto& shard : doc["shards"].GetArray()) {
      for (const auto& test : shard["tests"].GetArray()) {
        auto it = seeded.find(test["id"].GetString());
        if (it == seeded.end()) continue;
        ++matched;
        CHECK(test["expected_seconds"].GetDouble() == Approx(it->second));
      }
    }
    CHECK(matched == seeded.size());
  };
  check_plan({"--durations", file}, file);
  check_plan({"--durations", "history", "--history", store}, "history " + store);
  // The checkout's own .test_durations wins by default.
  plan = RunCli({"plan", "--repo-root", StageFixture(), "--stage", "DGX_B200-4_GPUs-PyTorch-3",
                 "--history", store});
  CHECK(plan.stdout_text.find("durations: tests/integration/defs/.test_durations\n") !=
        std::string::npos);
  // A checkout without one: the history's, said so.
  TempDir copy("trtllm_history_stage");
  std::filesystem::copy(StageFixture(), copy.path(), std::filesystem::copy_options::recursive);
  std::filesystem::remove(copy.path() + "/tests/integration/defs/.test_durations");
  plan = RunCli({"plan", "--repo-root", copy.path(), "--stage", "DGX_B200-4_GPUs-PyTorch-3",
                 "--history", store});
  INFO(plan.Describe());
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.stdout_text.find("durations: history " + store + "\n") != std::string::npos);
  CHECK(plan.stdout_text.find("warning: no tests/integration/defs/.test_durations in the "
                              "checkout: the split uses history " +
                              store) != std::string::npos);
  // `stage` takes the flag too (its bad value refused before anything runs).
  CliRun stage = RunCli({"stage", "DGX_B200-4_GPUs-PyTorch-3", "--repo-root", StageFixture(),
                         "--durations", dir + "/absent.json", "--scenario", "local_direct"});
  INFO(stage.Describe());
  CHECK(stage.exit_code == 2);
  CHECK(stage.stderr_text.find("absent.json") != std::string::npos);
}

}  // namespace trtllm_run_test::history_checks

#endif  // TRTLLM_RUN_TESTS_INTEGRATION_HISTORY_CHECKS_H_
