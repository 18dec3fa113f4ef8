// TensorRT-LLM's test-list grammar (test_list_line.h) and the cases files that use it:
// plain lists in the shape of tests/integration/test_lists/qa/*.txt and waives.txt, and
// test-db YAMLs in the shape of tests/integration/test_lists/test-db/l0_*.yml. The lines
// below are written here in those shapes, not copied from the repo.
#include "trtllm_run/sdk/commands/test_list_line.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "trtllm_run/multi_run.h"

namespace trtllm_run {
namespace {

TestListLine Line(const std::string& text) {
  Result<std::optional<TestListLine>> parsed = ParseTestListLine(text);
  INFO(text << " -> " << (parsed.ok() ? std::string("ok") : parsed.status().ToString()));
  REQUIRE(parsed.ok());
  REQUIRE(parsed.value().has_value());
  return *parsed.value();
}

std::string LineError(const std::string& text) {
  Result<std::optional<TestListLine>> parsed = ParseTestListLine(text);
  INFO(text);
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == StatusCode::kInvalidInput);
  return parsed.status().ToString();
}

bool IsCommand(const std::string& text) {
  Result<std::optional<TestListLine>> parsed = ParseTestListLine(text);
  return parsed.ok() && !parsed.value().has_value();
}

TEST_CASE("test-list line: markers in any order after the id", "[test_list]") {
  TestListLine a =
      Line("accuracy/test_llm.py::TestBig::test_fp4[tp8-ep 8] TIMEOUT (120) ISOLATION");
  CHECK(a.id == "accuracy/test_llm.py::TestBig::test_fp4[tp8-ep 8]");
  CHECK(a.timeout_minutes == 120);
  CHECK(a.isolation);
  CHECK(a.marker == ListMarker::kNone);

  TestListLine b =
      Line("examples/test_x.py::test_y ISOLATION TIMEOUT(90) XFAIL (https://nvbugs/42)");
  CHECK(b.timeout_minutes == 90);
  CHECK(b.isolation);
  CHECK(b.marker == ListMarker::kXfail);
  CHECK(b.reason == "https://nvbugs/42");

  TestListLine c =
      Line("full:H100/test_e2e.py::test_serve[a (b)] SKIP (needs a fix (see bug 7)) TIMEOUT (5)");
  CHECK(c.gpu_prefix == "H100");
  CHECK(c.id == "test_e2e.py::test_serve[a (b)]");
  CHECK(c.marker == ListMarker::kSkip);
  CHECK(c.reason == "needs a fix (see bug 7)");
  CHECK(c.timeout_minutes == 5);

  TestListLine d = Line("disagg/test_d.py::test_u UNSTABLE (flaky on 2 nodes)");
  CHECK(d.marker == ListMarker::kUnstable);
  CHECK(d.reason == "flaky on 2 nodes");
  CHECK(Line("a/test_b.py::test_c SKIP").reason.empty());
}

TEST_CASE("test-list line: -k / -m selectors and unittest paths", "[test_list]") {
  TestListLine k = Line(
      "unittest/_torch/modules/test_moe.py::test_multi_gpu -k \"CUTLASS and not W4A8\" TIMEOUT "
      "(30)");
  CHECK(k.IsUnittest());
  CHECK(k.id == "unittest/_torch/modules/test_moe.py::test_multi_gpu");
  CHECK(k.k_expr == std::optional<std::string>("CUTLASS and not W4A8"));
  CHECK(!k.m_expr);
  CHECK(k.timeout_minutes == 30);

  TestListLine m = Line("unittest/llmapi/test_llm_multi.py -m \"gpu4\"");
  CHECK(m.IsUnittest());
  CHECK(m.m_expr == std::optional<std::string>("gpu4"));

  TestListLine dir = Line("unittest/_torch/modeling -k 'llama and not mistral'");
  CHECK(dir.id == "unittest/_torch/modeling");
  CHECK(dir.k_expr == std::optional<std::string>("llama and not mistral"));

  TestListLine bare = Line("accuracy/test_a.py::TestX::test_y[p q]");
  CHECK_FALSE(bare.HasExtras());
  CHECK(FormatTestListLine(k) ==
        "unittest/_torch/modules/test_moe.py::test_multi_gpu -k \"CUTLASS and not W4A8\" "
        "TIMEOUT (30)");
}

TEST_CASE("test-list line: commands are not list lines", "[test_list]") {
  CHECK(IsCommand("pytest accuracy/test_a.py::t -k x"));
  CHECK(IsCommand("python3 tools/run.py --fast"));
  CHECK(IsCommand("tools/run.py --fast"));  // a script with its options
  CHECK(IsCommand("bash -c 'x.py::t SKIP (r)'"));
  CHECK(IsCommand("a.py::t; touch /tmp/x"));
}

TEST_CASE("test-list line: bad lines are named with what is wrong", "[test_list]") {
  CHECK_THAT(LineError("a/test_b.py::t TIMEOUT (90m)"),
             Catch::Contains("whole number of minutes") && Catch::Contains("a/test_b.py::t"));
  CHECK_THAT(LineError("a/test_b.py::t TIMEOUT"), Catch::Contains("whole number of minutes"));
  CHECK_THAT(LineError("a/test_b.py::t SKIP because flaky"), Catch::Contains("in parentheses"));
  CHECK_THAT(LineError("a/test_b.py::t SKIP (a) XFAIL (b)"), Catch::Contains("give one"));
  CHECK_THAT(LineError("a/test_b.py::t --forked"), Catch::Contains("'--forked'"));
  CHECK_THAT(LineError("a/test_b.py::t -k"), Catch::Contains("-k needs an expression"));
  CHECK_THAT(LineError("a/test_b.py::t ${skipIfPrefix('x', 'no')}"), Catch::Contains("Mako"));
  CHECK_THAT(LineError("full:B200"), Catch::Contains("full:"));
}

TEST_CASE("cases file: qa / waives lines in every form", "[test_list][multi]") {
  Result<std::vector<CaseEntry>> parsed = ParseCasesText(
      "# waives, qa list shape\n"
      "accuracy/test_a.py::TestX::test_y[tp4] SKIP (https://nvbugs/1)\n"
      "full:B200/accuracy/test_a.py::TestX::test_z XFAIL (known) # comment\n"
      "unittest/llmapi/test_llm.py -m \"gpu2\"\n"
      "unittest/_torch/test_moe.py::test_m -k \"A and not B\" TIMEOUT (20)\n"
      "accuracy/test_a.py::TestX::test_y[tp8] TIMEOUT (120) ISOLATION\n"
      "python3 scripts/check.py TIMEOUT (3)\n",
      "qa.txt", CaseRequest{});
  INFO((parsed.ok() ? std::string() : parsed.status().ToString()));
  REQUIRE(parsed.ok());
  const std::vector<CaseEntry>& cases = parsed.value();
  REQUIRE(cases.size() == 6);
  CHECK(cases[0].request.test_cmd ==
        "accuracy/test_a.py::TestX::test_y[tp4] SKIP (https://nvbugs/1)");
  CHECK(cases[0].name == "accuracy/test_a.py::TestX::test_y[tp4]");
  CHECK(cases[1].request.test_cmd == "full:B200/accuracy/test_a.py::TestX::test_z XFAIL (known)");
  CHECK(cases[2].name == "unittest/llmapi/test_llm.py -m \"gpu2\"");
  CHECK(cases[3].name == "unittest/_torch/test_moe.py::test_m -k \"A and not B\"");
  CHECK_FALSE(cases[4].request.monitor_timeout.has_value());
  // A command's TIMEOUT stays the job's limit, as before.
  CHECK(cases[5].request.test_cmd == "python3 scripts/check.py");
  CHECK(cases[5].request.monitor_timeout == "3m");

  Result<std::vector<CaseEntry>> mako =
      ParseCasesText("a/test_b.py::t\n% if test_prefix == 'x':\na/test_b.py::u\n% endif\n",
                     "mako.txt", CaseRequest{});
  REQUIRE_FALSE(mako.ok());
  CHECK_THAT(mako.status().ToString(),
             Catch::Contains("mako.txt:2 (case 2): '% if test_prefix == 'x':' is a Mako template "
                             "line") &&
                 Catch::Contains("mako.txt:4"));
}

constexpr const char* kTestDb = R"(version: 0.0.1
l0_fake_gpus:
- condition:
    ranges:
      system_gpu_count:
        gte: 2
        lte: 2
    wildcards:
      gpu:
      - '*h100*'
    terms:
      stage: pre_merge
      backend: pytorch
  tests:
  # a comment line, as the repo's YAMLs have
  - unittest/_torch/test_two.py::test_pair
  - accuracy/test_a.py::TestX::test_y[tp2] TIMEOUT (60)
- condition:
    ranges:
      system_gpu_count:
        gte: 4
        lte: 4
    terms:
      stage: post_merge
  tests:
    - unittest/llmapi/test_llm.py -m "gpu4"
    - accuracy/test_a.py::TestX::test_w SKIP (waived)
)";

