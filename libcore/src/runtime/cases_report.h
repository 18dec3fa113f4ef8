// What the combined reports of a cases run (cases_report.cc) share with the run loop
// (multi_run.cc) and the stage report (stage_result_json.cc): a case's label, a duration
// as text, the sessions array.
#ifndef TRTLLM_RUN_RUNTIME_CASES_REPORT_H_
#define TRTLLM_RUN_RUNTIME_CASES_REPORT_H_

#include <string>
#include <vector>

#include "model/json_util.h"
#include "trtllm_run/multi_run.h"

namespace trtllm_run {

// The case's name, else its model name, else "case <index>".
std::string CaseLabel(const CaseOutcome& outcome);

// `seconds` with one decimal and an "s", e.g. "12.3s".
std::string Seconds(double seconds);

// The "sessions" key and array of a combined result (docs/result-schema.md): per scenario
// its name, cases, shared (the executor ran them in one session) and stats.
void WriteSessionReports(json::Writer* writer, const std::vector<SessionReport>& sessions);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_CASES_REPORT_H_
