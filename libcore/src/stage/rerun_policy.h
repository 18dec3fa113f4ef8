// Which failed tests of a stage are run again, and how often: TensorRT-LLM CI's policy
// (jenkins/scripts/test_rerun.py), with the reason for each decision in words.
//
//   failed or errored, ran <= 5 min                      -> 2 reruns
//   failed or errored, ran > 5 and <= 10 min             -> 1 rerun
//   failed or errored, ran > 10 min, a known signature   -> 1 rerun
//   failed or errored, ran > 10 min, no known signature  -> 0
//   unfinished (the process ended while it ran)          -> 0
//   listed but never started (its shard ended before)    -> 1
//
// A signature matches when it occurs, ignoring case, in the failure's message or text.
#ifndef TRTLLM_RUN_STAGE_RERUN_POLICY_H_
#define TRTLLM_RUN_STAGE_RERUN_POLICY_H_

#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/status.h"

namespace trtllm_run {
namespace stage {

enum class FirstRun {
  kFailed,      // a <failure> or <error> in its JUnit
  kUnfinished,  // it was running when its pytest process ended (crash, timeout, kill)
  kNotRun,      // listed for the shard, never started
};

struct RerunDecision {
  int reruns = 0;
  std::string reason;  // "rerun 2 times: failed after 12 s (<= 5 min)",
                       // "not eligible for rerun: ran 14 min, no matching failure signature"
};

// The policy above. `failure_text` is the failure's message and traceback; `signatures`
// the known failure signatures (ReadFailureSignatures).
RerunDecision DecideReruns(FirstRun first_run, double seconds, std::string_view failure_text,
                           const std::vector<std::string>& signatures);

// "12 s", "7 min", "14 min 5 s": how the reasons spell a duration.
std::string DurationWords(double seconds);

// A signatures file: one signature per line, blank lines and lines starting with '#'
// ignored, surrounding blanks trimmed. kNotFound naming the file; kInvalidInput for a file
// above 1 MiB, a line above 4096 bytes, or a NUL byte (naming the line).
Result<std::vector<std::string>> ReadFailureSignatures(const std::string& path);

}  // namespace stage
}  // namespace trtllm_run

#endif  // TRTLLM_RUN_STAGE_RERUN_POLICY_H_
