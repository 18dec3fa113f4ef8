#include "trtllm_run/workdir_cancel.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "trtllm_run/cancel.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/workdir_state.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kPollSeconds = 0.1;  // between looks at the work dir

Result<WorkDirInfo> Inspect(const std::string& work_dir) {
  WorkDirStateOptions files_only;
  files_only.log_lines = 0;
  Result<WorkDirState> state = ReadWorkDirState(work_dir, files_only);
  if (!state.ok()) return state.status();
  return std::move(state.value().info);
}

// The supervisor's own kill grace (run_state.json kill_grace_seconds, bounded to an
// hour), else `fallback`.
int GraceOf(const WorkDirInfo& info, int fallback) {
  if (!info.state) return fallback;
  auto it = info.state->extra.find("kill_grace_seconds");
  if (it == info.state->extra.end()) return fallback;
  try {
    return std::min(3600, std::max(0, std::stoi(it->second)));  // read from the work dir
  } catch (const std::exception&) {
    return fallback;
  }
}

std::string ContainerName(const WorkDirInfo& info) {
  if (info.state && !info.state->container_name.empty()) return info.state->container_name;
  return info.spec.container_name;
}

// Step 1: SIGTERM to the proven supervisor, then wait until it wrote the verdict or ended.
void StopSupervisor(const std::string& work_dir, const WorkDirInfo& info,
                    const CancelWorkDirOptions& options) {
  const int supervisor = info.state->supervisor_pid;
  const double wait = options.wait_seconds ? *options.wait_seconds : GraceOf(info, 30) + 30.0;
  if (options.progress) {
    *options.progress << options.canceller << ": asking trtllm-run (pid " << supervisor
                      << ") to stop the job (SIGTERM); waiting up to " << wait << "s\n";
  }
  ::kill(supervisor, SIGTERM);
  const Clock::time_point end =
      Clock::now() + std::chrono::milliseconds(static_cast<long long>(wait * 1000));
  while (Clock::now() < end) {
    Result<WorkDirInfo> now = Inspect(work_dir);
    if (now.ok() && (now->phase == WorkDirPhase::kFinished || !now->supervisor_alive)) break;
    if (options.sleep) {
      if (!options.sleep(kPollSeconds)) break;
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(kPollSeconds));
    }
  }
}

// Step 2: the executor stops what is left, from this process.
Status StopWithExecutor(const Registry& registry, const WorkDirInfo& info,
                        const CancelWorkDirOptions& options) {
  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor(info.spec.scenario);
  if (!executor.ok()) return executor.status();
  std::unique_ptr<Scenario> scenario = MakeLocalScenario();
  CancellationToken token;
  ExecContext context;
  context.scenario = scenario.get();
  context.cancel = &token;
  context.progress = options.progress;
  context.kill_grace_seconds = options.kill_grace_seconds;
  return executor.value()->Cancel(info.spec, context);
}

// Step 3 when the supervisor left no verdict: CANCELLED, written here.
RunResult CancelledHere(const WorkDirInfo& info, const std::string& canceller) {
  RunResult result;
  result.status = RunStatus::kCancelled;
  result.cancelled_by = canceller;
  result.reason = "cancelled with `" + canceller + "`; the supervising trtllm-run (pid " +
                  std::to_string(info.state->supervisor_pid) +
                  ") had ended without a verdict, so the job was stopped directly";
  result.workflow_type = info.spec.workflow_type;
  result.scenario = info.spec.scenario;
  result.model_name = info.spec.model_name;
  result.command = info.spec.direct_cmd;
  result.work_dir = info.work_dir;
  result.log_file = info.log_file;
  result.monitor_timeout_seconds = info.spec.monitor_timeout_seconds;
  result.started_at = info.state->started_at;
  result.finished_at = NowIso8601();
  if (!ContainerName(info).empty()) result.details["container_name"] = ContainerName(info);
  if (!info.state->job_id.empty()) result.details["job_id"] = info.state->job_id;
  return result;
}

}  // namespace

Result<CancelWorkDirReport> CancelWorkDir(const Registry& registry, const std::string& work_dir,
                                          const CancelWorkDirOptions& options) {
  Result<WorkDirInfo> inspected = Inspect(work_dir);
  if (!inspected.ok()) return inspected.status();
  const WorkDirInfo& info = inspected.value();
  CancelWorkDirReport report;
  if (info.phase == WorkDirPhase::kFinished) {
    report.summary = "nothing to cancel: " + work_dir +
                     " already finished: " + RunStatusName(info.result->status);
    report.result = info.result;
    return report;
  }
  if (info.phase == WorkDirPhase::kNotStarted) {
    report.summary = "nothing to cancel: nothing was started in " + work_dir;
    return report;
  }
  if (!info.same_host) {
    return Status::ExecutionError(
        "the job of " + work_dir + " is supervised on host " + info.state->host + ", not on " +
            HostName(),
        "run `trtllm-run cancel " + work_dir + "` on " + info.state->host);
  }
  // Everything below acts on processes, containers or jobs the work dir names: only on
  // this directory's own run, and only on what is proven to be that run's.
  TRTLLM_RUN_RETURN_IF_ERROR(CheckWorkDirLocation(info.spec, work_dir));
  if (!info.supervisor_unproven.empty()) {
    return Status::InvalidInput("refusing to signal the supervisor recorded in " + work_dir + ": " +
                                    info.supervisor_unproven,
                                "trtllm-run signals only processes proven to be the run of "
                                "this work dir; if the process is yours, stop it yourself");
  }
  report.cancelled = true;
  if (info.supervisor_alive) StopSupervisor(work_dir, info, options);
  report.stop_status = StopWithExecutor(registry, info, options);

  Result<WorkDirInfo> final_info = Inspect(work_dir);
  if (final_info.ok() && final_info->result) {
    report.result = final_info->result;
  } else if (report.stop_status.ok()) {
    RunResult result = CancelledHere(info, options.canceller);
    TRTLLM_RUN_RETURN_IF_ERROR(WriteResult(result));
    report.result = result;
  }
  if (report.result) {
    report.summary = "cancelled: " + work_dir + ": " + RunStatusName(report.result->status) + " (" +
                     report.result->reason + ")";
  }
  return report;
}

}  // namespace trtllm_run
