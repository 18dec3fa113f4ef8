// A work dir seen later, from another process: what runs there, and how to stop it.
//
// Contract with executors: while Execute() runs, the executor keeps
// <work_dir>/run_state.json up to date (written atomically): who supervises the job
// (this process), what it started (a process group, a container, a Slurm job) and where
// the log is. result.json (result.h) is the end of the story: once it exists the run is
// over, whatever run_state.json says. `trtllm-run status / attach / cancel` read both.
//
// run_state.json keys (all optional except scenario):
//   scenario, state ("starting" | "running" | "stopping" | "finished": the Slurm and Docker
//   executors write "finished" once their job ended; local_direct leaves "running", its
//   result.json following within milliseconds, to write each file once), host,
//   supervisor_pid, supervisor_start_time, pid, pgid, pid_start_time, container_name,
//   container_engine, job_id, log_file, started_at, updated_at, plus any string keys in
//   `extra`. Process start times are /proc/<pid>/stat field 22 (clock ticks since boot):
//   with the pid they identify a process even after its pid is reused.
//
// Everything in a work dir may have been written by someone else (work dirs live on
// shared filesystems). Readers therefore act only on what they can prove belongs to the
// run of the directory they were given: a process is signalled only when its pid and
// group are > 1, its recorded start time is present and equal, and it either holds the
// work dir's lock (the supervisor) or carries the work dir's marker in its environment
// (the job: TRTLLM_RUN_WORK_DIR=<work dir>, set by the executor for everything it
// starts). Files are read only when they are regular files inside the work dir.
#ifndef TRTLLM_RUN_WORKDIR_H_
#define TRTLLM_RUN_WORKDIR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trtllm_run/export.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/status.h"

