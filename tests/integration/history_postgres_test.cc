// The history store on a real PostgreSQL server (tests/services/postgres.sh): the SQLite
// store's checks repeated on a database (history_checks.h), 8 concurrent `trtllm-run`
// processes on two hosts writing into one database, the schema's migrations, the password
// kept out of argv, messages and results, and a server that does not answer (the connect
// timeout bounds the wait; the verdict is kept). Each test makes its own database.
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "cli_harness.h"
#include "history/history_store.h"
#include "history_checks.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;
using namespace trtllm_run_test::history_checks;
using trtllm_run::Result;
using trtllm_run::StatusCode;
using trtllm_run::history::HistoryStore;
using trtllm_run::history::Migration;
using trtllm_run::history::OpenPostgresStore;
using trtllm_run::history::OutcomeRow;
using trtllm_run::history::PostgresMigrations;
using trtllm_run::history::PostgresSchemaVersion;

namespace {

// tests/services/postgres.sh's server, role, password file and (test) password.
constexpr char kServer[] = "postgresql://trtllm_test@127.0.0.1:5499/";
constexpr char kPassFile[] = "/run/trtllm-test-postgres/client/pgpass";
constexpr char kPassword[] = "trtllm-pg-test-pw";

// Starts the server once; libpq (here and in every trtllm-run the tests start) finds the
// password in the service's pgpass file.
void EnsurePostgres() {
  static bool done = false;
  if (!done) {
    int status = 0;
    std::string out =
        Shell("bash " + SourceDir() + "/tests/services/postgres.sh ensure 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
    done = true;
  }
  ::setenv("PGPASSFILE", kPassFile, 1);
}

// The first value of `sql`'s result on the database `url` ("" when it returns no row).
std::string PgValue(const std::string& url, const std::string& sql) {
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), PQfinish);
  INFO(url << ": " << PQerrorMessage(conn.get()));
  REQUIRE(PQstatus(conn.get()) == CONNECTION_OK);
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  std::unique_ptr<PGresult, void (*)(PGresult*)> result(PQexec(conn.get(), sql.c_str()), PQclear);
  const ExecStatusType status = PQresultStatus(result.get());
  INFO(sql << ": " << PQresultErrorMessage(result.get()));
  REQUIRE((status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK));
  if (status != PGRES_TUPLES_OK || PQntuples(result.get()) == 0) return "";
  return PQgetvalue(result.get(), 0, 0);
}

long long PgInt(const std::string& url, const std::string& sql) {
  return std::stoll(PgValue(url, sql));
}

// A database of its own for one test, dropped at its end.
class PgDatabase {
 public:
  PgDatabase() {
    EnsurePostgres();
    static int counter = 0;
    name_ = "trtllm_h_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
    PgValue(Admin(), "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    PgValue(Admin(), "CREATE DATABASE " + name_);
  }
  ~PgDatabase() {
    std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(Admin().c_str()), PQfinish);
    PQclear(PQexec(conn.get(), ("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)").c_str()));
  }
  PgDatabase(const PgDatabase&) = delete;
  PgDatabase& operator=(const PgDatabase&) = delete;
  std::string url() const { return kServer + name_; }

 private:
  static std::string Admin() { return std::string(kServer) + "trtllm_history_test"; }
  std::string name_;
};

trtllm_run::history::CaseRecord SampleCase(const std::string& name, const std::string& verdict) {
  trtllm_run::history::CaseRecord record;
  record.kind = "case";
  record.name = name;
  record.command = "pytest " + name;
  record.commit = std::string(40, 'a');
  record.branch = "main";
  record.cluster = "trtllm-test";
  record.partition = "debug";
  record.nodes = "n[1-2]";
  record.gpu_type = "H100";
  record.verdict = verdict;
  record.duration_seconds = 12.5;
  record.work_dir = "/w/" + name;
  return record;
}

// Every file under `dir` whose content contains `text`.
std::vector<std::string> FilesContaining(const std::string& dir, const std::string& text) {
  std::vector<std::string> found;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error) &&
        ReadTextFile(it->path().string()).find(text) != std::string::npos) {
      found.push_back(it->path().string());
    }
  }
  return found;
}

