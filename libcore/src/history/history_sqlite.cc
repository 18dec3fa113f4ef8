// The SQLite backend of HistoryStore (history_store.h).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "history/fs_check.h"
#include "history/history_store.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::history {
namespace {

namespace fs = std::filesystem;

// Writers wait this long for each other before a write fails (a run's verdict is written
// once; a minute covers a `history prune` of a large store running beside it).
constexpr int kBusyTimeoutMs = 60000;

// A commit that leaves the WAL with at least this many frames (~256 KiB) checkpoints it
// and truncates it to zero bytes (see SqliteStore::KeepWalSmall).
constexpr int kWalTruncateFrames = 64;

constexpr char kSchemaV1[] = R"sql(
CREATE TABLE cases(
  id INTEGER PRIMARY KEY,
  recorded_at TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  command TEXT NOT NULL DEFAULT '',
  workflow TEXT NOT NULL DEFAULT '',
  commit_sha TEXT NOT NULL DEFAULT '',
  branch TEXT NOT NULL DEFAULT '',
  scenario TEXT NOT NULL DEFAULT '',
  cluster TEXT NOT NULL DEFAULT '',
  slurm_partition TEXT NOT NULL DEFAULT '',
  nodes TEXT NOT NULL DEFAULT '',
  gpu_type TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  stage TEXT NOT NULL DEFAULT '',
  shard INTEGER NOT NULL DEFAULT 0,
  attempt INTEGER NOT NULL DEFAULT 0,
  verdict TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  duration_seconds REAL NOT NULL DEFAULT 0,
  work_dir TEXT NOT NULL DEFAULT '');
CREATE INDEX cases_name ON cases(name, recorded_at);
CREATE INDEX cases_recorded_at ON cases(recorded_at);
CREATE TABLE tests(
  id INTEGER PRIMARY KEY,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  duration_seconds REAL,
  attempt INTEGER NOT NULL DEFAULT 0,
  signature TEXT NOT NULL DEFAULT '',
  commit_sha TEXT NOT NULL DEFAULT '',
  recorded_at TEXT NOT NULL);
CREATE INDEX tests_node ON tests(node_id, recorded_at);
CREATE INDEX tests_case ON tests(case_id);
CREATE INDEX tests_counts ON tests(node_id, commit_sha, outcome, attempt, recorded_at);
)sql";

// v2: the perf metrics of every perf case (docs/perf.md), read per match key and time.
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE perf_points(
  id INTEGER PRIMARY KEY,
  recorded_at TEXT NOT NULL,
  match_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  pre_merge INTEGER NOT NULL,
  commit_sha TEXT NOT NULL,
  branch TEXT NOT NULL,
  work_dir TEXT NOT NULL
);
CREATE INDEX perf_points_key ON perf_points(match_key, recorded_at);
)sql";

// tests_counts covers CountsByCommit (`history flaky`): its GROUP BY reads the index in
// order, never the table (100,000 rows: 0.5 s -> 0.07 s here).

// The one row of schema_version says which migrations have run.
constexpr char kVersionTable[] =
    "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)";

