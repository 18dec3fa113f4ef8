// What Slurm says about a job, and the verdict that follows from it.
//
// The scheduler is asked in three ways, each parsed here from its real output:
//   - the controller: `scontrol --local -o show job [ID]` (one REQUEST_JOB_INFO[_SINGLE]
//     RPC; job state, reason and the batch script's exit status; known until the job is
//     purged MinJobAge seconds after it ended);
//   - accounting: `sacct -n -P -j IDS --format=<kSacctFormat>` (slurmdbd; the job, its
//     batch step and every srun step with states and exit codes; may be disabled);
//   - the job itself: the lines trtllm-run's batch scripts print ("[trtllm-run] step NAME:
//     exit code N", "[trtllm-run] job finished with exit code N") and the lines slurmstepd
//     writes into the job's .out/.err ("*** JOB 12 ON node CANCELLED AT ... DUE TO TIME
//     LIMIT ***", "... exceeded memory limit (N > M), being killed", "Detected 1 oom_kill
//     event").
// JudgeSlurmJob() combines them into a RunResult. It never guesses: an unknown or missing
// record is ERROR with the evidence, never PASSED.
#ifndef TRTLLM_RUN_SDK_SLURM_RECORDS_H_
#define TRTLLM_RUN_SDK_SLURM_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/supervise/log_follower.h"

