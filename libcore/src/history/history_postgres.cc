// The PostgreSQL backend of HistoryStore (history_store.h): a team's shared history on a
// server. Same tables and queries as the SQLite backend; timestamps stay ISO 8601 text
// (collated "C", so they order as the SQLite store's do).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "history/history_postgres_url.h"
#include "history/history_store.h"
#include "history/libpq.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::history {
namespace {

// How long connecting may take when neither the URL nor $PGCONNECT_TIMEOUT says: a dead
// server costs a run this much, never a hang.
constexpr char kDefaultConnectTimeoutSeconds[] = "10";

// A transaction that fails on a serialization failure or a deadlock is run again this
// many times (each after a short pause) before the error is returned.
constexpr int kTransactionTries = 5;

// Taken (for the transaction) by whoever migrates the schema: concurrent openers of a new
// database migrate once, one after the other. Any constant the database's other users do
// not take; this one spells "trtllmhi".
constexpr long long kMigrationLockKey = 0x7472746c6c6d6869LL;

// Tests per INSERT statement of Record (9 parameters each: well under libpq's 65,535).
constexpr std::size_t kTestsPerInsert = 500;

constexpr char kSchemaV1[] = R"sql(
CREATE TABLE cases(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  recorded_at TEXT COLLATE "C" NOT NULL,
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
  duration_seconds DOUBLE PRECISION NOT NULL DEFAULT 0,
  work_dir TEXT NOT NULL DEFAULT '');
CREATE INDEX cases_name ON cases(name, recorded_at);
CREATE INDEX cases_recorded_at ON cases(recorded_at);
CREATE TABLE tests(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id BIGINT NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  duration_seconds DOUBLE PRECISION,
  attempt INTEGER NOT NULL DEFAULT 0,
  signature TEXT NOT NULL DEFAULT '',
  commit_sha TEXT COLLATE "C" NOT NULL DEFAULT '',
  recorded_at TEXT COLLATE "C" NOT NULL);
CREATE INDEX tests_node ON tests(node_id, recorded_at);
CREATE INDEX tests_case ON tests(case_id);
CREATE INDEX tests_counts ON tests(node_id, commit_sha, outcome, attempt, recorded_at);
)sql";

// v2: the perf metrics of every perf case (docs/perf.md), as SQLite's v2.
constexpr char kSchemaV2[] = R"sql(
CREATE TABLE perf_points(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  recorded_at TEXT COLLATE "C" NOT NULL,
  match_key TEXT NOT NULL,
  metric TEXT NOT NULL,
  value DOUBLE PRECISION NOT NULL,
  pre_merge INTEGER NOT NULL,
  commit_sha TEXT NOT NULL,
  branch TEXT NOT NULL,
  work_dir TEXT NOT NULL);
CREATE INDEX perf_points_key ON perf_points(match_key, recorded_at);
)sql";

// Text PostgreSQL stores: valid UTF-8 without NUL (the connection's encoding is UTF8;
// SQLite took any bytes). An invalid byte or a NUL becomes '?'.
std::string StorableText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80           ? 1
                         : (c >> 5) == 0x6  ? 2
                         : (c >> 4) == 0xE  ? 3
                         : (c >> 3) == 0x1E ? 4
                                            : 0;
    bool valid = length > 0 && i + length <= text.size() && c != 0;
    for (std::size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (valid && length == 2) valid = c >= 0xC2;  // no overlong forms
    if (valid && length == 3) {
      const unsigned char next = static_cast<unsigned char>(text[i + 1]);
      valid = !(c == 0xE0 && next < 0xA0) && !(c == 0xED && next >= 0xA0);  // no surrogates
    }
    if (valid && length == 4) {
      const unsigned char next = static_cast<unsigned char>(text[i + 1]);
      valid = c <= 0xF4 && !(c == 0xF0 && next < 0x90) && !(c == 0xF4 && next >= 0x90);
    }
    if (!valid) {
      out += '?';
      ++i;
      continue;
    }
    out.append(text, i, length);
    i += length;
  }
  return out;
}