class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return stmt_; }
  void Text(int index, const std::string& value) {
    sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
  void Int(int index, std::int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void Real(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void Null(int index) { sqlite3_bind_null(stmt_, index); }
  int Step() { return sqlite3_step(stmt_); }
  std::string ColumnText(int column) {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text ? std::string(reinterpret_cast<const char*>(text),
                              static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                : std::string();
  }
  std::int64_t ColumnInt(int column) { return sqlite3_column_int64(stmt_, column); }
  std::optional<double> ColumnReal(int column) {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

class SqliteStore : public HistoryStore {
 public:
  SqliteStore(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  ~SqliteStore() override { sqlite3_close_v2(db_); }

  const std::string& location() const override { return path_; }

  // sqlite3_wal_hook: after each commit, how many frames the WAL holds.
  static int OnWalCommit(void* self, sqlite3*, const char*, int frames) {
    static_cast<SqliteStore*>(self)->wal_frames_ = frames;
    return SQLITE_OK;
  }

  Status Record(const CaseRecord& record) override;
  Result<std::vector<OutcomeRow>> Outcomes(const std::string& name, int limit) override;
  Result<std::vector<CommitCounts>> CountsByCommit(const std::string& since) override;
  Result<std::map<std::string, double>> MeanDurations() override;
  Result<std::vector<LatestOutcome>> LatestTestOutcomes(
      const std::string& commit, const std::optional<std::string>& stage) override;
  Result<std::vector<LatestOutcome>> LatestCaseVerdicts(const std::string& commit) override;
  Result<std::int64_t> Prune(const std::string& before) override;
  Result<std::pair<std::int64_t, std::int64_t>> RowCounts() override;
  Status RecordPerf(const std::vector<PerfPointRecord>& points) override;
  Result<std::vector<PerfPointRecord>> PerfPoints(const std::string& match_key,
                                                  const std::string& since) override;

 private:
  Status Error(const std::string& what) const {
    return Status::IoError("history store " + path_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }
  Status Exec(const char* sql, const std::string& what) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      std::string text = message ? message : "unknown error";
      sqlite3_free(message);
      return Status::IoError("history store " + path_ + ": " + what + ": " + text);
    }
    return Status::Ok();
  }

  // Called after each commit. SQLite's recovery at open reads every frame of the WAL and
  // forgets what was checkpointed, and a process records one case and closes, so a WAL
  // that is only checkpointed is never restarted: it grew by every run's frames (3.4 MB
  // after a day of runs here) and each run read all of it (~6 ms per MB) and, past the
  // autocheckpoint size, copied it into the database again. Truncating it at
  // kWalTruncateFrames keeps a run's recovery under ~256 KiB; the cost, one checkpoint
  // with its fsyncs, comes once per ~15 runs. Never waits: when another connection holds
  // the WAL (a reader, a writer), the next commit tries again. A failed checkpoint loses
  // nothing: the frames stay in the WAL.
  void KeepWalSmall() {
    if (wal_frames_ < kWalTruncateFrames) return;
    sqlite3_busy_timeout(db_, 0);
    int frames = 0;
    int checkpointed = 0;
    if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &frames,
                                  &checkpointed) == SQLITE_OK) {
      wal_frames_ = 0;
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  }

  std::string path_;
  sqlite3* db_;
  std::mutex mu_;
  int wal_frames_ = 0;
};

Status SqliteStore::Record(const CaseRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string at = record.recorded_at.empty() ? NowIso8601() : record.recorded_at;
  // IMMEDIATE: the write lock is taken (waiting up to the busy timeout) before anything is
  // read, so two writers never deadlock upgrading a read lock.
  TRTLLM_RUN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting a write"));
  auto rollback = [&](Status status) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  };
  {
    Statement insert(db_,
                     "INSERT INTO cases(recorded_at, kind, name, command, workflow, commit_sha, "
                     "branch, scenario, cluster, slurm_partition, nodes, gpu_type, host, stage, "
                     "shard, attempt, verdict, signature, duration_seconds, work_dir) "
                     "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!insert.ok()) return rollback(Error("preparing the case insert"));
    int i = 1;
    for (const std::string* text :
         {&at, &record.kind, &record.name, &record.command, &record.workflow, &record.commit,
          &record.branch, &record.scenario, &record.cluster, &record.partition, &record.nodes,
          &record.gpu_type, &record.host, &record.stage}) {
      insert.Text(i++, *text);
    }
    insert.Int(i++, record.shard);
    insert.Int(i++, record.attempt);
    insert.Text(i++, record.verdict);
    insert.Text(i++, record.signature);
    insert.Real(i++, record.duration_seconds);
    insert.Text(i++, record.work_dir);
    if (insert.Step() != SQLITE_DONE) return rollback(Error("recording the case"));
  }
  const std::int64_t case_id = sqlite3_last_insert_rowid(db_);
  if (!record.tests.empty()) {
    Statement insert(db_,
                     "INSERT INTO tests(case_id, node_id, outcome, duration_seconds, attempt, "
                     "signature, commit_sha, recorded_at) VALUES(?,?,?,?,?,?,?,?)");
    if (!insert.ok()) return rollback(Error("preparing the test insert"));
    for (const TestRecord& test : record.tests) {
      sqlite3_reset(insert.get());
      insert.Int(1, case_id);
      insert.Text(2, test.node_id);
      insert.Text(3, test.outcome);
      if (test.duration_seconds) {
        insert.Real(4, *test.duration_seconds);
      } else {
        insert.Null(4);
      }
      insert.Int(5, test.attempt);
      insert.Text(6, test.signature);
      insert.Text(7, record.commit);
      insert.Text(8, at);
      if (insert.Step() != SQLITE_DONE) return rollback(Error("recording a test"));
    }
  }
  Status committed = Exec("COMMIT", "committing the case");
  if (!committed.ok()) return rollback(committed);
  KeepWalSmall();
  return Status::Ok();
}

// One row of the outcome queries of Outcomes, whose columns are, in order: recorded_at,
// commit, branch, outcome, attempt, duration, signature, work_dir, stage, shard.
OutcomeRow ReadOutcomeRow(Statement& query) {
  OutcomeRow row;
  row.recorded_at = query.ColumnText(0);
  row.commit = query.ColumnText(1);
  row.branch = query.ColumnText(2);
  row.outcome = query.ColumnText(3);
  row.attempt = static_cast<int>(query.ColumnInt(4));
  row.duration_seconds = query.ColumnReal(5);
  row.signature = query.ColumnText(6);
  row.work_dir = query.ColumnText(7);
  row.stage = query.ColumnText(8);
  row.shard = static_cast<int>(query.ColumnInt(9));
  return row;
}

Result<std::vector<OutcomeRow>> SqliteStore::Outcomes(const std::string& name, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OutcomeRow> rows;
  {
    Statement query(db_,
                    "SELECT t.recorded_at, t.commit_sha, c.branch, t.outcome, t.attempt, "
                    "t.duration_seconds, t.signature, c.work_dir, c.stage, c.shard "
                    "FROM tests t JOIN cases c ON c.id = t.case_id WHERE t.node_id = ? "
                    "ORDER BY t.recorded_at DESC, t.id DESC LIMIT ?");
    if (!query.ok()) return Error("preparing the test query");
    query.Text(1, name);
    query.Int(2, limit > 0 ? limit : -1);
    int rc;
    while ((rc = query.Step()) == SQLITE_ROW) {
      rows.push_back(ReadOutcomeRow(query));
    }
    if (rc != SQLITE_DONE) return Error("reading a test's outcomes");
  }
  if (!rows.empty()) return rows;
  Statement query(db_,
                  "SELECT recorded_at, commit_sha, branch, verdict, attempt, duration_seconds, "
                  "signature, work_dir, stage, shard FROM cases WHERE name = ? "
                  "ORDER BY recorded_at DESC, id DESC LIMIT ?");
  if (!query.ok()) return Error("preparing the case query");
  query.Text(1, name);
  query.Int(2, limit > 0 ? limit : -1);
  int rc;
  while ((rc = query.Step()) == SQLITE_ROW) {
    rows.push_back(ReadOutcomeRow(query));
  }
  if (rc != SQLITE_DONE) return Error("reading a case's verdicts");
  return rows;
}

Result<std::vector<CommitCounts>> SqliteStore::CountsByCommit(const std::string& since) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_,
                  "SELECT node_id, commit_sha, "
                  "SUM(CASE WHEN outcome = 'passed' THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN outcome IN ('failed', 'error') THEN 1 ELSE 0 END), "
                  "SUM(CASE WHEN outcome = 'passed' AND attempt > 0 THEN 1 ELSE 0 END), "
                  "MAX(recorded_at) FROM tests WHERE recorded_at >= ? "
                  "GROUP BY node_id, commit_sha");
  if (!query.ok()) return Error("preparing the counts query");
  query.Text(1, since);
  std::vector<CommitCounts> counts;
  int rc;
  while ((rc = query.Step()) == SQLITE_ROW) {
    CommitCounts row;
    row.node_id = query.ColumnText(0);
    row.commit = query.ColumnText(1);
    row.passed = query.ColumnInt(2);
    row.failed = query.ColumnInt(3);
    row.passed_on_rerun = query.ColumnInt(4);
    row.last_at = query.ColumnText(5);
    counts.push_back(std::move(row));
  }
  if (rc != SQLITE_DONE) return Error("counting outcomes");
  return counts;
}

Result<std::map<std::string, double>> SqliteStore::MeanDurations() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_,
                  "SELECT node_id, AVG(duration_seconds) FROM tests "
                  "WHERE duration_seconds IS NOT NULL AND outcome IN ('passed', 'failed', 'error') "
                  "GROUP BY node_id");
  if (!query.ok()) return Error("preparing the durations query");
  std::map<std::string, double> durations;
  int rc;
  while ((rc = query.Step()) == SQLITE_ROW) {
    durations[query.ColumnText(0)] = query.ColumnReal(1).value_or(0);
  }
  if (rc != SQLITE_DONE) return Error("reading durations");
  return durations;
}

