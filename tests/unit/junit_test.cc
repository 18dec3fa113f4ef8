// JUnit XML: escaping of everything a log can hold, and the document's shape. The
// integration tests parse the CLI's output with a real XML parser.
#include <catch2/catch.hpp>
#include <string>

#include "trtllm_run/report.h"

namespace trtllm_run {
namespace {

TEST_CASE("XmlEscape: markup, quotes, control characters, invalid UTF-8", "[junit]") {
  CHECK(XmlEscape("a<b>&\"c\"'d'") == "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
  CHECK(XmlEscape("tab\tnl\n") == "tab\tnl\n");
  CHECK(XmlEscape("cr\r") == "cr&#13;");
  // ESC (ANSI colours), NUL, BEL, DEL: not XML characters.
  CHECK(XmlEscape(std::string("\x1b[31mred\x1b[0m", 12)) == "\xEF\xBF\xBD[31mred\xEF\xBF\xBD[0m");
  CHECK(XmlEscape(std::string("a\0b\x07\x7f", 5)) ==
        "a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(XmlEscape("bad \xff\xfe utf8") == "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8");
  CHECK(XmlEscape("\xEF\xBF\xBF") == "\xEF\xBF\xBD");  // U+FFFF
  CHECK(XmlEscape("ünïcödé ✓") == "ünïcödé ✓");
}

TEST_CASE("ResultToJUnit: PASSED has no failure element", "[junit]") {
  RunResult result;
  result.status = RunStatus::kPassed;
  result.scenario = "local_docker";
  result.workflow_type = "custom";
  result.model_name = "demo";
  result.duration_seconds = 1.5;
  result.exit_code = 0;
  std::string xml = ResultToJUnit(result);
  CHECK_THAT(xml, Catch::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  CHECK_THAT(xml, Catch::Contains("<testcase classname=\"trtllm-run.local_docker.custom\" "
                                  "name=\"demo\" time=\"1.500\">"));
  CHECK_THAT(xml, Catch::Contains("failures=\"0\""));
  CHECK(xml.find("<failure") == std::string::npos);
}

TEST_CASE("ResultToJUnit: a failure carries status, reason, diagnosis and log tail", "[junit]") {
  RunResult result;
  result.status = RunStatus::kTimeout;
  result.reason = "still running after monitor_timeout_seconds=3 <limit>";
  result.diagnosis = "Exceeded the time limit";
  result.log_tail = {"line & one", std::string("esc \x1b[1m", 8)};
  result.errors = {"an error"};
  result.details["container_name"] = "x_auto_test";
  std::string xml = ResultToJUnit(result);
  CHECK_THAT(xml, Catch::Contains("<failure type=\"TIMEOUT\" message=\"still running after "
                                  "monitor_timeout_seconds=3 &lt;limit&gt;\">Diagnosis:\n"
                                  "Exceeded the time limit\n"));
  CHECK_THAT(xml, Catch::Contains("line &amp; one\n"));
  CHECK_THAT(xml, Catch::Contains("an error"));
  CHECK_THAT(xml, Catch::Contains("name=\"details.container_name\" value=\"x_auto_test\""));
  CHECK(xml.find('\x1b') == std::string::npos);
  CHECK_THAT(xml, Catch::Contains("failures=\"1\""));
}

}  // namespace
}  // namespace trtllm_run
