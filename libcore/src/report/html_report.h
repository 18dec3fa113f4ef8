// The HTML report of a finished run: one self-contained file (no external URL, no
// framework: inline CSS, a small inline filter script, inline SVG) that a person opens in a
// browser. Built from the run dir's result.json (report_model.h), the scheduler's records
// of its Slurm jobs and the history store's flaky tests. docs/report.md describes it.
#ifndef TRTLLM_RUN_REPORT_HTML_REPORT_H_
#define TRTLLM_RUN_REPORT_HTML_REPORT_H_

#include <string>

#include "history/history_store.h"
#include "report/report_model.h"
#include "trtllm_run/status.h"

namespace trtllm_run::report {

struct HtmlReportOptions {
  // Ask `sacct` (here, 10 s at most) for the submit, start and end times of the run's
  // local_slurm jobs; without it (or when sacct fails) the timeline shows trtllm-run's own
  // start and end of each job, without its queued time.
  bool query_scheduler = true;
  // The store whose flaky tests (`history flaky`, last 30 days) the report lists when they
  // are tests of this run; nullptr: none.
  history::HistoryStore* history = nullptr;
  int flaky_days = 30;
};

// The page for `model`. Deterministic: the same model gives the same bytes.
std::string RenderHtmlReport(const ReportModel& model);

// BuildReportModel(run_dir), the scheduler's times and the history's flaky tests added.
Result<ReportModel> CollectReport(const std::string& run_dir, const HtmlReportOptions& options);

// CollectReport + RenderHtmlReport written to `html_path` atomically (a temp file beside
// it, then rename): a reader never sees a part of it, a failure leaves the old file.
Status WriteHtmlReport(const std::string& run_dir, const std::string& html_path,
                       const HtmlReportOptions& options);

}  // namespace trtllm_run::report

#endif  // TRTLLM_RUN_REPORT_HTML_REPORT_H_