// Both read the rows newest first and keep the first of each id (plain SQL: no window
// function, no SQLite-only aggregate).
// Steps a latest-outcome query (id, outcome, recorded_at, work_dir; sorted by id, newest
// first within it) keeping the first row of each id. False when the query failed.
bool FirstPerId(Statement* query, std::vector<LatestOutcome>* rows) {
  int rc;
  while ((rc = query->Step()) == SQLITE_ROW) {
    std::string id = query->ColumnText(0);
    if (!rows->empty() && rows->back().id == id) continue;
    rows->push_back(
        {std::move(id), query->ColumnText(1), query->ColumnText(2), query->ColumnText(3)});
  }
  return rc == SQLITE_DONE;
}

Result<std::vector<LatestOutcome>> SqliteStore::LatestTestOutcomes(
    const std::string& commit, const std::optional<std::string>& stage) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_,
                  "SELECT t.node_id, t.outcome, t.recorded_at, c.work_dir FROM tests t "
                  "JOIN cases c ON c.id = t.case_id "
                  "WHERE t.commit_sha = ? AND (? = 0 OR c.stage = ?) "
                  "ORDER BY t.node_id, t.recorded_at DESC, t.attempt DESC, t.id DESC");
  if (!query.ok()) return Error("preparing the latest outcomes query");
  query.Text(1, commit);
  query.Int(2, stage ? 1 : 0);
  query.Text(3, stage.value_or(""));
  std::vector<LatestOutcome> rows;
  if (!FirstPerId(&query, &rows)) return Error("reading the latest outcomes");
  return rows;
}

