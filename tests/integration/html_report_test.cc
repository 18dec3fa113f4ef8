// The HTML report (docs/report.md) as a person gets it: written by the real binary after a
// real run, opened in a real browser (headless Chromium, tests/integration/report/
// browser_check.py) without a network, its DOM dumped and its screenshot decoded; and on
// the test cluster, its timeline from the scheduler's own records.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_harness.h"
#include "history/history_store.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;

namespace {

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// What browser_check.py printed; fails the test when Chromium did not run.
rapidjson::Document OpenInBrowser(const std::string& page, const std::string& out_dir) {
  int status = 0;
  std::string out =
      Shell("python3 " + SourceDir() + "/tests/integration/report/browser_check.py '" + page +
                "' '" + out_dir + "'",
            &status);
  INFO(out);
  REQUIRE(status == 0);
  rapidjson::Document doc;
  doc.Parse(out.c_str());
  REQUIRE(doc.IsObject());
  return doc;
}

// The checks every report passes in the browser: drawn (not blank), no request of its own,
// one script (its own), its rows and SVG in the DOM the browser built.
std::string CheckInBrowser(const std::string& page, const std::string& out_dir,
                           std::size_t min_rows) {
  rapidjson::Document seen = OpenInBrowser(page, out_dir);
  CHECK(seen["screenshot_exit"].GetInt() == 0);
  CHECK(seen["dom_exit"].GetInt() == 0);
  CHECK(seen["distinct_colors"].GetInt() > 20);
  CHECK(seen["non_white_fraction"].GetDouble() > 0.02);
  REQUIRE(seen["page_requests"].IsArray());
  CHECK(seen["page_requests"].Size() == 0);
  const std::string dom = ReadTextFile(seen["dom"].GetString());
  CHECK(Count(dom, "<tr class=\"o-") >= min_rows);
  CHECK(Count(dom, "<svg") >= 1);
  CHECK(Count(dom, "<script") == 1);
  CHECK(dom.find("<img") == std::string::npos);
  return dom;
}

// Raw bytes: no markup, no URL and no control byte from the run's data.
void CheckRawPage(const std::string& html) {
  CHECK(Count(html, "<script") == 1);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("]]>") == std::string::npos);
  CHECK(html.find("http:") == std::string::npos);
  CHECK(html.find("https:") == std::string::npos);
  for (unsigned char c : html) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      FAIL("raw control byte " << static_cast<int>(c) << " in the page");
    }
  }
}

const char kPerfResult[] = R"json({
  "schema_version": 1, "status": "FAILED", "reason": "perf_regression <script>x</script>",
  "exit_code": 1, "workflow_type": "bench", "scenario": "local_direct",
  "model_name": "llama", "command": "trtllm-bench throughput", "work_dir": "WORK",
  "log_file": "WORK/llama.log", "log_tail": ["Total Token throughput (tok/s): 850.0",
  "</pre><script>alert(3)</script>\u001b[31m"],
  "diagnosis": "perf_regression: total_token_throughput 850.0 < 954.75 (baseline 1005.0 - 5%)",
  "errors": [], "notes": [], "started_at": "2026-12-02T10:00:00Z",
  "finished_at": "2026-12-02T10:05:00Z", "duration_seconds": 300, "details": {},
  "test_cases": [
    {"name": "test_perf.py::test_a[<script>alert(1)</script>]", "outcome": "passed", "message": ""},
    {"name": "test_perf.py::test_b[\"q' ]]> </script>\u0001]", "outcome": "failed",
     "message": "AssertionError <b>bold</b>"}],
  "perf": {
  "metrics": [{"name": "total_token_throughput", "value": 850.0, "unit": "tok/s",
                 "direction": "maximize", "gated": true},
                {"name": "mean_ttft_ms", "value": 41.0, "unit": "ms", "direction": "minimize",
                 "gated": false}],
    "match_key": {"model": "llama", "gpu_type": "H100"},
    "gate": {"mode": "post-merge", "regressed": true,
             "rows": [{"metric": "total_token_throughput", "new": 850.0, "baseline": 1005.0,
                       "threshold": 0.05, "change": -0.154, "regressed": true}]},
    "history": {
    "total_token_throughput": [["2026-11-25T10:00:00Z", 1000.0],
                ["2026-11-26T10:00:00Z", 1010.0], ["2026-11-27T10:00:00Z", 995.0],
                ["2026-11-28T10:00:00Z", 1012.0]],
                "mean_ttft_ms": [["2026-11-27T10:00:00Z", 40.0]]
  }
}
})json";

}  // namespace

