// Watching Slurm jobs to a verdict with as few scheduler queries as possible.
//
// SlurmClient runs the scheduler commands through a Scenario (this host, or a login node
// over one SSH master connection) and parses their output (records.h). SlurmWatcher
// watches any number of jobs at once:
//   - one controller query per interval for ALL watched jobs (`scontrol --local -o show
//     job`: one RPC, measured with sdiag; `squeue -j a,b` costs two), an interval that
//     doubles while nothing needs attention (1 s -> 60 s), capped at half of MinJobAge
//     (read from the cluster's configuration) when accounting is disabled so that no job
//     is purged unseen;
//   - accounting (`sacct`, one query for every job that needs it) only for jobs that
//     ended other than cleanly, or that the controller no longer knows;
//   - the jobs' .out/.err followed incrementally from byte offsets (LogFollower; remote
//     files are copied into the local work dir by one long-lived follower over the SSH
//     master that streams what they gained five times a second (file_follow_stream.h),
//     restarted when jobs are added or it drops; while it is down, by one `tail -c
//     +OFFSET` command per log_interval for all files): the batch script's end marker
//     (records.h: a whole line with the script's token) and slurmstepd's
//     "CANCELLED AT" / memory-limit lines bring the next query forward; the verdict
//     waits until the controller no longer reports the job (a job's own lines never
//     end it);
//   - a failed query (non-zero exit, timeout, "Socket timed out", controller down, SSH
//     down) is retried with backoff and never turned into a verdict;
//   - "hang detected" in the output and monitor_timeout_seconds -> scancel, and the
//     verdict only once the job is seen to end; the same for cancellation (Ctrl-C);
//   - no new byte in a running job's .out/.err for silence_timeout_seconds -> scancel,
//     HANG_DETECTED "no output for Ns"; not judged while the scheduler does not answer;
//   - a job pending for a reason waiting cannot clear (slurm_pending.h), or still
//     pending after max_pending_seconds -> scancel, and the verdict ERROR naming it.
#ifndef TRTLLM_RUN_SDK_SLURM_WATCH_H_
#define TRTLLM_RUN_SDK_SLURM_WATCH_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// One job to watch.
struct SlurmWatchJob {
  std::string job_id;
  std::string out_path;   // the job's stdout file as the cluster sees it
  std::string err_path;   // its stderr file; "" when merged into out_path
  std::string local_out;  // where it is read here: == out_path locally; a copy for remote
  std::string local_err;
  std::vector<std::string> success_patterns;
  std::vector<std::string> failure_patterns;
  // The token of the script's end marker (EndMarkerTokenOfScript); "": the job has no
  // end marker, its end is known from the scheduler alone.
  std::string end_marker_token;
  int monitor_timeout_seconds = 0;  // from Add(); 0: none
  int max_pending_seconds = 0;      // from Add(), while PENDING; 0: none
  // No new byte in out or err for this long, counted from when the job is first seen
  // RUNNING or printing -> scancel, HANG_DETECTED. 0: off.
  int silence_timeout_seconds = 0;
  std::string workflow_type;
  std::string scenario;
  std::string time_limit;
  bool echo_output = false;  // copy new output to SlurmWatchOptions::terminal
  // Called once, on the watcher's thread, when the job is first known to be ending: its
  // end line, or the controller reporting it ended (ExecContext::job_ending). Never after
  // its verdict.
  std::function<void()> on_ending;
};

TRTLLM_RUN_API extern const char kLostContactLimitEnv[];  // "TRTLLM_RUN_TEST_LOST_CONTACT_LIMIT"

struct SlurmWatchOptions {
  double min_query_interval = 1.0;   // the first controller query after a change
  double max_query_interval = 60.0;  // the backoff cap
  // How often the output files are read; remote: how often they are copied while the
  // output stream is down (with it up, bytes are read as they arrive).
  double log_interval = 0.25;
  // A job's end line is never its end: every verdict waits until the controller no longer
  // reports the job (PENDING, RUNNING, COMPLETING, ...) or has purged it. The query that
  // confirms a clean end line ("exit code 0", no OOM/cancel line) is batched for every job
  // waiting. 0 (a single run): it is sent kEndConfirmBatchSeconds after the end line.
  // > 0 (bulk runs): confirmations ride on the watcher's own queries; one is brought
  // forward only while the controller queries so far (all of them, after two free ones)
  // stay within this many per job-minute run (each job's first output or RUNNING to its
  // end line). So a job that runs 60 / this many seconds pays for its own confirmation and
  // shorter jobs share one: their verdicts wait for it, at most max_confirm_wait seconds
  // after the previous query. Once nothing else runs or waits to run, at once. Jobs added
  // to a busy watch are first asked about within the same budget.
  double confirm_queries_per_job_minute = 0;
  double max_confirm_wait = 30;
  // Tests only: no scheduler query until this many seconds after the first end line
  // (before one appears: 10 times as long after the watch began).
  double first_query_delay = 0;
  int kill_grace_seconds = 30;  // added to KillWait when waiting for a cancelled job to end
  // Seconds of failing queries before giving up: a job that printed its end line is then
  // judged from its output (noted), any other is ERROR. $TRTLLM_RUN_TEST_LOST_CONTACT_LIMIT
  // (kLostContactLimitEnv; tests only) overrides it.
  double lost_contact_limit = 900;
  std::ostream* terminal = nullptr;  // live output of jobs with echo_output
  std::ostream* progress = nullptr;  // state changes and actions, one line each
  std::string progress_prefix = "[slurm]";
  // Called before every progress line and every write of job output to `terminal`, e.g.
  // to erase a live status line first. Empty: nothing.
  std::function<void()> before_output;
};