Result<std::vector<LatestOutcome>> SqliteStore::LatestCaseVerdicts(const std::string& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_,
                  "SELECT name, verdict, recorded_at, work_dir FROM cases "
                  "WHERE commit_sha = ? AND kind IN ('run', 'case') "
                  "ORDER BY name, recorded_at DESC, id DESC");
  if (!query.ok()) return Error("preparing the latest verdicts query");
  query.Text(1, commit);
  std::vector<LatestOutcome> rows;
  if (!FirstPerId(&query, &rows)) return Error("reading the latest verdicts");
  return rows;
}

Result<std::int64_t> SqliteStore::Prune(const std::string& before) {
  std::lock_guard<std::mutex> lock(mu_);
  TRTLLM_RUN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting a write"));
  auto rollback = [&](Status status) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  };
  {
    Statement tests(
        db_, "DELETE FROM tests WHERE case_id IN (SELECT id FROM cases WHERE recorded_at < ?)");
    if (!tests.ok()) return rollback(Error("preparing the prune"));
    tests.Text(1, before);
    if (tests.Step() != SQLITE_DONE) return rollback(Error("pruning tests"));
  }
  std::int64_t removed = 0;
  {
    Statement cases(db_, "DELETE FROM cases WHERE recorded_at < ?");
    if (!cases.ok()) return rollback(Error("preparing the prune"));
    cases.Text(1, before);
    if (cases.Step() != SQLITE_DONE) return rollback(Error("pruning cases"));
    removed = sqlite3_changes(db_);
  }
  Statement perf(db_, "DELETE FROM perf_points WHERE recorded_at < ?");
  if (!perf.ok()) return rollback(Error("preparing the prune"));
  perf.Text(1, before);
  if (perf.Step() != SQLITE_DONE) return rollback(Error("pruning perf points"));
  Status committed = Exec("COMMIT", "committing the prune");
  if (!committed.ok()) return rollback(committed);
  KeepWalSmall();
  return removed;
}

Result<std::pair<std::int64_t, std::int64_t>> SqliteStore::RowCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_, "SELECT (SELECT COUNT(*) FROM cases), (SELECT COUNT(*) FROM tests)");
  if (!query.ok() || query.Step() != SQLITE_ROW) return Error("counting rows");
  return std::make_pair(query.ColumnInt(0), query.ColumnInt(1));
}

