// Reading pytest's JUnit files and writing the stage's merged JUnit (stage_junit.h).
#include "stage/stage_junit.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "stage/xml_reader.h"
#include "trtllm_run/report.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace stage {
namespace {

std::string Attr(const char* name, std::string_view value) {
  return std::string(" ") + name + "=\"" + XmlEscape(value) + "\"";
}

std::string Seconds(double seconds) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", seconds < 0 ? 0.0 : seconds);
  return buffer;
}

double ParseSeconds(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e9) return 0;
  return value;
}

std::string TailBytes(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  return "[... " + std::to_string(text.size() - limit) + " bytes cut ...]\n" +
         text.substr(text.size() - limit);
}

int Severity(JUnitOutcome outcome) {
  switch (outcome) {
    case JUnitOutcome::kPassed:
      return 0;
    case JUnitOutcome::kSkipped:
      return 1;
    case JUnitOutcome::kFailed:
      return 2;
    case JUnitOutcome::kError:
      return 3;
  }
  return 3;
}

bool IsFailure(JUnitOutcome outcome) {
  return outcome == JUnitOutcome::kFailed || outcome == JUnitOutcome::kError;
}

void AddCases(const xml::Element& suite, std::vector<JUnitCase>* cases) {
  for (const auto& child : suite.children) {
    if (child->name == "testsuite") AddCases(*child, cases);  // nested suites (xunit1)
    if (child->name != "testcase") continue;
    JUnitCase c;
    c.classname = child->Attribute("classname");
    c.name = child->Attribute("name");
    c.file = child->Attribute("file");
    c.seconds = ParseSeconds(child->Attribute("time"));
    const xml::Element* result = nullptr;
    for (const auto& [tag, outcome] :
         {std::pair{"error", JUnitOutcome::kError}, std::pair{"failure", JUnitOutcome::kFailed},
          std::pair{"skipped", JUnitOutcome::kSkipped}}) {
      if (const xml::Element* found = child->Child(tag)) {
        result = found;
        c.outcome = outcome;
        break;
      }
    }
    if (result) {
      c.message = result->Attribute("message");
      c.details = TailBytes(result->text, kMaxDetailsBytes);
    }
    cases->push_back(std::move(c));
  }
}

}  // namespace

const char* JUnitOutcomeName(JUnitOutcome outcome) {
  switch (outcome) {
    case JUnitOutcome::kPassed:
      return "passed";
    case JUnitOutcome::kFailed:
      return "failed";
    case JUnitOutcome::kError:
      return "error";
    case JUnitOutcome::kSkipped:
      return "skipped";
  }
  return "error";
}

const char* StageTestVerdictName(StageTestVerdict verdict) {
  switch (verdict) {
    case StageTestVerdict::kPassed:
      return "passed";
    case StageTestVerdict::kFlaky:
      return "flaky";
    case StageTestVerdict::kFailed:
      return "failed";
    case StageTestVerdict::kSkipped:
      return "skipped";
    case StageTestVerdict::kWaived:
      return "waived";
    case StageTestVerdict::kNotRun:
      return "not_run";
  }
  return "failed";
}

Result<std::vector<JUnitCase>> ParseJUnit(std::string_view xml_text, const std::string& source) {
  auto root = xml::Parse(xml_text, source);
  if (!root.ok()) return root.status();
  const xml::Element& top = **root;
  std::vector<JUnitCase> cases;
  if (top.name == "testsuite") {
    AddCases(top, &cases);
  } else if (top.name == "testsuites") {
    bool any_suite = false;
    for (const auto& child : top.children) {
      if (child->name != "testsuite") continue;
      any_suite = true;
      AddCases(*child, &cases);
    }
    if (!any_suite) {
      return Status::InvalidInput(source + ": <testsuites> holds no <testsuite>",
                                  "expected a JUnit file pytest wrote with --junitxml");
    }
  } else {
    return Status::InvalidInput(
        source + ": the root element is <" + top.name + ">, not <testsuites> or <testsuite>",
        "expected a JUnit file pytest wrote with --junitxml");
  }
  return cases;
}

