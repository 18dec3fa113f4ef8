// The Slurm session of `run --cases`, for local_slurm and remote_slurm alike: one shared
// session per scenario the cases' Slurm tools run in.
#ifndef TRTLLM_RUN_SDK_SLURM_SESSION_H_
#define TRTLLM_RUN_SDK_SLURM_SESSION_H_

#include <map>
#include <memory>
#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The executor option choosing how `run --cases` runs a case: "shared" (the default: the
// session of its destination) or "per-case" (ExecuteSlurmJob: its own scenario, stages and
// watcher, as a single run does).
inline constexpr char kSlurmSessionOption[] = "session";

// Checks a Slurm executor's executor_options: only kSlurmSessionOption, valued "shared" or
// "per-case". kInvalidInput naming the key or the value and what is valid.
TRTLLM_RUN_API Status CheckSlurmSessionOptions(const std::map<std::string, std::string>& options,
                                               const std::string& executor);

// A Slurm executor's session (Executor::NewSession). Cases are grouped by destination, the
// scenario their Slurm tools run in, exactly as ExecuteSlurmJob picks it: this host when
// the spec names no login node, else the SSH host, user, port, ssh_config file, identity
// and options (whatever makes a different connection). Per destination, once for all its
// cases: the scenario (for a login node its SSH master connection, a password prompt at
// most once) and ONE SharedSlurmWatcher for all its jobs (one batched controller query,
// and for a login node one batched log copy, per interval) on a thread of its own. Where
// the scenario's files live on another host, also once per destination: the preflight,
// the check of each remote work dir, the repo setup of each (remote repo path, url,
// branch) and the build job of each (repo path, branch, build command) when build_project
// asks (cases sharing it wait for it; BUILD_FAILED ends every one of them with the build's
// verdict); each case's files are still copied. Each case's job is submitted from its own
// calling thread (sbatch from its work dir as the cluster sees it) and judged by the
// watcher; a dropped master is re-established by whichever command finds it gone.
// Destinations connect and run in parallel. options.cancel firing cancels every job of
// every destination (CANCELLED once Slurm says so). Jobs in a held allocation (persistent
// mode, release_allocation false) run there as a single run does, through the
// destination's scenario. The job output is not echoed (context.terminal is ignored; it is
// in the work dir). A case whose executor option kSlurmSessionOption is "per-case" runs
// through ExecuteSlurmJob.
// Each case's result details: shared_session and shared_watcher "true",
// session_<counter> for its destination's counters, and for a login node ssh_host and
// ssh_connections (its destination's).
// Stats(), summed over destinations: "destinations", "remote_destinations", "watchers",
// "connections" (SSH), "preflights", "work_dir_checks", "repo_setups", "build_jobs",
// "transfers", "submits", "jobs", "controller_queries", "accounting_queries",
// "config_queries", "log_copies" (tail -c copies while no output stream runs),
// "log_streams" (output streams started), "cancels", "per_case_runs". `executor` (the
// session's executor name) prefixes its progress lines.
TRTLLM_RUN_API std::unique_ptr<ExecutorSession> NewSlurmSession(const SessionOptions& options,
                                                                const std::string& executor);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_SESSION_H_
