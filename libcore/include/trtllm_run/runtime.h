// Runtime: the pipeline of one case. classify -> plan -> route -> validate -> work dir ->
// prepare -> execute -> result.json. Embedding tools use this header (and the types it
// includes) and nothing else.
#ifndef TRTLLM_RUN_RUNTIME_H_
#define TRTLLM_RUN_RUNTIME_H_

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "trtllm_run/cancel.h"
#include "trtllm_run/catalog.h"
#include "trtllm_run/environment.h"
#include "trtllm_run/export.h"
#include "trtllm_run/registry.h"
#include "trtllm_run/request.h"
#include "trtllm_run/result.h"
#include "trtllm_run/sdk/executor.h"
#include "trtllm_run/sdk/job_spec.h"
#include "trtllm_run/sdk/plan.h"
#include "trtllm_run/status.h"
#include "trtllm_run/user_config.h"

namespace trtllm_run {

struct RuntimeOptions {
  std::vector<std::string> plugin_dirs;  // searched after the built-in dir and the env path
  bool load_builtin_plugins = true;
  bool use_plugin_path_env = true;  // honour $TRTLLM_RUN_PLUGIN_PATH
  // The cluster catalog (clusters.yaml): this path, else $TRTLLM_RUN_CLUSTERS, else
  // $XDG_CONFIG_HOME/trtllm-run/clusters.yaml; none is fine.
  std::string catalog_path;
  // Read the user's config file here and each case's repo config in Plan()
  // (user_config.h). A bad config file fails Create() or Plan() with kInvalidInput.
  bool read_config_files = true;
};

struct RunOptions {
  std::ostream* terminal = nullptr;     // live job output (the CLI passes stdout)
  std::ostream* progress = nullptr;     // warnings and status lines (the CLI passes stderr)
  CancellationToken* cancel = nullptr;  // null: cannot be cancelled from outside
  int kill_grace_seconds = 30;
  // When set (`run --cases`, multi_run.h): the job runs through session->Execute()
  // instead of a new executor's Execute(). It must be a session of the executor of the
  // case's scenario. Not owned.
  ExecutorSession* session = nullptr;
  std::function<void()> job_ending;  // ExecContext::job_ending
  // When set: called with the verdict after diagnosis and before result.json is written
  // (the perf gate: perf/perf_case.h). It may change the verdict, within the status set.
  std::function<void(RunResult*)> finalize;
};

// A case planned but not started: everything validated, nothing written.
struct PlannedCase {
  CaseRequest request;  // with repo_root resolved
  JobPlan plan;
  Placement placement;
  std::string scenario;            // executor name (== placement.scenario)
  std::string work_dir;            // the directory Prepare would create (not yet created)
  std::vector<std::string> notes;  // workflow, derivation and routing decisions
};

// A case whose work dir exists and holds job_spec.json and its scripts.
struct PreparedCase {
  PlannedCase planned;
  JobSpec spec;
};

// The plan as `trtllm-run plan` prints it: work dir, script, workflow, model, image, the
// devices and nodes as the executor placed them, scenario and the notes. Ends with "\n".
TRTLLM_RUN_API std::string FormatPlanSummary(const PreparedCase& prepared);

// The plan's notes: the workflow, derivation and routing decisions, then the executor's
// resolution notes (job_spec.json extra "resolution_notes"), one line each.
TRTLLM_RUN_API std::vector<std::string> PlanNotes(const PreparedCase& prepared);

class TRTLLM_RUN_API Runtime {
 public:
  // Builds a registry from the plugin search path. Plugins that fail to load are
  // listed in registry().problems(); that alone is not an error.
  static Result<std::unique_ptr<Runtime>> Create(const RuntimeOptions& options);

  // A runtime over a registry the caller filled (tests, embedding tools).
  explicit Runtime(std::unique_ptr<Registry> registry);
  ~Runtime();

  Registry& registry() { return *registry_; }

  // The catalog in use, or null. Set by Create(); SetCatalog() replaces it.
  const ClusterCatalog* catalog() const { return catalog_ ? &*catalog_ : nullptr; }
  void SetCatalog(std::optional<ClusterCatalog> catalog);

  // Classifies, plans, routes and validates. Touches nothing on disk. Every error is
  // kInvalidInput or kNotFound with what was wrong and what would be valid.
  Result<PlannedCase> Plan(const CaseRequest& request) const;

  // Plans, creates the work dir and lets the executor write job_spec.json and its
  // scripts. Starts nothing (`trtllm-run plan`). On error no work dir is left behind.
  Result<PreparedCase> Prepare(const CaseRequest& request) const;

  // Prepare() for a case Plan() returned (not planned again): creates the work dir and
  // lets the executor write into it. On error no work dir is left behind.
  Result<PreparedCase> PreparePlanned(const PlannedCase& planned) const;

  // While on, Plan() probes each Slurm cluster (scenario + host) once and reuses the
  // probe for later cases (`run --cases` plans many cases within seconds). Thread-safe.
  void SetProbeCache(bool enabled);

  // Executes a prepared case to a verdict and writes result.json. Never fails: problems
  // are a RunResult with status ERROR. Holds the work dir's lock (WorkDirLock, workdir.h)
  // while it runs; when another process holds it the result is ERROR naming the holder
  // and nothing in the work dir is touched (no result.json).
  RunResult Execute(const PreparedCase& prepared, const RunOptions& options) const;

  // Executes an existing work dir (prepared by `trtllm-run plan` or Prepare) from its
  // job_spec.json, as Execute does. A non-OK Status means nothing ran and nothing in the
  // work dir changed: kInvalidInput when job_spec.json is unreadable or invalid (naming
  // the file and what is wrong), when result.json already exists (the run is over), or
  // when another process holds the work dir's lock (naming it); kNotFound when the
  // directory does not exist.
  Result<RunResult> ExecuteWorkDir(const std::string& work_dir, const RunOptions& options) const;

  // Prepare, then Execute. A non-OK Status means nothing ran and no work dir is left.
  Result<RunResult> Run(const CaseRequest& request, const RunOptions& options) const;

 private:
  // Spec 000 Steps 2-2.5: routes the case and, for executors with the slurm trait,
  // probes the cluster (or reads request.slurm_env_file) and resolves the account and
  // partition; for remote ones, the remote paths.
  // The config's cluster section for the routed cluster replaces `config_notes` and
  // fields of planned->request that `given` lacks.
  Status Place(PlannedCase* planned, const ConfigLayers& config, const CaseRequest& given,
               std::vector<std::string>* config_notes) const;

  // The Slurm probe for `placement` (the cache's, when it has one), run on `local` or,
  // for a remote executor, over SSH to placement.ssh_host; `where` names the host.
  Result<SlurmEnv> ProbeFor(const CaseRequest& request, const Placement& placement, bool remote,
                            Scenario& local, std::string* where) const;

  std::unique_ptr<Registry> registry_;
  std::optional<ClusterCatalog> catalog_;
  bool read_config_files_ = false;  // Create() with read_config_files
  std::optional<ConfigFile> user_config_;
  struct ProbeCache;
  std::unique_ptr<ProbeCache> probe_cache_;  // null: every Plan() probes
};

}  // namespace trtllm_run

#endif  // TRTLLM_RUN_RUNTIME_H_