Status SqliteStore::RecordPerf(const std::vector<PerfPointRecord>& points) {
  if (points.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  const std::string now = NowIso8601();
  TRTLLM_RUN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE", "starting a write"));
  auto rollback = [&](Status status) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  };
  {
    Statement insert(db_,
                     "INSERT INTO perf_points(recorded_at, match_key, metric, value, pre_merge, "
                     "commit_sha, branch, work_dir) VALUES(?,?,?,?,?,?,?,?)");
    if (!insert.ok()) return rollback(Error("preparing the perf insert"));
    for (const PerfPointRecord& point : points) {
      sqlite3_reset(insert.get());
      insert.Text(1, point.recorded_at.empty() ? now : point.recorded_at);
      insert.Text(2, point.match_key);
      insert.Text(3, point.metric);
      insert.Real(4, point.value);
      insert.Int(5, point.pre_merge ? 1 : 0);
      insert.Text(6, point.commit);
      insert.Text(7, point.branch);
      insert.Text(8, point.work_dir);
      if (insert.Step() != SQLITE_DONE) return rollback(Error("recording a perf point"));
    }
  }
  Status committed = Exec("COMMIT", "committing the perf points");
  if (!committed.ok()) return rollback(committed);
  KeepWalSmall();
  return Status::Ok();
}

Result<std::vector<PerfPointRecord>> SqliteStore::PerfPoints(const std::string& match_key,
                                                             const std::string& since) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement query(db_,
                  "SELECT recorded_at, match_key, metric, value, pre_merge, commit_sha, branch, "
                  "work_dir FROM perf_points WHERE match_key = ? AND recorded_at >= ? "
                  "ORDER BY recorded_at, id");
  if (!query.ok()) return Error("preparing the perf query");
  query.Text(1, match_key);
  query.Text(2, since);
  std::vector<PerfPointRecord> points;
  int rc;
  while ((rc = query.Step()) == SQLITE_ROW) {
    PerfPointRecord point;
    point.recorded_at = query.ColumnText(0);
    point.match_key = query.ColumnText(1);
    point.metric = query.ColumnText(2);
    point.value = query.ColumnReal(3).value_or(0);
    point.pre_merge = query.ColumnInt(4) != 0;
    point.commit = query.ColumnText(5);
    point.branch = query.ColumnText(6);
    point.work_dir = query.ColumnText(7);
    points.push_back(std::move(point));
  }
  if (rc != SQLITE_DONE) return Error("reading perf points");
  return points;
}

// The version in schema_version; 0 when the table is empty or absent.
Result<int> ReadVersion(sqlite3* db, const std::string& path) {
  Statement exists(db,
                   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
                   "name = 'schema_version'");
  if (!exists.ok() || exists.Step() != SQLITE_ROW) {
    return Status::InvalidInput(
        "history store " + path + ": not a SQLite database (" + sqlite3_errmsg(db) + ")",
        "give --history a new file, or move this one away");
  }
  if (exists.ColumnInt(0) == 0) return 0;
  Statement version(db, "SELECT MAX(version) FROM schema_version");
  if (!version.ok() || version.Step() != SQLITE_ROW) {
    return Status::IoError("history store " + path +
                           ": reading its schema version: " + sqlite3_errmsg(db));
  }
  return static_cast<int>(version.ColumnInt(0));
}

Status ExecOn(sqlite3* db, const std::string& sql, const std::string& path,
              const std::string& what) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    return Status::IoError("history store " + path + ": " + what + ": " + text);
  }
  return Status::Ok();
}

// Brings the schema to the newest migration: each step and its version row in one
// transaction, under the write lock (another process migrating at once waits, then sees
// the new version and does nothing).
Status Migrate(sqlite3* db, const std::string& path, const std::vector<Migration>& migrations) {
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  Result<int> version = ReadVersion(db, path);
  if (!version.ok()) return version.status();
  auto too_new = [&](int found) {
    return Status::InvalidInput(
        "history store " + path + ": its schema is version " + std::to_string(found) +
            ", newer than this trtllm-run knows (" + std::to_string(newest) + ")",
        "use the newer trtllm-run that wrote it, or give --history another file");
  };
  if (version.value() > newest) return too_new(version.value());
  if (version.value() == newest) return Status::Ok();
  TRTLLM_RUN_RETURN_IF_ERROR(ExecOn(db, "BEGIN IMMEDIATE", path, "starting the migration"));
  auto rollback = [&](Status status) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return status;
  };
  Status made = ExecOn(db, kVersionTable, path, "creating schema_version");
  if (!made.ok()) return rollback(made);
  version = ReadVersion(db, path);  // again, under the lock
  if (!version.ok()) return rollback(version.status());
  if (version.value() > newest) return rollback(too_new(version.value()));
  for (const Migration& migration : migrations) {
    if (migration.version <= version.value()) continue;
    Status step = ExecOn(db, migration.sql, path,
                         "migrating to schema version " + std::to_string(migration.version));
    if (step.ok()) {
      step = ExecOn(db,
                    "DELETE FROM schema_version; INSERT INTO schema_version(version) VALUES(" +
                        std::to_string(migration.version) + ")",
                    path, "recording schema version " + std::to_string(migration.version));
    }
    if (!step.ok()) return rollback(step);
  }
  return ExecOn(db, "COMMIT", path, "committing the migration");
}

}  // namespace

