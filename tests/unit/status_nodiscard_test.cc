// Status and Result at the library's edges: both [[nodiscard]] (a dropped one does not
// compile, so the check is on the type), and a Result is OK exactly when it holds a value.
#include <catch2/catch.hpp>
#include <string>
#include <type_traits>

#include "trtllm_run/status.h"

using namespace trtllm_run;

namespace {

Result<int> FromOkStatus() { return Status::Ok(); }  // a bug the type turns into an error

TEST_CASE("Result: built from an OK Status it is not OK but kInternal", "[status]") {
  Result<int> result = FromOkStatus();
  CHECK_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInternal);
  CHECK(result.status().message() == "Result built from an OK Status without a value");

  Result<std::string> direct{Status()};
  CHECK_FALSE(direct.ok());
  CHECK(direct.status().code() == StatusCode::kInternal);
}

TEST_CASE("Result: a value is OK, an error Status keeps its code and message", "[status]") {
  Result<int> value = 7;
  REQUIRE(value.ok());
  CHECK(value.value() == 7);
  Result<int> error = Status::NotFound("no such file: x", "give another");
  CHECK_FALSE(error.ok());
  CHECK(error.status().code() == StatusCode::kNotFound);
  CHECK(error.status().ToString() == "no such file: x\n  hint: give another");
}

// Whether `T f(); f();` compiles without a warning cannot be asserted at run time; the
// build (warnings are errors) is the check. These pin the API that makes dropping one on
// purpose explicit.
TEST_CASE("Status and Result: IgnoreError() is the explicit way to drop one", "[status]") {
  Status::IoError("best effort").IgnoreError();
  Result<int>(Status::IoError("best effort")).IgnoreError();
  STATIC_REQUIRE(std::is_same_v<decltype(Status().IgnoreError()), void>);
}

}  // namespace