// A TCP port that accepts connections (the kernel's backlog) and never answers: a server
// that hangs. Closed on destruction.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~SilentServer() { ::close(fd_); }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace

TEST_CASE("history on PostgreSQL: a case and its tests recorded and read back and pruned",
          "[postgres][history]") {
  PgDatabase db;
  Result<std::unique_ptr<HistoryStore>> store = OpenPostgresStore(db.url());
  INFO(store.status().ToString());
  REQUIRE(store.ok());
  CHECK(store.value()->location() == db.url());
  auto record = SampleCase("t.py::test_a", "FAILED");
  record.signature = "AssertionError: N != N";
  record.recorded_at = "2026-12-01T10:00:00Z";
  record.tests.push_back({"t.py::test_a", "failed", 3.5, 0, "AssertionError: N != N"});
  record.tests.push_back({"t.py::test_a", "passed", 2.5, 1, ""});
  REQUIRE(store.value()->Record(record).ok());
  record.recorded_at = "2026-12-02T10:00:00Z";
  record.tests = {{"t.py::test_a", "passed", 4.0, 0, ""}, {"t.py::test_b", "skipped", {}, 0, ""}};
  REQUIRE(store.value()->Record(record).ok());

  auto counts = store.value()->RowCounts();
  REQUIRE(counts.ok());
  CHECK(counts->first == 2);
  CHECK(counts->second == 4);
  Result<std::vector<OutcomeRow>> rows = store.value()->Outcomes("t.py::test_a", 0);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  CHECK(rows->at(0).recorded_at == "2026-12-02T10:00:00Z");  // newest first
  CHECK(rows->at(0).outcome == "passed");
  CHECK(rows->at(0).branch == "main");
  CHECK(rows->at(0).work_dir == "/w/t.py::test_a");
  CHECK(rows->at(1).attempt == 1);
  CHECK(rows->at(2).signature == "AssertionError: N != N");
  CHECK(rows->at(2).duration_seconds == Approx(3.5));
  rows = store.value()->Outcomes("t.py::test_a", 2);
  REQUIRE(rows.ok());
  CHECK(rows->size() == 2);
  rows = store.value()->Outcomes("t.py::test_b", 0);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK_FALSE(rows->at(0).duration_seconds.has_value());  // NULL stays NULL
  // A name without tests: the cases of that name.
  REQUIRE(store.value()->Record(SampleCase("true", "PASSED")).ok());
  rows = store.value()->Outcomes("true", 5);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK(rows->at(0).outcome == "PASSED");
  CHECK(rows->at(0).duration_seconds == Approx(12.5));
  rows = store.value()->Outcomes("never recorded", 5);
  REQUIRE(rows.ok());
  CHECK(rows->empty());
  auto durations = store.value()->MeanDurations();
  REQUIRE(durations.ok());
  CHECK(durations->at("t.py::test_a") == Approx((3.5 + 2.5 + 4.0) / 3));
  CHECK(durations->count("t.py::test_b") == 0);
  auto by_commit = store.value()->CountsByCommit("2026-12-02T00:00:00Z");
  REQUIRE(by_commit.ok());
  REQUIRE(by_commit->size() == 2);  // test_a and test_b on commit aaa...
  for (const auto& row : by_commit.value()) {
    if (row.node_id != "t.py::test_a") continue;
    CHECK(row.passed == 1);
    CHECK(row.failed == 0);
    CHECK(row.last_at == "2026-12-02T10:00:00Z");
  }
  CHECK(PgValue(db.url(),
                "SELECT cluster || ' ' || slurm_partition || ' ' || nodes || ' ' || gpu_type "
                "FROM cases LIMIT 1") == "trtllm-test debug n[1-2] H100");

  // Bytes SQLite took and a UTF-8 database does not (a NUL, invalid UTF-8) are stored as
  // '?', the rest as they are: the record is never lost to them.
  auto odd = SampleCase(std::string("bad\xff"
                                    "name\xc3\xa9",
                                    10),
                        "FAILED");
  odd.command = std::string("a\0b", 3);
  REQUIRE(store.value()->Record(odd).ok());
  CHECK(PgValue(db.url(), "SELECT name || ' ' || command FROM cases ORDER BY id DESC LIMIT 1") ==
        "bad?name\xc3\xa9 a?b");

  // --reuse-passed's queries: per test (and per case name) the newest outcome on a commit.
  auto latest = store.value()->LatestTestOutcomes(std::string(40, 'a'), std::nullopt);
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 2);
  CHECK(latest->at(0).id == "t.py::test_a");
  CHECK(latest->at(0).outcome == "passed");
  CHECK(latest->at(0).recorded_at == "2026-12-02T10:00:00Z");
  CHECK(latest->at(1).outcome == "skipped");
  CHECK(store.value()->LatestTestOutcomes(std::string(40, 'a'), "other stage")->empty());
  CHECK(store.value()->LatestTestOutcomes(std::string(40, 'b'), std::nullopt)->empty());
  auto verdicts = store.value()->LatestCaseVerdicts(std::string(40, 'a'));
  REQUIRE(verdicts.ok());
  REQUIRE(verdicts->size() >= 2);
  bool found_test_a = false;
  for (const auto& verdict : verdicts.value()) {
    if (verdict.id != "t.py::test_a") continue;
    found_test_a = true;
    CHECK(verdict.outcome == "FAILED");
    CHECK(verdict.recorded_at == "2026-12-02T10:00:00Z");  // the newest of its two
    CHECK(verdict.work_dir == "/w/t.py::test_a");
  }
  CHECK(found_test_a);

  // Perf points (schema v2): written in one transaction, read per match key, oldest first;
  // a point before the prune's cut goes with the cases.
  std::vector<trtllm_run::history::PerfPointRecord> points(3);
  points[0] = {
      "2026-12-01T09:00:00Z", "model=m", "token_throughput", 100.25, false, "aaa", "main", "/w/1"};
  points[1] = {
      "2026-12-02T09:00:00Z", "model=m", "token_throughput", 0.1 + 0.2, true, "bbb", "pr", "/w/2"};
  points[2] = {"2026-12-02T09:00:00Z", "model=other", "token_throughput", 7, false, "", "", ""};
  REQUIRE(store.value()->RecordPerf(points).ok());
  auto read_points = store.value()->PerfPoints("model=m", "");
  REQUIRE(read_points.ok());
  REQUIRE(read_points->size() == 2);
  CHECK(read_points->at(0).value == 100.25);
  CHECK(read_points->at(1).value == 0.1 + 0.2);  // every digit kept
  CHECK(read_points->at(1).pre_merge);
  CHECK(read_points->at(1).work_dir == "/w/2");
  CHECK(store.value()->PerfPoints("model=m", "2026-12-02T00:00:00Z")->size() == 1);

  // Prune: the cases before the cut and their tests go, the others stay.
  Result<std::int64_t> removed = store.value()->Prune("2026-12-02T00:00:00Z");
  REQUIRE(removed.ok());
  CHECK(removed.value() == 1);
  counts = store.value()->RowCounts();
  CHECK(counts->first == 3);
  CHECK(counts->second == 2);
  CHECK(store.value()->PerfPoints("model=m", "")->size() == 1);

  // The server closes the connection (a restart, an idle timeout during a long stage): the
  // next write and read open a new one.
  const std::string terminate =
      "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
      "current_database() AND pid <> pg_backend_pid()";
  CHECK(PgInt(db.url(), terminate) == 1);
  REQUIRE(store.value()->Record(SampleCase("after a reconnect", "PASSED")).ok());
  CHECK(PgInt(db.url(), terminate) == 1);
  counts = store.value()->RowCounts();
  INFO(counts.status().ToString());
  REQUIRE(counts.ok());
  CHECK(counts->first == 4);
}

