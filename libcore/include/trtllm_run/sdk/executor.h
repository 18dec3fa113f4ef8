// Executor: runs a JobPlan on one target (this host, Docker, Slurm here or over SSH):
// renders what it needs into the work dir, then runs, watches and judges the job.
#ifndef TRTLLM_RUN_SDK_EXECUTOR_H_
#define TRTLLM_RUN_SDK_EXECUTOR_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/export.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/status.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

// What core does for an executor's jobs, declared by the executor instead of being
// inferred from its name. Every field defaults to "no".
struct ExecutorTraits {
  // The job runs on this host's GPUs: `run --cases` counts it against
  // --max-parallel-local, not only --max-parallel.
  bool host_bound = false;
  // Needs this host's facts (env check: nvidia-smi, Docker, Slurm tools) in Placement.env
  // even when it is named with --scenario (routing always gathers them otherwise).
  bool needs_env_check = false;
  // Submits to Slurm: before Validate, core runs the Slurm probe (or reads
  // --slurm-env-file), merges the cluster's policy fields and validates account and
  // partition (spec 000 Step 2.5), filling Placement.slurm_env, account, partition and
  // arch. A bad account or partition is kInvalidInput before Validate is called.
  bool slurm = false;
  // Reaches its cluster over SSH: routing resolves Placement.ssh_host and slurm_user
  // (catalog or request; --scenario needs a cluster or --ssh-host), the probe runs over
  // SSH, and core resolves Placement.remote_repo_path and remote_work_dir.
  bool remote = false;
  // Runs the job in a container image: routing resolves the models root and mount for it.
  bool container = false;
};

// An executor's claim on a case that named no --scenario (Executor::Claim).
struct RouteClaim {
  std::string why;  // one line for the plan's notes, e.g. "this host is a my_cluster node"
};

// One resource an executor holds between runs (e.g. a Slurm allocation persistent mode
// keeps for later jobs), as `trtllm-run release` lists and ends it.
struct HeldResource {
  std::string id;              // unique within the executor, e.g. the Slurm job id
  std::string description;     // one line for people
  long long last_used_at = 0;  // Unix seconds
  int idle_limit_seconds = 0;  // released by `release --idle` once idle past it
};

// What an executor can tell, from another process, about a job it started
// (`trtllm-run status WORK_DIR`).
struct JobDescription {
  // What the job's container engine says of its container ("running", "exited", ...);
  // empty when there is none or it was not asked. status --json: container_state.
  std::string container_state;
  // What the job's scheduler says of it (Slurm: the controller's JobState, e.g.
  // "PENDING", "RUNNING"; "UNKNOWN" once it no longer knows the job) and why (Slurm's
  // Reason); empty when there is no scheduler or it was not asked. status --json:
  // scheduler_state, scheduler_reason; MCP case state: slurm_state, slurm_reason.
  std::string scheduler_state;
  std::string scheduler_reason;
  // Why the executor could not tell (e.g. the cluster did not answer); empty when it could.
  std::string problem;
  // Extra "label: value" lines for status's text output, in order.
  std::vector<std::pair<std::string, std::string>> facts;
};

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
  // When set (`run --cases`): called at most once, on any thread, as soon as the job is
  // known to be ending (its script printed its end line, or the scheduler reports it
  // ended), before Execute() returns; the verdict still comes from Execute(), which may
  // wait longer (a clean end is final only once the controller confirms it). run --cases
  // frees the case's --max-parallel place then. Executors need not call it.
  std::function<void()> job_ending;
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

  // The scenario name this executor serves (`--scenario NAME`).
  virtual std::string Name() const = 0;

  // What core does for this executor's jobs (probe, env check, remote paths, ...).
  // Default: all "no". Must not depend on anything but the executor's type.
  virtual ExecutorTraits Traits() const;

  // Routing hook (spec 000 Step 2), asked when the request names no scenario, before the
  // built-in rules: a claim makes routing choose this executor, with `why` in the notes.
  // `env` is this host's env check. Executors are asked in name order; the first claim
  // wins. No side effects. Default: no claim.
  virtual std::optional<RouteClaim> Claim(const CaseRequest& request, const EnvFacts& env) const;

  // Checks the request's executor_options (request file `executor_options:` mapping,
  // `--executor-option KEY=VALUE`) before anything is written; they reach Prepare in
  // request.executor_options and the job spec in JobSpec.executor_options. An unknown
  // key or a bad value is kInvalidInput naming the key, the value and what is valid.
  // Default: accepts none (any key is an error naming this executor).
  virtual Status CheckExecutorOptions(const std::map<std::string, std::string>& options) const;

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

  // What the executor knows about a job it started in `spec.work_dir`, for
  // `trtllm-run status` and the MCP server's case state in another process (through
  // ReadWorkDirState, workdir_state.h); `state` is run_state.json (null when the job never
  // started). Called only for work dirs of this host whose run has not finished. Asks
  // nothing that could change the job, and asks where the job runs (a remote executor
  // over its own connection). Default: nothing to add.
  virtual JobDescription DescribeJob(const JobSpec& spec, const RunState* state) const;

  // Resources this executor holds between runs (`trtllm-run release`), sorted by id.
  // Default: none.
  virtual std::vector<HeldResource> ListHeld() const;

  // Ends one of them (by HeldResource::id). OK when it is gone. Default: kNotFound.
  virtual Status ReleaseHeld(const std::string& id);

  // A session for running many jobs at once (`run --cases`), or null (the default): the
  // caller then runs each job through Execute() on its own thread. The session may live
  // only as long as this executor.
  virtual std::unique_ptr<ExecutorSession> NewSession(const SessionOptions& options);
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_EXECUTOR_H_
