// Reports of a verdict for machines: JUnit XML for CI (result.json is result.h's).
#ifndef TRTLLM_RUN_REPORT_H_
#define TRTLLM_RUN_REPORT_H_

#include <string>
#include <string_view>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// `text` escaped for XML 1.0 character data and attribute values (&, <, >, ", '). Bytes
// XML 1.0 cannot carry (control characters other than tab, newline and carriage return;
// invalid UTF-8; U+FFFE/U+FFFF) become U+FFFD, so the document always parses.
TRTLLM_RUN_API std::string XmlEscape(std::string_view text);

// A JUnit XML document: one <testsuite name="trtllm-run"> with one <testcase> (classname
// "trtllm-run.<scenario>.<workflow_type>", name = model_name, time = duration). A verdict
// other than PASSED adds FailureElement(); SKIPPED adds <skipped message="<reason>"/>.
// When the result has per-test outcomes (result.test_cases, from pytest -v / -rA), each
// test is a <testcase> of its own (classname and name as pytest's JUnit report writes
// them; <failure>, <error> or <skipped> with the test's message), and the run's own
// <testcase> is added only when no failed test explains a verdict other than PASSED or
// SKIPPED. Properties carry status, exit_code, work_dir, log_file, tests and the details.
TRTLLM_RUN_API std::string ResultToJUnit(const RunResult& result);

// <failure type="<STATUS>" message="<reason>"> whose body is the diagnosis, errors and log
// tail of `result`.
TRTLLM_RUN_API std::string FailureElement(const RunResult& result);

// Writes ResultToJUnit(result) to `path` atomically; errors name the path.
TRTLLM_RUN_API Status WriteJUnit(const RunResult& result, const std::string& path);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_REPORT_H_
