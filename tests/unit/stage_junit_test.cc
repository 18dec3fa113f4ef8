// Reading pytest's JUnit files and merging a stage's shards and reruns (stage/stage_junit.h).
#include "stage/stage_junit.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "stage/stage_run.h"
#include "stage/xml_reader.h"
#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using trtllm_run::stage::AddAttempts;
using trtllm_run::stage::CountStage;
using trtllm_run::stage::JUnitCase;
using trtllm_run::stage::JUnitKeyOfTestId;
using trtllm_run::stage::JUnitOutcome;
using trtllm_run::stage::ParseJUnit;
using trtllm_run::stage::ReadJUnitFile;
using trtllm_run::stage::StageJUnit;
using trtllm_run::stage::StageTestResult;
using trtllm_run::stage::StageTestVerdict;
using trtllm_run::stage::VerdictOf;

namespace {

std::string Fixture(const std::string& name) {
  return (fs::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "fixtures" / "stage_run" / "junit" / name)
      .string();
}

std::vector<StageTestResult> Listed(std::initializer_list<const char*> ids, int split_id = 1) {
  std::vector<StageTestResult> tests;
  for (const char* id : ids) {
    StageTestResult test;
    test.id = id;
    test.split_id = split_id;
    tests.push_back(test);
  }
  return tests;
}

JUnitCase Case(std::string classname, std::string name, JUnitOutcome outcome, double seconds,
               std::string message = "") {
  JUnitCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.outcome = outcome;
  c.seconds = seconds;
  c.message = std::move(message);
  return c;
}

// Counts the non-overlapping occurrences of `needle`.
int Occurrences(const std::string& haystack, const std::string& needle) {
  int count = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("a JUnit file real pytest wrote reads back case by case", "[stage][junit]") {
  auto cases = ReadJUnitFile(Fixture("pytest7_shard.xml"));
  REQUIRE(cases.ok());
  REQUIRE(cases->size() == 5);
  CHECK((*cases)[0].classname == "accuracy.test_llm.TestLlama");
  CHECK((*cases)[0].name == "test_fp8[tp1]");
  CHECK((*cases)[0].outcome == JUnitOutcome::kPassed);
  CHECK((*cases)[1].name == "test_fp8[tp2.5]");
  CHECK((*cases)[1].outcome == JUnitOutcome::kFailed);
  // Entities decoded, including the numeric newline in the attribute.
  CHECK((*cases)[1].message ==
        "AssertionError: wrong <tp> & more\nassert 'tp2.5' == 'tp1'\n"
        "  - tp1\n  + tp2.5");
  CHECK_THAT((*cases)[1].details, Contains("accuracy/test_llm.py:5: AssertionError"));
  CHECK((*cases)[2].outcome == JUnitOutcome::kSkipped);
  CHECK((*cases)[2].message == "needs 8 GPUs");
  CHECK((*cases)[4].outcome == JUnitOutcome::kError);
  CHECK((*cases)[4].message == "failed on teardown with \"RuntimeError: teardown broke\"");
}

TEST_CASE("a test id maps to the classname and name pytest writes", "[stage][junit]") {
  CHECK(JUnitKeyOfTestId("accuracy/test_llm.py::TestLlama::test_fp8[tp2.5]") ==
        std::pair<std::string, std::string>{"accuracy.test_llm.TestLlama", "test_fp8[tp2.5]"});
  CHECK(JUnitKeyOfTestId("test_unit.py::test_ok") ==
        std::pair<std::string, std::string>{"test_unit", "test_ok"});
  // Parameters may hold "::" and "/" without changing the split.
  CHECK(JUnitKeyOfTestId("a/test_b.py::test_c[x::y/z-1]") ==
        std::pair<std::string, std::string>{"a.test_b", "test_c[x::y/z-1]"});
  CHECK(JUnitKeyOfTestId("a/test_b.py") == std::pair<std::string, std::string>{"a.test_b", ""});
}

TEST_CASE("hostile JUnit input is refused with the file and line named", "[stage][junit]") {
  auto truncated = ParseJUnit("<testsuites><testsuite name='x'>\n<testcase name='a'>", "s1.xml");
  REQUIRE_FALSE(truncated.ok());
  CHECK_THAT(truncated.status().message(), Contains("s1.xml: line 2"));
  CHECK_THAT(truncated.status().message(), Contains("truncated"));

  auto billion_laughs = ParseJUnit(
      "<!DOCTYPE t [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;'>]><testsuite>&b;</testsuite>", "b");
  REQUIRE_FALSE(billion_laughs.ok());
  CHECK_THAT(billion_laughs.status().message(), Contains("DOCTYPE"));

  CHECK_FALSE(ParseJUnit("<testsuite><testcase name='a' name='b'/></testsuite>", "d").ok());
  CHECK_FALSE(ParseJUnit("<testsuite>&bogus;</testsuite>", "e").ok());
  CHECK_FALSE(ParseJUnit("<testsuite></testcase>", "f").ok());
  CHECK_FALSE(ParseJUnit("<testsuite/><testsuite/>", "g").ok());
  CHECK_FALSE(ParseJUnit("", "h").ok());
  CHECK_FALSE(ParseJUnit("\x89PNG\r\n\x1a\n\x00\x00garbage", "i").ok());
  auto wrong_root = ParseJUnit("<html><body/></html>", "page.xml");
  REQUIRE_FALSE(wrong_root.ok());
  CHECK_THAT(wrong_root.status().message(), Contains("<html>"));

  // Deep nesting is an error, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  auto too_deep = trtllm_run::xml::Parse(deep, "deep.xml");
  REQUIRE_FALSE(too_deep.ok());
  CHECK_THAT(too_deep.status().message(), Contains("deeper than 64"));
}

TEST_CASE("a JUnit file above the size limit or missing is a clear error", "[stage][junit]") {
  fs::path dir = fs::temp_directory_path() / ("stage_junit_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path huge = dir / "huge.xml";
  {
    std::ofstream out(huge);
    out << "<testsuite>";
  }
  fs::resize_file(huge, trtllm_run::stage::kMaxJUnitFileBytes + 1);  // sparse: no disk used
  auto refused = ReadJUnitFile(huge.string());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Contains("above the limit"));
  CHECK_THAT(refused.status().message(), Contains(huge.string()));
  auto missing = ReadJUnitFile((dir / "none.xml").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == trtllm_run::StatusCode::kNotFound);
  fs::remove_all(dir);
}

TEST_CASE("shards merge into one suite named after the stage, every test once", "[stage][junit]") {
  auto tests = Listed({"a/test_x.py::test_pass", "a/test_x.py::test_fail", "b/test_y.py::test_w"});
  tests[2].waived_reason = "https://nvbugs/123";
  auto more = Listed({"b/test_y.py::TestK::test_skip", "b/test_y.py::test_never"}, 2);
  tests.insert(tests.end(), more.begin(), more.end());

  AddAttempts({Case("a.test_x", "test_pass", JUnitOutcome::kPassed, 1.5),
               Case("a.test_x", "test_fail", JUnitOutcome::kFailed, 2, "assert 1 == 2")},
              1, &tests);
  AddAttempts({Case("b.test_y.TestK", "test_skip", JUnitOutcome::kSkipped, 0, "no GPU")}, 2,
              &tests);
  tests[4].not_run_reason = "shard 2 timed out before it started";

  REQUIRE(tests.size() == 5);
  CHECK(VerdictOf(tests[0]) == StageTestVerdict::kPassed);
  CHECK(VerdictOf(tests[1]) == StageTestVerdict::kFailed);
  CHECK(VerdictOf(tests[2]) == StageTestVerdict::kWaived);
  CHECK(VerdictOf(tests[3]) == StageTestVerdict::kSkipped);
  CHECK(VerdictOf(tests[4]) == StageTestVerdict::kNotRun);
  auto counts = CountStage(tests);
  CHECK(counts.total == 5);
  CHECK(counts.passed == 1);
  CHECK(counts.failed == 2);
  CHECK(counts.waived == 1);
  CHECK(counts.skipped == 1);
  CHECK_FALSE(counts.AllPassed());

  std::string xml = StageJUnit("DGX_H100-4_GPUs-PyTorch-1", tests);
  CHECK(Occurrences(xml, "<testsuite ") == 1);
  CHECK_THAT(xml, Contains("<testsuite name=\"DGX_H100-4_GPUs-PyTorch-1\" tests=\"5\" "
                           "failures=\"1\" errors=\"1\" skipped=\"2\""));
  CHECK(Occurrences(xml, "<testcase ") == 5);
  CHECK_THAT(xml, Contains("<skipped message=\"waived: https://nvbugs/123\"/>"));
  CHECK_THAT(xml, Contains("<failure message=\"assert 1 == 2\""));
  CHECK_THAT(xml, Contains("not run: shard 2 timed out before it started"));
  // The merged file is itself a JUnit that reads back with every test once.
  auto back = ParseJUnit(xml, "merged");
  REQUIRE(back.ok());
  CHECK(back->size() == 5);
}

TEST_CASE("a test that failed then passed on rerun is passed with flakyFailure", "[stage][junit]") {
  auto tests = Listed({"t/test_f.py::test_flaky", "t/test_f.py::test_broken"});
  AddAttempts({Case("t.test_f", "test_flaky", JUnitOutcome::kFailed, 3, "seed 1 fails"),
               Case("t.test_f", "test_broken", JUnitOutcome::kFailed, 1, "always")},
              1, &tests);
  AddAttempts({Case("t.test_f", "test_flaky", JUnitOutcome::kFailed, 3, "seed 2 fails"),
               Case("t.test_f", "test_broken", JUnitOutcome::kError, 1, "again")},
              1, &tests);
  AddAttempts({Case("t.test_f", "test_flaky", JUnitOutcome::kPassed, 2),
               Case("t.test_f", "test_broken", JUnitOutcome::kFailed, 1, "third")},
              1, &tests);
  REQUIRE(tests.size() == 2);
  REQUIRE(tests[0].attempts.size() == 3);
  CHECK(VerdictOf(tests[0]) == StageTestVerdict::kFlaky);
  CHECK(VerdictOf(tests[1]) == StageTestVerdict::kFailed);
  auto counts = CountStage(tests);
  CHECK(counts.passed == 1);
  CHECK(counts.flaky == 1);
  CHECK(counts.failed == 1);

  std::string xml = StageJUnit("S", tests);
  CHECK(Occurrences(xml, "<flakyFailure ") == 2);
  CHECK_THAT(xml, Contains("<flakyFailure message=\"seed 1 fails\""));
  CHECK_THAT(xml, Contains("<flakyFailure message=\"seed 2 fails\""));
  CHECK(Occurrences(xml, "<rerunFailure ") == 2);
  CHECK(Occurrences(xml, "<testcase ") == 2);
  // The flaky one counts as passed in the suite: one failure (test_broken), no errors.
  CHECK_THAT(xml, Contains("tests=\"2\" failures=\"1\" errors=\"0\""));
  // A flaky test's <testcase> has no <failure> child: Surefire readers count it passed.
  std::size_t flaky_case = xml.find("name=\"test_flaky\"");
  std::size_t flaky_end = xml.find("</testcase>", flaky_case);
  CHECK(xml.substr(flaky_case, flaky_end - flaky_case).find("<failure") == std::string::npos);
  CHECK_THAT(xml, Contains("time=\"2.000\""));  // the passing attempt's time
}

TEST_CASE("a file id in the list expands to the tests pytest reported under it", "[stage][junit]") {
  auto tests = Listed({"unit/test_all.py", "x/test_y.py::test_z"});
  AddAttempts({Case("unit.test_all", "test_a", JUnitOutcome::kPassed, 1),
               Case("unit.test_all.TestB", "test_c[1]", JUnitOutcome::kFailed, 1),
               Case("x.test_y", "test_z", JUnitOutcome::kPassed, 1),
               Case("elsewhere", "test_q", JUnitOutcome::kPassed, 1)},
              3, &tests);
  REQUIRE(tests.size() == 4);
  CHECK(tests[0].id == "x/test_y.py::test_z");
  CHECK(tests[1].id == "unit/test_all.py::test_a");
  CHECK(tests[2].id == "unit/test_all.py::TestB::test_c[1]");
  CHECK(tests[2].split_id == 3);
  CHECK(tests[3].id == "elsewhere::test_q");
  // A rerun of the expanded test finds it again rather than adding a second one.
  AddAttempts({Case("unit.test_all.TestB", "test_c[1]", JUnitOutcome::kPassed, 1)}, 3, &tests);
  CHECK(tests.size() == 4);
  CHECK(VerdictOf(tests[2]) == StageTestVerdict::kFlaky);
}

TEST_CASE("a shard's pytest command quotes every id: nothing in an id reaches the shell",
          "[stage][junit]") {
  fs::path dir = fs::temp_directory_path() / ("stage_cmd_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "defs dir");
  const std::string printer = (dir / "print_args").string();
  {
    std::ofstream out(printer);
    out << "#!/bin/sh\npwd\nfor a in \"$@\"; do printf '%s|\\n' \"$a\"; done\n";
  }
  fs::permissions(printer, fs::perms::owner_all);
  const std::string hostile = "t.py::test[$(touch " + (dir / "pwned").string() + ") `id` ' \"]";
  std::string command = trtllm_run::PytestCommand(
      printer, (dir / "defs dir").string(), {hostile, "-k", "a and not b"},
      (dir / "j u.xml").string(), (dir / "plug").string(), (dir / "p.progress").string(),
      (dir / "t.json").string());
  std::string shell = "bash -c " + trtllm_run::ShellQuote(command) + " 2>&1";
  FILE* pipe = ::popen(shell.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  std::size_t n;
  while ((n = ::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  CHECK(::pclose(pipe) == 0);
  CHECK_THAT(out, Contains((dir / "defs dir").string() + "\n"));  // ran in the defs dir
  CHECK_THAT(out, Contains("\n" + hostile + "|\n"));              // one word, byte for byte
  CHECK_THAT(out, Contains("\n-k|\na and not b|\n"));
  CHECK_THAT(out, Contains("--junitxml=" + (dir / "j u.xml").string() + "|\n"));
  CHECK_FALSE(fs::exists(dir / "pwned"));
  fs::remove_all(dir);
}