TEST_CASE("html report: a cases run and a perf run open in Chromium: drawn and escaped",
          "[browser][report]") {
  TempDir repo("html_report");
  const std::string cases = repo.path() + "/cases.json";
  WriteTextFile(cases, R"({"cases": [
    {"name": "ok <script>alert(1)</script> \"q' ]]> </script>", "custom_cmd": "echo hello"},
    {"name": "bad <img src=x onerror=alert(2)>",
     "custom_cmd": "printf 'line </script><b>x</b> \\033[31mred \\001\\377\\n'; exit 3"}]})");
  const std::string page = repo.path() + "/report.html";
  CliRun run = RunCli({"run", "--cases", cases, "--scenario", "local_direct", "--repo-root",
                       repo.path(), "--no-history", "--html", page});
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  const std::string html = ReadTextFile(page);
  REQUIRE(!html.empty());
  CheckRawPage(html);
  CHECK(html.find("ok &lt;script&gt;alert(1)&lt;/script&gt; &quot;q&#39; ]]&gt; "
                  "&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("line &lt;/script&gt;&lt;b&gt;x&lt;/b&gt; \\x1b[31mred \\x01") !=
        std::string::npos);
  const std::string dom = CheckInBrowser(page, repo.path() + "/browser", 2);
  // The browser read the names as text: its DOM serializes them escaped again.
  CHECK(dom.find("bad &lt;img src=x onerror=alert(2)&gt;") != std::string::npos);
  CHECK(dom.find("<rect class=\"running\"") != std::string::npos);

  // A perf run's result (the perf section as the perf gate writes it), reported after the
  // fact.
  const std::string work = repo.path() + "/perf_run";
  fs::create_directories(work);
  std::string result = kPerfResult;
  result = std::regex_replace(result, std::regex("WORK"), work);
  WriteTextFile(work + "/result.json", result);
  const std::string perf_page = repo.path() + "/perf.html";
  CliRun report = RunCli({"report", work, "--html", perf_page, "--no-history"});
  INFO(report.Describe());
  CHECK(report.exit_code == 0);
  const std::string perf_html = ReadTextFile(perf_page);
  CheckRawPage(perf_html);
  CHECK(Count(perf_html, "<svg class=\"perf\"") == 2);
  CHECK(Count(perf_html, "<circle class=\"history\"") == 5);
  CHECK(perf_html.find("<line class=\"baseline\"") != std::string::npos);
  CHECK(perf_html.find("<line class=\"threshold\"") != std::string::npos);
  CHECK(perf_html.find("<title>threshold 954.750</title>") != std::string::npos);
  CHECK(perf_html.find("<circle class=\"new\"") != std::string::npos);
  CHECK(perf_html.find("-15.4%") != std::string::npos);
  const std::string perf_dom = CheckInBrowser(perf_page, repo.path() + "/browser_perf", 2);
  CHECK(Count(perf_dom, "<svg class=\"perf\"") == 2);
  CHECK(perf_dom.find("test_b[\"q' ]]&gt; &lt;/script&gt;\\x01]") != std::string::npos);

  // The detector can fail: a page that loads an image from the network is caught.
  const std::string leaky = repo.path() + "/leaky.html";
  WriteTextFile(leaky, "<html><body><img src=\"http://192.0.2.1/x.png\">x</body></html>");
  rapidjson::Document seen = OpenInBrowser(leaky, repo.path() + "/browser_leaky");
  REQUIRE(seen["page_requests"].IsArray());
  CHECK(seen["page_requests"].Size() == 1);
}

TEST_CASE("html report: an unwritable --html is exit 2 before anything runs", "[report][cli]") {
  TempDir repo("html_report_bad");
  CliRun run = RunCli({"run", "--custom-cmd", "touch " + repo.path() + "/ran", "--scenario",
                       "local_direct", "--repo-root", repo.path(), "--no-history", "--html",
                       repo.path() + "/no/such/dir/r.html"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("--html") != std::string::npos);
  CHECK(!fs::exists(repo.path() + "/ran"));
  CHECK(!fs::exists(repo.path() + "/work_dirs"));
  WriteTextFile(repo.path() + "/cases.yaml", "- {custom_cmd: \"touch ran\"}\n");
  run = RunCli({"run", "--cases", repo.path() + "/cases.yaml", "--scenario", "local_direct",
                "--repo-root", repo.path(), "--no-history", "--html", repo.path()});
  CHECK(run.exit_code == 2);  // a directory, not a file
  CHECK(!fs::exists(repo.path() + "/work_dirs"));

  // report: a dir without result.json, no --html, a missing dir: 2 and nothing written.
  const std::string page = repo.path() + "/r.html";
  run = RunCli({"report", repo.path(), "--html", page, "--no-history"});
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("result.json") != std::string::npos);
  CHECK(!fs::exists(page));
  CHECK(RunCli({"report", repo.path(), "--no-history"}).exit_code == 2);
  CHECK(RunCli({"report", repo.path() + "/nope", "--html", page}).exit_code == 2);
  WriteTextFile(repo.path() + "/result.json", "{\"schema_version\": 2}");
  CHECK(RunCli({"report", repo.path(), "--html", page, "--no-history"}).exit_code == 2);
  CHECK(!fs::exists(page));
}

TEST_CASE("html report: a local_slurm cases run's timeline holds sacct's submit start and end",
          "[slurm][report]") {
  EnsureSlurm();
  TempDir repo("html_report_slurm");
  WriteTextFile(repo.path() + "/cases.yaml",
                "- {name: first, model_name: first, custom_cmd: \"sleep 3; echo one\"}\n"
                "- {name: second, model_name: second, custom_cmd: \"sleep 2; exit 1\"}\n");
  const std::string page = repo.path() + "/report.html";
  CliOptions options;
  options.args = {"run",
                  "--cases",
                  repo.path() + "/cases.yaml",
                  "--scenario",
                  "local_slurm",
                  "--repo-root",
                  repo.path(),
                  "--partition",
                  "batch",
                  "--skip-install",
                  "true",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--kill-grace",
                  "5",
                  "--no-history",
                  "--html",
                  page};
  // Per-case jobs and tasks of one job array (ARRAYJOB_TASK: before, the array's rows were
  // read by JobIDRaw and no task of it had the scheduler's times).
  const std::string arrays = GENERATE("0", "1");
  options.env = {{"TRTLLM_RUN_SLURM_ARRAYS", arrays}};
  options.timeout_seconds = 300;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  const std::string html = ReadTextFile(page);
  REQUIRE(!html.empty());
  CheckRawPage(html);
  CHECK(html.find("from the scheduler&#39;s records (sacct)") != std::string::npos);
  std::smatch match;
  std::regex row(
      "<tr class=\"job\" data-job=\"([0-9]+(?:_[0-9]+)?)\" data-submit=\"([0-9]+)\" "
      "data-start=\"([0-9]+)\" data-end=\"([0-9]+)\">");
  int jobs = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator();
       ++it) {
    ++jobs;
    const std::string id = (*it)[1];
    CHECK((id.find('_') != std::string::npos) == (arrays == "1"));  // a task: ARRAYJOB_TASK
    // The scheduler's own record, read here independently of trtllm-run.
    std::string times = Shell("sacct -X -n -P --format=Submit,Start,End -j " + id +
                              " | head -1 | tr '|' '\\n' | while read t; do date -d \"$t\" +%s; "
                              "done | paste -sd' '");
    INFO("job " << id << " sacct: " << times);
    CHECK(times ==
          std::string((*it)[2]) + " " + std::string((*it)[3]) + " " + std::string((*it)[4]) + "\n");
    CHECK(std::stol((*it)[4]) - std::stol((*it)[3]) >= 2);  // it ran its sleep
  }
  CHECK(jobs == 2);
  CHECK(Count(html, "<rect class=\"running\"") == 2);
  CHECK(Count(html, "<td>sacct</td>") == 2);
  CheckInBrowser(page, repo.path() + "/browser", 2);
}

