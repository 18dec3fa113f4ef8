// The verdict of a locally supervised job (local_run_verdict.h).
#include "trtllm_run/sdk/supervise/local_run_verdict.h"

#include <signal.h>

#include "trtllm_run/sdk/process.h"

namespace trtllm_run {
namespace {

constexpr std::size_t kMaxQuotedLine = 300;
constexpr std::size_t kFirstOomPattern = 1;
const char* const kBuiltinPatterns[] = {
    "hang detected",       // hang watchdogs (spec 000 Step 5)
    "CUDA out of memory",  // torch
    "OutOfMemoryError",    // torch.OutOfMemoryError, torch.cuda.OutOfMemoryError
    "out of memory",       // CUDA runtime, NCCL, kernel OOM killer
};
constexpr std::size_t kBuiltinCount = sizeof(kBuiltinPatterns) / sizeof(kBuiltinPatterns[0]);

const char kHangDiagnosis[] =
    "A hang was reported: GPU/NCCL deadlock likely; check the log context before the line.";

const char kSilenceDiagnosis[] =
    "The job printed nothing for its --silence-timeout and was stopped as hung; the last "
    "line shows where it stopped.";

}  // namespace

std::string SilenceReason(int seconds, const std::string& last_line) {
  return "no output for " + std::to_string(seconds) + "s" +
         (last_line.empty() ? std::string(" (nothing was printed)")
                            : " (last line: " + QuotedLogLine(last_line) + ")");
}

namespace {

// The verdict of a job the supervisor stopped; false when it was not stopped.
bool JudgeStopped(const LocalRunEvidence& e, RunResult* result) {
  const PatternMatch* hang = e.findings.hang;
  switch (e.stop) {
    case StopReason::kCancel:
      result->status = RunStatus::kCancelled;
      result->cancelled_by = e.cancel_signal ? SignalName(e.cancel_signal) : "request";
      result->user_interrupt = e.cancel_signal == SIGINT;
      result->reason = "cancelled by " + result->cancelled_by + "; " +
                       (e.cancel_stopped_how.empty() ? e.stopped_how : e.cancel_stopped_how);
      result->diagnosis = e.nothing_left_running
                              ? "The run was cancelled before the command finished; nothing is "
                                "left running."
                              : "The run was cancelled before the command finished.";
      return true;
    case StopReason::kTimeout:
      result->status = RunStatus::kTimeout;
      result->reason = "still running after monitor_timeout_seconds=" +
                       std::to_string(e.monitor_timeout_seconds) + "; " + e.stopped_how;
      result->diagnosis =
          "The command exceeded its wall-clock limit: raise --monitor-timeout if it needs "
          "longer, or check the log tail for where it stalled.";
      return true;
    case StopReason::kHang:
      result->status = RunStatus::kHangDetected;
      result->reason = "log line " +
                       QuotedLogLine(hang ? hang->line : std::string("hang detected")) + "; " +
                       e.stopped_how;
      result->diagnosis = kHangDiagnosis;
      return true;
    case StopReason::kSilence:
      result->status = RunStatus::kHangDetected;
      result->reason =
          SilenceReason(e.silence_timeout_seconds, e.last_output_line) + "; " + e.stopped_how;
      result->diagnosis = kSilenceDiagnosis;
      result->details["silence_timeout_seconds"] = std::to_string(e.silence_timeout_seconds);
      return true;
    case StopReason::kNone:
    case StopReason::kLeftovers:
      break;
  }
  return false;
}

}  // namespace

std::vector<std::string> LocalRunPatterns(const std::vector<std::string>& failure,
                                          const std::vector<std::string>& success) {
  std::vector<std::string> patterns(kBuiltinPatterns, kBuiltinPatterns + kBuiltinCount);
  patterns.insert(patterns.end(), failure.begin(), failure.end());
  patterns.insert(patterns.end(), success.begin(), success.end());
  return patterns;
}

LocalLogFindings FindLocalLogFindings(const PatternScanner& scanner, std::size_t failure_count) {
  LocalLogFindings found;
  found.hang = scanner.FindMatch(kLocalHangPattern);
  for (const PatternMatch& match : scanner.matches()) {  // in log order
    std::size_t i = match.pattern_index;
    if (!found.oom && i >= kFirstOomPattern && i < kBuiltinCount) found.oom = &match;
    if (!found.failure && i >= kBuiltinCount && i < kBuiltinCount + failure_count) {
      found.failure = &match;
    }
  }
  return found;
}

std::string QuotedLogLine(const std::string& line) {
  std::string text = line.size() > kMaxQuotedLine ? line.substr(0, kMaxQuotedLine) + "..." : line;
  return "\"" + text + "\"";
}

void JudgeLocalRun(const LocalRunEvidence& e, RunResult* result) {
  if (JudgeStopped(e, result)) return;
  const PatternMatch* hang = e.findings.hang;
  const PatternMatch* failure = e.findings.failure;
  // A hang line is HANG_DETECTED however the command ended, exit 0 included: whether the
  // supervisor stopped it first or it exited first is a matter of timing, and the verdict
  // must not be.
  if (e.exit_code && *e.exit_code == 0 && !hang) {
    result->status = RunStatus::kPassed;
    result->reason = "the command exited with code 0" + e.where;
    if (failure) {
      result->notes.push_back(
          "failure pattern '" + failure->pattern +
          "' appears in the log, but the command exited 0: " + QuotedLogLine(failure->line));
    }
    return;
  }
  std::string how = e.exit_code ? "the command exited with code " + std::to_string(*e.exit_code)
                                : "the command was killed by " + SignalName(e.signal.value_or(0));
  if (hang) {
    result->status = RunStatus::kHangDetected;
    result->reason = how + " after logging " + QuotedLogLine(hang->line);
    result->diagnosis = kHangDiagnosis;
  } else if (e.findings.oom) {
    result->status = RunStatus::kOutOfMemory;
    result->reason = how + "; log line " + QuotedLogLine(e.findings.oom->line);
    result->diagnosis = "Out of memory: reduce batch size or use more GPUs.";
  } else {
    result->status = RunStatus::kFailed;
    result->reason = how;
    if (failure) {
      result->reason +=
          "; first failure pattern '" + failure->pattern + "': " + QuotedLogLine(failure->line);
    }
    result->diagnosis =
        "The command failed; see the log tail" +
        std::string(failure ? " and the line matching '" + failure->pattern + "'" : "") + ".";
  }
}

}  // namespace trtllm_run
