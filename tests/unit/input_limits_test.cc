// Input limits (input_limits.h) and the cases-file format rules (multi_run.h): bounded
// reads of files and endless devices, YAML node and depth budgets, plain-list lines.
#include "trtllm_run/sdk/input_limits.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "trtllm_run/multi_run.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"

namespace trtllm_run {
namespace {

std::string TempFile(const std::string& contents) {
  char path[] = "/tmp/trtllm_run_limits_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()));
  close(fd);
  return path;
}

std::string CasesError(const std::string& text) {
  Result<std::vector<CaseEntry>> cases = ParseCasesText(text, "c.txt", CaseRequest{});
  REQUIRE_FALSE(cases.ok());
  CHECK(cases.status().code() == StatusCode::kInvalidInput);
  return cases.status().ToString();
}

}  // namespace

TEST_CASE("ReadFileLimited: a file over the limit is refused from its size", "[limits]") {
  const std::string path = TempFile(std::string(2000, 'x'));
  Result<std::string> text = ReadFileLimited(path, 1999, "request file");
  REQUIRE_FALSE(text.ok());
  CHECK(text.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(
      text.status().message(),
      Catch::Contains("request file '" + path + "' is 2000 bytes, over the limit of 1999 bytes"));
  CHECK(ReadFileLimited(path, 2000, "request file").value() == std::string(2000, 'x'));
  std::remove(path.c_str());
  // A device without end: refused once the limit is passed, never read to the end.
  Result<std::string> zero = ReadFileLimited("/dev/zero", std::size_t{1} << 20, "cases file");
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.status().message(), Catch::Contains("is more than 1048576 bytes (1.0 MiB)"));
  CHECK(ReadFileLimited("/no/such/file", 10, "x").status().code() == StatusCode::kIoError);
}

TEST_CASE("YAML limits: aliases count at every use, cycles and depth end the walk", "[limits]") {
  CHECK(CheckYamlLimits("a: &a [1, 2]\nb: [*a, *a]\n", "f.yaml").ok());
  CHECK(CheckYamlLimits("not: [valid", "f.yaml").ok());  // the caller's parser says why
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 7; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  Status refused = CheckYamlLimits(bomb, "bomb.yaml");  // 10^7 leaves
  CHECK(refused.code() == StatusCode::kInvalidInput);
  CHECK_THAT(refused.message(), Catch::Contains("bomb.yaml:"));
  CHECK_THAT(refused.message(), Catch::Contains("more than 1000000 nodes"));
  CHECK_THAT(CheckYamlLimits("a: &a [*a]\n", "cycle.yaml").message(),
             Catch::Contains("cycle.yaml:1: lists and mappings nest deeper than 100 levels"));
  CHECK(CheckYamlLimits(std::string(100, '[') + std::string(100, ']'), "deep.yaml").ok());
  CHECK_FALSE(CheckYamlLimits(std::string(101, '[') + std::string(101, ']'), "deep.yaml").ok());

  CaseRequest request;
  Status status = LoadRequestText(bomb + "custom_cmd: 'true'\n", "req.yaml", &request);
  CHECK_THAT(status.message(), Catch::Contains("more than 1000000 nodes"));
  status = LoadRequestText("custom_cmd: 'true'\n#" + std::string(kMaxRequestFileBytes, 'x'),
                           "big.yaml", &request);
  CHECK_THAT(status.message(), Catch::Contains("big.yaml' is 1048596 bytes (1.0 MiB)"));
}

TEST_CASE("cases file: the format is what the text parses as", "[limits][multi]") {
  // A BOM, quoted keys, one line of JSON: YAML/JSON, read as such.
  for (const std::string& text : {std::string("\xEF\xBB\xBF[{\"custom_cmd\": \"echo a\"}]"),
                                  std::string("\"cases\": [{\"custom_cmd\": \"echo a\"}]\n"),
                                  std::string("\"cases\":\n  - \"custom_cmd\": echo a\n")}) {
    INFO(text);
    Result<std::vector<CaseEntry>> cases = ParseCasesText(text, "c.yaml", CaseRequest{});
    REQUIRE(cases.ok());
    REQUIRE(cases->size() == 1);
    CHECK(cases->front().request.custom_cmd == "echo a");
    CHECK_FALSE(cases->front().request.test_cmd.has_value());
  }
  // A path and commands whose first word is a program or a path are plain-list lines.
  Result<std::vector<CaseEntry>> plain = ParseCasesText(
      "tests/unittest/llmapi\n./run_tests.sh --fast\n/usr/bin/python3 -m pytest x.py\n"
      "tests/a.py::test_b TIMEOUT(5)\n",
      "c.txt", CaseRequest{});
  REQUIRE(plain.ok());
  REQUIRE(plain->size() == 4);
  CHECK(plain.value()[0].request.test_cmd == "pytest tests/unittest/llmapi");
  CHECK(plain.value()[1].request.test_cmd == "./run_tests.sh --fast");
  // A test-list line's TIMEOUT is the test's (the pytest workflow reads it), not the job's.
  CHECK(plain.value()[3].request.test_cmd == "tests/a.py::test_b TIMEOUT(5)");
  CHECK_FALSE(plain.value()[3].request.monitor_timeout.has_value());
  CHECK(plain.value()[3].name == "tests/a.py::test_b");
  // Anything else is refused with its line; a file that starts as YAML gets YAML's error.
  std::string error = CasesError("tests/a.py::t\n'$(touch x)' y\n$(touch x)\nkey: value x\n");
  CHECK_THAT(error, Catch::Contains("3 of 4 cases in c.txt are invalid"));
  CHECK_THAT(error, Catch::Contains("c.txt:2 (case 2): ''$(touch x)' y' starts with '''"));
  CHECK_THAT(error,
             Catch::Contains(
                 "c.txt:3 (case 3): '$(touch x)' is not a test command: its first word '$(touch'"));
  CHECK_THAT(error, Catch::Contains("c.txt:4 (case 4): "));
  CHECK_THAT(CasesError("{\"cases\": [\n"), Catch::Contains("c.txt:2: not valid YAML or JSON"));
  CHECK_THAT(CasesError("x.py::t\na\x01" + std::string(40000, 'a') + " b\n"),
             Catch::Contains("\\x01"));
}

}  // namespace trtllm_run

namespace trtllm_run {
namespace {

TEST_CASE("JSON numbers longer than the limit are refused before RapidJSON reads them",
          "[limits]") {
  // Found by fuzzing the result.json reader: RapidJSON 1.1.0's full-precision parser read
  // out of bounds (ASan: SEGV in StrtodDiyFp) on ~290 fractional zeros and a negative
  // exponent.
  const std::string zeros = "0." + std::string(290, '0') + "e-99";
  const std::string head = "{\"schema_version\": 1, \"status\": \"PASSED\", \"duration_seconds\": ";
  Result<RunResult> refused = ResultFromJson(head + zeros + "}", "result.json");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidInput);
  CHECK_THAT(refused.status().message(),
             Catch::Contains("result.json: a number at byte " + std::to_string(head.size()) +
                             " is longer than 64 characters"));
  // A number of 64 characters is read.
  const std::string longest = "0." + std::string(58, '0') + "1e-9";
  REQUIRE(longest.size() == 64);
  Result<RunResult> read = ResultFromJson(head + longest + "}", "result.json");
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  CHECK(read->duration_seconds > 0);
  CHECK_FALSE(ResultFromJson(head + longest + "0}", "result.json").ok());
}

}  // namespace
}  // namespace trtllm_run