TEST_CASE("history on PostgreSQL: migrations take an older schema to the newest, once",
          "[postgres][history]") {
  PgDatabase db;
  const int current = PostgresMigrations().back().version;
  CHECK(PostgresSchemaVersion(db.url()).value() == 0);
  // 8 processes' worth of openers of a new database at once: one migrates, none fails.
  std::vector<std::thread> openers;
  std::atomic<int> opened{0};
  std::vector<std::string> errors(8);
  for (int i = 0; i < 8; ++i) {
    openers.emplace_back([&, i] {
      auto store = OpenPostgresStore(db.url());
      if (store.ok()) {
        ++opened;
      } else {
        errors[static_cast<std::size_t>(i)] = store.status().ToString();
      }
    });
  }
  for (std::thread& opener : openers) opener.join();
  for (const std::string& error : errors) CHECK(error == "");
  CHECK(opened == 8);
  CHECK(PostgresSchemaVersion(db.url()).value() == current);
  CHECK(PgInt(db.url(), "SELECT COUNT(*) FROM schema_version") == 1);  // one row: migrated once
  {
    auto v1 = OpenPostgresStore(db.url());
    REQUIRE(v1.ok());
    REQUIRE(v1.value()->Record(SampleCase("old", "PASSED")).ok());
  }
  // A newer trtllm-run's migrations: today's, then one more step.
  std::vector<Migration> newer = PostgresMigrations();
  newer.push_back({current + 1, "ALTER TABLE cases ADD COLUMN extra TEXT NOT NULL DEFAULT 'v2'"});
  {
    auto v2 = OpenPostgresStore(db.url(), newer);
    INFO(v2.status().ToString());
    REQUIRE(v2.ok());
    REQUIRE(v2.value()->Record(SampleCase("new", "FAILED")).ok());
  }
  CHECK(PostgresSchemaVersion(db.url()).value() == current + 1);
  CHECK(PgValue(db.url(), "SELECT string_agg(name || ':' || extra, ',' ORDER BY id) FROM cases") ==
        "old:v2,new:v2");
  REQUIRE(OpenPostgresStore(db.url(), newer).ok());  // nothing to do, nothing lost
  CHECK(PgInt(db.url(), "SELECT COUNT(*) FROM cases") == 2);
  // The older trtllm-run refuses the newer store rather than writing to it.
  auto old = OpenPostgresStore(db.url());
  REQUIRE_FALSE(old.ok());
  CHECK(old.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(old.status().message(), Catch::Contains(db.url()));
  CHECK_THAT(old.status().message(),
             Catch::Contains("schema is version " + std::to_string(current + 1) + ", newer than"));

  // A step that fails leaves the database as it was: no table, no version.
  PgDatabase fresh;
  std::vector<Migration> broken = PostgresMigrations();
  broken.push_back(
      {current + 1, "ALTER TABLE cases ADD COLUMN x INTEGER; SELECT * FROM no_such_table"});
  auto failed = OpenPostgresStore(fresh.url(), broken);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(),
             Catch::Contains("migrating to schema version " + std::to_string(current + 1)));
  CHECK_THAT(failed.status().message(), Catch::Contains("no_such_table"));
  CHECK(PostgresSchemaVersion(fresh.url()).value() == 0);
  CHECK(PgValue(fresh.url(), "SELECT to_regclass('cases') IS NULL") == "t");
}