std::string DoubleText(double value) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Parameters of one statement, in text form; nullopt is SQL NULL.
class Params {
 public:
  void Text(const std::string& value) { values_.push_back(StorableText(value)); }
  void Int(std::int64_t value) { values_.push_back(std::to_string(value)); }
  void Real(std::optional<double> value) {
    values_.push_back(value ? std::optional<std::string>(DoubleText(*value)) : std::nullopt);
  }
  int size() const { return static_cast<int>(values_.size()); }
  std::vector<const char*> Pointers() const {
    std::vector<const char*> pointers;
    for (const std::optional<std::string>& value : values_) {
      pointers.push_back(value ? value->c_str() : nullptr);
    }
    return pointers;
  }

 private:
  std::vector<std::optional<std::string>> values_;
};

using ResultPtr = std::unique_ptr<PGresult, void (*)(PGresult*)>;

ResultPtr Wrap(PGresult* result) { return ResultPtr(result, Pq().PQclear); }

std::string Cell(const PGresult* result, int row, int column) {
  return std::string(Pq().PQgetvalue(result, row, column),
                     static_cast<std::size_t>(Pq().PQgetlength(result, row, column)));
}

std::int64_t IntCell(const PGresult* result, int row, int column) {
  return Pq().PQgetisnull(result, row, column)
             ? 0
             : std::strtoll(Pq().PQgetvalue(result, row, column), nullptr, 10);
}

std::optional<double> RealCell(const PGresult* result, int row, int column) {
  if (Pq().PQgetisnull(result, row, column)) return std::nullopt;
  return std::strtod(Pq().PQgetvalue(result, row, column), nullptr);
}

// A failed statement's SQLSTATE ("" when the connection itself failed).
std::string SqlState(const PGresult* result) {
  const char* state = result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  return state ? state : "";
}

bool Retryable(const std::string& state) {
  return state == "40001" || state == "40P01";  // serialization_failure, deadlock_detected
}

class PostgresStore : public HistoryStore {
 public:
  PostgresStore(std::string url, PGconn* conn)
      : shown_(RedactPostgresUrl(url)), secrets_(PostgresUrlSecrets(url)), conn_(conn) {}
  ~PostgresStore() override { Pq().PQfinish(conn_); }

  const std::string& location() const override { return shown_; }

  Status Record(const CaseRecord& record) override;
  Result<std::vector<OutcomeRow>> Outcomes(const std::string& name, int limit) override;
  Result<std::vector<CommitCounts>> CountsByCommit(const std::string& since) override;
  Result<std::map<std::string, double>> MeanDurations() override;
  Result<std::int64_t> Prune(const std::string& before) override;
  Result<std::vector<LatestOutcome>> LatestTestOutcomes(
      const std::string& commit, const std::optional<std::string>& stage) override;
  Result<std::vector<LatestOutcome>> LatestCaseVerdicts(const std::string& commit) override;
  Status RecordPerf(const std::vector<PerfPointRecord>& points) override;
  Result<std::vector<PerfPointRecord>> PerfPoints(const std::string& match_key,
                                                  const std::string& since) override;
  Result<std::pair<std::int64_t, std::int64_t>> RowCounts() override;

  // The schema's version (0: none yet); Migrate brings it to the newest of `migrations`.
  Result<int> Version();
  Status Migrate(const std::vector<Migration>& migrations);