TEST_CASE("cases file: a test-db YAML's tests from every block", "[test_list][multi]") {
  CaseRequest shared;
  shared.scenario = "local_direct";
  Result<std::vector<CaseEntry>> parsed = ParseCasesText(kTestDb, "l0_fake.yml", shared);
  INFO((parsed.ok() ? std::string() : parsed.status().ToString()));
  REQUIRE(parsed.ok());
  const std::vector<CaseEntry>& cases = parsed.value();
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].request.test_cmd == "unittest/_torch/test_two.py::test_pair");
  CHECK(cases[0].request.scenario == "local_direct");
  CHECK_THAT(cases[0].origin, Catch::StartsWith("l0_fake.yml:16") && Catch::EndsWith("(case 1)"));
  REQUIRE(cases[0].notes.size() == 1);
  CHECK_THAT(cases[0].notes[0], Catch::Contains("test-db block l0_fake_gpus[1]") &&
                                    Catch::Contains("system_gpu_count>=2, system_gpu_count<=2") &&
                                    Catch::Contains("gpu=*h100*") &&
                                    Catch::Contains("stage=pre_merge") &&
                                    Catch::Contains("not evaluated"));
  CHECK_THAT(cases[3].notes[0],
             Catch::Contains("l0_fake_gpus[2]") && Catch::Contains("stage=post_merge"));
  CHECK(cases[3].request.test_cmd == "accuracy/test_a.py::TestX::test_w SKIP (waived)");
  // Each block's system_gpu_count sizes its tests when their own markers do not.
  CHECK(cases[0].request.test_db_gpu_count == 2);
  CHECK(cases[1].request.test_db_gpu_count == 2);
  CHECK(cases[2].request.test_db_gpu_count == 4);
  CHECK(cases[3].request.test_db_gpu_count == 4);

  // lte alone, an exact term, and counts that are no count: none is taken.
  Result<std::vector<CaseEntry>> counts = ParseCasesText(
      "version: 0.0.1\nl0_c:\n"
      "- condition: {ranges: {system_gpu_count: {lte: 8}}}\n  tests: [a/test_b.py::t1]\n"
      "- condition: {terms: {system_gpu_count: 2}}\n  tests: [a/test_b.py::t2]\n"
      "- condition: {ranges: {system_gpu_count: {gte: -4}}}\n  tests: [a/test_b.py::t3]\n"
      "- condition: {ranges: {system_gpu_count: {gte: 99999999999}}}\n  tests: [a/test_b.py::t4]\n"
      "- condition: {ranges: {system_gpu_count: [1, 2]}}\n  tests: [a/test_b.py::t5]\n"
      "- tests: [a/test_b.py::t6]\n",
      "l0_c.yml", CaseRequest{});
  REQUIRE(counts.ok());
  REQUIRE(counts.value().size() == 6);
  CHECK(counts.value()[0].request.test_db_gpu_count == 8);
  CHECK(counts.value()[1].request.test_db_gpu_count == 2);
  for (std::size_t i = 2; i < 6; ++i) {
    INFO("case " << i);
    CHECK_FALSE(counts.value()[i].request.test_db_gpu_count.has_value());
  }

  Result<std::vector<CaseEntry>> bad = ParseCasesText(
      "version: 0.0.1\nl0_x:\n- condition: {}\n  tests:\n  - a/test_b.py::t TIMEOUT (x)\n"
      "  - {not: a line}\n",
      "l0_x.yml", CaseRequest{});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().ToString(),
             Catch::Contains("l0_x.yml:5") && Catch::Contains("whole number of minutes") &&
                 Catch::Contains("l0_x.yml:6") && Catch::Contains("one test-list line"));
}

}  // namespace
}  // namespace trtllm_run