TEST_CASE("html report: a stage's reruns flaky tests and failures with their shard's log",
          "[report][cli]") {
  TempDir root("html_report_stage");
  const std::string shard = root.path() + "/shard_1";
  const std::string run_dir = root.path() + "/stage";
  fs::create_directories(shard);
  fs::create_directories(run_dir);
  WriteTextFile(shard + "/result.json",
                R"({"schema_version": 1, "status": "FAILED", "scenario": "local_direct",
  "started_at": "2026-12-02T10:00:00Z", "finished_at": "2026-12-02T10:01:00Z",
  "diagnosis": "pytest: 1 test(s) failed", "log_file": "SHARD/log",
  "log_tail": ["E   AssertionError: fails <always>"], "details": {}})");
  // As `trtllm-run stage` writes it: no schema_version.
  std::string stage = R"({"kind": "stage", "stage": "Manual", "status": "FAILED",
  "reason": "3 tests", "run_dir": "RUN", "started_at": "2026-12-02T10:00:00Z",
  "finished_at": "2026-12-02T10:02:00Z", "duration_seconds": 120,
  "counts": {"total": 3, "passed": 2, "flaky": 1, "failed": 1},
  "shard_runs": [{"split_id": 1, "round": 0, "status": "FAILED", "job_id": "",
    "work_dir": "SHARD", "tests": ["t.py::test_flaky", "t.py::test_fail"]}],
  "sessions": [{"scenario": "local_direct"}],
  "tests": [
    {"id": "t.py::test_pass", "split_id": 1, "outcome": "passed", "seconds": 1, "reruns": 0,
     "attempts": [{"outcome": "passed", "seconds": 1}]},
    {"id": "t.py::test_flaky", "split_id": 1, "outcome": "flaky", "seconds": 1, "reruns": 1,
     "rerun_note": "rerun 2 times", "attempts": [{"outcome": "failed", "seconds": 1,
     "message": "first run fails"}, {"outcome": "passed", "seconds": 1}]},
    {"id": "t.py::test_fail", "split_id": 1, "outcome": "failed", "seconds": 1, "reruns": 0,
     "attempts": [{"outcome": "failed", "seconds": 1, "message": "fails <always>"}]}],
  "warnings": ["no .test_durations"]})";
  stage = std::regex_replace(stage, std::regex("SHARD"), shard);
  stage = std::regex_replace(stage, std::regex("RUN"), run_dir);
  WriteTextFile(run_dir + "/result.json", stage);
  const std::string page = root.path() + "/stage.html";
  CliRun run = RunCli({"report", run_dir, "--html", page, "--no-history"});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string html = ReadTextFile(page);
  CheckRawPage(html);
  CHECK(html.find("<td>failed → passed</td><td>flaky</td><td>rerun 2 times</td>") !=
        std::string::npos);
  CHECK(html.find("flaky in this run (failed, then passed on a rerun): 1") != std::string::npos);
  CHECK(html.find("<pre class=\"log\">E   AssertionError: fails &lt;always&gt;") !=
        std::string::npos);
  CHECK(html.find("pytest: 1 test(s) failed") != std::string::npos);
  CHECK(html.find("Failures (1)") != std::string::npos);
  CHECK(Count(html, "<tr class=\"o-") == 4);  // 3 tests + 1 rerun row
  CHECK(html.find("warning: no .test_durations") != std::string::npos);

  // The history store names t.py::test_flaky flaky (a pass and a failure on one commit)
  // and another test that is not in this run: the report lists the first only.
  const std::string store_path = root.path() + "/history.sqlite";
  {
    auto store = trtllm_run::history::OpenSqliteStore(store_path);
    REQUIRE(store.ok());
    for (const char* outcome : {"passed", "failed"}) {
      trtllm_run::history::CaseRecord record;
      record.kind = "run";
      record.name = "earlier";
      record.commit = "abc123";
      record.verdict = "PASSED";
      record.tests = {{"t.py::test_flaky", outcome, std::nullopt, 0, ""},
                      {"other.py::test_elsewhere", outcome, std::nullopt, 0, ""}};
      REQUIRE(store.value()->Record(record).ok());
    }
  }
  run = RunCli({"report", run_dir, "--html", page, "--history", store_path});
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  const std::string with_history = ReadTextFile(page);
  CHECK(with_history.find("<table id=\"flaky\"><tr><th>test</th>") != std::string::npos);
  CHECK(with_history.find("<tr><td>t.py::test_flaky</td><td>50.0%</td>") != std::string::npos);
  CHECK(with_history.find("test_elsewhere") == std::string::npos);
  CHECK(with_history.find("1 of this run&#39;s tests are flaky in the history") !=
        std::string::npos);
}
