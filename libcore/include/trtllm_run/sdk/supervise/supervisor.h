// Supervise(): the one supervision loop for a job that runs while this process watches
// it: a process group on this host, a container's `docker run` client, a script on a
// login node that runs steps of a held Slurm allocation. It follows the output, stops the
// job on cancellation, on "hang detected" in its log, when its log grew by no byte for the
// silence timeout, or at its monitor timeout, gives the
// stop its grace before the hard stop, and draws the live progress line. What differs
// between the jobs (how to stop, what "gone" means) is the SupervisedJob's; the loop and
// its timing are the same for all.
//
// The loop sleeps in poll() on the job's output, its end (a pidfd) and the cancellation
// token, so a job's end is seen at once, not at the next poll interval.
#ifndef TRTLLM_RUN_SDK_SUPERVISE_SUPERVISOR_H_
#define TRTLLM_RUN_SDK_SUPERVISE_SUPERVISOR_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/export.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/supervise/log_follower.h"
#include "trtllm_run/sdk/supervise/progress.h"

namespace trtllm_run {

// Why the supervisor stopped a job.
enum class StopReason {
  kNone,       // it ended by itself
  kCancel,     // the cancellation token fired
  kHang,       // "hang detected" in its log
  kTimeout,    // the monitor timeout passed
  kSilence,    // its log grew by no byte for the silence timeout
  kLeftovers,  // it ended, but processes it started were still running
};

// What remains once the job's leader ended and no stop is under way.
enum class AfterExit {
  kDone,           // nothing: the supervision ends
  kWait,           // output is still arriving: ask again on the next round
  kStopLeftovers,  // processes it started still run: stop them (StopReason::kLeftovers)
};

// One started job, as the supervisor drives it. Called from the supervising thread only.
class TRTLLM_RUN_API SupervisedJob {
 public:
  virtual ~SupervisedJob();

  // Readable when output arrives; -1: none (the loop wakes every poll interval).
  virtual int OutputFd() const = 0;
  // Readable once the job's leader ended (ChildProcess::exit_fd()); -1: poll.
  virtual int ExitFd() const { return -1; }
  // Moves the output that arrived to the job's log (an OutputPump).
  virtual void PumpOutput() = 0;
  // How the leader ended, once it has; never blocks.
  virtual std::optional<ProcessExit> PollExit() = 0;
  // See AfterExit; `seconds_since_exit` since the end was seen.
  virtual AfterExit CheckAfterExit(double seconds_since_exit) = 0;

  // Begins the stop (SIGTERM, docker stop); `why` is for people. Called once.
  virtual void BeginStop(StopReason reason, const std::string& why) = 0;
  // Every round while the stop is under way and the leader has not ended.
  virtual void WhileStopping(double /*seconds_since_stop*/) {}
  // Called every round once the grace after BeginStop passed, until it returns true:
  // the hard stop (SIGKILL, docker kill), or true without one when nothing is left.
  virtual bool Escalate() = 0;
  // While stopping and after the leader ended: true once nothing of the job is left.
  virtual bool Gone() = 0;
  // Once, give_up_seconds after Escalate() answered true while the job is not gone:
  // record what survived; true ends the supervision now.
  virtual bool GiveUp() = 0;

  // What runs, for the progress line: "pid 123", "job 42 RUNNING"; empty: nothing.
  virtual std::string Label() const { return ""; }
};

struct SupervisorOptions {
  CancellationToken* cancel = nullptr;  // null: never cancelled
  int monitor_timeout_seconds = 0;      // 0: none
  // No new byte in the followed log for this long, counted from the call to Supervise()
  // (not `started`: a held allocation's run started before its step did) and from each
  // poll that read new bytes -> StopReason::kSilence. 0, or no follower: none.
  int silence_timeout_seconds = 0;
  double kill_grace_seconds = 30;  // BeginStop -> Escalate
  double give_up_seconds = 3;      // Escalate -> GiveUp
  // The longest sleep when the job has no exit fd (a remote script): its end is polled.
  double poll_interval_seconds = 0.5;
  // The longest sleep after the leader ended or while stopping (draining, reaping).
  double settle_seconds = 0.05;
  // Follows the job's log; its pattern `hang_pattern` stops the job when stop_on_hang.
  LogFollower* follower = nullptr;
  std::size_t hang_pattern = 0;
  bool stop_on_hang = true;
  // Null: no progress line. `state` names the running phase ("running", "building").
  ProgressReporter* progress = nullptr;
  std::string state = "running";
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

struct SupervisionOutcome {
  StopReason stop = StopReason::kNone;
  int cancel_signal = 0;   // the token's signal when stop is kCancel (0: a request)
  bool escalated = false;  // the hard stop was needed
  bool gave_up = false;    // GiveUp() was called
  std::optional<ProcessExit> exit;
  // stop kSilence: the last line with text the log held when the silence was judged; ""
  // when it held none.
  std::string last_output_line;
  // Log follow errors (once) and notes (the log was truncated or replaced).
  std::vector<std::string> errors;
  std::vector<std::string> notes;
};

// Runs the loop until the job ended and nothing of it is left (or GiveUp() said to end).
// Pumps the output a last time and polls the follower a last time before returning.
TRTLLM_RUN_API SupervisionOutcome Supervise(SupervisedJob* job, const SupervisorOptions& options);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SUPERVISE_SUPERVISOR_H_