 private:
  // The message of a failure: what was being done and libpq's reason, without a password.
  Status Error(const std::string& what, const PGresult* result) const {
    const char* reason = result ? Pq().PQresultErrorMessage(result) : "";
    if (reason == nullptr || *reason == '\0') reason = Pq().PQerrorMessage(conn_);
    return Status::IoError("history store " + shown_ + ": " + what + ": " +
                           WithoutSecrets(reason, secrets_));
  }
  // Runs `sql`; the result when its status is `expected`, else the error.
  Result<ResultPtr> Exec(const std::string& sql, const Params& params, ExecStatusType expected,
                         const std::string& what, std::string* state = nullptr) {
    const std::vector<const char*> values = params.Pointers();
    ResultPtr result = Wrap(Pq().PQexecParams(conn_, sql.c_str(), params.size(), nullptr,
                                              values.data(), nullptr, nullptr, 0));
    if (Pq().PQresultStatus(result.get()) != expected) {
      if (state != nullptr) *state = SqlState(result.get());
      return Error(what, result.get());
    }
    return result;
  }
  // Runs `sql`, which may be several statements and takes no parameters (a migration).
  Status ExecScript(const std::string& sql, const std::string& what, std::string* state) {
    ResultPtr result = Wrap(Pq().PQexec(conn_, sql.c_str()));
    if (Pq().PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
      *state = SqlState(result.get());
      return Error(what, result.get());
    }
    return Status::Ok();
  }
  // A read; run again once on a new connection when the server had closed this one.
  Result<ResultPtr> Query(const std::string& sql, const Params& params, const std::string& what) {
    EnsureConnected();
    Result<ResultPtr> result = Exec(sql, params, PGRES_TUPLES_OK, what);
    if (result.ok() || Pq().PQstatus(conn_) == CONNECTION_OK) return result;
    Pq().PQreset(conn_);
    return Exec(sql, params, PGRES_TUPLES_OK, what);
  }
  // A connection the server closed (restarted, idle timeout) is opened again once.
  void EnsureConnected() {
    if (Pq().PQstatus(conn_) != CONNECTION_OK) Pq().PQreset(conn_);
  }
  // Runs `body` in a transaction: committed, or rolled back and run again (up to
  // kTransactionTries) on a serialization failure or deadlock, or once on a connection
  // lost before COMMIT was sent (after it, whether it committed is unknown: not run again,
  // so a case is never recorded twice).
  Status Transaction(const std::function<Status(std::string* state)>& body);

  std::string shown_;
  std::vector<std::string> secrets_;
  PGconn* conn_;
  std::mutex mu_;
};

Status PostgresStore::Transaction(const std::function<Status(std::string* state)>& body) {
  Status last = Status::Ok();
  bool reconnected = false;
  for (int attempt = 0; attempt < kTransactionTries; ++attempt) {
    EnsureConnected();
    std::string state;
    Result<ResultPtr> begun = Exec("BEGIN", Params(), PGRES_COMMAND_OK, "starting a write", &state);
    Status status = begun.ok() ? body(&state) : begun.status();
    bool commit_sent = false;
    if (status.ok()) {
      commit_sent = true;
      Result<ResultPtr> committed =
          Exec("COMMIT", Params(), PGRES_COMMAND_OK, "committing", &state);
      if (committed.ok()) return Status::Ok();
      status = committed.status();
    }
    last = status;
    if (Pq().PQstatus(conn_) != CONNECTION_OK) {
      if (reconnected || commit_sent) return last;
      reconnected = true;
      continue;
    }
    Pq().PQclear(Pq().PQexec(conn_, "ROLLBACK"));
    if (!Retryable(state)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * (attempt + 1)));
  }
  return last;
}

Status PostgresStore::Record(const CaseRecord& record) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string at = record.recorded_at.empty() ? NowIso8601() : record.recorded_at;
  return Transaction([&](std::string* state) -> Status {
    Params params;
    for (const std::string* text :
         {&at, &record.kind, &record.name, &record.command, &record.workflow, &record.commit,
          &record.branch, &record.scenario, &record.cluster, &record.partition, &record.nodes,
          &record.gpu_type, &record.host, &record.stage}) {
      params.Text(*text);
    }
    params.Int(record.shard);
    params.Int(record.attempt);
    params.Text(record.verdict);
    params.Text(record.signature);
    params.Real(record.duration_seconds);
    params.Text(record.work_dir);
    Result<ResultPtr> inserted = Exec(
        "INSERT INTO cases(recorded_at, kind, name, command, workflow, commit_sha, branch, "
        "scenario, cluster, slurm_partition, nodes, gpu_type, host, stage, shard, attempt, "
        "verdict, signature, duration_seconds, work_dir) VALUES($1, $2, $3, $4, $5, $6, $7, "
        "$8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING id",
        params, PGRES_TUPLES_OK, "recording the case", state);
    if (!inserted.ok()) return inserted.status();
    const std::int64_t case_id = IntCell(inserted->get(), 0, 0);
    for (std::size_t first = 0; first < record.tests.size(); first += kTestsPerInsert) {
      const std::size_t last = std::min(record.tests.size(), first + kTestsPerInsert);
      std::string sql =
          "INSERT INTO tests(case_id, node_id, outcome, duration_seconds, attempt, signature, "
          "commit_sha, recorded_at) VALUES";
      Params rows;
      for (std::size_t i = first; i < last; ++i) {
        const TestRecord& test = record.tests[i];
        const int base = rows.size();
        sql += i == first ? "(" : ", (";
        for (int k = 1; k <= 8; ++k) {
          sql += "$" + std::to_string(base + k) + (k < 8 ? ", " : ")");
        }
        rows.Int(case_id);
        rows.Text(test.node_id);
        rows.Text(test.outcome);
        rows.Real(test.duration_seconds);
        rows.Int(test.attempt);
        rows.Text(test.signature);
        rows.Text(record.commit);
        rows.Text(at);
      }
      Result<ResultPtr> tests = Exec(sql, rows, PGRES_COMMAND_OK, "recording the tests", state);
      if (!tests.ok()) return tests.status();
    }
    return Status::Ok();
  });
}

