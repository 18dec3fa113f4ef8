// The history store (libcore history/) over real SQLite files: a case and its tests
// recorded and read back, the schema's migration runner on stores written with an older
// (and a newer) schema, the filesystem check that refuses stores SQLite cannot lock, and
// the analysis `trtllm-run history` prints (flaky tests, percentiles, signatures).
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "history/fs_check.h"
#include "history/history_query.h"
#include "history/history_record.h"
#include "history/history_store.h"
#include "plan_test_support.h"
#include "runtime/config_trust.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::history {
namespace {

using plan_test::TempDir;

CaseRecord SampleCase(const std::string& name, const std::string& verdict) {
  CaseRecord record;
  record.kind = "case";
  record.name = name;
  record.command = "pytest " + name;
  record.commit = std::string(40, 'a');
  record.branch = "main";
  record.scenario = "local_slurm";
  record.cluster = "trtllm-test";
  record.partition = "debug";
  record.nodes = "n[1-2]";
  record.gpu_type = "H100";
  record.verdict = verdict;
  record.duration_seconds = 12.5;
  record.work_dir = "/w/" + name;
  return record;
}

// The SQL of one statement's single text value, read with the sqlite3 C API directly.
std::string QueryText(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  std::string text;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return text;
}

TEST_CASE("history store: a case and its tests recorded and read back, WAL, mode 0600",
          "[history]") {
  TempDir dir("trtllm_history");
  const std::string path = dir / "sub/dir/history.sqlite";  // the directories are made
  Result<std::unique_ptr<HistoryStore>> store = OpenSqliteStore(path);
  REQUIRE(store.ok());
  CaseRecord record = SampleCase("t.py::test_a", "FAILED");
  record.signature = "AssertionError: N != N";
  record.recorded_at = "2026-12-01T10:00:00Z";
  record.tests.push_back({"t.py::test_a", "failed", 3.5, 0, "AssertionError: N != N"});
  record.tests.push_back({"t.py::test_a", "passed", 2.5, 1, ""});
  REQUIRE(store.value()->Record(record).ok());
  record.recorded_at = "2026-12-02T10:00:00Z";
  record.tests = {{"t.py::test_a", "passed", 4.0, 0, ""}};
  REQUIRE(store.value()->Record(record).ok());

  Result<std::pair<std::int64_t, std::int64_t>> counts = store.value()->RowCounts();
  REQUIRE(counts.ok());
  CHECK(counts->first == 2);
  CHECK(counts->second == 3);
  Result<std::vector<OutcomeRow>> rows = store.value()->Outcomes("t.py::test_a", 0);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  CHECK(rows->at(0).recorded_at == "2026-12-02T10:00:00Z");  // newest first
  CHECK(rows->at(0).outcome == "passed");
  CHECK(rows->at(0).branch == "main");
  CHECK(rows->at(2).signature == "AssertionError: N != N");
  CHECK(rows->at(1).attempt == 1);
  // A name without tests: the cases of that name.
  CaseRecord plain = SampleCase("true", "PASSED");
  REQUIRE(store.value()->Record(plain).ok());
  rows = store.value()->Outcomes("true", 5);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK(rows->at(0).outcome == "PASSED");
  CHECK(rows->at(0).duration_seconds == Approx(12.5));
  rows = store.value()->Outcomes("never recorded", 5);
  REQUIRE(rows.ok());
  CHECK(rows->empty());

  Result<std::map<std::string, double>> durations = store.value()->MeanDurations();
  REQUIRE(durations.ok());
  CHECK(durations->at("t.py::test_a") == Approx((3.5 + 2.5 + 4.0) / 3));

  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  CHECK(QueryText(path, "PRAGMA journal_mode") == "wal");
  CHECK(QueryText(path,
                  "SELECT cluster || ' ' || slurm_partition || ' ' || nodes || ' ' || "
                  "gpu_type FROM cases LIMIT 1") == "trtllm-test debug n[1-2] H100");

  // Prune: the cases before the cut and their tests go, the others stay.
  Result<std::int64_t> removed = store.value()->Prune("2026-12-02T00:00:00Z");
  REQUIRE(removed.ok());
  CHECK(removed.value() == 1);
  counts = store.value()->RowCounts();
  CHECK(counts->first == 2);
  CHECK(counts->second == 1);
}

// Each `run` opens the store, records one case and closes it: SQLite's recovery at open
// reads every frame of the WAL, and it forgets what was checkpointed, so a WAL that is only
// checkpointed (never restarted) grew by every run's frames for good and each later run
// read all of it (3.4 MB here after a day of runs). The WAL must stay bounded.
TEST_CASE("history store: one process per record keeps the WAL small", "[history]") {
  TempDir dir("trtllm_history_wal");
  const std::string path = dir / "history.sqlite";
  const std::string wal = path + "-wal";
  std::uintmax_t largest = 0;
  for (int run = 0; run < 90; ++run) {
    Result<std::unique_ptr<HistoryStore>> store = OpenSqliteStore(path);
    REQUIRE(store.ok());
    CaseRecord record = SampleCase("t.py::test_" + std::to_string(run), "PASSED");
    record.tests.push_back({record.name, "passed", 1.0, 0, ""});
    REQUIRE(store.value()->Record(record).ok());
    store.value().reset();
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(wal, error);
    if (!error) largest = std::max(largest, size);
  }
  // 90 records wrote ~300 frames (4 KiB pages, 24-byte frame headers). Bounded: at most
  // the 64-frame threshold plus one record's frames; before: 1.2 MB and growing.
  CHECK(largest <= 80u * (4096 + 24) + 32);
  Result<std::unique_ptr<HistoryStore>> store = OpenSqliteStore(path);
  REQUIRE(store.ok());
  Result<std::pair<std::int64_t, std::int64_t>> counts = store.value()->RowCounts();
  REQUIRE(counts.ok());
  CHECK(counts->first == 90);  // nothing lost to the truncations
  CHECK(counts->second == 90);
}
TEST_CASE("history store: the migration runner takes an older store to the newest schema",
          "[history]") {
  TempDir dir("trtllm_history");
  const std::string path = dir / "history.sqlite";
  {
    Result<std::unique_ptr<HistoryStore>> v1 = OpenSqliteStore(path);
    REQUIRE(v1.ok());
    REQUIRE(v1.value()->Record(SampleCase("old", "PASSED")).ok());
  }
  const int current = SqliteMigrations().back().version;
  REQUIRE(SqliteSchemaVersion(path).value() == current);
  // A newer trtllm-run's migrations: ours, then one more step.
  std::vector<Migration> newer = SqliteMigrations();
  newer.push_back({current + 1, "ALTER TABLE cases ADD COLUMN extra TEXT NOT NULL DEFAULT 'v2'"});
  {
    Result<std::unique_ptr<HistoryStore>> v2 = OpenSqliteStore(path, newer);
    REQUIRE(v2.ok());
    REQUIRE(v2.value()->Record(SampleCase("new", "FAILED")).ok());
  }
  CHECK(SqliteSchemaVersion(path).value() == current + 1);
  CHECK(QueryText(path, "SELECT group_concat(name || ':' || extra, ',') FROM cases") ==
        "old:v2,new:v2");
  // Opened again by the newer code: nothing to do, nothing lost.
  REQUIRE(OpenSqliteStore(path, newer).ok());
  CHECK(QueryText(path, "SELECT COUNT(*) FROM cases") == "2");

  // The older trtllm-run refuses the newer store rather than writing to it.
  Result<std::unique_ptr<HistoryStore>> old = OpenSqliteStore(path);
  REQUIRE_FALSE(old.ok());
  CHECK(old.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(old.status().message(), Catch::Contains(path));
  CHECK_THAT(old.status().message(),
             Catch::Contains("schema is version " + std::to_string(current + 1) + ", newer than"));

  // A version-0 store (an empty SQLite database, as `sqlite3 FILE 'VACUUM'` leaves).
  const std::string empty = dir / "empty.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(empty.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "CREATE TABLE unrelated(x); DROP TABLE unrelated", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CHECK(SqliteSchemaVersion(empty).value() == 0);
  REQUIRE(OpenSqliteStore(empty).ok());
  CHECK(SqliteSchemaVersion(empty).value() == current);
}

TEST_CASE("history store: a file that is not SQLite, a directory, refused with the path",
          "[history]") {
  TempDir dir("trtllm_history");
  const std::string text = dir / "notes.txt";
  REQUIRE(WriteFileAtomic(text, std::string(4096, 'x')).ok());
  Result<std::unique_ptr<HistoryStore>> store = OpenSqliteStore(text);
  REQUIRE_FALSE(store.ok());
  CHECK(store.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(store.status().message(), Catch::Contains(text + ": not a SQLite database"));
  CHECK(ReadFile(text).value() == std::string(4096, 'x'));  // untouched
  store = OpenSqliteStore(dir.path());
  REQUIRE_FALSE(store.ok());
  CHECK_THAT(store.status().message(), Catch::Contains("is a directory"));
  // A dangling symlink (someone else's, in a shared directory) is not followed to create.
  const std::string link = dir / "link.sqlite";
  REQUIRE(::symlink((dir / "target.sqlite").c_str(), link.c_str()) == 0);
  store = OpenSqliteStore(link);
  REQUIRE_FALSE(store.ok());
  CHECK_THAT(store.status().message(), Catch::Contains(link));
  CHECK_FALSE(std::filesystem::exists(dir / "target.sqlite"));
}

TEST_CASE("history store: filesystems without working locks are named by their statfs type",
          "[history]") {
  // linux/magic.h; CIFS's and SMB2's magic are above 2^31: f_type may hold them sign-extended.
  CHECK(UnlockableFilesystemName(0x6969) == "nfs");
  CHECK(UnlockableFilesystemName(0xFF534D42) == "cifs");
  CHECK(UnlockableFilesystemName(static_cast<std::int32_t>(0xFF534D42u)) == "cifs");
  CHECK(UnlockableFilesystemName(0xFE534D42) == "smb2");
  CHECK(UnlockableFilesystemName(0x517B) == "smb");
  CHECK(UnlockableFilesystemName(0x65735546) == "fuse");
  CHECK(UnlockableFilesystemName(0x01021997) == "9p");
  // Local filesystems (and Lustre/GPFS, which lock) pass to the lock probe.
  CHECK(UnlockableFilesystemName(0xEF53) == "");      // ext2/3/4
  CHECK(UnlockableFilesystemName(0x58465342) == "");  // xfs
  CHECK(UnlockableFilesystemName(0x01021994) == "");  // tmpfs
  CHECK(UnlockableFilesystemName(0x794C7630) == "");  // overlayfs
  CHECK(UnlockableFilesystemName(0x0BD00BD0) == "");  // lustre
  CHECK(UnlockableFilesystemName(0x47504653) == "");  // gpfs

  Status refused =
      UnlockableStoreStatus("/nfs/home/u/.local/share/trtllm-run/history.sqlite", "nfs");
  CHECK(refused.code() == StatusCode::kInvalidInput);
  CHECK_THAT(refused.message(),
             Catch::Contains("/nfs/home/u/.local/share/trtllm-run/history.sqlite: its "
                             "filesystem (nfs) does not give SQLite working locks"));
  CHECK_THAT(refused.hint(), Catch::Contains("--history FILE on a local disk"));
  CHECK_THAT(refused.hint(), Catch::Contains("--no-history"));

  // This machine's temp dir is local: its lock probe is granted, and leaves no lock.
  TempDir dir("trtllm_history");
  CHECK(CheckStoreFilesystem(dir.path(), dir / "h.sqlite").ok());
  CHECK(CheckStoreFilesystem(dir.path(), dir / "h.sqlite").ok());
  Status missing = CheckStoreFilesystem(dir / "absent", dir / "absent/h.sqlite");
  CHECK_FALSE(missing.ok());
  CHECK_THAT(missing.message(), Catch::Contains("absent"));
}

TEST_CASE("history flaky: both outcomes on one known commit, or a pass on a rerun", "[history]") {
  std::vector<CommitCounts> counts = {
      {"mixed", "c1", 3, 1, 0, "2026-12-01T00:00:00Z"},
      {"rerun", "c1", 1, 1, 1, "2026-12-01T00:00:00Z"},
      // Failed on c1, fixed on c2: a fix, not a flake.
      {"fixed", "c1", 0, 2, 0, "2026-12-01T00:00:00Z"},
      {"fixed", "c2", 5, 0, 0, "2026-12-02T00:00:00Z"},
      {"broken", "c1", 0, 4, 0, "2026-12-01T00:00:00Z"},
      // An unknown commit is not one commit: no evidence of a flake.
      {"unknown", "", 2, 2, 0, "2026-12-01T00:00:00Z"},
      {"steady", "c1", 9, 0, 0, "2026-12-01T00:00:00Z"},
      // Passed on a rerun without failing (rerun because its shard's job died first).
      {"rerun_no_failure", "", 1, 0, 1, "2026-12-01T00:00:00Z"},
  };
  std::vector<FlakyTest> flaky = FindFlaky(counts);
  REQUIRE(flaky.size() == 2);
  CHECK(flaky[0].node_id == "rerun");  // 50% > 25%
  CHECK(flaky[0].flake_rate == Approx(0.5));
  CHECK(flaky[0].passed_on_rerun == 1);
  CHECK(flaky[1].node_id == "mixed");
  CHECK(flaky[1].flake_rate == Approx(0.25));
  CHECK(flaky[1].mixed_commits == 1);
}

TEST_CASE("history summary: pass rate, percentiles, signatures by count", "[history]") {
  CHECK(Percentile({}, 50) == std::nullopt);
  CHECK(*Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50) == Approx(5.5));
  CHECK(*Percentile({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 90) == Approx(9.1));
  CHECK(*Percentile({4}, 90) == Approx(4));
  std::vector<OutcomeRow> rows(5);
  rows[0].outcome = "passed";
  rows[0].duration_seconds = 1;
  rows[1].outcome = "failed";
  rows[1].signature = "B";
  rows[2].outcome = "failed";
  rows[2].signature = "A";
  rows[2].duration_seconds = 3;
  rows[3].outcome = "error";
  rows[3].signature = "A";
  rows[4].outcome = "skipped";
  TestSummary summary = Summarize("x", rows, 2);
  CHECK(summary.runs == 5);
  CHECK(summary.passed == 1);
  CHECK(summary.failed == 3);
  CHECK(summary.pass_rate == Approx(0.25));
  CHECK(summary.last.size() == 2);
  CHECK(*summary.p50_seconds == Approx(2));
  REQUIRE(summary.signatures.size() == 2);
  CHECK(summary.signatures[0] == std::make_pair(std::string("A"), std::int64_t{2}));
  CHECK(TestDurationsJson({{"b", 2.5}, {"a \"q\"", 1.0 / 3}}) ==
        "{\n  \"a \\\"q\\\"\": 0.333,\n  \"b\": 2.5\n}\n");
}

TEST_CASE("history records: failure signatures are stable across runs", "[history]") {
  CHECK(FailureSignature("") == "");
  CHECK(FailureSignature("\n  \nAssertionError: assert 42 == 0x7ffe12ab\nmore") ==
        "AssertionError: assert N == N");
  CHECK(FailureSignature("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3)") ==
        "CUDA out of memory. Tried to allocate N.N GiB (GPU N)");
  CHECK(FailureSignature(std::string(500, 'x')).size() == 160);
}

TEST_CASE("history records: the checkout's commit and branch read from .git", "[history]") {
  TempDir dir("trtllm_history");
  const std::string sha1(40, '1'), sha2(40, '2');
  // A checkout on a branch whose ref is packed.
  plan_test::WriteText(dir / "repo/.git/HEAD", "ref: refs/heads/feature/x\n");
  plan_test::WriteText(dir / "repo/.git/packed-refs", "# pack-refs with: peeled\n" + sha2 +
                                                          " refs/heads/main\n" + sha1 +
                                                          " refs/heads/feature/x\n");
  GitHead head = ReadGitHead(dir / "repo");
  CHECK(head.commit == sha1);
  CHECK(head.branch == "feature/x");
  // A worktree: .git is a file, refs live in the common dir.
  plan_test::WriteText(dir / "repo/.git/worktrees/wt/HEAD", "ref: refs/heads/main\n");
  plan_test::WriteText(dir / "repo/.git/worktrees/wt/commondir", "../..\n");
  const std::string sha3(40, '3');
  plan_test::WriteText(dir / "repo/.git/refs/heads/main", sha3 + "\n");  // loose beats packed
  plan_test::WriteText(dir / "wt/.git", "gitdir: " + dir / "repo/.git/worktrees/wt\n");
  head = ReadGitHead(dir / "wt");
  CHECK(head.commit == sha3);
  CHECK(head.branch == "main");
  // Detached HEAD; no checkout at all.
  plan_test::WriteText(dir / "repo/.git/HEAD", sha2 + "\n");
  head = ReadGitHead(dir / "repo");
  CHECK(head.commit == sha2);
  CHECK(head.branch == "");
  head = ReadGitHead(dir.path());
  CHECK(head.commit == "");
}

TEST_CASE("history config key: the user's config sets it, a checkout's may not", "[history]") {
  Result<ConfigFile> user = ParseConfigText("history: /local/me/h.sqlite\npartition: debug\n",
                                            "config.yaml", ConfigSource::kUser);
  REQUIRE(user.ok());
  REQUIRE(user->history.has_value());
  CHECK(user->history->text == "/local/me/h.sqlite");
  CHECK(user->history->origin == "config.yaml:1");
  Result<ConfigFile> repo =
      ParseConfigText("history: /tmp/steal.sqlite\n", ".trtllm-run.yaml", ConfigSource::kRepo);
  REQUIRE_FALSE(repo.ok());
  CHECK_THAT(repo.status().ToString(), Catch::Contains("'history' may not be set by a checkout"));
  Result<ConfigFile> bad = ParseConfigText("history: [a, b]\n", "config.yaml", ConfigSource::kUser);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().ToString(), Catch::Contains("'history' must be a file path or off"));
}

}  // namespace
}  // namespace trtllm_run::history