Result<std::vector<JUnitCase>> ReadJUnitFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return Status::NotFound("JUnit file " + path + " does not exist",
                            "pytest writes it at the end of its run; a killed pytest writes none");
  }
  if (!S_ISREG(info.st_mode)) return Status::InvalidInput("JUnit file " + path + " is not a file");
  if (static_cast<std::size_t>(info.st_size) > kMaxJUnitFileBytes) {
    return Status::InvalidInput("JUnit file " + path + " is " + std::to_string(info.st_size) +
                                    " bytes, above the limit of " +
                                    std::to_string(kMaxJUnitFileBytes) + " bytes",
                                "a pytest JUnit file of 20000 tests is a few MiB");
  }
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  if (text->size() > kMaxJUnitFileBytes) {  // grew since the stat
    return Status::InvalidInput("JUnit file " + path + " is above the limit of " +
                                std::to_string(kMaxJUnitFileBytes) + " bytes");
  }
  return ParseJUnit(*text, path);
}

std::pair<std::string, std::string> JUnitKeyOfTestId(std::string_view test_id) {
  std::size_t bracket = test_id.find('[');
  std::string_view head = test_id.substr(0, bracket);
  std::string_view params = bracket == std::string_view::npos ? "" : test_id.substr(bracket);
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t sep = head.find("::", start);
    parts.emplace_back(head.substr(start, sep == std::string_view::npos ? sep : sep - start));
    if (sep == std::string_view::npos) break;
    start = sep + 2;
  }
  std::string path = parts.front();
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".py") == 0) path.resize(path.size() - 3);
  while (!path.empty() && path.back() == '/') path.pop_back();
  for (char& c : path) {
    if (c == '/') c = '.';
  }
  if (parts.size() == 1) return {path, ""};
  std::string classname = path;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) classname += "." + parts[i];
  return {classname, parts.back() + std::string(params)};
}

StageTestVerdict VerdictOf(const StageTestResult& test) {
  if (test.waived_reason) return StageTestVerdict::kWaived;
  if (test.reused_reason) return StageTestVerdict::kSkipped;
  if (test.attempts.empty()) return StageTestVerdict::kNotRun;
  JUnitOutcome last = test.attempts.back().outcome;
  if (last == JUnitOutcome::kPassed) {
    for (const TestAttempt& attempt : test.attempts) {
      if (IsFailure(attempt.outcome)) return StageTestVerdict::kFlaky;
    }
    return StageTestVerdict::kPassed;
  }
  if (last == JUnitOutcome::kSkipped) return StageTestVerdict::kSkipped;
  return StageTestVerdict::kFailed;
}

StageCounts CountStage(const std::vector<StageTestResult>& tests) {
  StageCounts counts;
  for (const StageTestResult& test : tests) {
    ++counts.total;
    switch (VerdictOf(test)) {
      case StageTestVerdict::kFlaky:
        ++counts.flaky;
        ++counts.passed;
        break;
      case StageTestVerdict::kPassed:
        ++counts.passed;
        break;
      case StageTestVerdict::kSkipped:
        ++counts.skipped;
        break;
      case StageTestVerdict::kWaived:
        ++counts.waived;
        break;
      case StageTestVerdict::kNotRun:
        ++counts.not_run;
        ++counts.failed;
        break;
      case StageTestVerdict::kFailed:
        ++counts.failed;
        break;
    }
  }
  return counts;
}

void AddAttempts(const std::vector<JUnitCase>& cases, int split_id,
                 std::vector<StageTestResult>* tests) {
  std::map<std::pair<std::string, std::string>, std::size_t> by_key;
  std::vector<std::pair<std::string, std::size_t>> containers;  // file/dir ids: dotted prefix
  for (std::size_t i = 0; i < tests->size(); ++i) {
    auto key = JUnitKeyOfTestId((*tests)[i].id);
    if (key.second.empty()) {
      containers.emplace_back(key.first, i);
    } else {
      by_key.emplace(std::move(key), i);
    }
  }
  std::set<std::size_t> touched;   // tests given an attempt by this file
  std::set<std::size_t> expanded;  // container ids whose tests were reported one by one
  for (const JUnitCase& c : cases) {
    TestAttempt attempt{c.outcome, c.seconds, c.message, c.details};
    auto found = by_key.find({c.classname, c.name});
    std::size_t index;
    if (found != by_key.end()) {
      index = found->second;
    } else {
      std::string id;
      for (const auto& [prefix, container] : containers) {
        if (c.classname == prefix || c.classname.rfind(prefix + ".", 0) == 0) {
          std::string rest = c.classname.substr(prefix.size());
          for (std::size_t at = rest.find('.'); at != std::string::npos; at = rest.find('.'))
            rest.replace(at, 1, "::");
          id = (*tests)[container].id + rest + "::" + c.name;
          expanded.insert(container);
          break;
        }
      }
      if (id.empty()) id = c.classname + "::" + c.name;
      StageTestResult added;
      added.id = id;
      added.split_id = split_id;
      tests->push_back(std::move(added));
      index = tests->size() - 1;
      by_key.emplace(std::make_pair(c.classname, c.name), index);
    }
    StageTestResult& test = (*tests)[index];
    if (touched.count(index) && !test.attempts.empty()) {
      // pytest reports a test twice when its teardown errors: the worse outcome stands.
      TestAttempt& last = test.attempts.back();
      last.seconds += attempt.seconds;
      if (Severity(attempt.outcome) > Severity(last.outcome)) last = std::move(attempt);
      continue;
    }
    touched.insert(index);
    test.attempts.push_back(std::move(attempt));
    test.not_run_reason.clear();
  }
  // A file or directory id whose tests came one by one is replaced by them.
  for (auto it = expanded.rbegin(); it != expanded.rend(); ++it) {
    if ((*tests)[*it].attempts.empty()) tests->erase(tests->begin() + static_cast<long>(*it));
  }
}

