// Bare test ids (plain case lists, --test-cmd without the pytest word) and how the pytest
// workflow turns them into commands.
#include <catch2/catch.hpp>

#include "plan_test_support.h"
#include "trtllm_run/sdk/commands/command_parse.h"

using namespace plan_test;

TEST_CASE("bare test ids are told from commands", "[test_id]") {
  CHECK(IsBareTestId("accuracy/test_a.py::TestX::test_y"));
  CHECK(IsBareTestId("accuracy/test_a.py::TestX::test_y[4 x 8]"));
  CHECK(IsBareTestId("accuracy/test_a.py::TestX::test_y[a::b]"));
  CHECK(IsBareTestId("tests/unittest/test_b.py"));
  CHECK(IsBareTestId("test_e2e[aggr-cfg-server]"));
  CHECK_FALSE(IsBareTestId("pytest accuracy/test_a.py"));
  CHECK_FALSE(IsBareTestId("python3 tools/run.py"));
  CHECK_FALSE(IsBareTestId("accuracy/test_a.py::test_y; touch /tmp/x"));
  CHECK_FALSE(IsBareTestId("accuracy/test_a.py::test_y[p] && rm -rf x"));
  CHECK_FALSE(IsBareTestId("$(touch x).py"));
  CHECK_FALSE(IsBareTestId(""));
  CHECK(TestCommandForId("a/test_x.py::T::t[p q]") == "pytest 'a/test_x.py::T::t[p q]'");
  CHECK(TestCommandForId("test_e2e[aggr-a-b]") ==
        "pytest 'perf/test_perf_sanity.py::test_e2e[aggr-a-b]'");
  CHECK(TestCommandForId("make check") == "make check");
}

TEST_CASE("a bare node id as test_cmd runs it with pytest", "[test_id]") {
  const std::string id = "accuracy/test_llm_api_pytorch.py::TestLlama3_1_8BInstruct::test_bfloat16";
  CaseRequest request;
  request.test_cmd = id;
  Result<JobPlan> plan = PlanCase(request);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  CHECK(plan->command == "pytest " + ShellQuote(id));
  CHECK(plan->working_dir == "tests/integration/defs");
  CHECK(HasNote(plan.value(), "bare test id"));

  // A lone script is a command to execute, not a test file.
  request.test_cmd = "./scripts/check.py";
  plan = PlanCase(request);
  REQUIRE(plan.ok());
  CHECK(plan->command == "./scripts/check.py");
}