// The rows of the outcome queries of Outcomes, whose columns are, in order: recorded_at,
// commit, branch, outcome, attempt, duration, signature, work_dir, stage, shard.
std::vector<OutcomeRow> OutcomeRows(const PGresult* result) {
  std::vector<OutcomeRow> rows;
  for (int i = 0; i < Pq().PQntuples(result); ++i) {
    OutcomeRow row;
    row.recorded_at = Cell(result, i, 0);
    row.commit = Cell(result, i, 1);
    row.branch = Cell(result, i, 2);
    row.outcome = Cell(result, i, 3);
    row.attempt = static_cast<int>(IntCell(result, i, 4));
    row.duration_seconds = RealCell(result, i, 5);
    row.signature = Cell(result, i, 6);
    row.work_dir = Cell(result, i, 7);
    row.stage = Cell(result, i, 8);
    row.shard = static_cast<int>(IntCell(result, i, 9));
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<OutcomeRow>> PostgresStore::Outcomes(const std::string& name, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  Params params;
  params.Text(name);
  if (limit > 0) {
    params.Int(limit);
  } else {
    params.Real(std::nullopt);  // LIMIT NULL: all
  }
  Result<ResultPtr> tests = Query(
      "SELECT t.recorded_at, t.commit_sha, c.branch, t.outcome, t.attempt, "
      "t.duration_seconds, t.signature, c.work_dir, c.stage, c.shard "
      "FROM tests t JOIN cases c ON c.id = t.case_id WHERE t.node_id = $1 "
      "ORDER BY t.recorded_at DESC, t.id DESC LIMIT $2::bigint",
      params, "reading a test's outcomes");
  if (!tests.ok()) return tests.status();
  if (Pq().PQntuples(tests->get()) > 0) return OutcomeRows(tests->get());
  Result<ResultPtr> cases = Query(
      "SELECT recorded_at, commit_sha, branch, verdict, attempt, duration_seconds, "
      "signature, work_dir, stage, shard FROM cases WHERE name = $1 "
      "ORDER BY recorded_at DESC, id DESC LIMIT $2::bigint",
      params, "reading a case's verdicts");
  if (!cases.ok()) return cases.status();
  return OutcomeRows(cases->get());
}

Result<std::vector<CommitCounts>> PostgresStore::CountsByCommit(const std::string& since) {
  std::lock_guard<std::mutex> lock(mu_);
  Params params;
  params.Text(since);
  Result<ResultPtr> result = Query(
      "SELECT node_id, commit_sha, "
      "SUM(CASE WHEN outcome = 'passed' THEN 1 ELSE 0 END), "
      "SUM(CASE WHEN outcome IN ('failed', 'error') THEN 1 ELSE 0 END), "
      "SUM(CASE WHEN outcome = 'passed' AND attempt > 0 THEN 1 ELSE 0 END), "
      "MAX(recorded_at) FROM tests WHERE recorded_at >= $1 "
      "GROUP BY node_id, commit_sha",
      params, "counting outcomes");
  if (!result.ok()) return result.status();
  std::vector<CommitCounts> counts;
  const PGresult* rows = result->get();
  for (int i = 0; i < Pq().PQntuples(rows); ++i) {
    CommitCounts row;
    row.node_id = Cell(rows, i, 0);
    row.commit = Cell(rows, i, 1);
    row.passed = IntCell(rows, i, 2);
    row.failed = IntCell(rows, i, 3);
    row.passed_on_rerun = IntCell(rows, i, 4);
    row.last_at = Cell(rows, i, 5);
    counts.push_back(std::move(row));
  }
  return counts;
}

Result<std::map<std::string, double>> PostgresStore::MeanDurations() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<ResultPtr> result = Query(
      "SELECT node_id, AVG(duration_seconds) FROM tests "
      "WHERE duration_seconds IS NOT NULL AND outcome IN ('passed', 'failed', 'error') "
      "GROUP BY node_id",
      Params(), "reading durations");
  if (!result.ok()) return result.status();
  std::map<std::string, double> durations;
  for (int i = 0; i < Pq().PQntuples(result->get()); ++i) {
    durations[Cell(result->get(), i, 0)] = RealCell(result->get(), i, 1).value_or(0);
  }
  return durations;
}

Result<std::int64_t> PostgresStore::Prune(const std::string& before) {
  std::lock_guard<std::mutex> lock(mu_);
  std::int64_t removed = 0;
  Status pruned = Transaction([&](std::string* state) -> Status {
    Params params;
    params.Text(before);
    Result<ResultPtr> tests =
        Exec("DELETE FROM tests WHERE case_id IN (SELECT id FROM cases WHERE recorded_at < $1)",
             params, PGRES_COMMAND_OK, "pruning tests", state);
    if (!tests.ok()) return tests.status();
    Result<ResultPtr> cases = Exec("DELETE FROM cases WHERE recorded_at < $1", params,
                                   PGRES_COMMAND_OK, "pruning cases", state);
    if (!cases.ok()) return cases.status();
    removed = std::strtoll(Pq().PQcmdTuples(cases->get()), nullptr, 10);
    Result<ResultPtr> perf = Exec("DELETE FROM perf_points WHERE recorded_at < $1", params,
                                  PGRES_COMMAND_OK, "pruning perf points", state);
    return perf.ok() ? Status::Ok() : perf.status();
  });
  if (!pruned.ok()) return pruned;
  return removed;
}

// The rows of a latest-outcome query (id, outcome, recorded_at, work_dir), sorted by id and
// newest first within it: the first row of each id.
std::vector<LatestOutcome> FirstPerId(const PGresult* result) {
  std::vector<LatestOutcome> rows;
  for (int i = 0; i < Pq().PQntuples(result); ++i) {
    std::string id = Cell(result, i, 0);
    if (!rows.empty() && rows.back().id == id) continue;
    rows.push_back({std::move(id), Cell(result, i, 1), Cell(result, i, 2), Cell(result, i, 3)});
  }
  return rows;
}

Result<std::vector<LatestOutcome>> PostgresStore::LatestTestOutcomes(
    const std::string& commit, const std::optional<std::string>& stage) {
  std::lock_guard<std::mutex> lock(mu_);
  Params params;
  params.Text(commit);
  params.Int(stage ? 1 : 0);
  params.Text(stage.value_or(""));
  Result<ResultPtr> result = Query(
      "SELECT t.node_id, t.outcome, t.recorded_at, c.work_dir FROM tests t "
      "JOIN cases c ON c.id = t.case_id "
      "WHERE t.commit_sha = $1 AND ($2::integer = 0 OR c.stage = $3) "
      "ORDER BY t.node_id COLLATE \"C\", t.recorded_at DESC, t.attempt DESC, t.id DESC",
      params, "reading the latest outcomes");
  if (!result.ok()) return result.status();
  return FirstPerId(result->get());
}

Result<std::vector<LatestOutcome>> PostgresStore::LatestCaseVerdicts(const std::string& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  Params params;
  params.Text(commit);
  Result<ResultPtr> result = Query(
      "SELECT name, verdict, recorded_at, work_dir FROM cases "
      "WHERE commit_sha = $1 AND kind IN ('run', 'case') "
      "ORDER BY name COLLATE \"C\", recorded_at DESC, id DESC",
      params, "reading the latest verdicts");
  if (!result.ok()) return result.status();
  return FirstPerId(result->get());
}

Status PostgresStore::RecordPerf(const std::vector<PerfPointRecord>& points) {
  if (points.empty()) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  const std::string now = NowIso8601();
  return Transaction([&](std::string* state) -> Status {
    for (const PerfPointRecord& point : points) {
      Params params;
      params.Text(point.recorded_at.empty() ? now : point.recorded_at);
      params.Text(point.match_key);
      params.Text(point.metric);
      params.Real(point.value);
      params.Int(point.pre_merge ? 1 : 0);
      params.Text(point.commit);
      params.Text(point.branch);
      params.Text(point.work_dir);
      Result<ResultPtr> inserted = Exec(
          "INSERT INTO perf_points(recorded_at, match_key, metric, value, pre_merge, "
          "commit_sha, branch, work_dir) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
          params, PGRES_COMMAND_OK, "recording a perf point", state);
      if (!inserted.ok()) return inserted.status();
    }
    return Status::Ok();
  });
}

Result<std::vector<PerfPointRecord>> PostgresStore::PerfPoints(const std::string& match_key,
                                                               const std::string& since) {
  std::lock_guard<std::mutex> lock(mu_);
  Params params;
  params.Text(match_key);
  params.Text(since);
  Result<ResultPtr> result = Query(
      "SELECT recorded_at, match_key, metric, value, pre_merge, commit_sha, branch, work_dir "
      "FROM perf_points WHERE match_key = $1 AND recorded_at >= $2 ORDER BY recorded_at, id",
      params, "reading perf points");
  if (!result.ok()) return result.status();
  std::vector<PerfPointRecord> points;
  const PGresult* rows = result->get();
  for (int i = 0; i < Pq().PQntuples(rows); ++i) {
    PerfPointRecord point;
    point.recorded_at = Cell(rows, i, 0);
    point.match_key = Cell(rows, i, 1);
    point.metric = Cell(rows, i, 2);
    point.value = RealCell(rows, i, 3).value_or(0);
    point.pre_merge = IntCell(rows, i, 4) != 0;
    point.commit = Cell(rows, i, 5);
    point.branch = Cell(rows, i, 6);
    point.work_dir = Cell(rows, i, 7);
    points.push_back(std::move(point));
  }
  return points;
}

Result<std::pair<std::int64_t, std::int64_t>> PostgresStore::RowCounts() {
  std::lock_guard<std::mutex> lock(mu_);
  Result<ResultPtr> result =
      Query("SELECT (SELECT COUNT(*) FROM cases), (SELECT COUNT(*) FROM tests)", Params(),
            "counting rows");
  if (!result.ok()) return result.status();
  return std::make_pair(IntCell(result->get(), 0, 0), IntCell(result->get(), 0, 1));
}

Result<int> PostgresStore::Version() {
  // Two statements: the second names the table, which must exist when it is planned.
  Result<ResultPtr> exists = Exec("SELECT to_regclass('schema_version') IS NOT NULL", Params(),
                                  PGRES_TUPLES_OK, "reading its schema version");
  if (!exists.ok()) return exists.status();
  if (Cell(exists->get(), 0, 0) != "t") return 0;
  Result<ResultPtr> result = Exec("SELECT COALESCE(MAX(version), 0) FROM schema_version", Params(),
                                  PGRES_TUPLES_OK, "reading its schema version");
  if (!result.ok()) return result.status();
  return static_cast<int>(IntCell(result->get(), 0, 0));
}

Status PostgresStore::Migrate(const std::vector<Migration>& migrations) {
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  auto too_new = [&](int found) {
    return Status::InvalidInput(
        "history store " + shown_ + ": its schema is version " + std::to_string(found) +
            ", newer than this trtllm-run knows (" + std::to_string(newest) + ")",
        "use the newer trtllm-run that wrote it, or give --history another store");
  };
  Result<int> version = Version();
  if (!version.ok()) return version.status();
  if (version.value() > newest) return too_new(version.value());
  if (version.value() == newest) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  Status invalid = Status::Ok();
  Status migrated = Transaction([&](std::string* state) -> Status {
    Result<ResultPtr> locked =
        Exec("SELECT pg_advisory_xact_lock(" + std::to_string(kMigrationLockKey) + ")", Params(),
             PGRES_TUPLES_OK, "locking the schema for its migration", state);
    if (!locked.ok()) return locked.status();
    Result<ResultPtr> made =
        Exec("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)", Params(),
             PGRES_COMMAND_OK, "creating schema_version", state);
    if (!made.ok()) return made.status();
    Result<int> now = Version();  // again, under the lock
    if (!now.ok()) return now.status();
    if (now.value() > newest) return invalid = too_new(now.value());
    for (const Migration& migration : migrations) {
      if (migration.version <= now.value()) continue;
      const std::string step = "migrating to schema version " + std::to_string(migration.version);
      TRTLLM_RUN_RETURN_IF_ERROR(ExecScript(migration.sql, step, state));
      TRTLLM_RUN_RETURN_IF_ERROR(
          ExecScript("DELETE FROM schema_version; INSERT INTO schema_version(version) VALUES(" +
                         std::to_string(migration.version) + ")",
                     "recording schema version " + std::to_string(migration.version), state));
    }
    return Status::Ok();
  });
  if (!invalid.ok()) return invalid;
  return migrated;
}

// Connects to `url`: the connect timeout bounded, notices not printed.
Result<PGconn*> Connect(const std::string& url) {
  bool has_password = false;
  TRTLLM_RUN_RETURN_IF_ERROR(CheckPostgresUrlForm(url, &has_password));
  std::vector<const char*> keywords, values;
  // Earlier keywords are overridden by the URL's own (expand_dbname): its connect_timeout wins.
  const char* env_timeout = std::getenv("PGCONNECT_TIMEOUT");
  if (env_timeout == nullptr || *env_timeout == '\0') {
    keywords.push_back("connect_timeout");
    values.push_back(kDefaultConnectTimeoutSeconds);
  }
  keywords.insert(keywords.end(),
                  {"fallback_application_name", "client_encoding", "dbname", nullptr});
  values.insert(values.end(), {"trtllm-run", "UTF8", url.c_str(), nullptr});
  PGconn* conn = Pq().PQconnectdbParams(keywords.data(), values.data(), 1);
  if (conn == nullptr)
    return Status::IoError("history store " + RedactPostgresUrl(url) + ": out of memory");
  if (Pq().PQstatus(conn) != CONNECTION_OK) {
    const std::string why = WithoutSecrets(Pq().PQerrorMessage(conn), PostgresUrlSecrets(url));
    Pq().PQfinish(conn);
    return Status::IoError("history store " + RedactPostgresUrl(url) + ": cannot connect: " + why,
                           "is the server up and the URL right? libpq reads the password from "
                           "~/.pgpass, the file $PGPASSFILE names, or $PGPASSWORD");
  }
  Pq().PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return conn;
}

}  // namespace

const std::vector<Migration>& PostgresMigrations() {
  static const std::vector<Migration> migrations = {{1, kSchemaV1}, {2, kSchemaV2}};
  return migrations;
}

Result<std::unique_ptr<HistoryStore>> OpenPostgresStore(const std::string& url,
                                                        const std::vector<Migration>& migrations) {
  Result<PGconn*> conn = Connect(url);
  if (!conn.ok()) return conn.status();
  auto store = std::make_unique<PostgresStore>(url, conn.value());
  TRTLLM_RUN_RETURN_IF_ERROR(store->Migrate(migrations));
  return std::unique_ptr<HistoryStore>(std::move(store));
}

Result<int> PostgresSchemaVersion(const std::string& url) {
  Result<PGconn*> conn = Connect(url);
  if (!conn.ok()) return conn.status();
  PostgresStore store(url, conn.value());
  return store.Version();
}

Result<std::unique_ptr<HistoryStore>> OpenHistoryStore(const std::string& location) {
  if (IsPostgresUrl(location)) return OpenPostgresStore(location);
  return OpenSqliteStore(location);
}

}  // namespace trtllm_run::history
