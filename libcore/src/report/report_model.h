// Private: what the HTML report shows, read from a run's directory (html_report.h). A run
// dir is one of the three that write a result.json: a single run's work dir (no "kind"), a
// `run --cases` dir ("kind": "cases", every case's own result inside) or a stage's dir
// ("kind": "stage", its shard jobs' work dirs named in shard_runs).
#ifndef TRTLLM_RUN_REPORT_REPORT_MODEL_H_
#define TRTLLM_RUN_REPORT_REPORT_MODEL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run::report {

// One row of the test table: a pytest test, a stage's test, or a case without tests.
struct TestRow {
  std::string name;
  std::string outcome;  // passed, failed, error, skipped, flaky, waived, not_run, ... (lower case)
  std::string group;    // the case's name (cases) or "split N" (stage); "" for a single run
  std::optional<double> seconds;
  int reruns = 0;
  std::string message;  // failure message, skip or waive reason
};

// A failure shown with its evidence.
struct Failure {
  std::string name;     // the test or case
  std::string outcome;  // FAILED, TIMEOUT, failed, not_run, ...
  std::string reason, diagnosis;
  std::vector<std::string> messages;  // per attempt for a stage test, else the test's message
  std::vector<std::string> log_tail;  // the last lines of the job's log
  std::string log_file;
};

// A test run more than once (a stage's reruns): its attempts' outcomes in order.
struct Rerun {
  std::string name, final_outcome, note;
  std::vector<std::string> attempts;
};

// A test the history store names flaky (history_query.h FindFlaky), in this run.
struct FlakyEntry {
  std::string name;
  double flake_rate = 0;
  long long passed = 0, failed = 0, passed_on_rerun = 0;
  std::string last_at;
};

// One scheduler job (or one case's process when there is no scheduler) on the timeline.
struct TimelineJob {
  std::string label;   // "split 2 round 0", the case's name, ...
  std::string job_id;  // "" for a case without a Slurm job
  std::string scenario, status;
  std::optional<double> submit, start, end;  // seconds since the epoch
  std::string source;  // "sacct" (the scheduler's records) or "trtllm-run" (its own times)
};

// One perf metric of one case, from result.json's "perf" section.
struct PerfSeries {
  std::string case_name, metric, unit, direction;  // direction: maximize | minimize | ""
  bool gated = false;
  std::vector<std::pair<double, double>> history;  // (time, value), oldest first
  std::optional<double> value, value_time;         // the new point
  std::optional<double> baseline, threshold, change;
  bool regressed = false;
  std::string gate_mode;  // pre-merge, post-merge, warn, off, ""
};

struct ReportModel {
  std::string kind;  // "run", "cases", "stage"
  std::string title, run_dir, status, reason;
  std::string started_at, finished_at;
  double duration_seconds = 0;
  std::vector<std::pair<std::string, std::string>> where;  // label, value ("scenario", ...)
  std::vector<std::pair<std::string, long long>> counts;   // verdict or outcome -> count
  std::vector<TestRow> tests;
  std::vector<Failure> failures;
  std::size_t failures_left_out = 0;  // failures beyond the detailed ones (in the table only)
  std::vector<Rerun> reruns;
  std::vector<std::string> flaky_in_run;  // passed on a rerun in this run
  std::vector<FlakyEntry> flaky_history;
  std::string history_note;  // where the flaky list came from, or why there is none
  std::vector<TimelineJob> jobs;
  std::string timeline_note;
  std::vector<PerfSeries> perf;
  std::vector<std::string> warnings;
};

// Reads `run_dir`/result.json (and what it names) into the model. kInvalidInput naming the
// file when run_dir holds no readable result.json of schema_version 1.
Result<ReportModel> BuildReportModel(const std::string& run_dir);

// The Slurm job ids of `model`'s local_slurm jobs.
std::vector<std::string> LocalSlurmJobIds(const ReportModel& model);

// Parses `sacct -X -n -P --format=JobID,Submit,Start,End,State` output (times in the
// local time zone, as sacct prints them) into id -> (submit, start, end); "Unknown" and
// "None" times are absent.
struct SchedulerTimes {
  std::optional<double> submit, start, end;
  std::string state;
};
std::map<std::string, SchedulerTimes> ParseSacctTimes(const std::string& text);

// Replaces the times of the model's jobs found in `times` with the scheduler's (source
// "sacct").
void ApplySchedulerTimes(const std::map<std::string, SchedulerTimes>& times, ReportModel* model);

}  // namespace trtllm_run::report

#endif  // TRTLLM_RUN_REPORT_REPORT_MODEL_H_
