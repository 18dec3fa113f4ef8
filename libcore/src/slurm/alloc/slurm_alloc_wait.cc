// The queue wait of a held allocation's salloc (slurm_alloc_wait.h).
#include "slurm/alloc/slurm_alloc_wait.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "model/slurm_pending.h"
#include "slurm/submit/slurm_internal.h"
#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run::internal {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kPendingQuerySeconds = 1.0;    // between two questions for the reason
constexpr double kRevokeWaitSeconds = 15.0;     // for salloc to end after scancel
constexpr double kRequestIdWaitSeconds = 10.0;  // cancelled: for salloc to name its request

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "salloc: Pending job allocation 123" -> "123"; "" before salloc printed it.
std::string PendingJobId(const std::string& output) {
  const std::string marker = "Pending job allocation ";
  std::size_t at = output.find(marker);
  if (at == std::string::npos) return "";
  std::size_t start = at + marker.size(), end = start;
  while (end < output.size() && output[end] >= '0' && output[end] <= '9') ++end;
  return output.substr(start, end - start);
}

// The request's state and reason, or nullopt when the controller did not answer.
std::optional<SlurmJobRecord> QueryRequest(SlurmClient* client, const std::string& job_id) {
  Result<SlurmClient::JobsSnapshot> snapshot = client->QueryJobs({job_id});
  if (!snapshot.ok()) return std::nullopt;
  if (snapshot->records.empty()) {
    SlurmJobRecord gone;  // purged: it left the queue
    gone.job_id = job_id;
    gone.state = "COMPLETED";
    return gone;
  }
  return snapshot->records[0];
}

// Decides whether a pending request is withdrawn now; fills `stop` when it is.
bool ShouldWithdraw(const SlurmJobRecord& record, double waited, int max_pending_seconds,
                    SallocPendingStop* stop) {
  if (record.state != "PENDING") return false;
  if (FindHopelessPendingReason(record.reason)) {
    stop->action = SlurmAction::kHopelessPending;
  } else if (max_pending_seconds > 0 && waited >= max_pending_seconds) {
    stop->action = SlurmAction::kMaxPending;
    stop->max_pending_seconds = max_pending_seconds;
  } else {
    return false;
  }
  stop->job_id = record.job_id;
  stop->reason = record.reason.empty() ? "no reason given" : record.reason;
  return true;
}

// The progress line of a request being withdrawn.
void SayWithdrawn(const ExecContext& context, const std::string& progress_prefix,
                  const std::string& job_id, const SallocPendingStop& stop,
                  int max_pending_seconds) {
  Say(context, progress_prefix,
      "held allocation: job " + job_id +
          (stop.action == SlurmAction::kMaxPending
               ? " still pending after max_pending " + std::to_string(max_pending_seconds) + "s (" +
                     stop.reason + ")"
               : " pending with reason " + stop.reason + ", which waiting cannot clear") +
          ": cancelling it");
}

}  // namespace

