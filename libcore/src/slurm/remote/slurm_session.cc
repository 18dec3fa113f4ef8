// The Slurm session of `run --cases` (sdk/slurm/session.h), for local_slurm and
// remote_slurm alike: cases grouped by the scenario their Slurm tools run in (this host,
// or one SSH destination), per group one scenario, the remote-only shared stages of
// slurm_remote_stages.h run once where the scenario's files live on another host, and one
// shared watcher.
#include "trtllm_run/sdk/slurm/session.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "model/plugin_call.h"
#include "slurm/remote/slurm_remote_stages.h"
#include "slurm/submit/slurm_internal.h"
#include "slurm/watch/shared_watcher.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {
namespace {

using Clock = std::chrono::steady_clock;

// Runs each keyed step once: the first caller of a key runs it, later callers of the
// same key wait for its value. Thread-safe. What a step throws becomes `on_throw`'s value.
template <typename T>
class OnceByKey {
 public:
  T Get(const std::string& key, const std::function<T()>& step,
        const std::function<T(const std::string&)>& on_throw) {
    std::shared_future<T> future;
    std::optional<std::promise<T>> mine;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = done_.find(key);
      if (it == done_.end()) {
        mine.emplace();
        future = mine->get_future().share();
        done_.emplace(key, future);
      } else {
        future = it->second;
      }
    }
    if (mine) {
      try {
        mine->set_value(step());
      } catch (...) {
        mine->set_value(on_throw(CurrentExceptionText()));
      }
    }
    return future.get();
  }

  int count() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(done_.size());
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_future<T>> done_;
};

// What a shared stage left for every case sharing it: the verdict that ends their runs
// (ERROR, or CANCELLED during a build job), or the notes and details their results get.
struct SharedStep {
  std::optional<RunResult> failure;
  std::vector<std::string> notes;
  std::map<std::string, std::string> details;
};

SharedStep StepThrew(const std::string& what) {
  SharedStep step;
  step.failure = ErrorRunResult(Status::Internal("a shared remote stage failed: " + what));
  return step;
}

void AddNotes(const std::vector<std::string>& notes, RunResult* result) {
  for (const std::string& note : notes) {
    bool known = false;
    for (const std::string& have : result->notes) known = known || have == note;
    if (!known) result->notes.push_back(note);
  }
}

// The case's result when the shared step failed: the step's verdict with this case's
// names; else nullopt, the step's notes and details added to run->base.
std::optional<RunResult> Apply(const SharedStep& step, internal::StagedRun* run) {
  if (!step.failure) {
    AddNotes(step.notes, &run->base);
    for (const auto& [key, value] : step.details) run->base.details.emplace(key, value);
    return std::nullopt;
  }
  const RunResult& failure = *step.failure;
  RunResult result = run->base;
  internal::TakeVerdict(failure, &result);
  result.log_file = failure.log_file;
  result.log_tail = failure.log_tail;
  AddNotes(failure.notes, &result);
  for (const auto& [key, value] : failure.details) result.details[key] = value;
  result.finished_at = NowIso8601();
  return result;
}

// Runs `stage` for the case `model` on a fresh base, so that what it adds can be given
// to every case that shares it.
SharedStep RunStep(const internal::StagedRun& model,
                   const std::function<std::optional<RunResult>(internal::StagedRun*)>& stage) {
  internal::StagedRun run{
      model.spec,      model.context, model.scenario, model.where, internal::BaseResult(model.spec),
      model.job_script};
  SharedStep step;
  step.failure = stage(&run);
  step.notes = run.base.notes;
  step.details = run.base.details;
  return step;
}

std::string SpecExtra(const JobSpec& spec, const std::string& key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? "" : it->second;
}

// What makes a different scenario: "" for this host; for a login node, whatever makes a
// different SSH connection (never "").
std::string DestinationKey(const JobSpec& spec) {
  if (!internal::NamesLoginNode(spec)) return "";
  std::string key = spec.ssh_host + "\n" + spec.slurm_user;
  for (const char* extra : {"ssh_config_file", "ssh_port", "ssh_identity_file", "ssh_options"}) {
    key += "\n" + SpecExtra(spec, extra);
  }
  return key;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string key;
  for (const std::string& part : parts) key += part + '\n';
  return key;
}

