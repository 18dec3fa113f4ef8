// JUnit XML reports (report.h).
#include <cstdio>
#include <string>

#include "json_util.h"
#include "trtllm_run/report.h"
#include "trtllm_run/text.h"

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

std::string ResultToJUnit(const RunResult& result) {
  const bool passed = result.status == RunStatus::kPassed;
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "%.3f",
                result.duration_seconds >= 0 ? result.duration_seconds : 0.0);
  std::string scenario = result.scenario.empty() ? "unknown" : result.scenario;
  std::string workflow = result.workflow_type.empty() ? "unknown" : result.workflow_type;
  std::string name = result.model_name.empty() ? result.command : result.model_name;

  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += "<testsuites" + Attribute("tests", "1") + Attribute("failures", passed ? "0" : "1") +
         Attribute("errors", "0") + Attribute("time", seconds) + ">\n";
  xml += "  <testsuite" + Attribute("name", "trtllm-run") + Attribute("tests", "1") +
         Attribute("failures", passed ? "0" : "1") + Attribute("errors", "0") +
         Attribute("skipped", "0") + Attribute("time", seconds) +
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
  for (const auto& [key, value] : result.details) xml += Property("details." + key, value);
  xml += "    </properties>\n";
  xml += "    <testcase" + Attribute("classname", "trtllm-run." + scenario + "." + workflow) +
         Attribute("name", name) + Attribute("time", seconds) + ">\n";
  if (!passed) {
    std::string body;
    if (!result.diagnosis.empty()) body += "Diagnosis:\n" + result.diagnosis + "\n";
    if (!result.errors.empty()) {
      body += "\nErrors:\n";
      for (const std::string& error : result.errors) body += error + "\n";
    }
    body += "\nLog tail (" + result.log_file + "):\n";
    for (const std::string& line : result.log_tail) body += line + "\n";
    xml += "      <failure" + Attribute("type", RunStatusName(result.status)) +
           Attribute("message", result.reason) + ">" + XmlEscape(body) + "</failure>\n";
  }
  std::string out;
  for (const std::string& line : result.log_tail) out += line + "\n";
  xml += "      <system-out>" + XmlEscape(out) + "</system-out>\n";
  xml += "    </testcase>\n  </testsuite>\n</testsuites>\n";
  return xml;
}

Status WriteJUnit(const RunResult& result, const std::string& path) {
  Status status = WriteFileAtomic(path, ResultToJUnit(result));
  if (!status.ok()) return status.WithContext("cannot write the JUnit report " + path);
  return status;
}

}  // namespace trtllm_run