namespace trtllm_run {

// The --format of the sacct query. JobName is last: it is the only free-text field, so
// a '|' inside it cannot shift the others.
TRTLLM_RUN_API extern const char kSacctFormat[];

// An exit status as Slurm prints it: "3:0" (exit code 3), "0:9" (killed by signal 9).
struct SlurmExit {
  std::optional<int> code;
  std::optional<int> signal;
  bool operator==(const SlurmExit& o) const { return code == o.code && signal == o.signal; }
};
TRTLLM_RUN_API SlurmExit ParseSlurmExit(std::string_view text);

// The base state of a state as printed: "CANCELLED by 0" -> "CANCELLED", "CANCELLED+" ->
// "CANCELLED", "F" -> "FAILED" (squeue's compact codes too). Unknown text is returned
// upper-cased as it is.
TRTLLM_RUN_API std::string NormalizeSlurmState(std::string_view text);

// Terminal: the job will not run again (COMPLETED, FAILED, TIMEOUT, CANCELLED,
// OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, REVOKED, SPECIAL_EXIT).
// COMPLETING is not terminal: processes of the job may still run.
TRTLLM_RUN_API bool IsTerminalSlurmState(const std::string& state);

// One job as the controller reports it (`scontrol -o show job`).
struct SlurmJobRecord {
  std::string job_id;
  std::string job_name;
  std::string state;   // normalized: RUNNING, COMPLETED, ...
  std::string reason;  // "None", "TimeLimit", "BeginTime", "NonZeroExitCode", ...
  SlurmExit exit;      // of the batch script
  std::string run_time, time_limit, start_time, end_time;
  std::string node_list, batch_host;
  std::string std_out, std_err;  // the output paths, %j expanded
  std::string user_id;           // "name(uid)", as UserId prints it
  std::string comment;           // --comment, "" when none
};

// Parses `scontrol -o show job` output (one line per job; the multi-line format works
// too). Values may contain spaces (JobName, Command); only keys are relied on.
TRTLLM_RUN_API std::vector<SlurmJobRecord> ParseScontrolJobs(std::string_view text);

// True when scontrol/squeue output says the controller does not know the job id (it was
// purged after MinJobAge, or never existed): "Invalid job id specified".
TRTLLM_RUN_API bool IsInvalidJobIdError(std::string_view text);

// One row of sacct: the job ("12"), its batch step ("12.batch"), extern step, or an srun
// step ("12.0").
struct SlurmAcctRecord {
  std::string id;            // as printed
  std::string step;          // "" for the job itself, else the part after the '.'
  std::string state;         // normalized
  std::string state_text;    // as printed: "CANCELLED by 0"
  std::string cancelled_by;  // the uid of "CANCELLED by <uid>", else ""
  SlurmExit exit;
  SlurmExit derived_exit;  // job rows only
  std::string reason, start, end, elapsed, node_list, name;
};

// Parses `sacct -n -P --format=<kSacctFormat>` output.
TRTLLM_RUN_API std::vector<SlurmAcctRecord> ParseSacct(std::string_view text);

// True when sacct's output says accounting is not configured on the cluster (a
// permanent condition, not a transient failure).
TRTLLM_RUN_API bool IsAccountingDisabledError(std::string_view text);

// The facts of `scontrol show config` the watcher needs.
struct SlurmConfigFacts {
  std::optional<int> min_job_age_seconds;  // MinJobAge
  std::optional<int> kill_wait_seconds;    // KillWait
  std::optional<bool> accounting;          // AccountingStorageType != accounting_storage/none
  std::string cluster_name;
  std::string source;  // "slurm.conf" or "scontrol show config" (set by SlurmClient::Config)
};
TRTLLM_RUN_API SlurmConfigFacts ParseSlurmConfig(std::string_view text);

// The same facts from the slurm.conf file itself (keys in any case, # comments), with
// Slurm's defaults for what it does not set (MinJobAge 300, KillWait 30, no accounting).
// Reading the file costs the controller nothing; `scontrol show config` costs two RPCs.
TRTLLM_RUN_API SlurmConfigFacts ParseSlurmConfFile(std::string_view text);

// ---- The job's own lines ----

// The batch script's end marker: the WHOLE line "[trtllm-run] job finished with exit code N
// (token T)" that the script prints after its last step, T a random token chosen when the
// script is rendered and never given to the job's payload (not in its environment or
// argv), so that a payload's own output cannot stand for it. A line that merely contains
// the text, carries another token or none, or has anything before or after it, is not the
// marker. The marker is only evidence: the scheduler decides when the job ended.
TRTLLM_RUN_API extern const char kEndMarkerPattern[];  // "[trtllm-run] job finished with exit code"
// 32 hex digits from /dev/urandom (getrandom); a new one for every rendered script.
TRTLLM_RUN_API std::string NewEndMarkerToken();
// The script line that prints the marker with `token`: echo "... ${exit_code} (token T)".
TRTLLM_RUN_API std::string EndMarkerEcho(const std::string& token);
// The token of the script's EndMarkerEcho line (the last one), or "" when it has none (a
// launch script trtllm-run did not render): such a job has no end marker.
TRTLLM_RUN_API std::string EndMarkerTokenOfScript(std::string_view script);
// The text PatternScanner looks for to notice the marker: "(token T)"; "" for no token
// (an empty pattern never matches).
TRTLLM_RUN_API std::string EndMarkerScanPattern(const std::string& token);
// N when `line` is exactly the marker with `token` (a trailing '\r' aside); nullopt
// otherwise, and always for an empty token.
TRTLLM_RUN_API std::optional<int> ParseEndMarker(std::string_view line, std::string_view token);
// The exit code of the LAST marker line with `token` among `lines`, or nullopt.
TRTLLM_RUN_API std::optional<int> LastEndMarker(const std::vector<std::string>& lines,
                                                std::string_view token);
// The last line of `tail` a program printed, for "no output for Ns (last line: ...)": not
// blank and not a shell trace line ("+ cd ...", "0: ++ x=1": the xtrace of the scripts that
// launch it, which land in the .err file and can be read after the program's own last line
// in the .out file was). "" when there is none.
TRTLLM_RUN_API std::string LastProgramLine(const std::vector<std::string>& tail);
// "[trtllm-run] step NAME: exit code N" -> {NAME, N}.
struct StepExitLine {
  std::string step;
  int exit_code = 0;
};
TRTLLM_RUN_API std::optional<StepExitLine> ParseStepExitLine(std::string_view line);

// srun's line for tasks of a step that exited non-zero, which names where they ran:
// "srun: error: gpunode2: task 3: Exited with exit code 1" -> {"gpunode2", "task 3", 1};
// several tasks: "tasks 0-1". Only the exit-code form (not "Killed", "Terminated").
struct SrunTaskExit {
  std::string node;
  std::string tasks;  // "task 3", "tasks 0-1"
  int exit_code = 0;
};
TRTLLM_RUN_API std::optional<SrunTaskExit> ParseSrunTaskExit(std::string_view line);
TRTLLM_RUN_API extern const char kSrunTaskExitPattern[];  // for PatternScanner

// Lines slurmstepd/srun write into the job's output that carry a verdict, as
// PatternScanner patterns (case-insensitive). Real clusters with cgroups report an OOM
// kill as the state OUT_OF_MEMORY plus "Detected N oom_kill event(s)" lines; the test
// cluster (no cgroups, JobAcctGatherParams=OverMemoryKill) reports it only through
// "exceeded memory limit ... being killed" / "Exceeded job memory limit" and a FAILED
// (0:9) step: both are recognised.
TRTLLM_RUN_API const std::vector<std::string>& SlurmOomPatterns();
TRTLLM_RUN_API extern const char kSlurmCancelledPattern[];  // "*** JOB" ... "CANCELLED AT"

// What a "CANCELLED AT" line says: "*** JOB 17 ON localhost CANCELLED AT 2026-11-29T12:35:53
// DUE TO TIME LIMIT ***" -> {"TIME LIMIT", ""}; "... CANCELLED AT <t> ***" -> {"", ""};
// older Slurm: "... CANCELLED AT <t> *** ... BY uid 1000"? -> by "1000".
struct CancelLine {
  std::string due_to;  // "TIME LIMIT", "PREEMPTION", "NODE FAILURE", ... ; "" when not said
  std::string by;      // uid or user when said
};
TRTLLM_RUN_API std::optional<CancelLine> ParseCancelLine(std::string_view line);

// The patterns a job's .out and .err are scanned for, in this order: "hang detected", the
// end marker's EndMarkerScanPattern(end_token), the cancel line, SlurmOomPatterns(), then
// `failure`, then `success`, then kSrunTaskExitPattern.
TRTLLM_RUN_API std::vector<std::string> JobOutputPatterns(const std::vector<std::string>& failure,
                                                          const std::vector<std::string>& success,
                                                          const std::string& end_token);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_RECORDS_H_
