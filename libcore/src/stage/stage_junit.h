// The per-test results of a CI stage: pytest's JUnit files read back, merged across the
// shards and their reruns into one JUnit for the stage, as TensorRT-LLM's L0_Test.groovy
// does (one <testsuite> named after the stage), with one difference CI lacks: a test that
// failed and passed on a rerun is a passed <testcase> carrying Surefire's <flakyFailure>
// children, so the flake stays visible.
#ifndef TRTLLM_RUN_STAGE_STAGE_JUNIT_H_
#define TRTLLM_RUN_STAGE_STAGE_JUNIT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {
namespace stage {

enum class JUnitOutcome { kPassed, kFailed, kError, kSkipped };

// "passed", "failed", "error", "skipped".
const char* JUnitOutcomeName(JUnitOutcome outcome);

// One <testcase> of a pytest JUnit file.
struct JUnitCase {
  std::string classname;  // "accuracy.test_llm_api.TestLlama" (pytest: path with dots + class)
  std::string name;       // "test_fp8[tp2]"
  std::string file;       // the `file` attribute when pytest wrote one (xunit1); else ""
  double seconds = 0;
  JUnitOutcome outcome = JUnitOutcome::kPassed;
  std::string message;  // of <failure>/<error>/<skipped>; "" when none
  std::string details;  // the element's text (the traceback), at most kMaxDetailsBytes
};

// Files above this size are refused (a JUnit of 20k tests with tracebacks is a few MiB).
inline constexpr std::size_t kMaxJUnitFileBytes = 64u << 20;
// Tracebacks are cut to their last this many bytes (the assertion is at the end).
inline constexpr std::size_t kMaxDetailsBytes = 16u << 10;

// Reads pytest's JUnit XML (<testsuites><testsuite>... or a bare <testsuite>). `source`
// names the file in errors. kInvalidInput naming the source and the line when the text is
// not well-formed XML (a truncated file from a killed pytest included), nests deeper than
// 64 elements, or has no <testsuite>.
Result<std::vector<JUnitCase>> ParseJUnit(std::string_view xml, const std::string& source);

// ParseJUnit of a file: kNotFound when it does not exist, kInvalidInput above
// kMaxJUnitFileBytes (naming the size and the limit) or when it is not a file.
Result<std::vector<JUnitCase>> ReadJUnitFile(const std::string& path);

// The (classname, name) pytest writes for a node id run from tests/integration/defs:
// "accuracy/test_a.py::TestX::test_y[p.1]" -> ("accuracy.test_a.TestX", "test_y[p.1]").
// An id without "::" (a file) gives ("accuracy.test_a", "").
std::pair<std::string, std::string> JUnitKeyOfTestId(std::string_view test_id);

// One run of a test.
struct TestAttempt {
  JUnitOutcome outcome = JUnitOutcome::kPassed;
  double seconds = 0;
  std::string message;
  std::string details;
};

// Everything known about one test of the stage, across its shard's run and reruns.
struct StageTestResult {
  std::string id;  // the test-list id, e.g. "accuracy/test_a.py::TestX::test_y[p]"
  int split_id = 0;
  std::vector<TestAttempt> attempts;         // the first run, then each rerun in order
  std::optional<std::string> waived_reason;  // set: waived, never run
  std::optional<std::string> reused_reason;  // set: --reuse-passed, never run (kSkipped)
  // Why the test was not run (its shard ended before it, or never started); "" when it ran.
  std::string not_run_reason;
  // The rerun policy's word on a failed first run ("rerun 2 times: ..." or "not eligible
  // for rerun: ..."); "" when the test did not fail.
  std::string rerun_note;
};

enum class StageTestVerdict { kPassed, kFlaky, kFailed, kSkipped, kWaived, kNotRun };

// "passed", "flaky", "failed", "skipped", "waived", "not_run".
const char* StageTestVerdictName(StageTestVerdict verdict);

// waived -> kWaived; reused (--reuse-passed) -> kSkipped; no attempt -> kNotRun; the last attempt
// passed after an earlier one failed -> kFlaky; last attempt passed -> kPassed, skipped ->
// kSkipped; else kFailed.
StageTestVerdict VerdictOf(const StageTestResult& test);

struct StageCounts {
  int total = 0;
  int passed = 0;  // flaky ones included
  int flaky = 0;
  int failed = 0;  // not-run ones included
  int not_run = 0;
  int skipped = 0;
  int waived = 0;
  // PASSED only when every test that is not waived (or skipped by pytest) passed.
  bool AllPassed() const { return failed == 0 && passed + skipped + waived == total; }
};

StageCounts CountStage(const std::vector<StageTestResult>& tests);

// Folds the cases of one JUnit file (a shard's run or a rerun) into `tests`: each case is
// matched to the test whose id gives its (classname, name) (JUnitKeyOfTestId), or, for an
// id naming a file or directory, to a new test "<id>::<name>" appended after it. Cases
// that match nothing are appended under "<classname>::<name>" with `split_id`.
void AddAttempts(const std::vector<JUnitCase>& cases, int split_id,
                 std::vector<StageTestResult>* tests);

// The stage's JUnit: <testsuites><testsuite name="<stage>"> with one <testcase> per test
// in `tests` order, its time the last attempt's. Failed: <failure message> with the
// traceback, each failed rerun a <rerunFailure>, the rerun note a <system-out> line.
// Flaky: passed, with one <flakyFailure message> per failed attempt. Waived:
// <skipped message="waived: <reason>">. Not run: <error message="not run: <reason>">.
std::string StageJUnit(const std::string& stage_name, const std::vector<StageTestResult>& tests);

}  // namespace stage
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_STAGE_JUNIT_H_
