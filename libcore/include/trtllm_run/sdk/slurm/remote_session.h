// The remote_slurm session of `run --cases`: one shared session per SSH destination.
#ifndef TRTLLM_RUN_SDK_SLURM_REMOTE_SESSION_H_
#define TRTLLM_RUN_SDK_SLURM_REMOTE_SESSION_H_

#include <map>
#include <memory>
#include <string>

#include "trtllm_run/export.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

// The executor option choosing how `run --cases` runs a remote case: "shared" (the
// default: the destination's shared session) or "per-case" (ExecuteSlurmJob: its own
// connection, preflight, repo setup, build job and watcher, as a single run does).
inline constexpr char kRemoteSessionOption[] = "session";

// Checks a remote executor's executor_options: only kRemoteSessionOption, valued
// "shared" or "per-case". kInvalidInput naming the key or the value and what is valid.
TRTLLM_RUN_API Status CheckRemoteSessionOptions(const std::map<std::string, std::string>& options,
                                                const std::string& executor);

// The remote_slurm executor's session (Executor::NewSession). Cases are grouped by
// destination: the SSH host, user, port, ssh_config file, identity and options (whatever
// makes a different connection). Per destination, once for all its cases: the SSH master
// connection (a password prompt at most once), the preflight, the check of each remote
// work dir, the repo setup of each (remote repo path, url, branch), the build job of each
// (repo path, branch, build command) when build_project asks (cases sharing it wait for
// it; BUILD_FAILED ends every one of them with the build's verdict), and ONE
// SharedSlurmWatcher for all its jobs (one batched controller query and one batched log
// copy per interval), on a thread of its own. Each case's files are still copied and
// its job submitted from its own thread, over the destination's master; a dropped
// master is re-established by whichever command finds it gone. Destinations connect and
// run in parallel. options.cancel firing cancels every job of every destination
// (CANCELLED once Slurm says so). Persistent mode (release_allocation false) runs in the
// held allocation as a single run does, over the destination's master. A case whose
// executor option kRemoteSessionOption is "per-case" runs through ExecuteSlurmJob.
// Each case's result details: ssh_connections (its destination's), shared_session
// "true", and session_<counter> for its destination's counters.
// Stats(), summed over destinations: "destinations", "watchers", "connections",
// "preflights", "work_dir_checks", "repo_setups", "build_jobs", "transfers", "submits",
// "jobs", "controller_queries", "accounting_queries", "log_copies" (tail -c copies while
// no output stream runs), "log_streams" (output streams started), "cancels",
// "per_case_runs". `executor` (the session's executor name) prefixes its progress lines.
TRTLLM_RUN_API std::unique_ptr<ExecutorSession> NewRemoteSlurmSession(const SessionOptions& options,
                                                                      const std::string& executor);

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SDK_SLURM_REMOTE_SESSION_H_
