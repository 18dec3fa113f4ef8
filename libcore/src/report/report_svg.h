// Private: the report's inline SVG charts (html_report.h). Every text in them goes
// through HtmlText; every number is finite (a coordinate that is not is left out).
#ifndef TRTLLM_RUN_REPORT_REPORT_SVG_H_
#define TRTLLM_RUN_REPORT_REPORT_SVG_H_

#include <string>
#include <vector>

#include "report/report_model.h"

namespace trtllm_run::report {

// The shard timeline: one row per job, its queued span (submit -> start) and its running
// span (start -> end) on one time axis from the first submit. "" when no job has times.
std::string TimelineSvg(const std::vector<TimelineJob>& jobs);

// One metric's chart: the history points, the new point (red when regressed), the
// baseline line and the threshold line (baseline * (1 - threshold) for a metric to
// maximize, * (1 + threshold) to minimize). "" when there is nothing to draw.
std::string PerfSvg(const PerfSeries& series);

}  // namespace trtllm_run::report

#endif  // TRTLLM_RUN_REPORT_REPORT_SVG_H_