TEST_CASE("history on PostgreSQL: a seeded history of 50 tests classified exactly",
          "[postgres][history][cli]") {
  PgDatabase db;
  CheckFlakyHistory(db.url());
}

TEST_CASE("history on PostgreSQL: durations exported and taken by plan --stage",
          "[postgres][history][cli][stage]") {
  PgDatabase db;
  TempDir dir("trtllm_history_pg_durations");
  CheckDurationsExport(db.url(), dir.path());
}

TEST_CASE("history on PostgreSQL: 8 trtllm-run processes on two hosts write 100 cases each",
          "[postgres][history][cli]") {
  PgDatabase db;
  const std::string store = db.url();
  TempDir repo("trtllm_history_pg_conc");
  std::string cases = "defaults:\n  scenario: local_direct\n  monitor_timeout: 1m\ncases:\n";
  for (int i = 1; i <= 100; ++i) {
    cases += "  - {name: c" + std::to_string(i) + ", custom_cmd: 'true'}\n";
  }
  WriteTextFile(repo.path() + "/cases.yaml", cases);
  // Two hosts: each process in its own UTS namespace, named by `hostname` before trtllm-run
  // starts (gethostname(2), which the recorded `host` reads, answers that name).
  const std::vector<std::string> hosts = {"trtllm-pg-host-a", "trtllm-pg-host-b"};
  std::vector<CliRun> runs(8);
  std::vector<std::thread> threads;
  for (int p = 0; p < 8; ++p) {
    threads.emplace_back([&, p] {
      CliOptions options;
      options.program = "/usr/bin/unshare";
      options.args = {"--uts",
                      "/bin/sh",
                      "-c",
                      "hostname \"$1\" && shift && exec \"$@\"",
                      "sh",
                      hosts[static_cast<std::size_t>(p % 2)],
                      TRTLLM_RUN_BIN,
                      "run",
                      "--cases",
                      repo.path() + "/cases.yaml",
                      "--repo-root",
                      repo.path(),
                      "--max-parallel-local",
                      "4",
                      "--run-dir",
                      repo.path() + "/run" + std::to_string(p),
                      "--history",
                      store};
      options.timeout_seconds = 600;
      runs[static_cast<std::size_t>(p)] = RunCli(options);
    });
  }
  // A reader beside the writers: `history flaky` answers while they write.
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
  CHECK_FALSE(reads.empty());
  for (const CliRun& read : reads) {
    INFO(read.Describe());
    CHECK(read.exit_code == 0);
  }
  for (const CliRun& run : runs) {
    INFO(run.Describe());
    CHECK(run.exit_code == 0);
    CHECK(run.stderr_text.find("not recorded in the history") == std::string::npos);
    CHECK(run.stderr_text.find(kPassword) == std::string::npos);
  }
  CHECK(PgInt(store, "SELECT COUNT(*) FROM cases") == 800);
  CHECK(PgInt(store, "SELECT COUNT(DISTINCT work_dir) FROM cases") == 800);
  CHECK(PgInt(store,
              "SELECT COUNT(*) FROM cases WHERE verdict = 'PASSED' AND kind = 'case' "
              "AND scenario = 'local_direct'") == 800);
  CHECK(PgInt(store,
              "SELECT COUNT(*) FROM (SELECT name FROM cases GROUP BY name "
              "HAVING COUNT(*) = 8) named") == 100);
  // Both hosts, 400 cases each (4 processes of 100).
  CHECK(PgValue(store,
                "SELECT string_agg(host || '=' || n, ',' ORDER BY host) FROM "
                "(SELECT host, COUNT(*) n FROM cases GROUP BY host) h") ==
        "trtllm-pg-host-a=400,trtllm-pg-host-b=400");

  CliRun c17 = RunCli({"history", "c17", "--history", store, "--json"});
  INFO(c17.Describe());
  REQUIRE(c17.exit_code == 0);
  rapidjson::Document doc = Json(c17);
  REQUIRE(doc.IsObject());
  CHECK(doc["runs"].GetInt() == 8);
  CHECK(doc["pass_rate"].GetDouble() == 1.0);
  CHECK(std::string(doc["store"].GetString()) == store);
}

