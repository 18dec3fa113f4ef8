// JudgeSlurmJob (slurm_job.h): the verdict of a Slurm job from the scheduler's records,
// the job's own lines and what trtllm-run did to it. Pure: reads no files, runs nothing.
#include <signal.h>

#include <string>
#include <vector>

#include "model/slurm_pending.h"
#include "slurm/verdict/slurm_failing_step.h"
#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/local_run_verdict.h"

namespace trtllm_run {
namespace {

constexpr std::size_t kMaxQuoted = 300;

std::string Quoted(const std::string& line) {
  std::string text = line.size() > kMaxQuoted ? line.substr(0, kMaxQuoted) + "..." : line;
  return "\"" + text + "\"";
}

// `srun -l` prefixes each line of a task with its rank ("0: FAILED tests/..."): the
// diagnosis looks at the lines as the program printed them.
std::vector<std::string> WithoutTaskLabels(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const std::string& line : lines) {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t digits = i;
    while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
    if (digits > i && line.compare(digits, 2, ": ") == 0) {
      out.push_back(line.substr(digits + 2));
    } else {
      out.push_back(line);
    }
  }
  return out;
}

class Judge {
 public:
  explicit Judge(const SlurmJobEvidence& e) : e_(e) {}
  RunResult Go();

 private:
  const SlurmAcctRecord* AcctJob() const;
  void SetExit(const SlurmExit& exit);
  std::string FailingStep() const;
  std::string WhoCancelled() const;
  void FromAction();
  void FromHopelessPending(const std::string& ended);
  void NeverStarted();
  bool FromFinalState(const std::string& state, const std::string& source);
  void FromTimeLimitState(const std::string& state, const std::string& state_text);
  void FromOutOfMemoryState(const std::string& state_text);
  void FromMemoryKill(const std::string& state_text);
  void FromCancelledState(const std::string& state_text);
  void FromClusterEnd(const std::string& state, const std::string& source);
  void FromFailedState(const std::string& state_text);
  void FromCompletedState(const std::string& state_text);
  bool FromOutput();
  bool FromHangLine(const std::string& then);
  void Diagnose();
  void Set(RunStatus status, std::string reason) {
    r_.status = status;
    r_.reason = std::move(reason);
  }

