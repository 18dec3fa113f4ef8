// The self-contained HTML report (html_report.h).
#include "report/html_report.h"

#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "history/history_query.h"
#include "report/html_text.h"
#include "report/report_svg.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::report {
namespace {

// No URL is ever loaded: the policy forbids every fetch, so even a browser that found a
// URL in the page would not request it.
constexpr char kHead[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
    "<meta name=\"viewport\" content=\"width=device-width\">";

constexpr char kStyle[] =
    "<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}"
    ".badge{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;"
    "font-weight:bold}.ok{background:#2e7d32}.bad{background:#c62828}.other{background:#757575}"
    "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;"
    "text-align:left;vertical-align:top}th{background:#f3f3f3}"
    "tr.o-failed td,tr.o-error td,tr.o-not_run td,tr.o-timeout td{background:#fdecea}"
    "tr.o-flaky td{background:#fff8e1}pre{background:#f6f6f6;padding:8px;overflow:auto;"
    "max-height:400px;white-space:pre-wrap}.summary td:first-child{font-weight:bold}"
    ".muted{color:#666}.counts span{margin-right:14px}</style>";

// Filters the test table by text and outcome. Reads only the page's own DOM; it holds no
// data of the run.
constexpr char kScript[] =
    "<script>(function(){var q=document.getElementById('q'),o=document.getElementById('o'),"
    "n=document.getElementById('shown'),rows=document.querySelectorAll('#tests tbody tr');"
    "function f(){var t=q.value.toLowerCase(),w=o.value,c=0;for(var i=0;i<rows.length;i++){"
    "var r=rows[i],ok=(!w||r.getAttribute('data-o')===w)&&(!t||"
    "r.textContent.toLowerCase().indexOf(t)>=0);r.style.display=ok?'':'none';if(ok)c++;}"
    "n.textContent=String(c);}q.addEventListener('input',f);o.addEventListener('change',f);"
    "})();</script>";

std::string BadgeClass(const std::string& status) {
  if (status == "PASSED") return "ok";
  if (status == "SKIPPED" || status.empty()) return "other";
  return "bad";
}

// An outcome as a CSS class suffix: [a-z_] only.
std::string OutcomeClass(const std::string& outcome) {
  std::string out;
  for (char c : outcome) {
    if ((c >= 'a' && c <= 'z') || c == '_') out += c;
  }
  return out;
}

void Summary(const ReportModel& model, std::string* html) {
  *html += "<h1>" + HtmlText(model.title) + " <span class=\"badge " + BadgeClass(model.status) +
           "\">" + HtmlText(model.status) + "</span></h1>";
  *html += "<table class=\"summary\">";
  if (!model.reason.empty()) {
    *html += "<tr><td>reason</td><td>" + HtmlText(model.reason) + "</td></tr>";
  }
  *html += "<tr><td>duration</td><td>" + DurationText(model.duration_seconds) + " (" +
           HtmlText(model.started_at) + " to " + HtmlText(model.finished_at) + ")</td></tr>";
  for (const auto& [label, value] : model.where) {
    if (value.empty()) continue;
    *html +=
        "<tr><td>" + HtmlText(label) + "</td><td>" + HtmlText(CutText(value, 2000)) + "</td></tr>";
  }
  *html += "<tr><td>run dir</td><td>" + HtmlText(model.run_dir) + "</td></tr></table>";
  *html += "<p class=\"counts\" id=\"counts\">";
  for (const auto& [name, count] : model.counts) {
    *html += "<span><b>" + HtmlText(name) + "</b> " + std::to_string(count) + "</span>";
  }
  *html += "</p>";
  for (const std::string& warning : model.warnings) {
    *html += "<p class=\"muted\">warning: " + HtmlText(warning) + "</p>";
  }
}

void TestTable(const ReportModel& model, std::string* html) {
  std::set<std::string> outcomes;
  for (const TestRow& row : model.tests) outcomes.insert(row.outcome);
  *html +=
      "<h2>Tests</h2><p><input id=\"q\" type=\"search\" placeholder=\"filter by text\" "
      "size=\"40\"> <select id=\"o\"><option value=\"\">every outcome</option>";
  for (const std::string& outcome : outcomes) {
    *html += "<option value=\"" + HtmlText(outcome) + "\">" + HtmlText(outcome) + "</option>";
  }
  *html += "</select> <span id=\"shown\">" + std::to_string(model.tests.size()) + "</span> of " +
           std::to_string(model.tests.size()) + " shown</p>";
  *html +=
      "<table id=\"tests\"><thead><tr><th>test</th><th>outcome</th><th>group</th>"
      "<th>seconds</th><th>reruns</th><th>message</th></tr></thead><tbody>";
  for (const TestRow& row : model.tests) {
    *html += "<tr class=\"o-" + OutcomeClass(row.outcome) + "\" data-o=\"" + HtmlText(row.outcome) +
             "\"><td>" + HtmlText(CutText(row.name, 1000)) + "</td><td>" + HtmlText(row.outcome) +
             "</td><td>" + HtmlText(row.group) + "</td><td>" +
             (row.seconds ? Number(*row.seconds, 2) : "") + "</td><td>" +
             (row.reruns ? std::to_string(row.reruns) : "") + "</td><td>" + HtmlText(row.message) +
             "</td></tr>";
  }
  *html += "</tbody></table>";
}

void Failures(const ReportModel& model, std::string* html) {
  *html += "<h2 id=\"failures\">Failures (" +
           std::to_string(model.failures.size() + model.failures_left_out) + ")</h2>";
  if (model.failures.empty()) *html += "<p>none</p>";
  for (const Failure& failure : model.failures) {
    *html += "<div class=\"failure\"><h3>" + HtmlText(CutText(failure.name, 1000)) +
             " <span "
             "class=\"badge bad\">" +
             HtmlText(failure.outcome) + "</span></h3>";
    if (!failure.reason.empty()) *html += "<p><b>reason</b>: " + HtmlText(failure.reason) + "</p>";
    if (!failure.diagnosis.empty()) {
      *html += "<p><b>diagnosis</b>:</p><pre>" + HtmlText(failure.diagnosis) + "</pre>";
    }
    for (const std::string& message : failure.messages) {
      *html += "<pre class=\"message\">" + HtmlText(message) + "</pre>";
    }
    if (!failure.log_tail.empty()) {
      *html += "<p><b>log</b> <span class=\"muted\">" + HtmlText(failure.log_file) +
               "</span> (last lines):</p><pre class=\"log\">";
      for (const std::string& line : failure.log_tail) *html += HtmlText(line) + "\n";
      *html += "</pre>";
    }
    *html += "</div>";
  }
  if (model.failures_left_out > 0) {
    *html += "<p class=\"muted\">" + std::to_string(model.failures_left_out) +
             " more failures: see the test table</p>";
  }
}

void Reruns(const ReportModel& model, std::string* html) {
  *html += "<h2 id=\"reruns\">Reruns and flaky tests</h2>";
  if (model.reruns.empty()) {
    *html += "<p>no test was rerun in this run</p>";
  } else {
    *html += "<table><tr><th>test</th><th>attempts</th><th>final</th><th>policy</th></tr>";
    for (const Rerun& rerun : model.reruns) {
      std::string attempts;
      for (const std::string& a : rerun.attempts) attempts += (attempts.empty() ? "" : " → ") + a;
      *html += "<tr class=\"o-" + OutcomeClass(rerun.final_outcome) + "\"><td>" +
               HtmlText(CutText(rerun.name, 1000)) + "</td><td>" + HtmlText(attempts) +
               "</td><td>" + HtmlText(rerun.final_outcome) + "</td><td>" + HtmlText(rerun.note) +
               "</td></tr>";
    }
    *html += "</table>";
  }
  if (!model.flaky_in_run.empty()) {
    *html += "<p>flaky in this run (failed, then passed on a rerun): " +
             std::to_string(model.flaky_in_run.size()) + "</p>";
  }
  *html +=
      "<h3>Flaky in the history</h3><p class=\"muted\">" + HtmlText(model.history_note) + "</p>";
  if (!model.flaky_history.empty()) {
    *html +=
        "<table id=\"flaky\"><tr><th>test</th><th>flake rate</th><th>passed</th>"
        "<th>failed</th><th>passed on rerun</th><th>last</th></tr>";
    for (const FlakyEntry& entry : model.flaky_history) {
      *html += "<tr><td>" + HtmlText(CutText(entry.name, 1000)) + "</td><td>" +
               Number(entry.flake_rate * 100, 1) + "%</td><td>" + std::to_string(entry.passed) +
               "</td><td>" + std::to_string(entry.failed) + "</td><td>" +
               std::to_string(entry.passed_on_rerun) + "</td><td>" + HtmlText(entry.last_at) +
               "</td></tr>";
    }
    *html += "</table>";
  }
}

void Timeline(const ReportModel& model, std::string* html) {
  *html += "<h2 id=\"timeline\">Timeline</h2>";
  std::string svg = TimelineSvg(model.jobs);
  if (svg.empty()) {
    *html += "<p>no job times recorded</p>";
    return;
  }
  *html += "<p class=\"muted\">" + HtmlText(model.timeline_note) + "</p>" + svg;
  *html +=
      "<table><tr><th>job</th><th>Slurm job</th><th>status</th><th>queued s</th>"
      "<th>running s</th><th>times from</th></tr>";
  for (const TimelineJob& job : model.jobs) {
    auto span = [](const std::optional<double>& from, const std::optional<double>& to) {
      return from && to ? Number(*to - *from, 0) : std::string();
    };
    auto epoch = [](const std::optional<double>& at) {
      return at ? Number(*at, 0) : std::string();
    };
    // data-*: the epoch seconds drawn, for tools and tests.
    *html += "<tr class=\"job\" data-job=\"" + HtmlText(job.job_id) + "\" data-submit=\"" +
             epoch(job.submit) + "\" data-start=\"" + epoch(job.start) + "\" data-end=\"" +
             epoch(job.end) + "\"><td>" + HtmlText(CutText(job.label, 400)) + "</td><td>" +
             HtmlText(job.job_id) + "</td><td>" + HtmlText(job.status) + "</td><td>" +
             span(job.submit, job.start) + "</td><td>" + span(job.start, job.end) + "</td><td>" +
             HtmlText(job.source) + "</td></tr>";
  }
  *html += "</table>";
}

void Perf(const ReportModel& model, std::string* html) {
  if (model.perf.empty()) return;
  *html += "<h2 id=\"perf\">Performance</h2>";
  for (const PerfSeries& series : model.perf) {
    *html += "<div class=\"perf-metric\"><h3>" + HtmlText(series.metric) +
             (series.unit.empty() ? "" : " (" + HtmlText(series.unit) + ")") +
             " <span class=\"muted\">" + HtmlText(series.case_name) + "</span>" +
             (series.regressed ? " <span class=\"badge bad\">regressed</span>" : "") + "</h3>";
    *html += PerfSvg(series);
    *html +=
        "<p class=\"muted\">grey: history; dashed blue: baseline; dotted orange: "
        "threshold; large dot: this run (red when regressed)</p>";
    auto cell = [](const std::optional<double>& v, int decimals) {
      return v ? Number(*v, decimals) : std::string("-");
    };
    *html +=
        "<table><tr><th>new</th><th>baseline</th><th>threshold</th><th>change</th>"
        "<th>direction</th><th>gated</th><th>gate</th><th>history points</th></tr><tr><td>" +
        cell(series.value, 3) + "</td><td>" + cell(series.baseline, 3) + "</td><td>" +
        (series.threshold ? Number(*series.threshold * 100, 1) + "%" : "-") + "</td><td>" +
        (series.change ? Number(*series.change * 100, 1) + "%" : "-") + "</td><td>" +
        HtmlText(series.direction) + "</td><td>" + (series.gated ? "yes" : "no") + "</td><td>" +
        HtmlText(series.gate_mode) + "</td><td>" + std::to_string(series.history.size()) +
        "</td></tr></table></div>";
  }
}

std::string IsoUtcDaysAgo(int days) {
  std::time_t now = std::time(nullptr) - static_cast<std::time_t>(days) * 86400;
  std::tm parts{};
  gmtime_r(&now, &parts);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buffer;
}

}  // namespace

std::string RenderHtmlReport(const ReportModel& model) {
  std::string html = kHead;
  html.reserve(4096 + model.tests.size() * 300);
  html += "<title>" + HtmlText(model.title) + ": " + HtmlText(model.status) + "</title>";
  html += kStyle;
  html += "</head><body>";
  Summary(model, &html);
  TestTable(model, &html);
  Failures(model, &html);
  Reruns(model, &html);
  Timeline(model, &html);
  Perf(model, &html);
  html += "<p class=\"muted\">written by trtllm-run report</p>";
  html += kScript;
  html += "</body></html>\n";
  return html;
}

Result<ReportModel> CollectReport(const std::string& run_dir, const HtmlReportOptions& options) {
  Result<ReportModel> model = BuildReportModel(run_dir);
  if (!model.ok()) return model;
  model->timeline_note = "times as trtllm-run saw each job start and end (no queued time)";
  std::vector<std::string> ids = LocalSlurmJobIds(model.value());
  if (options.query_scheduler && !ids.empty()) {
    std::string joined;
    for (const std::string& id : ids) joined += (joined.empty() ? "" : ",") + id;
    Command sacct;
    // JobID, not JobIDRaw: an array task's row is ARRAYJOB_TASK, the id its case records
    // (its JobIDRaw is a number of its own); a plain job's is the same either way.
    sacct.argv = {"sacct", "-X", "-n", "-P", "--format=JobID,Submit,Start,End,State", "-j", joined};
    std::unique_ptr<Scenario> local = MakeLocalScenario();
    Result<CommandOutput> out = local->Run(sacct, DeadlineIn(10));
    // slurmdbd records a job's end after the controller reported it (asynchronously): a job
    // just judged may have no end time yet; asked again for up to 5 s.
    for (int tries = 0; tries < 10 && out.ok() && out->exit_code == 0; ++tries) {
      std::map<std::string, SchedulerTimes> times = ParseSacctTimes(out->stdout_text);
      bool all_ended = true;
      for (const std::string& id : ids) {
        auto found = times.find(id);
        all_ended = all_ended && found != times.end() && found->second.end.has_value();
      }
      if (all_ended) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      out = local->Run(sacct, DeadlineIn(10));
    }
    if (out.ok() && out->exit_code == 0) {
      ApplySchedulerTimes(ParseSacctTimes(out->stdout_text), &model.value());
      model->timeline_note =
          "queued (submit to start) and running (start to end) from the scheduler's records "
          "(sacct)";
    } else {
      model->timeline_note += "; sacct gave no records: " +
                              (out.ok() ? CutText(out->stderr_text, 200) : out.status().message());
    }
  }
  if (options.history == nullptr) {
    model->history_note = "no history store was read (--no-history)";
    return model;
  }
  Result<std::vector<history::CommitCounts>> counts =
      options.history->CountsByCommit(IsoUtcDaysAgo(options.flaky_days));
  if (!counts.ok()) {
    model->history_note = "the history store could not be read: " + counts.status().message();
    return model;
  }
  std::set<std::string> names;
  for (const TestRow& row : model->tests) names.insert(row.name);
  std::vector<history::FlakyTest> flaky = history::FindFlaky(counts.value());
  for (const history::FlakyTest& test : flaky) {
    if (!names.count(test.node_id)) continue;
    FlakyEntry entry;
    entry.name = test.node_id;
    entry.flake_rate = test.flake_rate;
    entry.passed = test.passed;
    entry.failed = test.failed;
    entry.passed_on_rerun = test.passed_on_rerun;
    entry.last_at = test.last_at;
    model->flaky_history.push_back(entry);
  }
  model->history_note = std::to_string(model->flaky_history.size()) +
                        " of this run's tests are flaky in the history " +
                        options.history->location() + " (last " +
                        std::to_string(options.flaky_days) + " days; " +
                        std::to_string(flaky.size()) + " flaky tests in all)";
  return model;
}

Status WriteHtmlReport(const std::string& run_dir, const std::string& html_path,
                       const HtmlReportOptions& options) {
  Result<ReportModel> model = CollectReport(run_dir, options);
  if (!model.ok()) return model.status();
  return WriteFileAtomic(html_path, RenderHtmlReport(model.value()));
}

}  // namespace trtllm_run::report
