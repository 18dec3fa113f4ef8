// The history of runs: every case verdict and every per-test outcome trtllm-run gave,
// kept in a store so that later questions (is this test flaky? how long does it take?
// did it pass on this commit?) have answers (docs/history.md).
//
// HistoryStore is the interface every backend implements: SQLite (history_sqlite.cc, the
// default: one file per user, WAL, a busy timeout, one transaction per case) and
// PostgreSQL (history_postgres.cc: a team's shared history on a server, chosen by a
// postgresql:// URL). The queries are plain SQL aggregates both accept; the analysis of
// their rows is history_query.h's, backend-free.
#ifndef TRTLLM_RUN_HISTORY_HISTORY_STORE_H_
#define TRTLLM_RUN_HISTORY_HISTORY_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run::history {

// One test's outcome within a case (pytest's node id and what it reported).
struct TestRecord {
  std::string node_id;                     // "accuracy/test_a.py::TestX::test_y[p]"
  std::string outcome;                     // passed, failed, error, skipped, xfailed, xpassed
  std::optional<double> duration_seconds;  // when the runner reported one (JUnit)
  int attempt = 0;                         // 0: the first run; 1, 2: CI-policy reruns
  std::string signature;                   // FailureSignature of its message; "" when none
};

// One case's verdict and where it ran. Empty strings are "not known".
struct CaseRecord {
  std::string kind;  // "run" (single run), "case" (of run --cases), "stage" (a shard's job)
  std::string name;  // the case's name: its cases-file name, else its command
  std::string command;
  std::string workflow;
  std::string commit;  // the checkout's HEAD
  std::string branch;
  std::string scenario;
  std::string cluster;
  std::string partition;
  std::string nodes;      // the node list as Slurm gave it ("n[1-2]")
  std::string gpu_type;   // "H100", when known
  std::string host;       // the host trtllm-run ran on
  std::string stage;      // the CI stage of a stage's shard; ""
  int shard = 0;          // the split id of a stage's shard; 0
  int attempt = 0;        // the rerun round of a stage's shard; 0
  std::string verdict;    // RunStatusName
  std::string signature;  // the failure's signature (FailureSignature); "" when it passed
  double duration_seconds = 0;
  std::string work_dir;
  std::string recorded_at;  // ISO 8601 UTC; set by Record when empty
  std::vector<TestRecord> tests;
};

// One outcome of a test (or, for a case without tests, of the case), newest first.
struct OutcomeRow {
  std::string recorded_at;
  std::string commit;
  std::string branch;
  std::string outcome;  // a test's outcome, or the case's verdict
  int attempt = 0;
  std::optional<double> duration_seconds;
  std::string signature;
  std::string work_dir;
  std::string stage;
  int shard = 0;
};

// For each test and commit since a time: how often it passed and failed, and how often it
// passed on a rerun (attempt > 0) after failing on the first attempt of the same case.
struct CommitCounts {
  std::string node_id;
  std::string commit;
  std::int64_t passed = 0;  // outcome "passed"
  std::int64_t failed = 0;  // outcome "failed" or "error"
  std::int64_t passed_on_rerun = 0;
  std::string last_at;  // the newest of these outcomes
};

// One perf metric value of one measurement (docs/perf.md): `match_key` is the case's CI
// match key in canonical text (perf::MatchKeyText), `metric` the metric's name.
struct PerfPointRecord {
  std::string recorded_at;  // ISO 8601 UTC; set by RecordPerf when empty
  std::string match_key;
  std::string metric;
  double value = 0;
  bool pre_merge = false;  // measured with --perf-gate pre-merge: not baseline data
  std::string commit;
  std::string branch;
  std::string work_dir;
};

// The newest outcome of one test (or verdict of one case) on a commit, for --reuse-passed.
struct LatestOutcome {
  std::string id;           // the test's node id, or the case's name
  std::string outcome;      // the test's outcome ("passed", ...), or the case's verdict
  std::string recorded_at;  // ISO 8601 UTC
  std::string work_dir;     // of the case that ran it
};