struct SlurmVerdict {
  std::string job_id;
  RunResult result;
};

// Watches jobs through a client (not owned) until each has a verdict. Single-threaded:
// Poll() does a bounded amount of work and returns.
class TRTLLM_RUN_API SlurmWatcher {
 public:
  SlurmWatcher(SlurmClient* client, SlurmWatchOptions options);
  ~SlurmWatcher();
  SlurmWatcher(const SlurmWatcher&) = delete;
  SlurmWatcher& operator=(const SlurmWatcher&) = delete;

  // Starts watching (now is its submission time for monitor_timeout_seconds).
  void Add(const SlurmWatchJob& job);

  // Cancels every watched job (scancel, then the verdict CANCELLED once it ended).
  // `signal`: the signal that asked (SIGINT: a user interrupt); `who` when 0.
  void CancelAll(int signal, const std::string& who = "request");

  // One round: reads the output, asks the scheduler when due, acts, and returns the
  // verdicts reached. Waits up to `max_wait_seconds` for the next due action (returns
  // early when `cancel` fires; then every job is cancelled).
  std::vector<SlurmVerdict> Poll(CancellationToken* cancel, double max_wait_seconds);

  // Poll() until every job has a verdict.
  void Run(CancellationToken* cancel, const std::function<void(SlurmVerdict)>& on_verdict);

  std::size_t active() const;
  // The job's current knowledge, for status lines: "RUNNING", "PENDING (Priority)", ...
  std::string Describe(const std::string& job_id) const;

 private:
  struct Job;
  struct OutputStream;
  void ReadOutputs(bool force);
  // Remote output into the local copies (slurm_watch_output.cc): the stream's frames, and
  // a copy when the stream is down and one is due, or `force` needs the last bytes of a
  // job that did not print its end line. True when the local files may have grown.
  bool ReadRemoteOutputs(bool force, std::chrono::steady_clock::time_point now);
  bool CopyRemoteOutputs();
  bool FollowRemoteOutputs(std::chrono::steady_clock::time_point now);
  void StopStream(const std::string& problem, std::chrono::steady_clock::time_point now);
  // Appends bytes of a remote file read from `offset` (its size then: `size`) to the job's
  // local copy. False when they do not join what is held (a gap).
  bool AppendRemote(Job* job, bool is_err, std::uint64_t offset, std::uint64_t size,
                    const std::string& bytes);
  bool StreamUp() const;
  int StreamFd() const;
  void CheckTriggers(std::chrono::steady_clock::time_point now);
  // Calls the job's on_ending, once.
  void ReportEnding(Job* job);
  // Restarts the job's silence clock when its output grew (or it was first seen running),
  // and marks it for scancel once the clock passed silence_timeout_seconds.
  void CheckSilence(Job* job, std::chrono::steady_clock::time_point now);
  void SendCancels(std::chrono::steady_clock::time_point now);
  void QueryController(std::chrono::steady_clock::time_point now);
  // After a controller answer: a pending job whose reason cannot clear, or that passed
  // max_pending_seconds, is marked for scancel.
  void CheckPending(Job* job, std::chrono::steady_clock::time_point now);
  // When a pending job reaches max_pending_seconds; max() when that cannot apply.
  std::chrono::steady_clock::time_point PendingDeadline(const Job& job) const;
  std::vector<SlurmVerdict> Finalize(std::chrono::steady_clock::time_point now);
  // Finalize's parts: the jobs whose verdict can be given now, their accounting records,
  // the evidence of one and its verdict.
  std::vector<Job*> ReadyJobs(std::chrono::steady_clock::time_point now);
  void QueryAccountingFor(const std::vector<Job*>& ready,
                          std::chrono::steady_clock::time_point now);
  SlurmJobEvidence EvidenceOf(const Job& job, std::uint64_t* out_bytes) const;
  RunResult VerdictOf(const Job& job, const SlurmJobEvidence& evidence,
                      std::chrono::steady_clock::time_point now) const;
  bool QueryDue(std::chrono::steady_clock::time_point now) const;
  // When a query the bulk budget paces may be sent (confirm_queries_per_job_minute): one
  // that confirms clean end lines, or asks about a job added to a busy watch.
  std::chrono::steady_clock::time_point ConfirmTime(
      std::chrono::steady_clock::time_point now) const;
  std::chrono::steady_clock::time_point EarliestQuery() const;
  std::chrono::steady_clock::time_point NextWake(std::chrono::steady_clock::time_point now) const;
  double QueryCap() const;
  void Progress(const std::string& line) const;
  void EnsureConfig();

  SlurmClient* client_;
  SlurmWatchOptions options_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::chrono::steady_clock::time_point created_;
  std::chrono::steady_clock::time_point next_query_;
  std::chrono::steady_clock::time_point next_log_;
  std::chrono::steady_clock::time_point last_query_;  // the last controller query sent
  double interval_;
  bool config_loaded_ = false;
  SlurmConfigFacts config_;
  std::optional<bool> accounting_;  // known after the config or the first sacct
  std::optional<std::chrono::steady_clock::time_point> failing_since_;
  std::string last_failure_;
  bool cancel_handled_ = false;
  std::unique_ptr<OutputStream> stream_;  // remote only
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_WATCH_H_
