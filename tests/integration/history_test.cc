// The history through the real binary and real SQLite files: runs recorded at their verdict
// (8 concurrent `run --cases` processes of 100 cases each), `history flaky` over a seeded
// store of 50 tests, `history TEST`, durations exported and taken by `plan --stage`, and the
// flags' bad input (exit 2, nothing run).
#include <rapidjson/document.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli_harness.h"
#include "history/history_store.h"
#include "history_checks.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;
using namespace trtllm_run_test::history_checks;
using trtllm_run::history::OpenSqliteStore;

namespace {

// One integer of a query over the store at `path` (the sqlite3 C API, read-only).
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

std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::string value;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}
}  // namespace

TEST_CASE("history: 8 concurrent trtllm-run processes record 100 cases each, no lock error",
          "[history][cli]") {
  TempDir repo("trtllm_history_conc");
  std::string cases = "defaults:\n  scenario: local_direct\n  monitor_timeout: 1m\ncases:\n";
  for (int i = 1; i <= 100; ++i) {
    cases += "  - {name: c" + std::to_string(i) + ", custom_cmd: 'true'}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", cases);
  const std::string store = repo.path() + "/shared/history.sqlite";
  std::vector<CliRun> runs(8);
  std::vector<std::thread> threads;
  for (int p = 0; p < 8; ++p) {
    threads.emplace_back([&, p] {
      CliOptions options;
      options.args = {"run",         "--cases",   repo.path() + "/cases.yaml",
                      "--repo-root", repo.path(), "--max-parallel-local",
                      "4",           "--run-dir", repo.path() + "/run" + std::to_string(p),
                      "--history",   store};
      options.timeout_seconds = 600;
      runs[static_cast<std::size_t>(p)] = RunCli(options);
    });
  }
  // A reader beside the writers: `history flaky` never waits for them nor fails on a lock.
  std::atomic<bool> writing{true};
  std::vector<CliRun> reads;
  std::thread reader([&] {
    while (writing) {
      reads.push_back(RunCli({"history", "flaky", "--history", store, "--json"}));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  for (std::thread& thread : threads) thread.join();
  writing = false;
  reader.join();
  int answered = 0;
  for (const CliRun& read : reads) {
    INFO(read.Describe());
    // Exit 2 only before the first process created the store.
    CHECK(
        (read.exit_code == 0 || read.stderr_text.find("no history store at") != std::string::npos));
    CHECK(read.stderr_text.find("locked") == std::string::npos);
    answered += read.exit_code == 0 ? 1 : 0;
  }
  CHECK(answered > 0);
  for (const CliRun& run : runs) {
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK(run.stderr_text.find("not recorded in the history") == std::string::npos);
    CHECK(run.stderr_text.find("locked") == std::string::npos);
  }
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 800);
  CHECK(QueryInt(store, "SELECT COUNT(DISTINCT work_dir) FROM cases") == 800);
  CHECK(QueryInt(store,
                 "SELECT COUNT(*) FROM cases WHERE verdict = 'PASSED' AND kind = 'case' "
                 "AND scenario = 'local_direct'") == 800);
  // Every name 8 times: one per process.
  CHECK(QueryInt(store,
                 "SELECT COUNT(*) FROM (SELECT name FROM cases GROUP BY name "
                 "HAVING COUNT(*) = 8)") == 100);

  CliRun c17 = RunCli({"history", "c17", "--history", store, "--json"});
  INFO(c17.Describe());
  REQUIRE(c17.exit_code == 0);
  rapidjson::Document doc = Json(c17);
  REQUIRE(doc.IsObject());
  CHECK(doc["runs"].GetInt() == 8);
  CHECK(doc["pass_rate"].GetDouble() == 1.0);
  CHECK(doc["last"].Size() == 8);
}

TEST_CASE("history: a run records its verdict with the checkout's commit, errors never change it",
          "[history][cli]") {
  TempDir repo("trtllm_history_run");
  TempDir data("trtllm_history_data");
  // A real git checkout on a branch.
  const std::string git = "cd " + repo.path() +
                          " && git init -q -b feature/x && git -c user.name=t -c "
                          "user.email=t@t commit -q --allow-empty -m init";
  REQUIRE(std::system(git.c_str()) == 0);
  const std::string head = [&] {
    std::string text = ReadTextFile(repo.path() + "/.git/refs/heads/feature/x");
    return text.substr(0, 40);
  }();
  CliOptions options;
  options.args = {"run",          "--custom-cmd", "echo boom; exit 3", "--scenario",
                  "local_direct", "--repo-root",  repo.path()};
  options.env = {{"XDG_DATA_HOME", data.path()}};
  CliRun failed = RunCli(options);
  INFO(failed.Describe());
  CHECK(failed.exit_code == 1);
  const std::string store = data.path() + "/trtllm-run/history.sqlite";  // the default place
  REQUIRE(fs::exists(store));
  CHECK(QueryText(store,
                  "SELECT kind || ' ' || verdict || ' ' || commit_sha || ' ' || branch "
                  "FROM cases") == "run FAILED " + head + " feature/x");
  CHECK(QueryText(store, "SELECT signature FROM cases") != "");

  // plan, then exec (the MCP server's run_case): exec records the verdict.
  CliOptions plan = options;
  plan.args = {"plan",        "--custom-cmd", "true",         "--scenario", "local_direct",
               "--repo-root", repo.path(),    "--model-name", "planned",    "--json"};
  CliRun planned = RunCli(plan);
  INFO(planned.Describe());
  REQUIRE(planned.exit_code == 0);
  rapidjson::Document plan_doc = Json(planned);
  REQUIRE(plan_doc.IsObject());
  CliOptions exec = options;
  exec.args = {"exec", plan_doc["work_dir"].GetString()};
  CliRun executed = RunCli(exec);
  INFO(executed.Describe());
  CHECK(executed.exit_code == 0);
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 2);
  CHECK(QueryText(store, "SELECT verdict || ' ' || work_dir FROM cases ORDER BY id DESC LIMIT 1") ==
        std::string("PASSED ") + plan_doc["work_dir"].GetString());
  options.args = {"run",          "--custom-cmd", "echo boom; exit 3", "--scenario",
                  "local_direct", "--repo-root",  repo.path()};

  // --no-history: nothing recorded; same verdict.
  options.args.push_back("--no-history");
  CliRun unrecorded = RunCli(options);
  CHECK(unrecorded.exit_code == 1);
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 2);
  options.args.pop_back();

  // A store that cannot be opened: a warning naming it, the verdict and exit code unchanged.
  const std::string not_sqlite = repo.path() + "/notes.txt";
  WriteTextFile(not_sqlite, std::string(2048, 'x'));
  options.args.insert(options.args.end(), {"--history", not_sqlite});
  CliRun warned = RunCli(options);
  INFO(warned.Describe());
  CHECK(warned.exit_code == 1);
  CHECK(warned.stderr_text.find("warning: not recorded in the history: history store " +
                                not_sqlite + ": not a SQLite database") != std::string::npos);
  CHECK(ReadTextFile(not_sqlite) == std::string(2048, 'x'));

  // The user's config turns it off.
  TempDir config("trtllm_history_config");
  fs::create_directories(config.path() + "/trtllm-run");
  WriteTextFile(config.path() + "/trtllm-run/config.yaml", "history: off\n");
  ::chmod((config.path() + "/trtllm-run/config.yaml").c_str(), 0600);
  options.args = {"run",          "--custom-cmd", "true",     "--scenario",
                  "local_direct", "--repo-root",  repo.path()};
  options.env.push_back({"XDG_CONFIG_HOME", config.path()});
  CliRun off = RunCli(options);
  INFO(off.Describe());
  CHECK(off.exit_code == 0);
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 2);
  // ... or points it elsewhere.
  WriteTextFile(config.path() + "/trtllm-run/config.yaml",
                "history: " + repo.path() + "/team.sqlite\n");
  ::chmod((config.path() + "/trtllm-run/config.yaml").c_str(), 0600);
  CliRun elsewhere = RunCli(options);
  CHECK(elsewhere.exit_code == 0);
  CHECK(QueryInt(repo.path() + "/team.sqlite", "SELECT COUNT(*) FROM cases") == 1);
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM cases") == 2);
}

