// SharedSlurmWatcher (shared_watcher.h): one SlurmWatcher on one thread for the jobs
// that many threads submitted.
#include "slurm/watch/shared_watcher.h"

#include <chrono>
#include <utility>

#include "model/plugin_call.h"

namespace trtllm_run {

SharedSlurmWatcher::SharedSlurmWatcher(Scenario* scenario, const SlurmWatchOptions& options,
                                       CancellationToken* cancel)
    : cancel_(cancel),
      client_(scenario),
      watcher_(&client_, options),
      thread_([this] { Loop(); }) {}

SharedSlurmWatcher::~SharedSlurmWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::future<RunResult> SharedSlurmWatcher::Watch(const SlurmWatchJob& job) {
  Pending pending;
  pending.job = job;
  std::future<RunResult> future = pending.promise.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.empty()) {
      pending.promise.set_value(ErrorRunResult(Status::ExecutionError(
          failure_, "check `squeue -j " + job.job_id + "`: the job may still be running")));
      return future;
    }
    pending_.push_back(std::move(pending));
    ++jobs_;
  }
  cv_.notify_all();
  return future;
}

SlurmClientStats SharedSlurmWatcher::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

int SharedSlurmWatcher::jobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_;
}

std::map<std::string, int> SharedSlurmWatcher::StateCounts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_counts_;
}

// The thread entry: what Follow() throws ends every job it follows, and every job
// submitted later, as ERROR naming the exception (best effort: the jobs are cancelled),
// instead of ending the process.
void SharedSlurmWatcher::Loop() {
  std::map<std::string, std::promise<RunResult>> waiting;
  try {
    Follow(&waiting);
  } catch (...) {
    const std::string failure = "the Slurm session's watcher failed: " + CurrentExceptionText();
    std::vector<Pending> added;
    {
      std::lock_guard<std::mutex> lock(mu_);
      failure_ = failure;
      added = std::move(pending_);
      pending_.clear();
    }
    for (Pending& item : added) waiting.emplace(item.job.job_id, std::move(item.promise));
    std::vector<std::string> ids;
    for (const auto& [job_id, promise] : waiting) ids.push_back(job_id);
    try {
      if (!ids.empty()) client_.Cancel(ids).IgnoreError();
    } catch (...) {  // the failure above is what the jobs report
    }
    for (auto& [job_id, promise] : waiting) {
      promise.set_value(ErrorRunResult(Status::ExecutionError(
          failure, "check `squeue -j " + job_id + "`: the job may still be running")));
    }
  }
}

// Follows every job handed to Watch() until stop_ and none is left. The only code that
// touches watcher_ and client_ (besides Loop()'s cleanup).
void SharedSlurmWatcher::Follow(std::map<std::string, std::promise<RunResult>>* waiting_jobs) {
  std::map<std::string, std::promise<RunResult>>& waiting = *waiting_jobs;
  // Describe() looks its job up among all jobs: counting every job costs jobs x jobs.
  std::chrono::steady_clock::time_point next_counts;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::vector<Pending> added = std::move(pending_);
    pending_.clear();
    if (added.empty() && waiting.empty()) {
      if (stop_) break;
      cv_.wait(lock, [this] { return stop_ || !pending_.empty(); });
      continue;
    }
    lock.unlock();
    for (Pending& item : added) {
      watcher_.Add(item.job);
      waiting.emplace(item.job.job_id, std::move(item.promise));
    }
    // Jobs submitted after the cancellation was handled are cancelled too.
    if (!added.empty() && cancel_->cancelled()) {
      watcher_.CancelAll(cancel_->signal(), "request");
    }
    std::vector<SlurmVerdict> verdicts = watcher_.Poll(cancel_, 0.25);
    lock.lock();
    stats_ = client_.stats();
    lock.unlock();
    for (SlurmVerdict& verdict : verdicts) {
      auto it = waiting.find(verdict.job_id);
      if (it == waiting.end()) continue;
      it->second.set_value(std::move(verdict.result));
      waiting.erase(it);
    }
    std::map<std::string, int> counts;
    const bool count = std::chrono::steady_clock::now() >= next_counts;
    if (count) {
      for (const auto& entry : waiting) ++counts[watcher_.Describe(entry.first)];
      next_counts = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
    lock.lock();
    if (count) state_counts_ = std::move(counts);
  }
}

}  // namespace trtllm_run
