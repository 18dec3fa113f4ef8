// Executor: runs a JobPlan on one target (this host, Docker, Slurm here or over SSH):
// renders what it needs into the work dir, then runs, watches and judges the job.
#ifndef TRTLLM_RUN_EXECUTOR_H_
#define TRTLLM_RUN_EXECUTOR_H_

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "trtllm_run/cancel.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/export.h"
#include "trtllm_run/job_spec.h"
#include "trtllm_run/plan.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/scenario.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// What an executor may use while running. Pointers are never null unless stated; all
// are owned by the caller and outlive Execute().
struct ExecContext {
  Scenario* scenario = nullptr;
  CancellationToken* cancel = nullptr;
  std::ostream* terminal = nullptr;  // live job output; null: do not echo
  std::ostream* progress = nullptr;  // status lines for people; null: quiet
  int kill_grace_seconds = 30;       // SIGTERM -> SIGKILL grace for ended jobs
  double poll_interval_seconds = 0.5;
  // The SSH password for a remote Slurm login (CaseRequest.slurm_password), when the
  // embedder gave one. A secret: executors hand it to ssh only through SSH_ASKPASS and
  // never put it in an argv, a log, a job file or a result. Unset: the executor falls back
  // to $TRTLLM_RUN_SLURM_PASSWORD / $TRTLLM_RUN_SLURM_PASSWORD_FILE, else keys.
  std::optional<std::string> slurm_password;
};

// Many jobs of one executor run together (`trtllm-run run --cases`), sharing what can be
// shared: the local_slurm session submits each job and follows all of them with ONE
// SlurmWatcher (one batched controller query per interval for every job).
struct SessionOptions {
  // Cancels every job of the session when it fires (Ctrl-C of `run --cases`). Each
  // Execute() call should be given the same token in its context. Never null.
  CancellationToken* cancel = nullptr;
  std::ostream* progress = nullptr;  // the session's own status lines; null: quiet
  int kill_grace_seconds = 30;
};

class TRTLLM_RUN_API ExecutorSession {
 public:
  virtual ~ExecutorSession();

  // Executor::Execute() for one job of the session, with the same contract (a verdict,
  // nothing left running). Thread-safe: called from one thread per job, concurrently.
  virtual RunResult Execute(const JobSpec& spec, const ExecContext& context) = 0;

  // Counters for the combined report, e.g. {"watchers": "1", "controller_queries":
  // "7"}. Thread-safe. Default: none.
  virtual std::map<std::string, std::string> Stats() const;
};

class TRTLLM_RUN_API Executor {
 public:
  virtual ~Executor();

  // The scenario name this executor serves ("local_direct", ...).
  virtual std::string Name() const = 0;

  // Checks what can be checked before anything is written: inputs this executor needs,
  // tools it needs, the placement routing chose. No side effects. Errors are
  // kInvalidInput naming the input.
  virtual Status Validate(const CaseRequest& request, const JobPlan& plan,
                          const Placement& placement) const = 0;

  // Fills `spec` (spec->work_dir, log_file, scenario are set by the caller) from the plan
  // and the placement, and writes job_spec.json and any scripts into the existing, empty
  // work dir. Starts nothing: `trtllm-run plan` stops here.
  virtual Status Prepare(const CaseRequest& request, const JobPlan& plan,
                         const Placement& placement, JobSpec* spec) = 0;

  // Runs a prepared job to a verdict and returns it; infrastructure failures are a
  // RunResult with status ERROR and the evidence. Leaves no process or job running,
  // also when context.cancel fires.
  virtual RunResult Execute(const JobSpec& spec, const ExecContext& context) = 0;

  // Stops, from another process, the job that an Execute() for `spec` started (what it
  // recorded in <work_dir>/run_state.json, workdir.h), if any of it still runs. OK when
  // nothing of the job is left running. Called by `trtllm-run cancel` after the
  // supervising process was asked to stop and did not. Default: kExecutionError "not
  // supported by this executor".
  virtual Status Cancel(const JobSpec& spec, const ExecContext& context);

  // A session for running many jobs at once (`run --cases`), or null (the default): the
  // caller then runs each job through Execute() on its own thread. The session may live
  // only as long as this executor.
  virtual std::unique_ptr<ExecutorSession> NewSession(const SessionOptions& options);
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_EXECUTOR_H_
