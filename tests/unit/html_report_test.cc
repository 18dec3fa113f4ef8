// The HTML report's text, model and page (libcore/src/report/): hostile names only
// escaped, the scheduler's times parsed, 1,000 tests within the size and time budget.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "report/html_report.h"
#include "report/html_text.h"
#include "report/report_model.h"
#include "report/report_svg.h"

namespace trtllm_run::report {
namespace {

// Every byte of a hostile name that could open markup, end the script, close a CDATA
// section or drive a terminal.
const std::string kHostile =
    "test_x[<script>alert(1)</script> \"q\" 'a' ]]> </script><img src=x onerror=alert(2)> "
    "\x01\x1b[31m\x7f \xff\xfe \xc2\x85 <!--]";

// No raw control byte except newline and tab, and valid UTF-8 throughout.
bool CleanBytes(const std::string& html) {
  for (unsigned char c : html) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
  }
  return html.find("\xc2\x85") == std::string::npos && html.find('\xff') == std::string::npos;
}

ReportModel HostileModel(std::size_t tests) {
  ReportModel model;
  model.kind = "run";
  model.title = "run " + kHostile;
  model.status = "FAILED";
  model.reason = kHostile;
  model.where = {{"scenario", "local_slurm"}, {"command", kHostile}};
  model.counts = {{"failed", 1}};
  for (std::size_t i = 0; i < tests; ++i) {
    TestRow row;
    row.name = "tests/integration/defs/accuracy/test_llm_api.py::TestLlama3_1_8B::test_fp8[" +
               std::to_string(i) + "-tp4-pp2]";
    row.outcome = i % 10 == 3 ? "failed" : "passed";
    row.group = "split " + std::to_string(i % 4 + 1);
    row.seconds = 12.5 + static_cast<double>(i);
    row.message = i % 10 == 3 ? "AssertionError: accuracy 0.61 < 0.65 (threshold)" : "";
    model.tests.push_back(row);
  }
  model.tests.push_back(TestRow{kHostile, "fail<ed>", kHostile, 1.0, 2, kHostile});
  Failure failure;
  failure.name = kHostile;
  failure.outcome = "FAILED";
  failure.reason = failure.diagnosis = kHostile;
  failure.messages = {kHostile};
  failure.log_tail = {kHostile, "</pre></div></body>"};
  model.failures.push_back(failure);
  model.reruns.push_back(Rerun{kHostile, "flaky", kHostile, {"failed", "passed"}});
  model.flaky_history.push_back(FlakyEntry{kHostile, 0.25, 3, 1, 1, kHostile});
  TimelineJob job;
  job.label = kHostile;
  job.job_id = "<b>12</b>";
  job.status = "FAILED";
  job.submit = 1000, job.start = 1010, job.end = 1070;
  job.source = "sacct";
  model.jobs.push_back(job);
  PerfSeries series;
  series.case_name = series.metric = series.unit = kHostile;
  series.direction = "maximize";
  series.history = {{100, 1000}, {200, 1010}, {300, 990}};
  series.value = 850, series.value_time = 400;
  series.baseline = 1005, series.threshold = 0.05, series.change = -0.154;
  series.regressed = true;
  model.perf.push_back(series);
  return model;
}

TEST_CASE("html report: HtmlText escapes markup and shows control bytes as text", "[report]") {
  CHECK(HtmlText("<script>") == "&lt;script&gt;");
  CHECK(HtmlText("a\"b'c&d") == "a&quot;b&#39;c&amp;d");
  CHECK(HtmlText("]]>") == "]]&gt;");
  CHECK(HtmlText("x\x01y\x1b[0m\x7f") == "x\\x01y\\x1b[0m\\x7f");
  CHECK(HtmlText("line\n\ttab") == "line\n\ttab");
  CHECK(HtmlText("\xff\xfe") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(HtmlText("\xc2\x85") == "\\x85");                                     // C1 control (NEL)
  CHECK(HtmlText("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92");  // kept
  CHECK(CutText("\xe2\x86\x92\xe2\x86\x92", 4) == "\xe2\x86\x92...");         // not mid-sequence
}

TEST_CASE("html report: hostile names appear only escaped in the page and its SVG", "[report]") {
  const std::string html = RenderHtmlReport(HostileModel(3));
  // Exactly one script element: the page's own filter, which holds no data.
  std::size_t scripts = 0;
  for (std::size_t at = html.find("<script"); at != std::string::npos;
       at = html.find("<script", at + 1)) {
    ++scripts;
  }
  CHECK(scripts == 1);
  CHECK(html.find("</script>") == html.rfind("</script>"));
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("]]>") == std::string::npos);
  CHECK(html.find("<!--") == std::string::npos);
  CHECK(html.find("<b>12</b>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &quot;q&quot; &#39;a&#39; ]]&gt;") !=
        std::string::npos);
  CHECK(html.find("\\x1b[31m") != std::string::npos);
  CHECK(CleanBytes(html));
  // No URL of any kind: nothing for a browser to fetch.
  CHECK(html.find("http:") == std::string::npos);
  CHECK(html.find("https:") == std::string::npos);
  CHECK(html.find("url(") == html.find("url(#queued)"));
  // The outcome class is reduced to [a-z_]: a hostile outcome cannot leave the attribute.
  CHECK(html.find("class=\"o-failed\" data-o=\"fail&lt;ed&gt;\"") != std::string::npos);
  CHECK(html.find("<svg class=\"timeline\"") != std::string::npos);
  CHECK(html.find("<svg class=\"perf\"") != std::string::npos);
  CHECK(html.find("<line class=\"baseline\"") != std::string::npos);
  CHECK(html.find("<line class=\"threshold\"") != std::string::npos);
  CHECK(html.find("<circle class=\"new\"") != std::string::npos);
}

TEST_CASE("html report: the perf chart draws the threshold on the regressing side", "[report]") {
  PerfSeries series;
  series.metric = "latency";
  series.history = {{100, 10}, {200, 12}};
  series.value = 20, series.value_time = 300;
  series.baseline = 10, series.threshold = 0.1;
  series.direction = "minimize";
  std::string svg = PerfSvg(series);
  CHECK(svg.find("<title>threshold 11.000</title>") != std::string::npos);
  series.direction = "maximize";
  svg = PerfSvg(series);
  CHECK(svg.find("<title>threshold 9.000</title>") != std::string::npos);
  CHECK(svg.find("<title>baseline 10.000</title>") != std::string::npos);
  CHECK(std::count(svg.begin(), svg.end(), '\0') == 0);
  CHECK(svg.find("class=\"history\"") != std::string::npos);
  PerfSeries empty;
  CHECK(PerfSvg(empty).empty());
  series.value = 1.0 / 0.0;  // not finite: left out, never "inf" in a coordinate
  series.history.clear();
  CHECK(PerfSvg(series).empty());
}

TEST_CASE("html report: sacct times are parsed in the local time zone", "[report]") {
  ::setenv("TZ", "UTC", 1);
  ::tzset();
  auto times = ParseSacctTimes(
      "101|2026-12-02T09:00:00|2026-12-02T09:00:07|2026-12-02T09:01:07|COMPLETED\n"
      "102|2026-12-02T09:00:01|Unknown|Unknown|PENDING\n"
      "garbage line\n");
  REQUIRE(times.size() == 2);
  REQUIRE(times["101"].submit);
  CHECK(*times["101"].start - *times["101"].submit == 7);
  CHECK(*times["101"].end - *times["101"].start == 60);
  CHECK(*times["101"].submit == *ParseIsoUtc("2026-12-02T09:00:00Z"));
  CHECK(!times["102"].start);
  CHECK(times["102"].state == "PENDING");
  ReportModel model;
  model.jobs.push_back(
      TimelineJob{"case", "101", "local_slurm", "PASSED", {}, 5.0, 6.0, "trtllm-run"});
  model.jobs.push_back(
      TimelineJob{"other", "", "local_direct", "PASSED", {}, 5.0, 6.0, "trtllm-run"});
  CHECK(LocalSlurmJobIds(model) == std::vector<std::string>{"101"});
  ApplySchedulerTimes(times, &model);
  CHECK(model.jobs[0].source == "sacct");
  CHECK(*model.jobs[0].start == *times["101"].start);
  CHECK(model.jobs[1].source == "trtllm-run");
  CHECK(!ParseIsoUtc("2026-13-02T09:00:00Z"));
  CHECK(!ParseIsoUtc("2026-12-02T09:00:00Zjunk"));
  CHECK(*ParseIsoUtc("2026-12-02T09:00:00.5Z") - *ParseIsoUtc("2026-12-02T09:00:00Z") == 0.5);
}

TEST_CASE("html report: 1000 tests render within 1.5 MB and 1 s", "[report]") {
  const ReportModel model = HostileModel(1000);
  const auto start = std::chrono::steady_clock::now();
  const std::string html = RenderHtmlReport(model);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO("bytes " << html.size() << ", seconds " << seconds);
  CHECK(html.size() <= 1500000);
  CHECK(seconds <= 1.0);
  std::size_t rows = 0;
  for (std::size_t at = html.find("<tr class=\"o-"); at != std::string::npos;
       at = html.find("<tr class=\"o-", at + 1)) {
    ++rows;
  }
  CHECK(rows >= 1001);  // every test has its row (plus the rerun table's)
}

}  // namespace
}  // namespace trtllm_run::report
