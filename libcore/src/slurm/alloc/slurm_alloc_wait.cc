// The queue wait of a held allocation's salloc (slurm_alloc_wait.h).
#include "slurm/alloc/slurm_alloc_wait.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <sstream>
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

constexpr double kPendingQuerySeconds = 1.0;  // between two questions for the reason
constexpr double kRevokeWaitSeconds = 15.0;   // for salloc to end after scancel

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

// The id of the pending request named `job_name` whose comment is `token`; "" while it
// is not queued (or no longer pending) or the controller did not answer.
std::string FindPendingRequest(SlurmClient* client, const std::string& job_name,
                               const std::string& token) {
  Result<CommandOutput> out =
      client->Run({"squeue", "-h", "-t", "PD", "--name=" + job_name, "-o", "%i %k"});
  if (!out.ok() || out->exit_code != 0) return "";
  std::istringstream lines(out->stdout_text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t space = line.find(' ');
    if (space != std::string::npos && Trim(line.substr(space + 1)) == token) {
      return line.substr(0, space);
    }
  }
  return "";
}

}  // namespace

Result<SallocOutcome> RunLocalSalloc(const std::vector<std::string>& argv,
                                     const ExecContext& context, SlurmClient* client,
                                     int max_pending_seconds, const std::string& progress_prefix) {
  ProcessOptions options;
  options.argv = argv;
  Result<std::unique_ptr<ChildProcess>> spawned = ChildProcess::Spawn(options);
  if (!spawned.ok()) return spawned.status();
  std::unique_ptr<ChildProcess> child = std::move(spawned.value());
  SallocOutcome outcome;
  std::optional<ProcessExit> exit;
  const Clock::time_point started = Clock::now();
  Clock::time_point next_query = started + std::chrono::milliseconds(500);
  std::optional<Clock::time_point> withdrawn_at;
  bool interrupted_salloc = false;
  while (!exit) {
    pollfd fds[2] = {{child->output_fd(), POLLIN, 0},
                     {context.cancel ? context.cancel->wait_fd() : -1, POLLIN, 0}};
    ::poll(fds, 2, 200);
    Result<ReadState> read = child->ReadOutput(&outcome.output);
    (void)read;
    if (context.cancel && context.cancel->cancelled() && !outcome.interrupted) {
      outcome.interrupted = true;
      child->SignalGroup(SIGINT);  // salloc withdraws the pending request
    }
    const std::string job_id = PendingJobId(outcome.output);
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

Result<SallocOutcome> RunRemoteSalloc(std::vector<std::string> argv, const ExecContext& context,
                                      SlurmClient* client, const std::string& job_name,
                                      int max_pending_seconds, const std::string& progress_prefix) {
  // The remote salloc only speaks when it ends: its request is found by a comment of its own.
  const std::string token = "trtllm-run-request-" + std::to_string(::getpid()) + "-" +
                            std::to_string(Clock::now().time_since_epoch().count());
  argv.push_back("--comment=" + token);
  Scenario* scenario = client->scenario();
  std::future<Result<CommandOutput>> salloc = std::async(std::launch::async, [scenario, argv] {
    SlurmClientOptions waiting;
    waiting.command_timeout_seconds = 3600;  // salloc waits in the queue
    SlurmClient queue_client(scenario, waiting);
    return queue_client.Run(argv);
  });
  SallocOutcome outcome;
  const Clock::time_point started = Clock::now();
  Clock::time_point next_query = started + std::chrono::milliseconds(500);
  std::string job_id;
  std::optional<Clock::time_point> withdrawn_at;
  bool interrupted_salloc = false;
  while (salloc.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    if (withdrawn_at) {
      if (!interrupted_salloc && Since(*withdrawn_at) > kRevokeWaitSeconds) {
        interrupted_salloc = true;  // salloc missed the revocation: end its wait
        client->Run({"pkill", "-INT", "-f", "--", "--comment=" + token}).IgnoreError();
      }
      continue;
    }
    const bool cancelled = context.cancel && context.cancel->cancelled();
    if (!cancelled && Clock::now() < next_query) continue;
    next_query =
        Clock::now() + std::chrono::milliseconds(static_cast<int>(kPendingQuerySeconds * 1000));
    if (job_id.empty()) job_id = FindPendingRequest(client, job_name, token);
    if (job_id.empty()) continue;  // not queued yet, or granted: salloc returns then
    if (cancelled) {
      outcome.interrupted = true;
      client->Cancel({job_id}).IgnoreError();
      withdrawn_at = Clock::now();
      continue;
    }
    std::optional<SlurmJobRecord> record = QueryRequest(client, job_id);
    if (record && ShouldWithdraw(*record, Since(started), max_pending_seconds, &outcome.stop)) {
      SayWithdrawn(context, progress_prefix, job_id, outcome.stop, max_pending_seconds);
      client->Cancel({job_id}).IgnoreError();
      withdrawn_at = Clock::now();
    }
  }
  Result<CommandOutput> out = salloc.get();
  if (!out.ok()) return out.status().WithContext("salloc");
  outcome.output = out->stdout_text + out->stderr_text;
  outcome.exit =
      ProcessExit{out->exit_code >= 0 ? std::optional<int>(out->exit_code) : std::nullopt,
                  out->signal ? std::optional<int>(out->signal) : std::nullopt};
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