namespace trtllm_run {

struct RunState {
  std::string scenario;
  std::string state = "running";
  std::string host;        // gethostname() of the supervisor
  int supervisor_pid = 0;  // the process running Execute(); 0: unknown
  std::uint64_t supervisor_start_time = 0;
  int pid = 0;   // the job's main process on `host` (local executors); 0: none
  int pgid = 0;  // its process group; 0: none
  std::uint64_t pid_start_time = 0;
  std::string container_name;    // local_docker
  std::string container_engine;  // DOCKER_HOST the container runs on; empty: default
  std::string job_id;            // Slurm executors
  std::string log_file;          // when it differs from job_spec.json (e.g. %j expanded)
  std::string started_at;        // ISO 8601 UTC
  std::string updated_at;
  std::map<std::string, std::string> extra;
};

// "<work_dir>/run_state.json".
TRTLLM_RUN_API std::string RunStatePath(const std::string& work_dir);

// A RunState for the calling process as supervisor: scenario, host, supervisor pid and
// start time, started_at/updated_at now.
TRTLLM_RUN_API RunState NewRunState(const std::string& scenario);

// Writes run_state.json atomically (sets updated_at).
TRTLLM_RUN_API Status WriteRunState(const std::string& work_dir, RunState state);

// kNotFound when the file does not exist; kInvalidInput naming the file when it is not a
// run state.
TRTLLM_RUN_API Result<RunState> ReadRunState(const std::string& work_dir);

// Start time of a live process (/proc/<pid>/stat field 22), or 0 when it does not exist
// or is a zombie.
TRTLLM_RUN_API std::uint64_t ProcessStartTime(int pid);

// True when `pid` is alive, not a zombie, and (when start_time is not 0) started at
// `start_time`: the same process, not a reuse of its pid.
TRTLLM_RUN_API bool SameProcessAlive(int pid, std::uint64_t start_time);

// The marker every process a run starts carries in its environment:
// TRTLLM_RUN_WORK_DIR=<work_dir> (work_dir as job_spec.json records it). Executors add
// WorkDirMarker() last to the environment of what they start.
inline constexpr char kWorkDirMarkerVariable[] = "TRTLLM_RUN_WORK_DIR";
TRTLLM_RUN_API EnvVar WorkDirMarker(const std::string& work_dir);
TRTLLM_RUN_API std::string WorkDirMarkerEntry(const std::string& work_dir);  // "NAME=VALUE"

// True when process `pid` holds the flock(2) of <work_dir>/.lock: one of its open files
// is that lock file (same device and inode) with a FLOCK lock on it
// (/proc/PID/fd, /proc/PID/fdinfo). False when that cannot be read.
TRTLLM_RUN_API bool ProcessHoldsWorkDirLock(int pid, const std::string& work_dir);

// Whether a process a run state names is that run's.
enum class RecordedProcess {
  kNone,      // nothing recorded (pid 0)
  kGone,      // not alive, or its pid now belongs to a process started at another time
  kProven,    // alive, the recorded start time, and the work dir's proof
  kUnproven,  // anything else: not to be signalled
};
struct RecordedProcessCheck {
  RecordedProcess verdict = RecordedProcess::kNone;
  std::string why;  // for kGone and kUnproven: what did not match, naming the key
};

// The supervisor: supervisor_pid > 1, supervisor_start_time present and equal, and the
// process holds <work_dir>/.lock.
TRTLLM_RUN_API RecordedProcessCheck CheckRecordedSupervisor(const RunState& state,
                                                            const std::string& work_dir);
// The job's process group leader: pid > 1 and pgid == pid, pid_start_time present and
// equal, and WorkDirMarker(work_dir) in its environment.
TRTLLM_RUN_API RecordedProcessCheck CheckRecordedJobLeader(const RunState& state,
                                                           const std::string& work_dir);

// Stops what is left of the job a run state recorded, from another process: the process
// group (when its leader is proven, CheckRecordedJobLeader) and every other live process
// that carries WorkDirMarker(work_dir) (children that left the group); SIGTERM (and
// SIGCONT), then SIGKILL after `grace_seconds`. kInvalidInput naming what did not match
// when the recorded job process is not proven to be this run's (nothing is signalled);
// kExecutionError naming the pids that survived SIGKILL; OK when nothing is left.
// `work_dir` must be job_spec.json's work_dir, checked to be where the files are
// (CheckWorkDirLocation).
TRTLLM_RUN_API Status StopRecordedJob(const RunState& state, const std::string& work_dir,
                                      double grace_seconds);

// kInvalidInput unless `spec.work_dir` names the directory `dir` (the same directory,
// however the path is spelled): a copied or moved work dir records another directory's
// run, which must not be acted on from here.
TRTLLM_RUN_API Status CheckWorkDirLocation(const JobSpec& spec, const std::string& dir);

// Opens a file of work dir `dir` for reading: `path` (absolute, or relative to `dir`)
// must lie inside `dir` with no symlink on the way out of it, and be a regular file
// (opened O_NONBLOCK | O_NOFOLLOW, so a FIFO or device never blocks or is read). A path
// under `recorded_dir` (job_spec.json's work_dir, when the work dir was moved or copied)
// is taken as the same path under `dir`: a copy reads its own files. Returns the
// descriptor (close-on-exec; the caller closes it), or kInvalidInput saying why not.
TRTLLM_RUN_API Result<int> OpenWorkDirFile(const std::string& dir, const std::string& path,
                                           const std::string& recorded_dir = "");

// The host name of this machine.
TRTLLM_RUN_API std::string HostName();

enum class WorkDirPhase {
  kNotStarted,  // job_spec.json only (`trtllm-run plan`, or Execute not reached yet)
  kRunning,     // run_state.json with a live supervisor (or one on another host)
  kAbandoned,   // run_state.json, but its supervisor is gone and no result.json exists
  kFinished,    // result.json exists
};

TRTLLM_RUN_API const char* WorkDirPhaseName(WorkDirPhase phase);  // "not started", ...

// Everything the work dir tells without asking any engine or scheduler.
struct WorkDirInfo {
  std::string work_dir;  // absolute
  WorkDirPhase phase = WorkDirPhase::kNotStarted;
  JobSpec spec;
  std::optional<RunState> state;
  std::optional<RunResult> result;
  bool same_host = true;          // run_state.host is this host (pids are meaningful)
  bool supervisor_alive = false;  // proven alive (CheckRecordedSupervisor); when same_host
  bool job_process_alive = false;
  // Why the recorded supervisor is neither proven nor gone (CheckRecordedSupervisor's
  // kUnproven); empty otherwise.
  std::string supervisor_unproven;
  // job_spec.json's work_dir is another directory (a copy or a move): its processes are
  // not this directory's; empty when it is this one.
  std::string location_problem;
  // run_state.log_file, else job_spec.json's, mapped into this directory when it was moved
  // or copied; empty when it is not a file to read (log_refused says why).
  std::string log_file;
  std::string log_refused;
  std::vector<std::string> problems;  // unreadable run_state.json, ...
};

// Reads job_spec.json (required: kNotFound/kInvalidInput naming the file when it is not
// a work dir), result.json and run_state.json, and checks the recorded processes.
TRTLLM_RUN_API Result<WorkDirInfo> InspectWorkDir(const std::string& work_dir);

// "<work_dir>/.lock": the file a run holds an exclusive flock(2) on while it executes.
TRTLLM_RUN_API std::string WorkDirLockPath(const std::string& work_dir);

// An exclusive lock on a work dir: one run executes in a work dir at a time. The lock is
// flock(2) on <work_dir>/.lock through a close-on-exec descriptor, so it ends when the
// holder releases it or dies (never a stale lock) and the job's processes never inherit
// it. The lock file holds the holder's pid and host, for the refusal message. Readers
// (status, attach, cancel) do not take it.
class TRTLLM_RUN_API WorkDirLock {
 public:
  // Takes the lock without waiting. When another process holds it: kInvalidInput naming
  // the work dir and the holder (pid and host from the lock file, else run_state.json),
  // with status/attach/cancel as the hint; nothing in the work dir is changed. kIoError
  // when the lock file cannot be created. `record_holder` false: the lock file is left
  // as it is until RecordHolder() (a caller that may still refuse to run).
  static Result<std::unique_ptr<WorkDirLock>> Acquire(const std::string& work_dir,
                                                      bool record_holder = true);
  // Writes this process (pid, host, start) into the lock file. Best effort: a failed
  // write (e.g. a full filesystem) does not give up the lock.
  void RecordHolder();
  ~WorkDirLock();  // releases the lock (the file stays)
  WorkDirLock(const WorkDirLock&) = delete;
  WorkDirLock& operator=(const WorkDirLock&) = delete;

 private:
  explicit WorkDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_WORKDIR_H_