TEST_CASE("history on PostgreSQL: a password is never taken from argv or config, never shown",
          "[postgres][history][cli]") {
  PgDatabase db;
  TempDir dir("trtllm_history_pg_secret");
  const std::string host_db = db.url().substr(std::string(kServer).size());
  const std::string with_password =
      std::string("postgresql://trtllm_test:") + kPassword + "@127.0.0.1:5499/" + host_db;
  auto expect_2 = [&](std::vector<std::string> args, const std::vector<std::string>& says,
                      std::vector<std::pair<std::string, std::string>> env = {}) {
    CliOptions options;
    options.args = std::move(args);
    options.env = std::move(env);
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    for (const std::string& text : says) CHECK_THAT(run.stderr_text, Catch::Contains(text));
    CHECK(run.stderr_text.find(kPassword) == std::string::npos);
    CHECK(run.stdout_text.find(kPassword) == std::string::npos);
  };
  const std::string ran = dir.path() + "/ran";
  const std::vector<std::string> run_args = {"run",        "--custom-cmd", "touch " + ran,
                                             "--scenario", "local_direct", "--repo-root",
                                             dir.path(),   "--history"};
  auto run_with = [&](const std::string& store) {
    std::vector<std::string> args = run_args;
    args.push_back(store);
    return args;
  };
  // In the user info, as a parameter, as a percent-encoded parameter name.
  expect_2(run_with(with_password), {"history store postgresql://trtllm_test:***@127.0.0.1:5499/" +
                                         host_db + ": the URL carries a password",
                                     "~/.pgpass", "$PGPASSFILE", "$PGPASSWORD"});
  expect_2(run_with(db.url() + "?password=" + kPassword),
           {"history store " + db.url() + "?password=***: the URL carries a password"});
  expect_2({"history", "flaky", "--history", db.url() + "?sslmode=disable&%70assword=" + kPassword},
           {"%70assword=***", "carries a password"});
  expect_2({"stage", "DGX_B200-4_GPUs-PyTorch-3", "--repo-root", StageFixture(), "--scenario",
            "local_direct", "--history", with_password},
           {"carries a password"});
  // The user's config may name a server, never its password.
  TempDir config("trtllm_history_pg_config");
  fs::create_directories(config.path() + "/trtllm-run");
  WriteTextFile(config.path() + "/trtllm-run/config.yaml", "history: " + with_password + "\n");
  ::chmod((config.path() + "/trtllm-run/config.yaml").c_str(), 0600);
  std::vector<std::string> config_run = run_args;
  config_run.pop_back();
  expect_2(config_run, {"config.yaml:1: history store postgresql://trtllm_test:***@", "~/.pgpass"},
           {{"XDG_CONFIG_HOME", config.path()}});
  // Malformed URLs: exit 2 naming the URL, its password hidden.
  expect_2(run_with("postgresql://trtllm_test@127.0.0.1:54x9/db"),
           {"history store postgresql://trtllm_test@127.0.0.1:54x9/db: port '54x9' is not a port "
            "number"});
  expect_2(run_with(std::string("postgresql://u:") + kPassword + "@[::1/db"),
           {"history store postgresql://u:***@[::1/db: not a valid PostgreSQL URL"});
  expect_2(run_with(db.url() + "?no_such_option=1"),
           {"not a valid PostgreSQL URL", "no_such_option"});
  expect_2(run_with(db.url() + "?connect_timeout=soon"),
           {"connect_timeout 'soon' is not a number of seconds"});
  CHECK_FALSE(fs::exists(ran));  // nothing ran

  // The library takes a URL with a password (an embedding tool's choice), and shows none.
  {
    ScopedEnv no_pgpass("PGPASSFILE", dir.path() + "/no-such-pgpass");
    auto store = OpenPostgresStore(with_password);
    INFO(store.status().ToString());
    REQUIRE(store.ok());
    CHECK(store.value()->location() == "postgresql://trtllm_test:***@127.0.0.1:5499/" + host_db);
    const std::string wrong = "postgresql://trtllm_test:wrong-secret-42@127.0.0.1:5499/" + host_db;
    auto refused = OpenPostgresStore(wrong);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == StatusCode::kIoError);
    CHECK_THAT(refused.status().message(),
               Catch::Contains("history store postgresql://trtllm_test:***@127.0.0.1:5499/" +
                               host_db + ": cannot connect: "));
    CHECK_THAT(refused.status().message(), Catch::Contains("password authentication failed"));
    CHECK(refused.status().ToString().find("wrong-secret-42") == std::string::npos);
    // Without a password anywhere: libpq's own message, and where the password goes.
    auto none = OpenPostgresStore(db.url());
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.status().message(), Catch::Contains("no password supplied"));
    CHECK_THAT(none.status().hint(), Catch::Contains("~/.pgpass"));
  }

  // A recorded run (the password from PGPASSFILE): not in its output, work dir or rows.
  CliOptions options;
  options.args = {"run",         "--custom-cmd", "echo hello", "--scenario", "local_direct",
                  "--repo-root", dir.path(),     "--history",  db.url(),     "--json"};
  CliRun recorded = RunCli(options);
  INFO(recorded.Describe());
  CHECK(recorded.exit_code == 0);
  CHECK(recorded.stderr_text.find("not recorded") == std::string::npos);
  CHECK(PgInt(db.url(), "SELECT COUNT(*) FROM cases") == 1);
  CHECK((recorded.stdout_text + recorded.stderr_text).find(kPassword) == std::string::npos);
  // $PGPASSWORD: libpq's in trtllm-run, never the job's.
  CliOptions from_env;
  from_env.args = {"run",        "--custom-cmd", "env > " + dir.path() + "/job_env",
                   "--scenario", "local_direct", "--repo-root",
                   dir.path(),   "--history",    db.url()};
  from_env.env = {{"PGPASSWORD", kPassword}, {"PGPASSFILE", dir.path() + "/no-such-pgpass"}};
  CliRun env_run = RunCli(from_env);
  INFO(env_run.Describe());
  CHECK(env_run.exit_code == 0);
  CHECK(env_run.stderr_text.find("not recorded") == std::string::npos);
  CHECK(PgInt(db.url(), "SELECT COUNT(*) FROM cases") == 2);
  CHECK_THAT(ReadTextFile(dir.path() + "/job_env"), Catch::Contains("PGPASSFILE="));
  CHECK(ReadTextFile(dir.path() + "/job_env").find("PGPASSWORD") == std::string::npos);
  CHECK(FilesContaining(dir.path(), kPassword).empty());
  CHECK(PgInt(db.url(), std::string("SELECT COUNT(*) FROM cases WHERE cases::text LIKE '%") +
                            kPassword + "%'") == 0);
}