// The store. Every method is safe to call from several threads of one process (calls are
// serialized), and several processes may use one store at once: writers wait for each
// other up to the busy timeout, readers never wait for writers.
class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // Where the store is ("/home/u/.local/share/trtllm-run/history.sqlite"), for messages.
  virtual const std::string& location() const = 0;
  // Writes the case and its tests in one transaction: all of it or nothing.
  virtual Status Record(const CaseRecord& record) = 0;
  // The outcomes of the test whose node id is `name`; when there is none, the verdicts of
  // the cases named `name`. Newest first, at most `limit` (0: all).
  virtual Result<std::vector<OutcomeRow>> Outcomes(const std::string& name, int limit) = 0;
  // Per test and commit, the outcomes recorded at or after `since` (ISO 8601; "": all).
  virtual Result<std::vector<CommitCounts>> CountsByCommit(const std::string& since) = 0;
  // Each test's mean duration over its passed and failed runs that have one.
  virtual Result<std::map<std::string, double>> MeanDurations() = 0;
  // --reuse-passed: each test's newest outcome on `commit` (its last attempt: the newest
  // recorded_at, then the highest attempt), of cases of the stage `stage` when it is set
  // (any case, stage or not, when nullopt). One row per node id, in node id order.
  virtual Result<std::vector<LatestOutcome>> LatestTestOutcomes(
      const std::string& commit, const std::optional<std::string>& stage) = 0;
  // --reuse-passed of `run --cases`: each case name's newest verdict on `commit`, among the
  // cases of kind "run" and "case". One row per name, in name order.
  virtual Result<std::vector<LatestOutcome>> LatestCaseVerdicts(const std::string& commit) = 0;
  // Deletes the cases (and their tests) recorded before `before` (ISO 8601); how many.
  virtual Result<std::int64_t> Prune(const std::string& before) = 0;
  // Writes the perf points of one measurement in one transaction: all of them or none.
  virtual Status RecordPerf(const std::vector<PerfPointRecord>& points) = 0;
  // The perf points of `match_key` recorded at or after `since` (ISO 8601; "": all), every
  // metric, oldest first (recorded_at, then insertion order). Plain SQL:
  //   SELECT ... FROM perf_points WHERE match_key = ? AND recorded_at >= ?
  //   ORDER BY recorded_at, id
  virtual Result<std::vector<PerfPointRecord>> PerfPoints(const std::string& match_key,
                                                          const std::string& since) = 0;
  // The number of case and test rows (for tests and `history` summaries).
  virtual Result<std::pair<std::int64_t, std::int64_t>> RowCounts() = 0;
};

// One migration step of a backend's schema: the SQL that takes a store from version
// `version - 1` to `version`.
struct Migration {
  int version = 0;
  std::string sql;
};

// The schema's migrations, v1 first (history_sqlite.cc).
const std::vector<Migration>& SqliteMigrations();

// Opens (creating when absent, with its directory, mode 0700) the SQLite store at `path`
// and brings its schema to the newest of `migrations` (one transaction per step).
// kInvalidInput naming the path and the fix when its filesystem cannot lock (fs_check.h),
// when it is not a SQLite database, or when its schema is newer than `migrations` know.
Result<std::unique_ptr<HistoryStore>> OpenSqliteStore(
    const std::string& path, const std::vector<Migration>& migrations = SqliteMigrations());

// The SQLite schema version of the store at `path` (0: no schema yet); for tests.
Result<int> SqliteSchemaVersion(const std::string& path);

// True when `location` names a PostgreSQL server (a postgresql:// or postgres:// URL)
// rather than a SQLite file.
bool IsPostgresUrl(const std::string& location);

// `url` with its password, if any (the user info's or a password= parameter's), replaced
// by "***": what every message and location() shows of a URL.
std::string RedactPostgresUrl(const std::string& url);

// A URL a user gave (--history, the config's `history:`): kInvalidInput naming the
// redacted URL when libpq cannot parse it, when its port or connect_timeout is not a
// number, or when it carries a password (libpq reads that from ~/.pgpass, $PGPASSFILE or
// $PGPASSWORD itself; argv and config files are readable by others). Loads libpq (the
// first call with a URL): kNotFound naming libpq.so.5 and the package libpq5 when it
// cannot be loaded.
Status CheckPostgresUrl(const std::string& url);

// The PostgreSQL schema's migrations, v1 first (history_postgres.cc): the SQLite schema's
// tables and columns in PostgreSQL's types.
const std::vector<Migration>& PostgresMigrations();

// Connects to the PostgreSQL database `url` names (waiting at most its connect_timeout,
// else $PGCONNECT_TIMEOUT, else 10 s) and brings its schema to the newest of `migrations`
// (one transaction under an advisory lock: concurrent openers migrate once). The URL may
// carry a password here (an embedding tool's choice); no message and no location() shows
// it. kInvalidInput for a URL CheckPostgresUrl refuses for its form or a schema newer
// than `migrations` know; kIoError naming the redacted URL when the server cannot be
// reached or refuses; kNotFound when libpq.so.5 cannot be loaded (history/libpq.h).
Result<std::unique_ptr<HistoryStore>> OpenPostgresStore(
    const std::string& url, const std::vector<Migration>& migrations = PostgresMigrations());

// The PostgreSQL schema version of the database at `url` (0: no schema yet); for tests.
Result<int> PostgresSchemaVersion(const std::string& url);

// The store `location` names: OpenPostgresStore for a postgresql:// URL, else
// OpenSqliteStore.
Result<std::unique_ptr<HistoryStore>> OpenHistoryStore(const std::string& location);

}  // namespace trtllm_run::history

#endif  // TRTLLM_RUN_HISTORY_HISTORY_STORE_H_
