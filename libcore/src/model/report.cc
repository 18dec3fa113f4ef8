// JUnit XML reports (report.h).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "model/json_util.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Attribute(const char* name, std::string_view value) {
  return std::string(" ") + name + "=\"" + XmlEscape(value) + "\"";
}

std::string Property(const std::string& name, const std::string& value) {
  return "      <property" + Attribute("name", name) + Attribute("value", value) + "/>\n";
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  // ValidUtf8 turns invalid sequences into U+FFFD; what is left to fix is the characters
  // XML 1.0 forbids even as references.
  std::string valid = json::ValidUtf8(text);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (std::size_t i = 0; i < valid.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(valid[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&apos;";
        continue;
      case '\t':
      case '\n':
        out += static_cast<char>(c);
        continue;
      case '\r':
        out += "&#13;";  // kept as a reference: parsers normalize a raw CR away
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == 0x7F) {
      out += kReplacement;
      continue;
    }
    // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters.
    if (c == 0xEF && i + 2 < valid.size() && static_cast<unsigned char>(valid[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(valid[i + 2]) == 0xBE ||
         static_cast<unsigned char>(valid[i + 2]) == 0xBF)) {
      out += kReplacement;
      i += 2;
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

namespace {

// classname and name of a pytest node id as pytest's own JUnit report writes them:
// "dir/test_a.py::TestX::test_y[p]" -> ("dir.test_a.TestX", "test_y[p]").
std::pair<std::string, std::string> SplitNodeId(const std::string& node_id) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  // "::" inside the [parameters] belongs to the name.
  std::size_t bracket = node_id.find('[');
  while (true) {
    std::size_t sep = node_id.find("::", start);
    if (sep == std::string::npos || (bracket != std::string::npos && sep > bracket)) break;
    parts.push_back(node_id.substr(start, sep - start));
    start = sep + 2;
  }
  std::string name = node_id.substr(start);
  if (parts.empty()) return {"", name};
  std::string module = parts[0];
  if (module.size() > 3 && module.compare(module.size() - 3, 3, ".py") == 0)
    module.resize(module.size() - 3);
  for (char& c : module) {
    if (c == '/') c = '.';
  }
  for (std::size_t i = 1; i < parts.size(); ++i) module += "." + parts[i];
  return {module, name};
}

// The <testcase> elements of the tests a runner reported, each with its outcome.
std::string TestCaseElements(const std::vector<TestCaseOutcome>& tests) {
  std::string xml;
  for (const TestCaseOutcome& test : tests) {
    auto [classname, name] = SplitNodeId(test.name);
    xml += "    <testcase" + Attribute("classname", classname) + Attribute("name", name) + ">\n";
    if (test.outcome == "failed") {
      xml += "      <failure" + Attribute("type", "failed") + Attribute("message", test.message) +
             "/>\n";
    } else if (test.outcome == "error") {
      xml +=
          "      <error" + Attribute("type", "error") + Attribute("message", test.message) + "/>\n";
    } else if (test.outcome == "skipped" || test.outcome == "xfailed") {
      xml += "      <skipped" + Attribute("type", test.outcome) +
             Attribute("message", test.message) + "/>\n";
    }
    xml += "    </testcase>\n";
  }
  return xml;
}

bool HasFailedTest(const std::vector<TestCaseOutcome>& tests) {
  for (const TestCaseOutcome& test : tests) {
    if (test.outcome == "failed" || test.outcome == "error") return true;
  }
  return false;
}

}  // namespace

std::string ResultToJUnit(const RunResult& result) {
  const bool passed = result.status == RunStatus::kPassed;
  const bool skipped = result.status == RunStatus::kSkipped;
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "%.3f",
                result.duration_seconds >= 0 ? result.duration_seconds : 0.0);
  std::string scenario = result.scenario.empty() ? "unknown" : result.scenario;
  std::string workflow = result.workflow_type.empty() ? "unknown" : result.workflow_type;
  std::string name = result.model_name.empty() ? result.command : result.model_name;

  // With per-test outcomes, one <testcase> per test; the run itself gets its own
  // <testcase> only when its verdict is not explained by them (a timeout, a crash).
  const std::vector<TestCaseOutcome>& tests = result.test_cases;
  const bool run_case = tests.empty() || (!passed && !skipped && !HasFailedTest(tests));
  int count = 0, failures = 0, errors = 0, skips = 0;
  for (const TestCaseOutcome& test : tests) {
    ++count;
    failures += test.outcome == "failed";
    errors += test.outcome == "error";
    skips += test.outcome == "skipped" || test.outcome == "xfailed";
  }
  if (run_case) {
    ++count;
    failures += !passed && !skipped;
    skips += skipped;
  }
  const std::string totals = Attribute("tests", std::to_string(count)) +
                             Attribute("failures", std::to_string(failures)) +
                             Attribute("errors", std::to_string(errors));

  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + totals + Attribute("time", seconds) + ">\n";
  xml += "  <testsuite" + Attribute("name", "trtllm-run") + totals +
         Attribute("skipped", std::to_string(skips)) + Attribute("time", seconds) +
         Attribute("timestamp", result.started_at) + ">\n";
  xml += "    <properties>\n";
  xml += Property("status", RunStatusName(result.status));
  xml += Property("exit_code", result.exit_code ? std::to_string(*result.exit_code) : "");
  if (result.signal) xml += Property("signal", std::to_string(*result.signal));
  xml += Property("scenario", result.scenario);
  xml += Property("workflow_type", result.workflow_type);
  xml += Property("command", result.command);
  xml += Property("work_dir", result.work_dir);
  xml += Property("log_file", result.log_file);
  if (result.tests) xml += Property("tests", FormatTestCounts(*result.tests));
  for (const auto& [key, value] : result.details) xml += Property("details." + key, value);
  xml += "    </properties>\n";
  xml += TestCaseElements(tests);
  if (run_case) {
    xml += "    <testcase" + Attribute("classname", "trtllm-run." + scenario + "." + workflow) +
           Attribute("name", name) + Attribute("time", seconds) + ">\n";
    if (skipped) {
      xml += "      <skipped" + Attribute("message", result.reason) + "/>\n";
    } else if (!passed) {
      xml += "      " + FailureElement(result) + "\n";
    }
    std::string out;
    for (const std::string& line : result.log_tail) out += line + "\n";
    xml += "      <system-out>" + XmlEscape(out) + "</system-out>\n";
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string FailureElement(const RunResult& result) {
  std::string body;
  if (!result.diagnosis.empty()) body += "Diagnosis:\n" + result.diagnosis + "\n";
  if (!result.errors.empty()) {
    body += "\nErrors:\n";
    for (const std::string& error : result.errors) body += error + "\n";
  }
  body += "\nLog tail (" + result.log_file + "):\n";
  for (const std::string& line : result.log_tail) body += line + "\n";
  return "<failure" + Attribute("type", RunStatusName(result.status)) +
         Attribute("message", result.reason) + ">" + XmlEscape(body) + "</failure>";
}

Status WriteJUnit(const RunResult& result, const std::string& path) {
  Status status = WriteFileAtomic(path, ResultToJUnit(result));
  if (!status.ok()) return status.WithContext("cannot write the JUnit report " + path);
  return status;
}

}  // namespace trtllm_run
