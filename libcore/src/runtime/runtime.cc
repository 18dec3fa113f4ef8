#include "trtllm_run/runtime.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>

#include "model/dir_util.h"
#include "model/plugin_call.h"
#include "model/problems.h"
#include "os/ssh.h"
#include "placement/env_check.h"
#include "placement/route_context.h"
#include "placement/routing.h"
#include "placement/unused_fields.h"
#include "runtime/config_trust.h"
#include "runtime/execute_finish.h"
#include "slurm/probe/slurm_probe.h"
#include "slurm/submit/ssh_settings.h"
#include "supervise/diagnosis.h"
#include "trtllm_run/sdk/commands/test_list_line.h"
#include "trtllm_run/sdk/input_limits.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/user_config.h"
#include "trtllm_run/workdir.h"

namespace trtllm_run {

namespace fs = std::filesystem;

namespace {

// The repo root: the given directory, else the nearest ancestor of the cwd holding .git,
// else the cwd. Always absolute and normalized.
Result<std::string> ResolveRepoRoot(const CaseRequest& request) {
  std::error_code error;
  if (request.repo_root) {
    fs::path root = fs::absolute(*request.repo_root, error);
    if (error || !fs::is_directory(root, error)) {
      return Status::InvalidInput("repo_root '" + *request.repo_root + "' is not a directory",
                                  "give the TensorRT-LLM checkout with --repo-root DIR");
    }
    return fs::weakly_canonical(root, error).string();
  }
  fs::path cwd = fs::current_path(error);
  if (error) return Status::IoError("cannot read the current directory: " + error.message());
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return cwd.string();
}

// `error` naming the values the config files gave (they may be what is wrong).
Status WithConfigOrigins(const Status& error, const std::vector<std::string>& config_notes) {
  if (error.ok() || config_notes.empty()) return error;
  std::string message = error.message();
  for (const std::string& note : config_notes) message += "\n  " + note;
  return error.code() == StatusCode::kNotFound ? Status::NotFound(message, error.hint())
         : error.code() == StatusCode::kInvalidInput
             ? Status::InvalidInput(message, error.hint())
             : Status::ExecutionError(message, error.hint());
}

// The origin URL and branch of the checkout at `repo_root` (spec 000 Step 5 for
// remote_slurm); empty when it is not a git checkout or has no origin.
std::pair<std::string, std::string> GitOrigin(Scenario& local, const std::string& repo_root) {
  auto first_line = [](const Result<CommandOutput>& out) {
    if (!out.ok() || out->exit_code != 0) return std::string();
    std::string text = out->stdout_text;
    return text.substr(0, text.find('\n'));
  };
  return {first_line(local.Run({"git", "-C", repo_root, "remote", "get-url", "origin"}, "")),
          first_line(local.Run({"git", "-C", repo_root, "rev-parse", "--abbrev-ref", "HEAD"}, ""))};
}

// The SSH connection to a remote_slurm login node, built exactly as the remote_slurm
// executor builds it (SshOptionsForSpec), so the probe and the run authenticate alike.
Result<std::unique_ptr<Scenario>> MakeRemoteScenario(const CaseRequest& request,
                                                     const Placement& placement) {
  JobSpec connection;
  connection.work_dir = "(planning)";
  connection.ssh_host = placement.ssh_host;
  connection.slurm_user = placement.slurm_user;
  AddSshConnectionExtras(request, &connection);
  Result<SshOptions> options = SshOptionsForSpec(connection);
  if (!options.ok()) return options.status();
  if (request.slurm_password) options->password = *request.slurm_password;
  Result<std::unique_ptr<SshScenario>> ssh = MakeSshScenario(options.value());
  if (!ssh.ok()) return ssh.status();
  return std::unique_ptr<Scenario>(std::move(ssh.value()));
}

}  // namespace

Result<std::unique_ptr<Runtime>> Runtime::Create(const RuntimeOptions& options) {
  for (const std::string& dir : options.plugin_dirs) {
    std::error_code error;
    if (!fs::is_directory(dir, error)) {
      return Status::InvalidInput("plugin directory '" + dir + "' does not exist",
                                  "give an existing directory with --plugin-dir");
    }
  }
  auto registry = std::make_unique<Registry>();
  if (options.use_plugin_path_env) {
    std::vector<std::string> dirs = PluginSearchPath({}, options.load_builtin_plugins);
    for (const std::string& dir : dirs) registry->LoadDirectory(dir, /*missing_ok=*/false);
  } else if (options.load_builtin_plugins) {
    registry->LoadDirectory(BuiltinPluginDirectory(), /*missing_ok=*/false);
  }
  for (const std::string& dir : options.plugin_dirs) registry->LoadDirectory(dir);
  Result<std::optional<ClusterCatalog>> catalog = LoadDefaultClusterCatalog(options.catalog_path);
  if (!catalog.ok()) return catalog.status();
  auto runtime = std::make_unique<Runtime>(std::move(registry));
  runtime->SetCatalog(std::move(catalog.value()));
  if (options.read_config_files) {
    Result<std::optional<ConfigFile>> user_config =
        LoadConfigFile(UserConfigPath(), ConfigSource::kUser);
    if (!user_config.ok()) return user_config.status();
    runtime->user_config_ = std::move(user_config.value());
    runtime->read_config_files_ = true;
  }
  return runtime;
}

struct Runtime::ProbeCache {
  std::mutex mu;
  std::map<std::string, SlurmEnv> probes;  // by "<scenario> <where>"
};

Runtime::Runtime(std::unique_ptr<Registry> registry) : registry_(std::move(registry)) {}
Runtime::~Runtime() = default;

void Runtime::SetProbeCache(bool enabled) {
  if (!enabled) {
    probe_cache_.reset();
  } else if (!probe_cache_) {
    probe_cache_ = std::make_unique<ProbeCache>();
  }
}

void Runtime::SetCatalog(std::optional<ClusterCatalog> catalog) { catalog_ = std::move(catalog); }

namespace {

// Every loaded executor with its traits, for routing. One that cannot be created stays a
// candidate without traits: choosing it reports its plugin error.
std::vector<RoutingCandidate> RoutingCandidates(const Registry& registry) {
  std::vector<RoutingCandidate> candidates;
  for (const std::string& name : registry.ExecutorNames()) {
    RoutingCandidate candidate{name, {}, nullptr};
    Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor(name);
    if (executor.ok()) {
      candidate.traits = executor.value()->Traits();
      candidate.executor = executor.value();
    }
    candidates.push_back(std::move(candidate));
  }
  return candidates;
}

const ExecutorTraits* TraitsNamed(const std::vector<RoutingCandidate>& candidates,
                                  const std::string& name) {
  for (const RoutingCandidate& candidate : candidates) {
    if (candidate.name == name) return &candidate.traits;
  }
  return nullptr;
}

// --slurm-env-file: a saved probe instead of a live one.
Result<SlurmEnv> ReadSlurmEnvFile(const std::string& path) {
  Result<std::string> text = ReadFileLimited(path, kMaxRequestFileBytes, "slurm_env file");
  if (!text.ok()) {
    return Status::InvalidInput(text.status().message(), text.status().hint().empty()
                                                             ? "check --slurm-env-file"
                                                             : text.status().hint());
  }
  return SlurmEnvFromJson(text.value(), path);
}

}  // namespace

Result<SlurmEnv> Runtime::ProbeFor(const CaseRequest& request, const Placement& placement,
                                   bool remote_executor, Scenario& local,
                                   std::string* where_name) const {
  std::unique_ptr<Scenario> remote;
  if (remote_executor) {
    Result<std::unique_ptr<Scenario>> ssh = MakeRemoteScenario(request, placement);
    if (!ssh.ok()) return ssh.status();
    remote = std::move(ssh.value());
  }
  Scenario& where = remote ? *remote : local;
  *where_name = where.Name();
  const std::string cache_key = placement.scenario + " " + where.Name();
  std::unique_lock<std::mutex> cache_lock;
  if (probe_cache_) {
    cache_lock = std::unique_lock<std::mutex>(probe_cache_->mu);
    auto hit = probe_cache_->probes.find(cache_key);
    if (hit != probe_cache_->probes.end()) return hit->second;
  }
  Result<SlurmEnv> probed = ProbeSlurm(where, ProbeOptions{});
  if (!probed.ok()) return probed.status().WithContext("Slurm probe on " + where.Name());
  if (probe_cache_) probe_cache_->probes[cache_key] = probed.value();
  return probed;
}

Status Runtime::Place(PlannedCase* planned, const ConfigLayers& config, const CaseRequest& given,
                      std::vector<std::string>* config_notes) const {
  const CaseRequest& request = planned->request;
  const ClusterCatalog* catalog = this->catalog();
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  const std::vector<RoutingCandidate> executors = RoutingCandidates(*registry_);

  // The env check runs nvidia-smi, docker and scontrol: only when routing or the executor
  // needs this host's facts, so explicit --scenario runs (and planning) stay fast.
  EnvFacts env;
  const ExecutorTraits* named =
      request.scenario ? TraitsNamed(executors, *request.scenario) : nullptr;
  bool needs_env = !request.scenario || (named != nullptr && named->needs_env_check);
  if (needs_env) {
    Result<EnvFacts> checked = CheckEnvironment(*local, catalog);
    if (!checked.ok()) return checked.status().WithContext("env check");
    env = std::move(checked.value());
  }
  Result<Placement> routed = RouteAmong(request, planned->plan, env, catalog, executors);
  if (!routed.ok()) return routed.status();
  // The config's section for the cluster routing chose overrides its top-level values.
  std::string cluster =
      routed->cluster ? routed->cluster->name : request.slurm_cluster.value_or("");
  const ExecutorTraits* routed_traits = TraitsNamed(executors, routed->scenario);
  if (cluster.empty() && routed_traits != nullptr && routed_traits->slurm &&
      routed->ssh_host.empty() && config.HasAnyCluster()) {
    if (!needs_env) {  // this host's cluster, for its config section
      Result<EnvFacts> checked = CheckEnvironment(*local, catalog);
      if (checked.ok()) env = std::move(checked.value());
    }
    cluster = env.cluster_name.value_or("");
  }
  // A config's clusters: section that names no cluster known here is never applied: say so.
  std::vector<std::string> cluster_warnings;
  // Only when this host's cluster is known (the env check ran): else it could be it.
  for (const ConfigFile& file : needs_env ? config.files : std::vector<ConfigFile>{}) {
    for (const auto& [name, values] : file.clusters) {
      const bool known = (catalog != nullptr && catalog->FindByName(name) != nullptr) ||
                         (env.cluster_name && *env.cluster_name == name) || name == cluster;
      if (!known && !values.empty()) {
        cluster_warnings.push_back("warning: config " + values.front().origin + ": clusters: '" +
                                   name +
                                   "' names no cluster of the catalog or this host; its values are "
                                   "not applied (check the name against `trtllm-run env` or "
                                   "clusters.yaml)");
      }
    }
  }
  if (!cluster.empty() && config.HasCluster(cluster)) {
    config_notes->clear();
    Result<CaseRequest> applied = ApplyConfigLayers(config, cluster, given, config_notes);
    if (!applied.ok()) return applied.status();
    planned->request = std::move(applied.value());
    routed = RouteAmong(request, planned->plan, env, catalog, executors);
    if (!routed.ok()) return routed.status();
  }
  Placement& placement = routed.value();
  // Errors from here on name the route (WithRoute); the placement is complete only at the end.
  planned->placement.scenario = placement.scenario;
  planned->placement.notes = placement.notes;
  const ExecutorTraits traits = *TraitsNamed(executors, placement.scenario);
  TRTLLM_RUN_RETURN_IF_ERROR(UnusedFieldsError(given, placement.scenario, traits, executors));

  if (traits.slurm) {
    SlurmEnv slurm_env;
    if (request.slurm_env_file) {
      Result<SlurmEnv> parsed = ReadSlurmEnvFile(*request.slurm_env_file);
      if (!parsed.ok()) return parsed.status();
      slurm_env = std::move(parsed.value());
      placement.notes.push_back("slurm_env: read from " + *request.slurm_env_file + " (no probe)");
    } else {
      std::string where;
      Result<SlurmEnv> probed = ProbeFor(request, placement, traits.remote, *local, &where);
      if (!probed.ok()) return probed.status();
      slurm_env = std::move(probed.value());
      for (const std::string& error : slurm_env.errors) {
        if (error == kSlurmToolsNotFound) {
          return Status::InvalidInput(
              placement.scenario + ": the Slurm client tools were not found on " + where,
              "run where sinfo/sbatch are on PATH, or pick another --scenario");
        }
      }
      placement.notes.push_back("slurm probe on " + where + ": " +
                                std::to_string(slurm_env.partitions.size()) + " partitions, " +
                                std::to_string(slurm_env.accounts.size()) + " accounts");
    }
    const ClusterEntry* entry = placement.cluster ? &*placement.cluster : nullptr;
    if (!slurm_env.policy_merged) {  // a saved slurm_env.json may carry them already
      MergePolicyFields(entry, request, traits.remote, &slurm_env);
    }
    TRTLLM_RUN_RETURN_IF_ERROR(ResolveAccountPartition(request, slurm_env, entry, &placement));
    // A value from a config file is credited to it, not to the flag (its "config:" note
    // names the file and line).
    for (std::string& note : placement.notes) {
      for (const char* field : {"partition", "account"}) {
        const std::string flag = std::string("(--") + field;
        const std::size_t at = note.find(flag);
        const bool from_flag = field == std::string("partition") ? given.partition.has_value()
                                                                 : given.account.has_value();
        if (!from_flag && note.rfind(std::string(field) + " ", 0) == 0 && at != std::string::npos) {
          note.replace(at, flag.size(), std::string("(") + field + " from a config file");
        }
      }
    }
  }
  if (traits.remote) {
    std::pair<std::string, std::string> origin = GitOrigin(*local, planned->plan.repo_root);
    if (!planned->request.repo_url && !origin.first.empty())
      planned->request.repo_url = origin.first;
    if (!planned->request.repo_branch && !origin.second.empty()) {
      planned->request.repo_branch = origin.second;
    }
    TRTLLM_RUN_RETURN_IF_ERROR(ResolveRemotePaths(
        planned->request, planned->request.repo_url.value_or(""), planned->work_dir, &placement));
  }
  if (traits.slurm && planned->plan.launch.after_placement) {
    // The workflow's decision that needs the partition, made once per case: Validate and
    // Prepare get the plan as the hook left it (and no hook).
    SlurmJobOptions options;
    options.executor = placement.scenario;
    options.remote = traits.remote;
    TRTLLM_RUN_RETURN_IF_ERROR(
        GuardPluginCall(WorkflowLabel(planned->plan.workflow_type), "after_placement", [&] {
          return ApplyAfterPlacementHook(planned->request, placement, options, &planned->plan,
                                         &placement.notes);
        }));
  }
  placement.notes.insert(placement.notes.end(), cluster_warnings.begin(), cluster_warnings.end());
  planned->placement = std::move(placement);
  return Status::Ok();
}

Result<PlannedCase> Runtime::Plan(const CaseRequest& request) const {
  TRTLLM_RUN_RETURN_IF_ERROR(ValidateRequestValues(request));
  // The checks below do not depend on each other: all their problems are reported at once.
  ProblemList problems;
  Result<CommandKind> kind = ClassifyCommand(request);
  problems.Add(kind.status());
  if (kind.ok() && kind.value() == CommandKind::kNone) {
    problems.Add(Status::InvalidInput(
        "no command given",
        "give one of --test-cmd, --bench-cmd, --eval-cmd, --custom-cmd or --custom-script "
        "(or the same keys in a --request file)"));
  }
  PlannedCase planned;
  planned.request = request;
  Result<std::string> repo_root = ResolveRepoRoot(request);
  problems.Add(repo_root.status());
  ConfigLayers config;
  std::vector<std::string> config_notes;
  if (repo_root.ok()) planned.request.repo_root = repo_root.value();
  const CaseRequest given = planned.request;  // before the config's values
  if (repo_root.ok()) {
    if (read_config_files_) {
      Result<std::optional<ConfigFile>> repo_config =
          LoadConfigFile(RepoConfigPath(repo_root.value()), ConfigSource::kRepo);
      if (problems.Add(repo_config.status()) && repo_config.value()) {
        config.files.push_back(std::move(*repo_config.value()));
      }
      if (user_config_) config.files.push_back(*user_config_);
      Result<CaseRequest> applied = ApplyConfigLayers(config, "", planned.request, &config_notes);
      if (problems.Add(applied.status())) planned.request = std::move(applied.value());
    }
  }
  Result<int> timeout =
      ParseDurationSeconds(planned.request.monitor_timeout.value_or("3600"), "monitor_timeout");
  problems.Add(timeout.status());
  int max_pending = 0;
  if (planned.request.max_pending) {
    Result<int> parsed = ParseDurationSeconds(*planned.request.max_pending, "max_pending");
    if (problems.Add(parsed.status())) max_pending = parsed.value();
  }
  int silence_timeout = 0;  // off unless asked for
  if (planned.request.silence_timeout) {
    Result<int> parsed = ParseDurationSeconds(*planned.request.silence_timeout,
                                              "silence_timeout (--silence-timeout)");
    if (problems.Add(parsed.status())) silence_timeout = parsed.value();
  }
  if (!problems.empty()) return problems.ToStatus("in this case");

  std::shared_ptr<Workflow> workflow;
  std::string workflow_name;
  std::vector<std::string> workflow_names;
  for (std::shared_ptr<Workflow>& candidate : registry_->CreateWorkflows()) {
    Result<std::string> name =
        GuardPluginCall("a workflow plugin", "Name()", [&] { return candidate->Name(); });
    if (!name.ok()) return name.status();
    workflow_names.push_back(name.value());
    if (workflow) continue;
    Result<bool> claims = GuardPluginCall(WorkflowLabel(name.value()), "Claims()",
                                          [&] { return candidate->Claims(planned.request); });
    if (!claims.ok()) return claims.status();
    if (claims.value()) {
      workflow = candidate;
      workflow_name = name.value();
    }
  }
  if (!workflow) {
    static const char* const kKindField[] = {"", "custom_cmd", "bench_cmd", "eval_cmd", "test_cmd"};
    return Status::NotFound(
        std::string("no workflow plugin handles ") + kKindField[static_cast<int>(kind.value())],
        "loaded workflows: " + (workflow_names.empty() ? "(none)" : Join(workflow_names, ", ")) +
            "; run 'trtllm-run plugins' to see which plugins failed to load");
  }
  Result<JobPlan> plan = GuardPluginCall(WorkflowLabel(workflow_name), "Plan()",
                                         [&] { return workflow->Plan(planned.request); });
  if (!plan.ok()) return plan.status();
  planned.plan = std::move(plan.value());
  planned.plan.repo_root = repo_root.value();
  // Given (flag, request or config file): it bounds the job. Else the workflow's own
  // limit (JobPlan's default 3600 s, or one derived from the test's, as pytest's is).
  if (planned.request.monitor_timeout) planned.plan.monitor_timeout_seconds = timeout.value();
  planned.plan.max_pending_seconds = max_pending;
  planned.plan.silence_timeout_seconds = silence_timeout;
  planned.notes.push_back("workflow " + workflow_name + ": claimed the request (registry order)");
  planned.notes.insert(planned.notes.end(), planned.plan.notes.begin(), planned.plan.notes.end());

  planned.work_dir = (fs::path(repo_root.value()) / "work_dirs" /
                      (planned.plan.model_name + "_" + LocalTimestamp()))
                         .string();
  const std::vector<std::string> executors = registry_->ExecutorNames();
  Status placed = Place(&planned, config, given, &config_notes);
  if (!placed.ok()) {
    return WithConfigOrigins(WithRoute(placed, planned.request, planned.placement, executors),
                             config_notes);
  }
  planned.scenario = planned.placement.scenario;
  planned.notes.insert(planned.notes.end(), config_notes.begin(), config_notes.end());
  planned.notes.insert(planned.notes.end(), planned.placement.notes.begin(),
                       planned.placement.notes.end());
  Result<std::shared_ptr<Executor>> executor = registry_->CreateExecutor(planned.scenario);
  if (!executor.ok()) return executor.status();
  Status valid = GuardPluginCall(ExecutorLabel(planned.scenario), "CheckExecutorOptions()", [&] {
    return executor.value()->CheckExecutorOptions(
        planned.request.executor_options.value_or(ExecutorOptions()));
  });
  if (valid.ok()) {
    valid = GuardPluginCall(ExecutorLabel(planned.scenario), "Validate()", [&] {
      return executor.value()->Validate(planned.request, planned.plan, planned.placement);
    });
  }
  if (!valid.ok()) {
    return WithConfigOrigins(WithRoute(valid, planned.request, planned.placement, executors),
                             config_notes);
  }
  return planned;
}

Result<PreparedCase> Runtime::Prepare(const CaseRequest& request) const {
  Result<PlannedCase> planned = Plan(request);
  if (!planned.ok()) return planned.status();
  return PreparePlanned(planned.value());
}

namespace {

constexpr char kListMarkerKey[] = "list_marker";
constexpr char kListMarkerReasonKey[] = "list_marker_reason";

// A test-list line's SKIP / XFAIL / UNSTABLE (test_list_line.h) in job_spec.json's extra,
// so that a work dir run later (`run <work dir>`) honours it too.
void RecordListMarker(const CaseRequest& request, JobSpec* spec) {
  if (!request.test_cmd) return;
  Result<std::optional<TestListLine>> line = ParseTestListLine(*request.test_cmd);
  if (!line.ok() || !line.value() || line.value()->marker == ListMarker::kNone) return;
  spec->extra[kListMarkerKey] = ListMarkerName(line.value()->marker);
  spec->extra[kListMarkerReasonKey] = line.value()->reason;
}

std::string ExtraOf(const JobSpec& spec, const char* key) {
  auto found = spec.extra.find(key);
  return found == spec.extra.end() ? "" : found->second;
}

// XFAIL / UNSTABLE: recorded with the verdict (details, a note), which stays as it was.
void ApplyListMarker(const JobSpec& spec, RunResult* result) {
  const std::string marker = ExtraOf(spec, kListMarkerKey);
  if (marker != "XFAIL" && marker != "UNSTABLE") return;
  const std::string reason = ExtraOf(spec, kListMarkerReasonKey);
  result->details[kListMarkerKey] = marker;
  result->details[kListMarkerReasonKey] = reason;
  result->notes.push_back(marker + (reason.empty() ? "" : " (" + reason + ")") +
                          " in the test list: " +
                          (result->status == RunStatus::kPassed
                               ? std::string("it passed")
                               : std::string("it is ") + RunStatusName(result->status) +
                                     (result->status == RunStatus::kFailed
                                          ? ", as the list allows (a multi-case run does not "
                                            "count it as a failure)"
                                          : "")));
}

}  // namespace

Result<PreparedCase> Runtime::PreparePlanned(const PlannedCase& planned_case) const {
  PlannedCase planned = planned_case;
  Result<std::shared_ptr<Executor>> executor = registry_->CreateExecutor(planned.scenario);
  if (!executor.ok()) return executor.status();

  // work_dirs/ itself is made here when it does not exist yet: a failed Prepare removes it
  // again when it is left empty, so no empty work_dirs/ stays behind.
  std::error_code exists_error;
  const fs::path parent = fs::path(planned.work_dir).parent_path();
  const bool parent_existed = parent.empty() || fs::exists(parent, exists_error);
  Result<std::string> work_dir = CreateUniqueDir(planned.work_dir, "work dir");
  if (!work_dir.ok()) return work_dir.status();
  PreparedCase prepared;
  prepared.planned = std::move(planned);
  prepared.planned.work_dir = work_dir.value();
  Placement& placement = prepared.planned.placement;
  if (!placement.remote_work_dir.empty()) {  // follow a _2 suffix CreateUniqueDir added
    placement.remote_work_dir =
        (fs::path(placement.remote_work_dir).parent_path() / fs::path(work_dir.value()).filename())
            .string();
  }
  JobSpec& spec = prepared.spec;
  spec.scenario = prepared.planned.scenario;
  spec.work_dir = work_dir.value();
  spec.log_file =
      (fs::path(spec.work_dir) / (prepared.planned.plan.model_name + "_local.log")).string();
  // The plan's device counts unless the executor places the job otherwise.
  const JobPlan& plan = prepared.planned.plan;
  spec.required_devices = plan.required_devices;
  spec.total_required_devices = plan.total_required_devices;
  spec.required_devices_per_node = plan.required_devices_per_node;
  spec.node_count = plan.node_count;
  spec.executor_options = prepared.planned.request.executor_options.value_or(ExecutorOptions());
  RecordListMarker(prepared.planned.request, &spec);
  Status status = GuardPluginCall(ExecutorLabel(spec.scenario), "Prepare()", [&] {
    return executor.value()->Prepare(prepared.planned.request, prepared.planned.plan,
                                     prepared.planned.placement, &spec);
  });
  if (!status.ok()) {
    std::error_code ignored;
    fs::remove_all(spec.work_dir, ignored);            // nothing half-written is left behind
    if (!parent_existed) fs::remove(parent, ignored);  // only when empty
    return status;
  }
  return prepared;
}

namespace {

// The last `max_bytes` of the log at `path`, starting at a line boundary; "" when it
// cannot be read (ReadSlice: regular files only, never blocking).
std::string LogTail(const std::string& path, std::size_t max_bytes) {
  std::string text;
  std::uint64_t size = 0;
  if (path.empty() ||
      !ReadSlice(path, -static_cast<long long>(max_bytes), max_bytes, &text, &size)) {
    return "";
  }
  if (size > max_bytes) {
    std::size_t newline = text.find('\n');
    text.erase(0, newline == std::string::npos ? text.size() : newline + 1);
  }
  return text;
}

// The workflow that planned the job refines the executor's verdict from the job's log.
// `command` is the plan's: job specs of batch executors name only their script.
void JudgeWithWorkflow(const Registry& registry, const JobSpec& spec, const std::string& command,
                       RunResult* result) {
  for (const std::shared_ptr<Workflow>& workflow : registry.CreateWorkflows()) {
    Result<std::string> name =
        GuardPluginCall("a workflow plugin", "Name()", [&] { return workflow->Name(); });
    if (!name.ok()) {
      result->errors.push_back(name.status().ToString());
      continue;
    }
    if (name.value() != spec.workflow_type) continue;
    JobSpec judged = spec;
    if (judged.direct_cmd.empty()) judged.direct_cmd = command;
    // A Judge() that throws leaves the executor's verdict as it was, with the error.
    RunResult unjudged = *result;
    Status judged_ok = GuardPluginCall(WorkflowLabel(name.value()), "Judge()", [&] {
      workflow->Judge(judged, LogTail(result->log_file, Workflow::kJudgeLogBytes), result);
    });
    if (!judged_ok.ok()) {
      *result = std::move(unjudged);
      result->errors.push_back(judged_ok.ToString());
    }
    return;
  }
}

// Execute() once the work dir's lock is held.
RunResult ExecuteLocked(Registry& registry, const PreparedCase& prepared,
                        const RunOptions& options) {
  const PlannedCase& planned = prepared.planned;
  const JobSpec& spec = prepared.spec;
  RunResult result;
  Result<std::shared_ptr<Executor>> executor = registry.CreateExecutor(spec.scenario);
  if (options.progress) *options.progress << "trtllm-run: work dir " << spec.work_dir << "\n";
  const bool list_skip = ExtraOf(spec, kListMarkerKey) == "SKIP";
  if (!executor.ok()) {
    result.status = RunStatus::kError;
    result.reason = executor.status().ToString();
    result.errors.push_back(result.reason);
  } else if (list_skip) {
    // TensorRT-LLM's SKIP (waives.txt): the test is not run at all.
    const std::string reason = ExtraOf(spec, kListMarkerReasonKey);
    result.status = RunStatus::kSkipped;
    result.reason = "SKIP in the test list" + (reason.empty() ? "" : " (" + reason + ")") +
                    ": the test was not run";
    result.details[kListMarkerKey] = "SKIP";
    result.details[kListMarkerReasonKey] = reason;
    const std::string now = NowIso8601();
    result.started_at = now;
    result.finished_at = now;
  } else if (options.cancel && options.cancel->cancelled()) {
    result.status = RunStatus::kCancelled;
    result.reason = "cancelled before the job started";
    result.user_interrupt = options.cancel->signal() == SIGINT;
  } else {
    std::unique_ptr<Scenario> scenario = MakeLocalScenario();
    CancellationToken own_token;
    ExecContext context;
    context.scenario = scenario.get();
    context.cancel = options.cancel ? options.cancel : &own_token;
    context.terminal = options.terminal;
    context.progress = options.progress;
    context.kill_grace_seconds = options.kill_grace_seconds;
    context.slurm_password = planned.request.slurm_password;  // in memory only
    context.job_ending = options.job_ending;
    Result<RunResult> executed = GuardPluginCall(ExecutorLabel(spec.scenario), "Execute()", [&] {
      return options.session ? options.session->Execute(spec, context)
                             : executor.value()->Execute(spec, context);
    });
    result = executed.ok() ? std::move(executed.value()) : ErrorRunResult(executed.status());
  }
  return FinishExecuted(registry, prepared, std::move(result), options);
}

}  // namespace

RunResult FinishExecuted(const Registry& registry, const PreparedCase& prepared, RunResult result,
                         const RunOptions& options) {
  const PlannedCase& planned = prepared.planned;
  const JobSpec& spec = prepared.spec;
  const bool list_skip = ExtraOf(spec, kListMarkerKey) == "SKIP";
  if (result.work_dir.empty()) result.work_dir = spec.work_dir;
  if (result.scenario.empty()) result.scenario = spec.scenario;
  if (result.workflow_type.empty()) result.workflow_type = planned.plan.workflow_type;
  if (result.model_name.empty()) result.model_name = planned.plan.model_name;
  if (result.command.empty()) result.command = planned.plan.command;
  if (result.log_file.empty()) result.log_file = spec.log_file;
  if (result.monitor_timeout_seconds == 0) {
    result.monitor_timeout_seconds = planned.plan.monitor_timeout_seconds;
  }
  result.notes.insert(result.notes.begin(), planned.notes.begin(), planned.notes.end());
  if (!list_skip) JudgeWithWorkflow(registry, spec, planned.plan.command, &result);
  ApplyListMarker(spec, &result);
  Diagnose(&result, spec);  // spec 000 "Failure Diagnosis", the same for every executor
  if (options.finalize && !list_skip) options.finalize(&result);

  Status written = WriteResult(result);
  if (!written.ok()) result.errors.push_back(written.ToString());
  return result;
}

RunResult Runtime::Execute(const PreparedCase& prepared, const RunOptions& options) const {
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(prepared.spec.work_dir);
  if (!lock.ok()) {  // another run owns the work dir: report, but write nothing there
    RunResult result;
    result.status = RunStatus::kError;
    result.reason = lock.status().ToString();
    result.errors.push_back(result.reason);
    result.work_dir = prepared.spec.work_dir;
    result.scenario = prepared.spec.scenario;
    result.workflow_type = prepared.planned.plan.workflow_type;
    result.model_name = prepared.planned.plan.model_name;
    return result;
  }
  return ExecuteLocked(*registry_, prepared, options);
}

Result<RunResult> Runtime::ExecuteWorkDir(const std::string& dir, const RunOptions& options) const {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return Status::NotFound("work dir '" + dir + "' does not exist",
                            "give a directory made by `trtllm-run plan`");
  }
  std::string work_dir = fs::absolute(dir, error).lexically_normal().string();
  while (work_dir.size() > 1 && work_dir.back() == '/') work_dir.pop_back();
  Result<JobSpec> spec = ReadJobSpec(work_dir);
  if (!spec.ok()) {
    return Status::InvalidInput(spec.status().message(),
                                spec.status().hint().empty()
                                    ? "prepare the case again with `trtllm-run plan`"
                                    : spec.status().hint());
  }
  if (!fs::equivalent(spec->work_dir, work_dir, error)) {
    return Status::InvalidInput(
        work_dir + "/job_spec.json: work_dir is '" + spec->work_dir +
            "', not this directory (was the work dir moved or copied?)",
        "its scripts name that path; prepare the case again with `trtllm-run plan`");
  }
  // Checked under the lock (a run that held it may have just finished), which records
  // this process only once the run goes ahead: a refusal leaves the work dir as it was.
  auto ran_before = [&]() -> Status {
    std::string result_path = (fs::path(work_dir) / "result.json").string();
    if (fs::exists(result_path, error)) {
      return Status::InvalidInput(
          "work dir " + work_dir + " already ran: " + result_path + " exists; it is not run again",
          "`trtllm-run status " + work_dir +
              "` shows its verdict; `trtllm-run plan` prepares a new one");
    }
    if (fs::exists(RunStatePath(work_dir), error)) {
      return Status::InvalidInput(
          "work dir " + work_dir + " was started before (" + RunStatePath(work_dir) +
              " exists) and its run ended without a verdict; it is not run again",
          "`trtllm-run status " + work_dir + "` shows what is left, `trtllm-run cancel " +
              work_dir + "` stops it; `trtllm-run plan` prepares a new one");
    }
    return Status::Ok();
  };
  // A finished work dir (perhaps from before work dirs had a lock file) is refused
  // without creating one; a running one is refused by the lock, naming its holder.
  if (fs::exists(fs::path(work_dir) / "result.json", error)) {
    TRTLLM_RUN_RETURN_IF_ERROR(ran_before());
  }
  Result<std::unique_ptr<WorkDirLock>> lock =
      WorkDirLock::Acquire(work_dir, /*record_holder=*/false);
  if (!lock.ok()) return lock.status();
  TRTLLM_RUN_RETURN_IF_ERROR(ran_before());
  lock.value()->RecordHolder();
  PreparedCase prepared;
  prepared.spec = std::move(spec.value());
  PlannedCase& planned = prepared.planned;
  planned.scenario = prepared.spec.scenario;
  planned.work_dir = work_dir;
  planned.plan.workflow_type = prepared.spec.workflow_type;
  planned.plan.model_name = prepared.spec.model_name;
  planned.plan.command = prepared.spec.direct_cmd;
  planned.plan.monitor_timeout_seconds = prepared.spec.monitor_timeout_seconds;
  planned.plan.max_pending_seconds = prepared.spec.max_pending_seconds;
  planned.plan.silence_timeout_seconds = prepared.spec.silence_timeout_seconds;
  planned.plan.repo_root = prepared.spec.repo_root;
  planned.notes.push_back("ran the work dir prepared earlier (" + work_dir + "/job_spec.json)");
  return ExecuteLocked(*registry_, prepared, options);
}

Result<RunResult> Runtime::Run(const CaseRequest& request, const RunOptions& options) const {
  Result<PreparedCase> prepared = Prepare(request);
  if (!prepared.ok()) return prepared.status();
  return Execute(prepared.value(), options);
}

}  // namespace trtllm_run
