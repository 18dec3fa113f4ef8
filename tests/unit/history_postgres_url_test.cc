// The PostgreSQL history store's URLs without a server (history_store.h): which locations
// are URLs, the password redacted wherever libpq would read one, and the URLs a user may
// give (a password refused, malformed ones named). The server side is
// tests/integration/history_postgres_test.cc.
#include <catch2/catch.hpp>
#include <string>

#include "history/history_postgres_url.h"
#include "history/history_store.h"

namespace trtllm_run::history {
namespace {

TEST_CASE("history PostgreSQL URLs: chosen by scheme, the password redacted everywhere",
          "[history]") {
  CHECK(IsPostgresUrl("postgresql://db.example/h"));
  CHECK(IsPostgresUrl("postgres://u@db/h"));
  CHECK(IsPostgresUrl("PostgreSQL://db/h"));
  CHECK_FALSE(IsPostgresUrl("/home/u/postgresql://x"));
  CHECK_FALSE(IsPostgresUrl("history.sqlite"));
  CHECK_FALSE(IsPostgresUrl("postgresql:/db"));
  CHECK_FALSE(IsPostgresUrl("host=db dbname=h"));  // key=value strings are not taken

  CHECK(RedactPostgresUrl("postgresql://u@db:5432/h") == "postgresql://u@db:5432/h");
  CHECK(RedactPostgresUrl("postgresql://u:s3cret@db:5432/h") == "postgresql://u:***@db:5432/h");
  // libpq's user info ends at the first '@' before any '/'; an '@' in the path is not one.
  CHECK(RedactPostgresUrl("postgres://u:p@ss@db/h") == "postgres://u:***@ss@db/h");
  CHECK(RedactPostgresUrl("postgresql://db/h@x") == "postgresql://db/h@x");
  CHECK(RedactPostgresUrl("postgresql://u:@db/h") == "postgresql://u:@db/h");
  CHECK(RedactPostgresUrl("postgresql://db/h?sslmode=require&password=s3cret&application_name=a") ==
        "postgresql://db/h?sslmode=require&password=***&application_name=a");
  CHECK(RedactPostgresUrl("postgresql://db/h?%70assword=s3cret") ==
        "postgresql://db/h?%70assword=***");
  CHECK(RedactPostgresUrl("postgresql://u:a%40b@db/h?password=c&password=d") ==
        "postgresql://u:***@db/h?password=***&password=***");

  // libpq's messages: every form of the password hidden.
  const std::vector<std::string> secrets = PostgresUrlSecrets("postgresql://u:a%40b@db/h");
  CHECK(WithoutSecrets("bad token \"a%40b\" or a@b\n", secrets) == "bad token \"***\" or ***");
  CHECK(WithoutSecrets("nothing here\n", {}) == "nothing here");
}

TEST_CASE("history PostgreSQL URLs: a password or a malformed URL refused, naming it",
          "[history]") {
  CHECK(CheckPostgresUrl("postgresql://trtllm@db.example:5432/history").ok());
  CHECK(CheckPostgresUrl("postgresql:///history?host=/run/postgresql").ok());
  CHECK(CheckPostgresUrl("postgresql://a:5432,b:5433/h?connect_timeout=5").ok());

  for (const std::string url : {"postgresql://u:s3cret@db/h", "postgresql://db/h?password=s3cret",
                                "postgres://db/h?%70assword=s3cret"}) {
    Status refused = CheckPostgresUrl(url);
    INFO(url);
    CHECK(refused.code() == StatusCode::kInvalidInput);
    CHECK_THAT(refused.message(), Catch::Contains("the URL carries a password"));
    CHECK_THAT(refused.message(), Catch::Contains(RedactPostgresUrl(url)));
    CHECK_THAT(refused.hint(), Catch::Contains("~/.pgpass"));
    CHECK_THAT(refused.hint(), Catch::Contains("$PGPASSWORD"));
    CHECK(refused.ToString().find("s3cret") == std::string::npos);
  }
  Status port = CheckPostgresUrl("postgresql://db:5x32/h");
  CHECK(port.code() == StatusCode::kInvalidInput);
  CHECK_THAT(port.message(), Catch::Contains("port '5x32' is not a port number"));
  CHECK_FALSE(CheckPostgresUrl("postgresql://db:99999/h").ok());
  CHECK_FALSE(CheckPostgresUrl("postgresql://a:1,b:x/h").ok());
  Status unknown = CheckPostgresUrl("postgresql://db/h?colour=blue");
  CHECK_THAT(unknown.message(), Catch::Contains("not a valid PostgreSQL URL"));
  CHECK_THAT(unknown.message(), Catch::Contains("colour"));
  Status bracket = CheckPostgresUrl("postgresql://u:s3cret@[::1/h");
  CHECK(bracket.code() == StatusCode::kInvalidInput);
  CHECK(bracket.ToString().find("s3cret") == std::string::npos);
  Status escape = CheckPostgresUrl("postgresql://u:s3cret%zz@db/h");
  CHECK(escape.code() == StatusCode::kInvalidInput);
  CHECK(escape.ToString().find("s3cret") == std::string::npos);
  CHECK_THAT(CheckPostgresUrl("postgresql://db/h?connect_timeout=-1").message(),
             Catch::Contains("connect_timeout '-1' is not a number of seconds"));
}

}  // namespace
}  // namespace trtllm_run::history