std::string StageJUnit(const std::string& stage_name, const std::vector<StageTestResult>& tests) {
  StageCounts counts = CountStage(tests);
  double total_seconds = 0;
  int errors = 0;
  for (const StageTestResult& test : tests) {
    for (const TestAttempt& attempt : test.attempts) total_seconds += attempt.seconds;
    if (VerdictOf(test) == StageTestVerdict::kNotRun ||
        (VerdictOf(test) == StageTestVerdict::kFailed &&
         test.attempts.back().outcome == JUnitOutcome::kError)) {
      ++errors;
    }
  }
  std::string xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites>\n";
  xml += "  <testsuite" + Attr("name", stage_name) + Attr("tests", std::to_string(counts.total)) +
         Attr("failures", std::to_string(counts.failed - errors)) +
         Attr("errors", std::to_string(errors)) +
         Attr("skipped", std::to_string(counts.skipped + counts.waived)) +
         Attr("time", Seconds(total_seconds)) + ">\n";
  for (const StageTestResult& test : tests) {
    auto [classname, name] = JUnitKeyOfTestId(test.id);
    if (name.empty()) name = test.id;
    StageTestVerdict verdict = VerdictOf(test);
    double seconds = test.attempts.empty() ? 0 : test.attempts.back().seconds;
    xml += "    <testcase" + Attr("classname", classname) + Attr("name", name) +
           Attr("time", Seconds(seconds)) + ">\n";
    auto element = [&xml](const char* tag, const TestAttempt& attempt) {
      xml += std::string("      <") + tag + Attr("message", attempt.message) +
             Attr("type", JUnitOutcomeName(attempt.outcome)) + ">" + XmlEscape(attempt.details) +
             "</" + tag + ">\n";
    };
    switch (verdict) {
      case StageTestVerdict::kWaived:
        xml += "      <skipped" + Attr("message", "waived: " + *test.waived_reason) + "/>\n";
        break;
      case StageTestVerdict::kNotRun:
        xml += "      <error" +
               Attr("message", "not run: " + (test.not_run_reason.empty()
                                                  ? std::string("no result from its shard")
                                                  : test.not_run_reason)) +
               "/>\n";
        break;
      case StageTestVerdict::kSkipped:
        xml += "      <skipped" +
               Attr("message",
                    test.reused_reason ? *test.reused_reason : test.attempts.back().message) +
               "/>\n";
        break;
      case StageTestVerdict::kFlaky:
        for (const TestAttempt& attempt : test.attempts) {
          if (!IsFailure(attempt.outcome)) continue;
          xml += "      <flakyFailure" + Attr("message", attempt.message) +
                 Attr("type", JUnitOutcomeName(attempt.outcome)) + "><stackTrace>" +
                 XmlEscape(attempt.details) + "</stackTrace></flakyFailure>\n";
        }
        break;
      case StageTestVerdict::kFailed: {
        const TestAttempt& first = test.attempts.front();
        element(test.attempts.back().outcome == JUnitOutcome::kError ? "error" : "failure", first);
        for (std::size_t i = 1; i < test.attempts.size(); ++i) {
          xml += "      <rerunFailure" + Attr("message", test.attempts[i].message) +
                 Attr("type", JUnitOutcomeName(test.attempts[i].outcome)) + "><stackTrace>" +
                 XmlEscape(test.attempts[i].details) + "</stackTrace></rerunFailure>\n";
        }
        break;
      }
      case StageTestVerdict::kPassed:
        break;
    }
    if (!test.rerun_note.empty()) {
      xml += "      <system-out>" + XmlEscape(test.rerun_note) + "</system-out>\n";
    }
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace stage
}  // namespace trtllm_run