Result<SallocOutcome> RunSalloc(const std::vector<std::string>& argv, const ExecContext& context,
                                SlurmClient* client, int max_pending_seconds,
                                const std::string& progress_prefix) {
  Command command;
  command.argv = argv;
  command.merge_stderr = true;  // "Pending job allocation N" comes on stderr
  Result<std::unique_ptr<ChildProcess>> spawned = client->scenario()->Start(command);
  if (!spawned.ok()) return spawned.status().WithContext("salloc");
  std::unique_ptr<ChildProcess> child = std::move(spawned.value());
  SallocOutcome outcome;
  std::optional<ProcessExit> exit;
  const Clock::time_point started = Clock::now();
  Clock::time_point next_query = started + std::chrono::milliseconds(500);
  std::optional<Clock::time_point> withdrawn_at, cancelled_at;
  bool interrupted_salloc = false;
  while (!exit) {
    pollfd fds[2] = {{child->output_fd(), POLLIN, 0},
                     {context.cancel ? context.cancel->wait_fd() : -1, POLLIN, 0}};
    ::poll(fds, 2, 200);
    Result<ReadState> read = child->ReadOutput(&outcome.output);
    (void)read;
    const std::string job_id = PendingJobId(outcome.output);
    if (context.cancel && context.cancel->cancelled() && !outcome.interrupted) {
      outcome.interrupted = true;
      cancelled_at = Clock::now();
    }
    if (outcome.interrupted && !withdrawn_at && !job_id.empty()) {
      // The request is withdrawn by the scheduler, here and on a login node alike: salloc
      // then reports the revocation and ends.
      client->Cancel({job_id}).IgnoreError();
      withdrawn_at = Clock::now();
    }
    if (outcome.interrupted && !withdrawn_at && !interrupted_salloc &&
        Since(*cancelled_at) > kRequestIdWaitSeconds) {
      interrupted_salloc = true;  // no request to withdraw showed up: end the wait itself
      child->SignalGroup(SIGINT);
    }
    if (!outcome.interrupted && !withdrawn_at && !job_id.empty() &&
        outcome.output.find("Granted job allocation") == std::string::npos &&
        Clock::now() >= next_query) {
      next_query =
          Clock::now() + std::chrono::milliseconds(static_cast<int>(kPendingQuerySeconds * 1000));
      std::optional<SlurmJobRecord> record = QueryRequest(client, job_id);
      if (record && ShouldWithdraw(*record, Since(started), max_pending_seconds, &outcome.stop)) {
        SayWithdrawn(context, progress_prefix, job_id, outcome.stop, max_pending_seconds);
        client->Cancel({job_id}).IgnoreError();
        withdrawn_at = Clock::now();
      }
    }
    if (withdrawn_at && !interrupted_salloc && Since(*withdrawn_at) > kRevokeWaitSeconds) {
      interrupted_salloc = true;  // salloc missed the revocation: end its wait
      child->SignalGroup(SIGINT);
    }
    exit = child->TryWait();
  }
  while (child->output_fd() >= 0) {
    Result<ReadState> read = child->ReadOutput(&outcome.output);
    if (!read.ok() || read.value() != ReadState::kData) break;
  }
  outcome.exit = *exit;
  if (outcome.stop.action != SlurmAction::kNone) {
    std::optional<SlurmJobRecord> record = QueryRequest(client, outcome.stop.job_id);
    outcome.stop.left_queue = record && IsTerminalSlurmState(record->state);
  }
  return outcome;
}

RunResult PendingAllocationResult(RunResult base, const SallocPendingStop& stop) {
  const std::string request = "the held allocation request, job " + stop.job_id + ",";
  const std::string ended = stop.left_queue ? "was cancelled with scancel and left the queue"
                                            : "was sent scancel but not seen to leave the queue";
  std::string reason;
  if (stop.action == SlurmAction::kMaxPending) {
    reason = "still pending after " + std::to_string(stop.max_pending_seconds) +
             "s: " + stop.reason + "; " + request + " " + ended;
  } else {
    std::optional<HopelessPendingReason> row = FindHopelessPendingReason(stop.reason);
    reason = request + " was pending with reason " + stop.reason + " (" +
             (row ? row->meaning : std::string("it cannot start")) +
             "), which waiting cannot clear; it " + ended;
  }
  base.details["pending_reason"] = stop.reason;
  base.details["allocation_request_id"] = stop.job_id;
  RunResult result = ErrorResult(base, reason, "");
  DiagnosisInput in;
  in.status = RunStatus::kError;
  in.scenario = result.scenario;
  in.workflow_type = result.workflow_type;
  in.reason = reason;
  in.job_id = stop.job_id;
  in.pending_reason = stop.reason;
  result.diagnosis = DiagnoseFailure(in);
  if (!stop.left_queue) {
    result.diagnosis += "\nThe request may still be queued: check `squeue -j " + stop.job_id +
                        "` and end it with `scancel " + stop.job_id + "`.";
  }
  return result;
}

}  // namespace trtllm_run::internal
