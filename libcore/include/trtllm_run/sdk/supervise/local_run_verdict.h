// The verdict of a job this host supervised (Supervise()): from how it was stopped or
// how it exited, and what its log showed (spec 000 Step 5: hang detector, OOM messages,
// the workflow's failure patterns), to RunResult's status, reason and diagnosis. The
// executors that run jobs here share it; what only one of them knows (a container's OOM
// kill, a vanished engine) it judges before calling JudgeLocalRun.
#ifndef TRTLLM_RUN_SDK_SUPERVISE_LOCAL_RUN_VERDICT_H_
#define TRTLLM_RUN_SDK_SUPERVISE_LOCAL_RUN_VERDICT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/supervise/supervisor.h"

namespace trtllm_run {

// The patterns a local job's log is scanned for: the hang detector's line (index
// kLocalHangPattern), the OOM messages, then `failure`, then `success`.
constexpr std::size_t kLocalHangPattern = 0;
TRTLLM_RUN_API std::vector<std::string> LocalRunPatterns(const std::vector<std::string>& failure,
                                                         const std::vector<std::string>& success);

// What the hang detector, OOM and failure patterns of LocalRunPatterns() matched.
struct LocalLogFindings {
  const PatternMatch* hang = nullptr;
  const PatternMatch* oom = nullptr;
  const PatternMatch* failure = nullptr;  // the first failure pattern in the log
};
// `scanner` was built from LocalRunPatterns(failure, ...) with `failure_count` patterns.
TRTLLM_RUN_API LocalLogFindings FindLocalLogFindings(const PatternScanner& scanner,
                                                     std::size_t failure_count);

struct LocalRunEvidence {
  StopReason stop = StopReason::kNone;
  int cancel_signal = 0;
  // How a stopped job was stopped, for the reason: "stopped with SIGTERM", "docker stop
  // -t 30; container removed".
  std::string stopped_how;
  // The same for a cancelled job, when it says more; empty: stopped_how.
  std::string cancel_stopped_how;
  // A cancelled run's diagnosis says nothing is left running.
  bool nothing_left_running = false;
  int monitor_timeout_seconds = 0;
  // stop kSilence: the silence timeout, and the last line the log held then.
  int silence_timeout_seconds = 0;
  std::string last_output_line;
  // How the command ended; both empty: unknown (the caller judges that case itself).
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string where;  // appended to the PASSED reason, e.g. " in container X"
  LocalLogFindings findings;
};

// Sets status, reason, diagnosis, cancelled_by/user_interrupt, details
// ["silence_timeout_seconds"] for a job the silence timeout stopped, and adds notes when
// the log contradicts a zero exit. Does not touch exit_code/signal or anything else.
TRTLLM_RUN_API void JudgeLocalRun(const LocalRunEvidence& evidence, RunResult* result);

// The quoted form of a log line in reasons: cut to 300 bytes.
TRTLLM_RUN_API std::string QuotedLogLine(const std::string& line);

// The reason of a job stopped for printing nothing for `seconds`: "no output for 90s
// (last line: \"...\")", or "(nothing was printed)" without a last line. Shared with the
// Slurm verdicts.
TRTLLM_RUN_API std::string SilenceReason(int seconds, const std::string& last_line);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SUPERVISE_LOCAL_RUN_VERDICT_H_
