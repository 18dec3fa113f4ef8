// Private to the Slurm watcher (slurm_watch.cc, slurm_watch_end.cc, slurm_watch_output.cc,
// slurm_job_owner.cc): what SlurmWatcher knows of each job, and the helpers they share.
#ifndef TRTLLM_RUN_SLURM_WATCH_SLURM_WATCH_JOB_H_
#define TRTLLM_RUN_SLURM_WATCH_SLURM_WATCH_JOB_H_

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm/client/job_file_io.h"
#include "trtllm_run/sdk/slurm/file_follow_stream.h"
#include "trtllm_run/sdk/slurm/verdict.h"
#include "trtllm_run/sdk/slurm/watch.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace internal {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kTailLines = 60;
constexpr std::size_t kHeadLines = 50;
constexpr std::size_t kHeadBytes = 64 * 1024;
constexpr std::size_t kErrHeadBytes = 16 * 1024;
constexpr int kMaxAccountingTries = 6;
constexpr double kEndConfirmBatchSeconds = 0.2;  // gathers end lines that arrive together
// Controller queries a bulk watch may send before its jobs' run time earned any (the first
// look at the new jobs, and one confirmation).
constexpr double kFreeQueries = 2;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
inline Clock::duration Dur(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

inline std::string UserName(const std::string& uid_text) {
  std::optional<long long> uid = ParseInteger(uid_text, LONG_MIN, LONG_MAX);
  if (!uid) return uid_text;
  struct passwd* pw = ::getpwuid(static_cast<uid_t>(*uid));
  return pw ? std::string(pw->pw_name) + " (uid " + uid_text + ")" : "uid " + uid_text;
}

}  // namespace internal

struct SlurmWatcher::Job {
  SlurmWatchJob spec;
  internal::Clock::time_point added;
  std::unique_ptr<LogFollower> out;
  std::unique_ptr<LogFollower> err;
  std::uint64_t fetched_out = 0, fetched_err = 0;  // remote offsets copied so far
  std::uint64_t echoed_out = 0, echoed_err = 0;    // local echo offsets
  bool out_truncate = true, err_truncate = true;   // the first copy starts the local file

  std::optional<SlurmJobRecord> record;
  bool terminal = false;
  bool purged = false;
  std::string shown_state;

  SlurmAction action = SlurmAction::kNone;
  int cancel_signal = 0;
  std::string action_detail;
  bool cancel_needed = false;
  std::optional<internal::Clock::time_point> cancel_first_try;
  std::optional<internal::Clock::time_point> cancel_sent;
  std::string cancel_problem;

  bool end_line = false;
  bool end_clean = false;
  std::optional<internal::Clock::time_point> end_line_at;
  // When it was first seen running: its first output byte, or the controller saying so.
  // Its run time (to its end line) is what earns confirmation queries (ConfirmTime).
  std::optional<internal::Clock::time_point> running_since;
  bool ending_reported = false;  // spec.on_ending was called
  bool anomaly_seen = false;     // a cancel or out-of-memory line

  // The silence clock: when the output last grew (unset until the job runs or prints),
  // the bytes read of out and err then, and the last line that arrived.
  std::optional<internal::Clock::time_point> output_grew_at;
  std::uint64_t out_read = 0, err_read = 0;
  std::string last_output_line;

  bool lost = false;
  // Contact was lost after the job printed its end line: judged from its output alone.
  bool judged_unconfirmed = false;
  int acct_tries = 0;
  bool acct_done = false;
  std::optional<internal::Clock::time_point> next_acct;
  std::vector<SlurmAcctRecord> acct;
  std::string acct_error;
  bool done = false;
  std::optional<internal::Clock::time_point> done_at;
};

// The remote output follower of a watch and its restarts.
struct SlurmWatcher::OutputStream {
  std::unique_ptr<FileFollowStream> stream;
  std::vector<std::pair<Job*, bool>> targets;  // the stream's files: (job, is_err), in order
  std::size_t jobs_when_started = 0;           // jobs_.size() then: more means restart
  int failures = 0;                            // in a row
  internal::Clock::time_point retry_at;        // the next start after a failure
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_WATCH_SLURM_WATCH_JOB_H_