TEST_CASE("history flaky: a seeded history of 50 tests, 10 flaky and 5 always failing",
          "[history][cli]") {
  TempDir dir("trtllm_history_flaky");
  CheckFlakyHistory(dir.path() + "/history.sqlite");
}

TEST_CASE("history export-durations: pytest-split's file, taken by plan --stage --durations",
          "[history][cli][stage]") {
  TempDir dir("trtllm_history_durations");
  CheckDurationsExport(dir.path() + "/history.sqlite", dir.path());
}

TEST_CASE("history: bad input is exit 2 with a message, nothing run or written", "[history][cli]") {
  TempDir dir("trtllm_history_bad");
  const std::string store = dir.path() + "/history.sqlite";
  auto expect_2 = [&](std::vector<std::string> args, const std::string& says) {
    CliRun run = RunCli(args);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK(run.stderr_text.find(says) != std::string::npos);
  };
  expect_2({"history"}, "give TEST_OR_CASE");
  expect_2({"history", "flaky", "extra", "--history", store}, "'flaky' takes no argument");
  expect_2({"history", "flaky", "--days", "soon", "--history", store},
           "--days 'soon' is not a number of days");
  expect_2({"history", "flaky", "--days", "0", "--history", store}, "not a number of days");
  expect_2({"history", "prune", "--days", "3", "--history", store}, "--days goes with flaky");
  expect_2({"history", "t.py::x", "--older-than", "3", "--history", store},
           "--older-than goes with prune");
  expect_2({"history", "export-durations", "--history", store}, "export-durations takes the FILE");
  expect_2({"history", "export-durations", dir.path() + "/no/such/dir/d.json", "--history", store},
           "export-durations FILE");
  expect_2({"history", "t.py::x", "--history", store, "--no-history"},
           "give --history STORE or --no-history, not both");
  expect_2({"history", "t.py::x", "--history", store}, "no history store at " + store);
  CHECK_FALSE(fs::exists(store));  // a query never creates one
  expect_2({"run", "--custom-cmd", "touch " + dir.path() + "/ran", "--scenario", "local_direct",
            "--repo-root", dir.path(), "--history", store, "--no-history"},
           "not both");
  CHECK_FALSE(fs::exists(dir.path() + "/ran"));
  REQUIRE(OpenSqliteStore(store).ok());
  expect_2({"history", "never/ran.py::test", "--history", store},
           "no test or case named 'never/ran.py::test'");
}