const std::vector<Migration>& SqliteMigrations() {
  static const std::vector<Migration> migrations = {{1, kSchemaV1}, {2, kSchemaV2}};
  return migrations;
}

Result<std::unique_ptr<HistoryStore>> OpenSqliteStore(const std::string& path,
                                                      const std::vector<Migration>& migrations) {
  if (path.empty()) return Status::InvalidInput("history store: the path is empty");
  std::error_code error;
  fs::path dir = fs::absolute(path, error).parent_path();
  if (!fs::is_directory(dir, error)) {
    fs::create_directories(dir, error);
    if (error) {
      return Status::IoError("history store " + path + ": cannot create " + dir.string() + ": " +
                             error.message());
    }
    ::chmod(dir.c_str(), 0700);  // a run's commands and paths are the user's own
  }
  if (fs::is_directory(path, error)) {
    return Status::InvalidInput("history store " + path + " is a directory",
                                "give --history a file name, e.g. " + path + "/history.sqlite");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(CheckStoreFilesystem(dir.string(), path));
  // Created 0600 before SQLite opens it: its -wal and -shm files take the same mode. Never
  // through a dangling symlink (in a shared directory it may be someone else's).
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) != 0) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      return Status::IoError("history store " + path + ": cannot create: " + std::strerror(errno));
    }
    if (fd >= 0) ::close(fd);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    Status status = Status::IoError(
        "history store " + path + ": cannot open: " + (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close_v2(db);
    return status;
  }
  std::unique_ptr<SqliteStore> store = std::make_unique<SqliteStore>(path, db);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // The last connection to close would checkpoint the WAL into the database (two fsyncs):
  // with one short-lived connection per run that was most of what recording cost (~30 ms
  // of a `run --custom-cmd true` here). The WAL is checkpointed and truncated by the
  // commit that takes it past kWalTruncateFrames instead (KeepWalSmall; this hook replaces
  // SQLite's automatic checkpoint, which never restarted the WAL of a short-lived
  // connection); readers see its content either way.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  sqlite3_wal_hook(db, &SqliteStore::OnWalCommit, store.get());
  // WAL: readers never block the writer nor it them; NORMAL: a commit is durable at the
  // next checkpoint (an OS crash may lose the last cases, never corrupt the store).
  // Switching to WAL needs a moment alone with the file: retried while another opener has it.
  std::string mode;
  for (int tries = 0; tries < 200; ++tries) {
    Statement wal(db, "PRAGMA journal_mode=WAL");
    const int rc = wal.ok() ? wal.Step() : SQLITE_ERROR;
    if (rc == SQLITE_ROW) {
      mode = wal.ColumnText(0);
      break;
    }
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
      if (sqlite3_errcode(db) == SQLITE_NOTADB) {
        return Status::InvalidInput("history store " + path + ": not a SQLite database",
                                    "give --history a new file, or move this one away");
      }
      return Status::IoError("history store " + path + ": setting WAL mode: " + sqlite3_errmsg(db));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (mode != "wal") {
    return Status::IoError("history store " + path + ": cannot switch to WAL mode (got '" + mode +
                           "')");
  }
  TRTLLM_RUN_RETURN_IF_ERROR(
      ExecOn(db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", path, "setting pragmas"));
  TRTLLM_RUN_RETURN_IF_ERROR(Migrate(db, path, migrations));
  return std::unique_ptr<HistoryStore>(std::move(store));
}

Result<int> SqliteSchemaVersion(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(db);
    return Status::IoError("history store " + path + ": cannot open");
  }
  Result<int> version = ReadVersion(db, path);
  sqlite3_close_v2(db);
  return version;
}

}  // namespace trtllm_run::history