// One destination: the scenario its Slurm tools run in (this host, or a login node over
// its SSH master connection), its shared stages and its watcher.
class Destination {
 public:
  // `ssh` is the scenario when it is a login node, else null.
  Destination(std::string where, std::unique_ptr<Scenario> scenario, SshScenario* ssh,
              const SlurmWatchOptions& watch, CancellationToken* cancel)
      : where_(std::move(where)),
        scenario_(std::move(scenario)),
        ssh_(ssh),
        watcher_(std::make_unique<SharedSlurmWatcher>(scenario_.get(), watch, cancel)) {}

  ~Destination() {
    watcher_.reset();  // every job judged, its thread ended
    if (ssh_ != nullptr) ssh_->Close().IgnoreError();
  }

  // One case through the stages: where the scenario's files live on another host, the
  // shared ones once and its own transfer; then its job.
  RunResult Run(const JobSpec& spec, const ExecContext& context, RunResult base) {
    const bool files_elsewhere = scenario_->IsRemote();
    internal::StagedRun run{spec,   context,         scenario_.get(),
                            where_, std::move(base), files_elsewhere ? "" : spec.script_path};
    auto submit = [&](const internal::SubmitRequest& request) {
      return SubmitAndWatch(spec, context, request);
    };
    if (!files_elsewhere) return internal::RunJob(&run, submit);
    auto shared = [&](OnceByKey<SharedStep>* steps, const std::string& key,
                      const std::function<std::optional<RunResult>(internal::StagedRun*)>& stage) {
      return Apply(steps->Get(
                       key, [&] { return RunStep(run, stage); }, StepThrew),
                   &run);
    };
    std::optional<RunResult> failed = shared(&preflights_, "", internal::RunPreflight);
    if (!failed && !spec.repo_url.empty() && !spec.remote_repo_path.empty()) {
      failed =
          shared(&repo_setups_, Joined({spec.remote_repo_path, spec.repo_url, spec.repo_branch}),
                 internal::SetUpRemoteRepo);
    }
    if (!failed)
      failed = shared(&work_dir_checks_, spec.remote_work_dir, internal::CheckRemoteWorkDir);
    if (!failed) {
      ++transfers_;
      failed = internal::TransferFiles(&run);
    }
    if (!failed && spec.build_project) {
      failed =
          shared(&build_jobs_,
                 Joined({spec.remote_repo_path, spec.repo_branch, internal::BuildCommandOf(spec)}),
                 [&](internal::StagedRun* build) { return internal::RunBuildJob(build, submit); });
    }
    return failed ? std::move(*failed) : internal::RunJob(&run, submit);
  }

  std::map<std::string, int> Counters() const {
    SlurmClientStats stats = watcher_->stats();
    return {{"connections", connections()},
            {"preflights", preflights_.count()},
            {"work_dir_checks", work_dir_checks_.count()},
            {"repo_setups", repo_setups_.count()},
            {"build_jobs", build_jobs_.count()},
            {"transfers", transfers_.load()},
            {"submits", submits_.load()},
            {"jobs", watcher_->jobs()},
            {"controller_queries", stats.controller_queries},
            {"accounting_queries", stats.accounting_queries},
            {"config_queries", stats.config_queries},
            {"log_copies", stats.log_fetches},
            {"log_streams", stats.stream_starts},
            {"cancels", stats.cancels}};
  }

  bool remote() const { return ssh_ != nullptr; }
  int connections() const { return ssh_ == nullptr ? 0 : ssh_->connections_opened(); }
  const std::string& where() const { return where_; }

 private:
  // sbatch through the scenario from the calling thread (many at once); the verdict from
  // the shared watcher.
  RunResult SubmitAndWatch(const JobSpec& spec, const ExecContext& context,
                           internal::SubmitRequest request) {
    request.echo = false;  // the output is in the work dir; many jobs share the terminal
    SlurmClient submitter(scenario_.get());
    internal::SubmitOutcome submitted = internal::SubmitJob(&submitter, spec, context, request);
    submits_ += submitter.stats().submits;
    if (!submitted.submitted) return submitted.result;
    RunResult judged = watcher_->Watch(submitted.job).get();
    return internal::FinishJob(submitted, judged, watcher_->stats(), spec, request);
  }