  const SlurmJobEvidence& e_;
  RunResult r_;
  std::string extra_diagnosis_;
  SlurmExit final_exit_;
};

const SlurmAcctRecord* Judge::AcctJob() const {
  for (const SlurmAcctRecord& record : e_.accounting) {
    if (record.step.empty() && (record.id == e_.job_id || e_.job_id.empty())) return &record;
  }
  for (const SlurmAcctRecord& record : e_.accounting) {
    if (record.step.empty()) return &record;
  }
  return nullptr;
}

void Judge::SetExit(const SlurmExit& exit) {
  if (exit.signal && *exit.signal != 0) {
    r_.signal = *exit.signal;
    if (exit.code && *exit.code != 0) r_.exit_code = *exit.code;
  } else if (exit.code) {
    r_.exit_code = *exit.code;
  }
}

std::string Judge::FailingStep() const { return trtllm_run::FailingStep(e_); }

std::string Judge::WhoCancelled() const {
  if (!e_.cancelled_by_name.empty()) return e_.cancelled_by_name;
  if (const SlurmAcctRecord* job = AcctJob(); job && !job->cancelled_by.empty()) {
    return "uid " + job->cancelled_by;
  }
  if (!e_.cancel_line.empty()) {
    std::optional<CancelLine> line = ParseCancelLine(e_.cancel_line);
    if (line && !line->by.empty()) return line->by;
  }
  return "";
}

void Judge::FromAction() {
  const std::string job = "job " + e_.job_id;
  if (!e_.action_confirmed) {
    std::string what =
        e_.action == SlurmAction::kHang             ? "a hang was detected"
        : e_.action == SlurmAction::kMonitorTimeout ? "the monitor timeout passed"
        : e_.action == SlurmAction::kSilence
            ? SilenceReason(e_.silence_timeout_seconds, e_.action_detail)
        : e_.action == SlurmAction::kHopelessPending
            ? "the job was pending with reason " + e_.action_detail
        : e_.action == SlurmAction::kMaxPending
            ? "the job was still pending after max_pending (" + e_.action_detail + ")"
            : "the run was cancelled";
    Set(RunStatus::kError, what + " and scancel was sent, but " + job + " was not seen to end" +
                               (e_.action_problem.empty() ? "" : ": " + e_.action_problem));
    r_.errors.push_back(r_.reason);
    extra_diagnosis_ = "The job may still be running: check `squeue -j " + e_.job_id +
                       "` and stop it with `scancel " + e_.job_id +
                       "` (or `trtllm-run cancel WORK_DIR`).";
    if (e_.action == SlurmAction::kUserCancel) {
      r_.cancelled_by = e_.cancel_signal ? SignalName(e_.cancel_signal) : e_.action_detail;
      r_.user_interrupt = e_.cancel_signal == SIGINT;
    }
    return;
  }
  std::string ended = job + " was cancelled with scancel and left the queue";
  switch (e_.action) {
    case SlurmAction::kHang:
      Set(RunStatus::kHangDetected,
          "log line " + Quoted(e_.action_detail.empty() ? e_.hang_line : e_.action_detail) + "; " +
              ended);
      break;
    case SlurmAction::kSilence:
      Set(RunStatus::kHangDetected,
          SilenceReason(e_.silence_timeout_seconds, e_.action_detail) + "; " + ended);
      r_.details["silence_timeout_seconds"] = std::to_string(e_.silence_timeout_seconds);
      break;
    case SlurmAction::kMonitorTimeout:
      Set(RunStatus::kTimeout, "still running after monitor_timeout_seconds=" +
                                   std::to_string(e_.monitor_timeout_seconds) + "; " + ended);
      break;
    case SlurmAction::kUserCancel:
      r_.cancelled_by = e_.cancel_signal
                            ? SignalName(e_.cancel_signal)
                            : (e_.action_detail.empty() ? "request" : e_.action_detail);
      r_.user_interrupt = e_.cancel_signal == SIGINT;
      Set(RunStatus::kCancelled, "cancelled by " + r_.cancelled_by + "; " + ended);
      break;
    case SlurmAction::kHopelessPending:
      FromHopelessPending(ended);
      break;
    case SlurmAction::kMaxPending:
      Set(RunStatus::kError, "still pending after " + std::to_string(e_.max_pending_seconds) + "s" +
                                 ": " + e_.action_detail + "; " + ended);
      r_.errors.push_back(r_.reason);
      NeverStarted();
      break;
    case SlurmAction::kNone:
      break;
  }
}

void Judge::FromHopelessPending(const std::string& ended) {
  std::optional<HopelessPendingReason> row = FindHopelessPendingReason(e_.action_detail);
  std::string meaning = row ? row->meaning : "it cannot start";
  Set(RunStatus::kError, "job " + e_.job_id + " was pending with reason " + e_.action_detail +
                             " (" + meaning + "), which waiting cannot clear; " + ended);
  r_.errors.push_back(r_.reason);
  NeverStarted();
}

// A job cancelled while pending ran nothing: no exit code, and the diagnosis (Diagnose)
// names the reason instead of the empty output.
void Judge::NeverStarted() {
  r_.exit_code.reset();
  r_.signal.reset();
  r_.details["pending_reason"] = e_.action_detail;
  r_.details.erase("slurm_exit_code");
}

// A hang line in the job's output outranks what the job's ending left after it: the
// hang detector of TensorRT-LLM prints it, dumps stacks and kills its own process (exit
// 137), and a process that hung may also run out of memory or into a time limit before
// it is killed. A clean exit 0 after the line is HANG_DETECTED too: whether trtllm-run
// cancelled the job first or it ended first is a matter of timing, and the verdict must
// not be. `then`: how the job ended, for the reason. False without a hang line. Not asked
// for someone's scancel or a failure of the cluster: those keep their verdicts.
bool Judge::FromHangLine(const std::string& then) {
  if (e_.hang_line.empty()) return false;
  Set(RunStatus::kHangDetected,
      "job " + e_.job_id + " logged " + Quoted(e_.hang_line) + ", then " + then);
  if (e_.end_marker_exit && !r_.exit_code && !r_.signal) r_.exit_code = *e_.end_marker_exit;
  return true;
}

// TIMEOUT or DEADLINE: the Slurm time limit or deadline.
void Judge::FromTimeLimitState(const std::string& state, const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  if (FromHangLine("reached its Slurm " +
                   std::string(state == "TIMEOUT" ? "time limit" : "deadline") + ": state " +
                   state_text)) {
    return;
  }
  Set(RunStatus::kTimeout,
      job + " reached its Slurm " + std::string(state == "TIMEOUT" ? "time limit" : "deadline") +
          (e_.time_limit.empty() ? "" : " (" + e_.time_limit + ")") + ": state " + state_text +
          (e_.cancel_line.empty() ? "" : "; " + Quoted(e_.cancel_line)));
}

// OUT_OF_MEMORY, of the job or of a step.
void Judge::FromOutOfMemoryState(const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  std::string step = FailingStep();
  if (FromHangLine("ran out of memory: state " + state_text + (step.empty() ? "" : "; " + step) +
                   (e_.oom_line.empty() ? "" : "; " + Quoted(e_.oom_line)))) {
    return;
  }
  Set(RunStatus::kOutOfMemory, job + " ran out of memory: state " + state_text +
                                   (step.empty() ? "" : "; " + step) +
                                   (e_.oom_line.empty() ? "" : "; " + Quoted(e_.oom_line)));
}

// FAILED or CANCELLED with slurmstepd's line that the step exceeded its memory.
void Judge::FromMemoryKill(const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  // The test cluster's memory enforcement (OverMemoryKill, no cgroups) kills the step
  // with SIGKILL and leaves FAILED/CANCELLED: slurmstepd's line is the evidence.
  std::string step = FailingStep();
  if (FromHangLine("was killed for exceeding its memory limit: " + Quoted(e_.oom_line) +
                   "; state " + state_text + (step.empty() ? "" : "; " + step))) {
    return;
  }
  Set(RunStatus::kOutOfMemory,
      job + " was killed for exceeding its memory limit: " + Quoted(e_.oom_line) + "; state " +
          state_text + (step.empty() ? "" : "; " + step));
}

// CANCELLED: by Slurm at the time limit or for a reason, or by someone's scancel.
void Judge::FromCancelledState(const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  std::optional<CancelLine> line;
  if (!e_.cancel_line.empty()) line = ParseCancelLine(e_.cancel_line);
  if (line && line->due_to == "TIME LIMIT") {
    if (FromHangLine("was cancelled by Slurm at its time limit: " + Quoted(e_.cancel_line) +
                     "; state " + state_text)) {
      return;
    }
    Set(RunStatus::kTimeout, job + " was cancelled by Slurm at its time limit" +
                                 (e_.time_limit.empty() ? "" : " (" + e_.time_limit + ")") + ": " +
                                 Quoted(e_.cancel_line));
    return;
  }
  if (line && !line->due_to.empty()) {
    Set(RunStatus::kError,
        job + " was cancelled by Slurm due to " + line->due_to + ": " + Quoted(e_.cancel_line));
    r_.errors.push_back(r_.reason);
    extra_diagnosis_ = line->due_to == "PREEMPTION"
                           ? "The job was preempted by a higher-priority job; re-run it, or "
                             "use a partition/QOS without preemption."
                           : "Slurm ended the job (" + line->due_to + "); re-run it.";
    return;
  }
  std::string who = WhoCancelled();
  r_.cancelled_by = who.empty() ? "scancel (user not recorded)" : "scancel by " + who;
  std::string when =
      e_.controller && !e_.controller->reason.empty() && e_.controller->reason != "None"
          ? " (reason " + e_.controller->reason + ")"
          : "";
  Set(RunStatus::kCancelled, job + " was cancelled by " + (who.empty() ? "someone" : who) +
                                 " outside trtllm-run: state " + state_text + when);
}

// NODE_FAIL, PREEMPTED, BOOT_FAIL, REVOKED or SPECIAL_EXIT: the cluster ended the job.
void Judge::FromClusterEnd(const std::string& state, const std::string& source) {
  const std::string job = "job " + e_.job_id;
  const SlurmAcctRecord* acct = AcctJob();
  std::string reason = acct && !acct->reason.empty() && acct->reason != "None"
                           ? acct->reason
                           : (e_.controller ? e_.controller->reason : "");
  Set(RunStatus::kError, job + " ended " + state + " (" + source + ")" +
                             (reason.empty() || reason == "None" ? "" : ", reason " + reason) +
                             "; the test did not run to completion");
  r_.errors.push_back(r_.reason);
  if (state == "NODE_FAIL") {
    extra_diagnosis_ = "A node of the job failed: re-run it; `sinfo -R` shows why nodes are down.";
  } else if (state == "PREEMPTED") {
    extra_diagnosis_ =
        "The job was preempted: re-run it, or use a partition/QOS without "
        "preemption.";
  } else if (state == "BOOT_FAIL") {
    extra_diagnosis_ =
        "A node failed to boot for the job: re-run it; report the node to the "
        "cluster admins.";
  } else {
    extra_diagnosis_ = "Slurm ended the job as " + state + "; re-run it.";
  }
}

// FAILED: the job's own failure.
void Judge::FromFailedState(const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  std::string step = FailingStep();
  std::string failed = "failed: state " + state_text;
  const SlurmExit& exit = final_exit_;
  if (exit.code && *exit.code != 0) failed += ", exit code " + std::to_string(*exit.code);
  if (exit.signal && *exit.signal != 0) failed += ", " + SignalName(*exit.signal);
  if (!step.empty()) failed += "; failing " + step;
  if (FromHangLine(failed)) return;
  std::string reason = job + " " + failed;
  if (!e_.failure_pattern.empty()) {
    reason += "; failure pattern '" + e_.failure_pattern + "': " + Quoted(e_.failure_line);
  }
  Set(RunStatus::kFailed, reason);
  if (!step.empty()) r_.details["failing_step"] = step;
}

// COMPLETED: exit code 0.
void Judge::FromCompletedState(const std::string& state_text) {
  const std::string job = "job " + e_.job_id;
  if (FromHangLine("completed with exit code 0: state " + state_text)) return;
  Set(RunStatus::kPassed, job + " completed with exit code 0: state " + state_text);
  if (e_.end_marker_exit && *e_.end_marker_exit != 0) {
    r_.notes.push_back("the job's end line says exit code " + std::to_string(*e_.end_marker_exit) +
                       ", but Slurm recorded 0");
  }
}

// Rule 2. False when `state` carries no verdict (not terminal).
bool Judge::FromFinalState(const std::string& state, const std::string& source) {
  bool step_oom = false;
  for (const SlurmAcctRecord& record : e_.accounting) {
    if (record.state == "OUT_OF_MEMORY") step_oom = true;
  }
  std::string state_text = state + " (" + source + ")";
  if (state == "TIMEOUT" || state == "DEADLINE") {
    FromTimeLimitState(state, state_text);
  } else if (state == "OUT_OF_MEMORY" || step_oom) {
    FromOutOfMemoryState(state_text);
  } else if (!e_.oom_line.empty() && (state == "FAILED" || state == "CANCELLED")) {
    FromMemoryKill(state_text);
  } else if (state == "CANCELLED") {
    FromCancelledState(state_text);
  } else if (state == "NODE_FAIL" || state == "PREEMPTED" || state == "BOOT_FAIL" ||
             state == "REVOKED" || state == "SPECIAL_EXIT") {
    FromClusterEnd(state, source);
  } else if (state == "FAILED") {
    FromFailedState(state_text);
  } else if (state == "COMPLETED") {
    FromCompletedState(state_text);
  } else {
    return false;  // PENDING, RUNNING, COMPLETING, ... or unknown text
  }
  return true;
}

// Rule 3: the job's output alone (no terminal record).
bool Judge::FromOutput() {
  const std::string job = "job " + e_.job_id;
  std::string why_no_record;
  if (e_.purged) {
    why_no_record = "the controller no longer knows it (purged after MinJobAge)";
  } else if (e_.controller) {
    why_no_record = "the controller last reported " + e_.controller->state;
  } else {
    why_no_record = "the controller had no record";
  }
  why_no_record +=
      e_.accounting_available
          ? " and accounting has no final record"
          : "; accounting " + (e_.accounting_error.empty() ? std::string("is disabled")
                                                           : "failed: " + e_.accounting_error);
  std::optional<CancelLine> cancel;
  if (!e_.cancel_line.empty()) cancel = ParseCancelLine(e_.cancel_line);
  if (cancel && cancel->due_to == "TIME LIMIT") {
    if (FromHangLine("was cancelled by Slurm at its time limit: " + Quoted(e_.cancel_line) + " (" +
                     why_no_record + ")")) {
      return true;
    }
    Set(RunStatus::kTimeout, job + " was cancelled by Slurm at its time limit: " +
                                 Quoted(e_.cancel_line) + " (" + why_no_record + ")");
    return true;
  }
  bool failed_marker = e_.end_marker_exit && *e_.end_marker_exit != 0;
  if (!e_.oom_line.empty() && (failed_marker || cancel)) {
    if (FromHangLine("was killed for exceeding its memory limit: " + Quoted(e_.oom_line) +
                     (failed_marker
                          ? "; its end line says exit code " + std::to_string(*e_.end_marker_exit)
                          : std::string()) +
                     " (" + why_no_record + ")")) {
      return true;
    }
    Set(RunStatus::kOutOfMemory, job + " was killed for exceeding its memory limit: " +
                                     Quoted(e_.oom_line) + " (" + why_no_record + ")");
    return true;
  }
  if (cancel && !e_.end_marker_exit) {
    if (!cancel->due_to.empty()) {
      Set(RunStatus::kError, job + " was cancelled by Slurm due to " + cancel->due_to + ": " +
                                 Quoted(e_.cancel_line) + " (" + why_no_record + ")");
      r_.errors.push_back(r_.reason);
      return true;
    }
    std::string who = WhoCancelled();
    r_.cancelled_by = who.empty() ? "scancel (user not recorded)" : "scancel by " + who;
    Set(RunStatus::kCancelled, job + " was cancelled outside trtllm-run: " +
                                   Quoted(e_.cancel_line) + " (" + why_no_record + ")");
    return true;
  }
  if (!e_.end_marker_exit) {
    return FromHangLine("left no final state: its output has no \"" +
                        std::string(kEndMarkerPattern) + "\" line (" + why_no_record + ")");
  }
  int code = *e_.end_marker_exit;
  r_.exit_code = code;
  if (code == 0 && FromHangLine("printed \"" + std::string(kEndMarkerPattern) +
                                " 0\" as its last step (" + why_no_record + ")")) {
    return true;
  }
  if (code == 0) {
    Set(RunStatus::kPassed, job + " printed \"" + std::string(kEndMarkerPattern) +
                                " 0\" as its last step (" + why_no_record + ")");
    return true;
  }
  if (FromHangLine("finished with exit code " + std::to_string(code) + " (its end line; " +
                   why_no_record + ")")) {
    return true;
  }
  std::string step = FailingStep();
  std::string reason = job + " finished with exit code " + std::to_string(code) +
                       " (its end line; " + why_no_record + ")";
  if (!step.empty()) reason += "; failing " + step;
  if (!e_.failure_pattern.empty()) {
    reason += "; failure pattern '" + e_.failure_pattern + "': " + Quoted(e_.failure_line);
  }
  Set(RunStatus::kFailed, reason);
  if (!step.empty()) r_.details["failing_step"] = step;
  return true;
}

void Judge::Diagnose() {
  DiagnosisInput in;
  in.status = r_.status;
  in.exit_code = r_.exit_code;
  in.workflow_type = e_.workflow_type;
  in.scenario = e_.scenario;
  in.log_file = e_.log_file;
  in.log_empty = !e_.log_exists || e_.log_bytes == 0;
  in.log_head = WithoutTaskLabels(e_.log_head);
  in.log_tail = WithoutTaskLabels(e_.log_tail);
  in.err_file = e_.err_file;
  in.err_lines = WithoutTaskLabels(e_.err_lines);
  in.errors = r_.errors;
  in.reason = r_.reason;
  in.monitor_timeout_seconds = e_.monitor_timeout_seconds;
  if (e_.action == SlurmAction::kSilence) in.silence_timeout_seconds = e_.silence_timeout_seconds;
  if (r_.status == RunStatus::kTimeout && e_.action == SlurmAction::kMonitorTimeout) {
    in.time_limit.clear();
  } else {
    in.time_limit = e_.time_limit;
    if (r_.status == RunStatus::kTimeout) in.monitor_timeout_seconds = 0;
  }
  in.job_id = e_.job_id;
  auto pending = r_.details.find("pending_reason");
  if (pending != r_.details.end()) in.pending_reason = pending->second;
  std::string text = DiagnoseFailure(in);
  if (!extra_diagnosis_.empty()) text = extra_diagnosis_ + (text.empty() ? "" : "\n" + text);
  r_.diagnosis = text;
}

RunResult Judge::Go() {
  r_.scenario = e_.scenario;
  r_.workflow_type = e_.workflow_type;
  r_.log_file = e_.log_file;
  r_.log_tail = e_.log_tail;
  r_.monitor_timeout_seconds = e_.monitor_timeout_seconds;
  r_.notes = e_.notes;
  r_.details["job_id"] = e_.job_id;

  const SlurmAcctRecord* acct = AcctJob();
  std::string state, source;
  if (acct && IsTerminalSlurmState(acct->state)) {
    state = acct->state;
    source = "sacct";
    final_exit_ = acct->exit;
    SetExit(acct->exit);
  } else if (e_.controller && IsTerminalSlurmState(e_.controller->state)) {
    state = e_.controller->state;
    source = e_.controller_source;
    final_exit_ = e_.controller->exit;
    SetExit(e_.controller->exit);
  }
  if (!state.empty()) {
    r_.details["job_state"] = state;
    r_.details["job_state_source"] = source;
  } else if (e_.controller) {
    r_.details["job_state"] = e_.controller->state + " (last seen)";
  }
  if (e_.controller && !e_.controller->node_list.empty() && e_.controller->node_list != "(null)") {
    r_.details["nodes"] = e_.controller->node_list;
  }
  if (acct)
    r_.details["slurm_exit_code"] = ExitText(acct->exit);
  else if (e_.controller && !state.empty())
    r_.details["slurm_exit_code"] = ExitText(e_.controller->exit);
  if (e_.end_marker_exit) r_.details["end_line_exit_code"] = std::to_string(*e_.end_marker_exit);
  r_.details["accounting"] = !e_.accounting_error.empty() ? "unavailable"
                             : !e_.accounting_available   ? "disabled"
                             : acct                       ? "recorded"
                             : e_.accounting_queried      ? "no record"
                                                          : "not queried";

  if (e_.action != SlurmAction::kNone) {
    FromAction();
  } else if (!state.empty() && FromFinalState(state, source)) {
    // judged from the scheduler's final record
  } else if (FromOutput()) {
    // judged from the job's own lines
  } else {
    std::string evidence = "job " + e_.job_id + ": no final state";
    if (e_.purged)
      evidence += "; the controller no longer knows it (purged after MinJobAge)";
    else if (e_.controller)
      evidence += "; the controller last reported " + e_.controller->state;
    else
      evidence += "; the controller had no record of it";
    evidence +=
        e_.accounting_available
            ? (acct ? "; accounting reports " + acct->state_text
                    : "; accounting has no record of it")
            : "; accounting " + (e_.accounting_error.empty() ? std::string("is disabled")
                                                             : "failed: " + e_.accounting_error);
    evidence += e_.log_exists
                    ? "; its output has no \"" + std::string(kEndMarkerPattern) + "\" line"
                    : "; it wrote no output";
    Set(RunStatus::kError, evidence);
    r_.errors.push_back(evidence);
    extra_diagnosis_ = "The verdict is unknown, so it is not PASSED. Check `sacct -j " + e_.job_id +
                       "` and the job's output.";
  }
  if (r_.status == RunStatus::kPassed) {
    if (!e_.failure_pattern.empty()) {
      r_.notes.push_back("failure pattern '" + e_.failure_pattern +
                         "' appears in the log, but the job exited 0: " + Quoted(e_.failure_line));
    }
    if (!e_.oom_line.empty()) {
      r_.notes.push_back("an out-of-memory line appears, but the job exited 0: " +
                         Quoted(e_.oom_line));
    }
    if (e_.success_pattern_count > 0 && e_.success_patterns_seen.empty()) {
      r_.notes.push_back("none of the workflow's success patterns appeared in the log");
    }
  }
  if (!r_.cancelled_by.empty() && r_.status == RunStatus::kCancelled) {
    r_.details["cancelled_by"] = r_.cancelled_by;
  }
  Diagnose();
  return r_;
}

}  // namespace

