// One SlurmWatcher on a thread of its own, fed by many threads: the shared watch of an
// executor session (the local_slurm session, each destination of the remote_slurm one).
#ifndef TRTLLM_RUN_SLURM_WATCH_SHARED_WATCHER_H_
#define TRTLLM_RUN_SLURM_WATCH_SHARED_WATCHER_H_

#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/slurm/client.h"
#include "trtllm_run/sdk/slurm/watch.h"

namespace trtllm_run {

// Follows every job handed to Watch() with ONE SlurmWatcher whose client runs through
// `scenario` (not owned; outlives this object): one batched controller query per interval
// (and, remote, one batched log copy) for all jobs. `cancel` firing cancels every job it
// follows, and every job handed over later (CANCELLED once each ended). What the watcher
// throws ends every job as ERROR naming it (best effort: the jobs are scancelled).
// The destructor waits until every job handed over has its verdict. Thread-safe.
class SharedSlurmWatcher {
 public:
  SharedSlurmWatcher(Scenario* scenario, const SlurmWatchOptions& options,
                     CancellationToken* cancel);
  ~SharedSlurmWatcher();
  SharedSlurmWatcher(const SharedSlurmWatcher&) = delete;
  SharedSlurmWatcher& operator=(const SharedSlurmWatcher&) = delete;

  // The verdict of a submitted job, once the watcher reached it.
  std::future<RunResult> Watch(const SlurmWatchJob& job);

  // The watcher client's counters after its last round.
  SlurmClientStats stats() const;
  // How many jobs were handed over.
  int jobs() const;

  // The jobs still waiting for their verdict by what the watcher last knew of each
  // (SlurmWatcher::Describe: "PENDING (JobArrayTaskLimit)", "RUNNING", "submitted" before
  // the first answer, ...): the live board's counts. Refreshed at most once a second.
  std::map<std::string, int> StateCounts() const;

 private:
  struct Pending {
    SlurmWatchJob job;
    std::promise<RunResult> promise;
  };
  void Loop();
  void Follow(std::map<std::string, std::promise<RunResult>>* waiting_jobs);

  CancellationToken* cancel_;
  SlurmClient client_;
  SlurmWatcher watcher_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;             // guarded by mu_
  bool stop_ = false;                        // guarded by mu_
  std::string failure_;                      // guarded by mu_: why Follow() ended, once it threw
  int jobs_ = 0;                             // guarded by mu_
  SlurmClientStats stats_;                   // guarded by mu_: client_'s, after each round
  std::map<std::string, int> state_counts_;  // guarded by mu_: StateCounts()
  std::thread thread_;                       // last: starts once everything above is built
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_SLURM_WATCH_SHARED_WATCHER_H_