  const std::string where_;  // the SSH destination, "" for this host
  std::unique_ptr<Scenario> scenario_;
  SshScenario* const ssh_;  // scenario_ when it is a login node, else null
  OnceByKey<SharedStep> preflights_, work_dir_checks_, repo_setups_, build_jobs_;
  std::atomic<int> transfers_{0}, submits_{0};
  std::unique_ptr<SharedSlurmWatcher> watcher_;  // after scenario_: ends before it
};

// A destination once connected, or the verdict of the failed connection.
struct Connected {
  std::shared_ptr<Destination> destination;
  std::optional<RunResult> failure;
};

class SlurmSession : public ExecutorSession {
 public:
  SlurmSession(const SessionOptions& options, const std::string& executor)
      : cancel_(options.cancel ? options.cancel : &own_cancel_),
        progress_(options.progress),
        kill_grace_seconds_(options.kill_grace_seconds),
        executor_(executor) {}

  ~SlurmSession() override {
    std::map<std::string, int> totals = Totals();
    const int remote = totals["remote_destinations"];
    if (progress_ && remote > 0) {
      std::lock_guard<std::mutex> lock(progress_mu_);
      *progress_ << "[" << executor_ << "] " << Summary(remote) << ": " << totals["connections"]
                 << " SSH connection(s), " << totals["preflights"] << " preflight(s), "
                 << totals["repo_setups"] << " repo setup(s), " << totals["build_jobs"]
                 << " build job(s), " << totals["jobs"] << " job(s)" << std::endl;
    }
  }

  RunResult Execute(const JobSpec& spec, const ExecContext& context) override {
    auto session = spec.executor_options.find(kSlurmSessionOption);
    if (session != spec.executor_options.end() && session->second == "per-case") {
      ++per_case_runs_;
      return ExecuteSlurmJob(spec, context);
    }
    auto started = Clock::now();
    const bool login_node = internal::NamesLoginNode(spec);
    RunResult base = internal::BaseResult(spec);
    auto finish = [&](RunResult result) {
      result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
      if (result.finished_at.empty()) result.finished_at = NowIso8601();
      result.details["shared_session"] = "true";
      result.details["shared_watcher"] = "true";
      if (login_node) result.details["ssh_host"] = spec.ssh_host;
      return result;
    };
    if (login_node && spec.remote_work_dir.empty()) {
      return finish(internal::ErrorResult(base, "job_spec.json has no remote_work_dir",
                                          "prepare the case with the " + executor_ + " executor"));
    }
    if (spec.script_path.empty()) {
      return finish(internal::ErrorResult(base, "job_spec.json has no script_path",
                                          "prepare the case with the " + executor_ + " executor"));
    }
    Connected connected = connections_.Get(
        DestinationKey(spec), [&] { return Connect(spec, context, base); },
        [&](const std::string& what) {
          return Connected{nullptr, internal::ErrorResult(base, "connecting failed: " + what, "")};
        });
    if (!connected.destination) {
      internal::StagedRun run{spec, context, nullptr, spec.ssh_host, base, ""};
      SharedStep step;
      step.failure = connected.failure;
      return finish(std::move(*Apply(step, &run)));
    }
    Destination& destination = *connected.destination;
    RunResult result = destination.Run(spec, context, std::move(base));
    if (destination.remote()) {
      const int connections = destination.connections();
      result.details["ssh_connections"] = std::to_string(connections);
      if (connections > 1) {  // the master died (sshd restart, network) and came back
        result.notes.push_back("SSH: the connection to " + destination.where() +
                               " was lost and re-established (" + std::to_string(connections) +
                               " connections opened)");
      }
    }
    for (const auto& [key, value] : destination.Counters()) {
      result.details["session_" + key] = std::to_string(value);
    }
    return finish(std::move(result));
  }

  std::map<std::string, std::string> Stats() const override {
    std::map<std::string, std::string> stats;
    for (const auto& [key, value] : Totals()) stats[key] = std::to_string(value);
    return stats;
  }