RunResult JudgeSlurmJob(const SlurmJobEvidence& evidence) {
  Judge judge(evidence);
  return judge.Go();
}

void AddOutputEvidence(const JobOutputScan& scan, SlurmJobEvidence* evidence) {
  constexpr std::size_t kHang = 0, kEnd = 1, kCancel = 2, kOom = 3;
  const std::size_t oom_count = SlurmOomPatterns().size();
  const std::size_t failure_begin = kOom + oom_count;
  const std::size_t success_begin = failure_begin + scan.failure_count;
  const std::size_t task_exit = success_begin + scan.success_count;
  evidence->log_exists = scan.out_exists;
  evidence->log_bytes = scan.out_bytes;
  evidence->log_head = scan.out_head;
  evidence->log_tail = scan.out_tail;
  evidence->err_lines = scan.err_head;
  // The first match of a pattern in [begin, end): the .out's, else the .err's.
  auto first = [&](std::size_t begin, std::size_t end) -> const PatternMatch* {
    for (const PatternScanner* scanner : {scan.out, scan.err}) {
      if (scanner == nullptr) continue;
      for (const PatternMatch& match : scanner->matches()) {
        if (match.pattern_index >= begin && match.pattern_index < end) return &match;
      }
    }
    return nullptr;
  };
  if (const PatternMatch* m = first(kHang, kHang + 1)) evidence->hang_line = m->line;
  // The script prints its marker last: the last whole marker line of the .out's tail, once
  // the scanner saw the token. One that many lines followed is not the script's end.
  evidence->end_marker_exit.reset();
  if (scan.out && scan.out->FindMatch(kEnd)) {
    evidence->end_marker_exit = LastEndMarker(scan.out_tail, scan.end_token);
  }
  if (const PatternMatch* m = first(kCancel, kCancel + 1)) evidence->cancel_line = m->line;
  if (const PatternMatch* m = first(kOom, failure_begin)) evidence->oom_line = m->line;
  if (const PatternMatch* m = first(failure_begin, success_begin)) {
    evidence->failure_pattern = m->pattern;
    evidence->failure_line = m->line;
  }
  if (const PatternMatch* m = first(task_exit, task_exit + 1)) evidence->task_exit_line = m->line;
  evidence->success_pattern_count = scan.success_count;
  evidence->success_patterns_seen.clear();
  for (const PatternScanner* scanner : {scan.out, scan.err}) {
    if (scanner == nullptr) continue;
    for (const PatternMatch& match : scanner->matches()) {
      if (match.pattern_index >= success_begin && match.pattern_index < task_exit)
        evidence->success_patterns_seen.push_back(match.pattern);
    }
  }
  // The step lines are printed at the end of each step; a failed step is followed only by
  // "skipped" lines and the end marker, so the tail holds the ones that matter. The head
  // covers short logs whose tail was cut.
  evidence->step_exits.clear();
  const std::vector<std::string>* sources[] = {&scan.out_head, &scan.out_tail};
  std::vector<std::string> seen;
  for (const std::vector<std::string>* lines : sources) {
    for (const std::string& line : *lines) {
      std::optional<StepExitLine> step = ParseStepExitLine(line);
      if (!step) continue;
      if (std::find(seen.begin(), seen.end(), line) != seen.end()) continue;
      seen.push_back(line);
      evidence->step_exits.push_back(*step);
    }
  }
}

}  // namespace trtllm_run
