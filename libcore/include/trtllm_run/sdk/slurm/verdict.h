// The verdict of a Slurm job from what the scheduler and the job's output say.
#ifndef TRTLLM_RUN_SDK_SLURM_VERDICT_H_
#define TRTLLM_RUN_SDK_SLURM_VERDICT_H_

#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/slurm/records.h"

namespace trtllm_run {

// What trtllm-run itself did to the job before it ended.
enum class SlurmAction {
  kNone,
  kHang,             // "hang detected" in the log -> scancel
  kMonitorTimeout,   // monitor_timeout_seconds reached -> scancel
  kUserCancel,       // SIGINT/SIGTERM/SIGHUP or an API cancel -> scancel
  kHopelessPending,  // pending for a reason waiting cannot clear (slurm_pending.h) -> scancel
  kMaxPending,       // still pending after max_pending_seconds -> scancel
  kSilence,          // no new output for silence_timeout_seconds while running -> scancel
};

struct SlurmJobEvidence {
  std::string job_id;
  std::string workflow_type;  // for the diagnosis (pytest: failing tests)
  std::string scenario;
  std::string log_file;  // the job's .out (local path)
  std::string err_file;  // the job's .err (local path), "" when merged
  int monitor_timeout_seconds = 0;
  int max_pending_seconds = 0;      // 0: no bound
  int silence_timeout_seconds = 0;  // 0: off
  std::string time_limit;           // the job's Slurm time limit, as requested

  // What trtllm-run did, and whether the job was seen to end afterwards (terminal state,
  // or gone from the controller).
  SlurmAction action = SlurmAction::kNone;
  int cancel_signal = 0;  // kUserCancel: the signal (0: from code)
  // kHang: the log line; kUserCancel: who asked; kHopelessPending/kMaxPending: the reason;
  // kSilence: the last output line before the silence ("" when there was none).
  std::string action_detail;
  bool action_confirmed = false;
  std::string action_problem;  // why it could not be confirmed (scancel failed, ...)

  // The controller's last record of the job, and whether the job ended. `purged`: the
  // controller answered "Invalid job id" after having known the job (MinJobAge passed).
  std::optional<SlurmJobRecord> controller;
  bool controller_final = false;               // `controller` holds a terminal state
  std::string controller_source = "scontrol";  // named in the reason
  bool purged = false;

  // Accounting. `accounting_available` false: disabled on the cluster, or it failed
  // (accounting_error says which). `accounting` holds the job row and its steps.
  bool accounting_available = false;
  bool accounting_queried = false;  // false: not needed for this verdict (e.g. COMPLETED)
  std::string accounting_error;
  std::vector<SlurmAcctRecord> accounting;

  // The job's output.
  bool log_exists = false;
  std::uint64_t log_bytes = 0;
  std::optional<int> end_marker_exit;         // "[trtllm-run] job finished with exit code N"
  std::vector<StepExitLine> step_exits;       // in order
  std::string hang_line;                      // first "hang detected" line
  std::string oom_line;                       // first slurmstepd/OOM line (.out or .err)
  std::string cancel_line;                    // first "CANCELLED AT" line
  std::string failure_pattern, failure_line;  // the first workflow failure pattern seen
  std::string task_exit_line;                 // srun's first "NODE: task N: Exited ..." line
  std::vector<std::string> success_patterns_seen;
  std::size_t success_pattern_count = 0;  // how many the workflow has
  std::vector<std::string> log_head;      // first lines of the .out (up to 50)
  std::vector<std::string> log_tail;      // last lines of the .out
  std::vector<std::string> err_lines;     // first lines of the .err
  std::string cancelled_by_name;          // "CANCELLED by <uid>" resolved to a user name, if known
  std::vector<std::string> notes;         // carried into the result
};

// The verdict, pure: status, reason (the evidence in one line), exit code/signal, the
// failing step, who cancelled, diagnosis (spec 000's table), and details (job_id,
// job_state, ...). Rules, in order:
//   1. trtllm-run's own action: hang or silence -> HANG_DETECTED, monitor timeout -> TIMEOUT, user
//      cancel -> CANCELLED (user_interrupt for SIGINT) -- each only when confirmed;
//      unconfirmed -> ERROR naming the job that may still run.
//   2. the final state (accounting's job row, else the controller's terminal record):
//      TIMEOUT/DEADLINE -> TIMEOUT; OUT_OF_MEMORY (job or any step), or slurmstepd's
//      memory-limit lines with a failed job -> OUT_OF_MEMORY; CANCELLED -> CANCELLED by
//      whom (or TIMEOUT/ERROR when the cancel line says TIME LIMIT/PREEMPTION); NODE_FAIL,
//      PREEMPTED, BOOT_FAIL, REVOKED, SPECIAL_EXIT -> ERROR with the reason; FAILED ->
//      HANG_DETECTED when the log reported a hang, else FAILED with the failing step;
//      COMPLETED -> PASSED.
//   3. no final record (purged, accounting disabled): the end marker decides (0 ->
//      PASSED, else FAILED), unless the output shows a timeout, cancel or OOM.
//   4. nothing: ERROR with the evidence.
TRTLLM_RUN_API RunResult JudgeSlurmJob(const SlurmJobEvidence& evidence);

// What scanning a job's output found: scanners fed with JobOutputPatterns(failure, success)
// and the first/last lines of the files.
struct JobOutputScan {
  const PatternScanner* out = nullptr;  // the .out
  const PatternScanner* err = nullptr;  // the .err; null when it does not exist (merged)
  std::size_t failure_count = 0;        // failure.size() given to JobOutputPatterns
  std::size_t success_count = 0;
  bool out_exists = false;
  std::uint64_t out_bytes = 0;
  std::vector<std::string> out_head;  // first lines of the .out (up to 50)
  std::vector<std::string> out_tail;  // last lines of the .out
  std::vector<std::string> err_head;  // first lines of the .err
  std::string end_token;              // the script's end-marker token ("": no marker)
};

// Fills the output fields of `evidence` (end marker, step lines, hang/OOM/cancel lines,
// patterns, head/tail) from `scan`.
TRTLLM_RUN_API void AddOutputEvidence(const JobOutputScan& scan, SlurmJobEvidence* evidence);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_VERDICT_H_