 private:
  // The destination's scenario: this host's, or a login node's master connection.
  Connected Connect(const JobSpec& spec, const ExecContext& context, const RunResult& base) {
    std::unique_ptr<Scenario> scenario;
    SshScenario* ssh = nullptr;
    if (internal::NamesLoginNode(spec)) {
      std::optional<RunResult> failed;
      std::unique_ptr<SshScenario> connected =
          internal::ConnectRemote(spec, context, base, &failed);
      if (!connected) return Connected{nullptr, std::move(failed)};
      ssh = connected.get();
      scenario = std::move(connected);
    } else {
      scenario = MakeLocalScenario();
    }
    SlurmWatchOptions watch = WatchOptionsFor(*scenario);
    const std::string where = ssh != nullptr ? spec.ssh_host : "";
    auto destination =
        std::make_shared<Destination>(where, std::move(scenario), ssh, watch, cancel_);
    int remote = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      destinations_.push_back(destination);
      for (const auto& each : destinations_) remote += each->remote() ? 1 : 0;
    }
    if (progress_ && ssh != nullptr) {
      std::lock_guard<std::mutex> lock(progress_mu_);
      *progress_ << "[" << executor_ << "] " << Summary(remote) << ": connected to " << where
                 << std::endl;
    }
    return Connected{destination, std::nullopt};
  }

  SlurmWatchOptions WatchOptionsFor(const Scenario& scenario) const {
    JobSpec spec;
    spec.scenario = executor_;
    ExecContext context;
    context.progress = progress_;
    context.kill_grace_seconds = kill_grace_seconds_;
    SlurmWatchOptions watch = internal::WatchOptions(spec, context, scenario);
    watch.terminal = nullptr;
    // A bulk run: the controller confirms every job's end, but the confirmations ride on
    // the shared watcher's queries within the bulk query budget.
    watch.confirm_queries_per_job_minute = internal::kBulkConfirmQueriesPerJobMinute;
    return watch;
  }

  static std::string Summary(int destinations) {
    return "one shared session per destination (" + std::to_string(destinations) +
           (destinations == 1 ? " destination)" : " destinations)");
  }

  std::map<std::string, int> Totals() const {
    std::vector<std::shared_ptr<Destination>> destinations;
    {
      std::lock_guard<std::mutex> lock(mu_);
      destinations = destinations_;
    }
    int remote = 0;
    for (const auto& destination : destinations) remote += destination->remote() ? 1 : 0;
    std::map<std::string, int> totals = {{"destinations", static_cast<int>(destinations.size())},
                                         {"remote_destinations", remote},
                                         {"watchers", static_cast<int>(destinations.size())},
                                         {"per_case_runs", per_case_runs_.load()}};
    for (const char* key :
         {"connections", "preflights", "work_dir_checks", "repo_setups", "build_jobs", "transfers",
          "submits", "jobs", "controller_queries", "accounting_queries", "config_queries",
          "log_copies", "log_streams", "cancels"}) {
      totals[key] = 0;
    }
    for (const auto& destination : destinations) {
      for (const auto& [key, value] : destination->Counters()) totals[key] += value;
    }
    return totals;
  }

  CancellationToken own_cancel_;
  CancellationToken* cancel_;
  std::ostream* progress_;
  const int kill_grace_seconds_;
  const std::string executor_;
  std::atomic<int> per_case_runs_{0};
  mutable std::mutex progress_mu_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Destination>> destinations_;  // guarded by mu_
  OnceByKey<Connected> connections_;
};

}  // namespace

Status CheckSlurmSessionOptions(const std::map<std::string, std::string>& options,
                                const std::string& executor) {
  for (const auto& [key, value] : options) {
    if (key != kSlurmSessionOption) {
      return Status::InvalidInput(
          "executor option '" + key + "' (executor_options): the " + executor +
              " executor takes only '" + kSlurmSessionOption + "'",
          "use --executor-option session=shared (the default: one shared session per "
          "destination for run --cases) or session=per-case");
    }
    if (value != "shared" && value != "per-case") {
      return Status::InvalidInput("executor option '" + key + "=" + value +
                                      "' (executor_options): '" + value +
                                      "' is not a session mode of the " + executor + " executor",
                                  "valid values: shared (the default), per-case");
    }
  }
  return Status::Ok();
}

std::unique_ptr<ExecutorSession> NewSlurmSession(const SessionOptions& options,
                                                 const std::string& executor) {
  return std::make_unique<SlurmSession>(options, executor);
}

}  // namespace trtllm_run
