// What the combined reports of a cases run (cases_report.cc) share with the run loop
// (multi_run.cc): a case's label and a duration as text.
#ifndef TRTLLM_RUN_RUNTIME_CASES_REPORT_H_
#define TRTLLM_RUN_RUNTIME_CASES_REPORT_H_

#include <string>

#include "trtllm_run/multi_run.h"

namespace trtllm_run {

// The case's name, else its model name, else "case <index>".
std::string CaseLabel(const CaseOutcome& outcome);

// `seconds` with one decimal and an "s", e.g. "12.3s".
std::string Seconds(double seconds);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_CASES_REPORT_H_