TEST_CASE("history on PostgreSQL: a server that does not answer costs the connect timeout only",
          "[postgres][history][cli]") {
  EnsurePostgres();
  SilentServer silent;
  TempDir dir("trtllm_history_pg_dead");
  const std::string hanging =
      "postgresql://trtllm_test@127.0.0.1:" + std::to_string(silent.port()) + "/h";
  // The URL's connect_timeout: the run's verdict and exit code kept, a warning naming it.
  CliOptions options;
  options.args = {"run",        "--custom-cmd", "echo boom; exit 3",
                  "--scenario", "local_direct", "--repo-root",
                  dir.path(),   "--history",    hanging + "?connect_timeout=2"};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.stderr_text, Catch::Contains("warning: not recorded in the history: history "
                                              "store " +
                                              hanging + "?connect_timeout=2: cannot connect"));
  CHECK(run.seconds < 9);  // the URL's 2 s, not the default 10 s
  const std::string work_dir = FindSingleWorkDir(dir.path());
  REQUIRE(work_dir != "");
  rapidjson::Document result = ReadResultJson(work_dir);
  REQUIRE(result.IsObject());
  CHECK(std::string(result["status"].GetString()) == "FAILED");

  // A port nothing listens on: refused at once, the same warning.
  int free_port = 0;
  {
    SilentServer probe;
    free_port = probe.port();
  }
  options.args.back() = "postgresql://trtllm_test@127.0.0.1:" + std::to_string(free_port) + "/h";
  CliRun refused = RunCli(options);
  INFO(refused.Describe());
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.stderr_text, Catch::Contains("not recorded in the history"));
  CHECK_THAT(refused.stderr_text, Catch::Contains("Connection refused"));
  CHECK(refused.seconds < 10);

  // Without a connect_timeout anywhere: trtllm-run's own 10 s, never a hang.
  CliOptions defaulted;
  defaulted.args = {"history", "flaky", "--history", hanging};
  defaulted.unset_env = {"PGCONNECT_TIMEOUT"};
  defaulted.timeout_seconds = 60;
  CliRun bounded = RunCli(defaulted);
  INFO(bounded.Describe());
  CHECK(bounded.exit_code == 3);
  CHECK_THAT(bounded.stderr_text, Catch::Contains("history store " + hanging + ": cannot connect"));
  CHECK(bounded.seconds > 9);
  CHECK(bounded.seconds < 20);
}