TEST_CASE("history: a local_slurm run records partition, nodes and each pytest outcome",
          "[slurm][history]") {
  EnsureSlurm();
  TempDir repo("trtllm_history_slurm");
  TempDir bin("trtllm_history_bin");
  fs::create_directories(repo.path() + "/tests");
  WriteTextFile(repo.path() + "/tests/test_a.py", "def test_ok():\n    pass\n");
  // A pytest stand-in on the job's PATH: one test passes, one fails.
  WriteTextFile(bin.path() + "/pytest",
                "#!/bin/bash\necho 'tests/test_a.py::test_ok PASSED'\n"
                "echo 'tests/test_a.py::test_bad FAILED'\n"
                "echo '=========== short test summary info ==========='\n"
                "echo 'FAILED tests/test_a.py::test_bad - assert 1 == 2'\n"
                "echo '========= 1 failed, 1 passed in 0.01s ========='\nexit 1\n");
  ::chmod((bin.path() + "/pytest").c_str(), 0755);
  const std::string store = repo.path() + "/history.sqlite";
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_slurm",
                  "--repo-root",
                  repo.path(),
                  "--partition",
                  "batch",
                  "--skip-install",
                  "true",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--test-cmd",
                  "pytest tests/test_a.py -v",
                  "--history",
                  store};
  options.cwd = repo.path();
  options.env = {{"PATH", bin.path() + ":" + std::string(std::getenv("PATH"))}};
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK(QueryText(store,
                  "SELECT kind || ' ' || scenario || ' ' || slurm_partition || ' ' || "
                  "verdict FROM cases") == "run local_slurm batch FAILED");
  CHECK(QueryText(store, "SELECT nodes FROM cases") != "");  // the node the job ran on
  CHECK(QueryInt(store, "SELECT COUNT(*) FROM tests") == 2);
  CHECK(QueryText(store,
                  "SELECT outcome || ' ' || signature FROM tests WHERE node_id = "
                  "'tests/test_a.py::test_bad'") == "failed assert N == N");
  CHECK(QueryText(store,
                  "SELECT outcome FROM tests WHERE node_id = "
                  "'tests/test_a.py::test_ok'") == "passed");
}
