// Slurm jobs: the batch script of Categories 2, 3, 5 and 6, the submit.py call of
// Category 4, and the resolution shared by the local_slurm and remote_slurm executors.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "slurm/probe/slurm_probe.h"
#include "slurm/render/perf_submit.h"
#include "slurm/render/slurm_resolve.h"
#include "slurm/render/slurm_sizing.h"
#include "trtllm_run/sdk/scenario.h"
#include "trtllm_run/sdk/slurm/records.h"
#include "trtllm_run/sdk/slurm/render.h"
#include "trtllm_run/sdk/text.h"
#include "trtllm_run/version.h"

namespace trtllm_run {
namespace {

namespace fs = std::filesystem;

// A value on an #SBATCH line: sbatch splits on blanks, so values with blanks are quoted.
std::string SbatchValue(const std::string& value) {
  return value.find_first_of(" \t") == std::string::npos ? value : "\"" + value + "\"";
}

std::string Flag(const std::string& name, const std::string& value) {
  return ShellQuote("--" + name + "=" + value);
}

std::string BaseName(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  size_t slash = trimmed.find_last_of('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

// The bash -c payload of a step (everything but a run step that runs a run script).
std::string StepPayload(const SlurmScriptInputs& in, const PlanStep& step) {
  std::string payload;
  if (step.name == "install") {
    return "cd " + ShellQuote(in.project_path) + " || exit 1\n" + step.command;
  }
  if (step.name == "run" && in.run_shows_gpus)
    payload += "if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi; fi\n";
  if (!step.use_mpi) {
    payload += MpiCleanupSnippet(in.keep_env);
  }
  if (!in.llm_models_root.empty()) {
    payload += "export LLM_MODELS_ROOT=" + ShellQuote(in.llm_models_root) + "\n";
  }
  payload += "cd " + ShellQuote(in.project_path) + " || exit 1\n";
  if (step.name == "run" && !in.run_working_dir.empty()) {
    payload += "cd " + ShellQuote(in.run_working_dir) + " || exit 1\n";
  }
  payload += step.command;
  return payload;
}

// The srun command of a step, one option per element.
std::vector<std::string> StepSrun(const SlurmScriptInputs& in, const PlanStep& step) {
  const SlurmParams& p = in.params;
  std::vector<std::string> argv = {"srun", "-l"};
  if (step.name == "install") {
    // One task per node: every node's container gets the install.
    argv.push_back(Flag("nodes", std::to_string(p.nodes)));
    argv.push_back(Flag("ntasks", std::to_string(p.nodes)));
    argv.push_back(Flag("ntasks-per-node", "1"));
  } else {
    int tasks = std::max(1, step.tasks);
    int nodes = std::max(1, std::min(p.nodes, tasks));
    argv.push_back(Flag("nodes", std::to_string(nodes)));
    argv.push_back(Flag("ntasks", std::to_string(tasks)));
    if (tasks % nodes == 0) argv.push_back(Flag("ntasks-per-node", std::to_string(tasks / nodes)));
  }
  const bool run_script = !in.run_script.empty();
  std::string workdir =
      run_script && !in.custom_workdir.empty() ? in.custom_workdir : in.project_path;
  if (in.container_runtime == "none") {
    argv.push_back(Flag("chdir", workdir));
  } else {
    argv.push_back(Flag("container-image", in.container_image));
    argv.push_back(Flag("container-name", in.container_name));
    if (!in.container_mounts.empty()) argv.push_back(Flag("container-mounts", in.container_mounts));
    argv.push_back(Flag("container-workdir", workdir));
  }
  argv.push_back("--kill-on-bad-exit=1");
  if (step.use_mpi) argv.push_back(Flag("mpi", p.mpi_plugin.empty() ? "pmix" : p.mpi_plugin));
  if (run_script && step.name == "run") {
    argv.push_back("bash");
    argv.push_back(ShellQuote(in.run_script));
  } else {
    argv.push_back("bash");
    argv.push_back("-c");
    argv.push_back(ShellQuote(StepPayload(in, step)));
  }
  return argv;
}

}  // namespace

std::string RenderSlurmBatchScript(const SlurmScriptInputs& in) {
  const SlurmParams& p = in.params;
  const std::string& kind = in.job_kind;
  // sbatch expands %j, %x, %u, ... in --output/--error: a literal % of the directory is %%.
  std::string log_dir;
  for (char c : in.log_dir) log_dir += c == '%' ? std::string("%%") : std::string(1, c);
  const std::string log_base = log_dir + "/" + in.model_name + "_" + kind + "_%j";
  std::ostringstream s;
  s << "#!/bin/bash\n";
  s << "#SBATCH --job-name=" << SbatchValue(in.job_name) << "\n";
  s << "#SBATCH --output=" << SbatchValue(log_base + ".out") << "\n";
  s << "#SBATCH --error=" << SbatchValue(log_base + ".err") << "\n";
  s << "#SBATCH --nodes=" << p.nodes << "\n";
  s << "#SBATCH --ntasks=" << p.ntasks << "\n";
  s << "#SBATCH --ntasks-per-node=" << p.ntasks_per_node << "\n";
  if (!p.gres.empty()) s << "#SBATCH --gres=" << p.gres << "\n";
  s << "#SBATCH --time=" << SbatchValue(p.time_limit) << "\n";
  s << "#SBATCH --partition=" << SbatchValue(p.partition) << "\n";
  if (!p.account.empty()) s << "#SBATCH --account=" << SbatchValue(p.account) << "\n";
  s << "\n# Generated by trtllm-run " << Version() << ": " << in.workflow_type << " job for "
    << in.model_name << ", container runtime " << in.container_runtime << ".\n"
    << "# The steps run in order; once one fails the rest are skipped and the job exits with\n"
    << "# the failed step's exit code. No errexit: the final line always runs.\n"
    << "set -uo pipefail\n\n";
  s << "echo \"[trtllm-run] job ${SLURM_JOB_ID:-?} on $(hostname) started "
       "$(date -u +%Y-%m-%dT%H:%M:%SZ)\"\n";
  s << "echo \"[trtllm-run] nodes ${SLURM_JOB_NUM_NODES:-?} tasks ${SLURM_NTASKS:-?}\"\n\n";
  if (!in.run_script.empty()) {
    s << "# Read by " << in.run_script.substr(in.run_script.find_last_of('/') + 1)
      << " inside the job.\n";
    s << "export CUSTOM_COMMAND=" << ShellQuote(in.custom_command) << "\n";
    s << "export CUSTOM_ENV=" << ShellQuote(in.custom_env) << "\n";
    s << "export CUSTOM_WORKDIR=" << ShellQuote(in.custom_workdir) << "\n";
    s << "export llmSrcNode=" << ShellQuote(in.project_path) << "\n";
    if (!in.llm_models_root.empty()) {
      s << "export LLM_MODELS_ROOT=" << ShellQuote(in.llm_models_root) << "\n";
    }
    s << "\n";
  }
  s << "exit_code=0\n"
    << "run_step() {\n"
    << "  local name=$1\n"
    << "  shift\n"
    << "  if [ \"$exit_code\" -ne 0 ]; then\n"
    << "    echo \"[trtllm-run] step ${name}: skipped (an earlier step failed)\"\n"
    << "    return 0\n"
    << "  fi\n"
    << "  echo \"[trtllm-run] step ${name}: started\"\n"
    << "  \"$@\"\n"
    << "  exit_code=$?\n"
    << "  echo \"[trtllm-run] step ${name}: exit code ${exit_code}\"\n"
    << "}\n\n";
  for (const PlanStep& step : in.steps) {
    std::vector<std::string> argv = StepSrun(in, step);
    s << "run_step " << ShellQuote(step.name);
    // Options on continuation lines for people; the payload last.
    for (size_t i = 0; i < argv.size(); ++i) {
      bool option = argv[i].rfind("--", 0) == 0 || argv[i].rfind("'--", 0) == 0;
      bool payload_start = argv[i] == "bash" && i > 0;
      s << ((option || payload_start) && i >= 2 ? " \\\n    " : " ") << argv[i];
    }
    s << "\n";
  }
  // The end marker: a whole line with a token the steps are not given (slurm_records.h).
  const std::string token = in.end_marker_token.empty() ? NewEndMarkerToken() : in.end_marker_token;
  s << "\n"
    << EndMarkerEcho(token) << "\n"
    << "exit \"$exit_code\"\n";
  return s.str();
}

std::vector<std::string> PerfSubmitArgv(const PerfSubmitInputs& in) {
  std::vector<std::string> argv = {in.python, in.submit_py};
  if (!in.test_list.empty()) {
    argv.insert(argv.end(), {"--test-list", in.test_list});
  } else {
    argv.insert(argv.end(), {"--config-file", in.config_file});
    if (!in.test_name.empty()) argv.insert(argv.end(), {"--test-name", in.test_name});
    if (!in.benchmark_mode.empty()) {
      argv.insert(argv.end(), {"--benchmark-mode", in.benchmark_mode});
    }
  }
  argv.insert(argv.end(),
              {"--partition",      in.partition,  "--account",  in.account, "--job-name",
               in.job_name,        "--image",     in.image,     "--mounts", in.mounts,
               "--work-dir",       in.work_dir,   "--llm-src",  in.llm_src, "--llm-models-root",
               in.llm_models_root, "--launch-sh", in.launch_sh, "--time",   in.time_limit});
  return argv;
}

// ---- Slurm jobs for the local_slurm and remote_slurm executors ----

namespace {

using internal::ResolvedSlurmJob;

// The job's steps as rendered: the plan's, with the remote host script path.
std::vector<PlanStep> JobSteps(const ResolvedSlurmJob& job) {
  std::vector<PlanStep> steps = job.plan.steps;
  for (PlanStep& step : steps) {
    if (step.name == "run" && !job.custom_script_remote.empty()) step.command = job.command;
  }
  return steps;
}

std::string CustomEnvText(const std::vector<EnvVar>& env) {
  std::string text;
  for (const EnvVar& var : env) {
    text += (text.empty() ? "" : " ") + var.name + "=" + ShellQuote(var.value);
  }
  return text;
}

Status WriteExecutable(const std::string& path, const std::string& text) {
  TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(path, text));
  if (::chmod(path.c_str(), 0755) != 0) {
    return Status::IoError("cannot make " + path + " executable");
  }
  return Status::Ok();
}

std::string GitOutput(const std::string& repo_root, const std::vector<std::string>& args) {
  std::unique_ptr<Scenario> local = MakeLocalScenario();
  std::vector<std::string> argv = {"git", "-C", repo_root};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandOutput> out = local->Run(argv, "");
  if (!out.ok() || out->exit_code != 0) return "";
  std::string text = out->stdout_text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Runs submit.py (Category 4) against the job's slurm_env; it writes the launch script,
// which must ask for what the plan does.
Status RunPerfSubmitFor(const PerfSubmitInputs& submit, ResolvedSlurmJob* job) {
  Result<int> timeout = internal::SubmitTimeoutSeconds();
  if (!timeout.ok()) return timeout.status();
  internal::PerfSubmitTarget target;
  target.params = job->params;
  target.partition = job->partitions.front();  // a list: its first member
  return internal::RunPerfSubmit(submit, job->env, target, timeout.value(), &job->notes);
}

// Every value that reaches a line of the batch script or submit.py's launch script, from
// whatever source (flags, request files, slurm_env.json, clusters.yaml): a control
// character would end the line and start a new one.
Status CheckScriptValues(const ResolvedSlurmJob& job) {
  const std::pair<const char*, const std::string*> values[] = {
      {"partition", &job.params.partition},
      {"account", &job.params.account},
      {"time_limit", &job.params.time_limit},
      {"gres", &job.params.gres},
      {"mpi plugin (slurm_env pmix.preferred)", &job.params.mpi_plugin},
      {"job name", &job.job_name},
      {"container image", &job.job_image},
      {"container name", &job.container_name},
      {"llm_models_root", &job.llm_models_root},
      {"LLM_MODELS_ROOT", &job.models_root_export},
      {"the project path", &job.project},
      {"the log directory", &job.log_dir},
      {"remote_repo_path", &job.remote_repo_path},
      {"remote_work_dir", &job.remote_work_dir},
      {"remote_cwd", &job.remote_cwd},
  };
  for (const auto& [what, value] : values) {
    for (char c : *value) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F) {
        return Status::InvalidInput(
            std::string(what) + " '" + EscapeControl(*value) +
                "' holds a control character (from the request, slurm_env.json or clusters.yaml)",
            "a value on a job script line cannot carry newlines or other control characters");
      }
    }
  }
  for (const std::string& entry : job.mounts.entries) {
    if (entry.find_first_of("\r\n") != std::string::npos) {
      return Status::InvalidInput("mount '" + EscapeControl(entry) + "' holds a line break");
    }
  }
  if (!job.job_image.empty() && job.job_image[0] == '-') {
    return Status::InvalidInput("container image '" + job.job_image + "' starts with '-'",
                                "give an image reference such as registry/name:tag");
  }
  return Status::Ok();
}

// The job_spec.json fields of a resolved job (spec 001/002 Step 5).
void FillSpec(const CaseRequest& request, const Placement& placement,
              const SlurmJobOptions& options, ResolvedSlurmJob& job, JobSpec* spec) {
  const JobPlan& plan = job.plan;
  const std::string& work_dir = spec->work_dir;
  if (spec->scenario.empty()) spec->scenario = options.executor;
  // The devices per node as the workflow placed them (the eval fallback spreads the
  // devices over nodes).
  CopyPlanToSpec(plan, spec);
  spec->max_pending_seconds = plan.max_pending_seconds;
  spec->node_count = job.params.nodes;
  spec->job_name = job.job_name;
  spec->container_image = job.image;
  // Only remote_slurm builds (a build job before the case); skip_install: no install step.
  spec->build_project = options.remote && request.build_project.value_or(plan.launch.build_project);
  spec->skip_install = !plan.HasStep("install");
  spec->script_name = job.script_name;
  spec->script_path = work_dir + "/" + job.script_name;
  spec->log_file_pattern = job.log_file_pattern;
  spec->log_file = work_dir + "/" + job.log_file_pattern;
  spec->extra_files = request.extra_files;
  spec->slurm_params = job.params;
  spec->slurm_env_json = SlurmEnvToJson(job.env);
  spec->container_runtime = job.runtime;
  spec->device_type = job.device_type;
  spec->llm_models_root = job.llm_models_root;
  spec->partition = job.params.partition;
  spec->account = job.account;
  spec->time_limit = job.time_limit;
  spec->extra["execution_scenario"] = options.executor;
  if (!job.image.empty()) spec->extra["docker_image"] = job.image;
  spec->extra["slurm_env_file"] = work_dir + "/slurm_env.json";
  if (!options.remote) {
    // Persistent-mode fields: local_slurm only (spec 001/002 Step 5).
    spec->persistent_mode = true;
    spec->container_name = job.container_name;
    spec->container_mounts = job.mounts.Joined();
    return;
  }
  spec->slurm_cluster =
      request.slurm_cluster.value_or(placement.cluster ? placement.cluster->name : "");
  spec->ssh_host = !placement.ssh_host.empty()
                       ? placement.ssh_host
                       : request.ssh_host.value_or(job.env.ssh_host.value_or(""));
  spec->slurm_user = !placement.slurm_user.empty()
                         ? placement.slurm_user
                         : request.slurm_user.value_or(job.env.slurm_user.value_or(""));
  spec->remote_cwd = job.remote_cwd;
  spec->remote_repo_path = job.remote_repo_path;
  spec->remote_work_dir = job.remote_work_dir;
  spec->repo_url =
      request.repo_url.value_or(GitOutput(plan.repo_root, {"remote", "get-url", "origin"}));
  spec->repo_branch = request.repo_branch.value_or(
      GitOutput(plan.repo_root, {"rev-parse", "--abbrev-ref", "HEAD"}));
  if (spec->repo_url.empty()) {
    job.notes.push_back("repo_url: unknown (no --repo-url and no git remote 'origin')");
  }
}

// Category 4: submit.py writes the launch script from the plan's perf inputs.
Status WritePerfLaunch(ResolvedSlurmJob& job, JobSpec* spec) {
  const PerfSubmitPlan& perf = job.plan.launch.perf;
  const bool remote = !job.remote_work_dir.empty();
  const std::string local_src = fs::path(job.plan.repo_root).lexically_normal().string();
  PerfSubmitInputs submit;
  submit.submit_py = job.submit_py;
  submit.partition = job.params.partition;
  submit.account = job.account;
  submit.job_name = job.job_name;
  submit.image = job.job_image;
  submit.mounts = job.mounts.Joined();
  // Remote: submit.py reads the local checkout and writes into the local work dir, which
  // MapPerfFilesToRemote then maps to the remote paths.
  submit.work_dir = remote ? spec->work_dir : job.log_dir;
  submit.llm_src = remote ? local_src : job.project;
  submit.llm_models_root = job.llm_models_root;
  submit.launch_sh = spec->script_path;
  submit.time_limit = job.time_limit;
  submit.test_name = perf.test_name;
  submit.benchmark_mode = perf.benchmark_mode;
  if (!perf.config_text.empty()) {
    submit.config_file = spec->work_dir + "/" + perf.config_file_name;
    TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(submit.config_file, perf.config_text));
  } else if (!perf.config_file.empty() && remote) {
    // The launch script names the config: a copy in the work dir goes to the cluster.
    Result<std::string> text = ReadFile(perf.config_file);
    if (!text.ok()) return text.status();
    submit.config_file = spec->work_dir + "/" + fs::path(perf.config_file).filename().string();
    TRTLLM_RUN_RETURN_IF_ERROR(WriteFileAtomic(submit.config_file, text.value()));
  } else if (!perf.config_file.empty()) {
    submit.config_file = perf.config_file;
  } else {
    submit.test_list = perf.test_list;
  }
  if (!submit.config_file.empty()) spec->extra["perf_config_yaml"] = submit.config_file;
  for (const auto& [key, value] : perf.spec_extra) spec->extra[key] = value;
  std::set<std::string> before;  // the work dir's files before submit.py
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(spec->work_dir, error)) {
    if (entry.path() != fs::path(submit.config_file)) before.insert(entry.path().string());
  }
  TRTLLM_RUN_RETURN_IF_ERROR(RunPerfSubmitFor(submit, &job));
  if (remote) {
    TRTLLM_RUN_RETURN_IF_ERROR(internal::MapPerfFilesToRemote(
        spec->work_dir, before,
        {{spec->work_dir, job.remote_work_dir}, {local_src, job.remote_repo_path}},
        spec->script_path, &spec->extra_files));
    job.notes.push_back("submit.py ran on this host against this checkout (--llm-src " + local_src +
                        ", --work-dir " + spec->work_dir +
                        "), so no remote path needs to exist here; the files it wrote name the "
                        "remote checkout " +
                        job.remote_repo_path + " and work dir " + job.remote_work_dir +
                        " instead and are copied there (the remote checkout must hold the "
                        "same perf configs)");
  }
  std::string line;
  for (const std::string& word : PerfSubmitArgv(submit)) {
    line += (line.empty() ? "" : " ") + ShellQuote(word);
  }
  spec->extra["submit_command"] = line;
  return Status::Ok();
}

// Categories 2, 3, 5 and 6: the batch script, and the run script (and the host script's
// copy) where the plan's run step runs one.
Status WriteBatchScript(const SlurmJobOptions& options, const ResolvedSlurmJob& job,
                        JobSpec* spec) {
  const JobPlan& plan = job.plan;
  const std::string& work_dir = spec->work_dir;
  SlurmScriptInputs in;
  in.workflow_type = plan.workflow_type;
  in.job_kind = job.kind;
  in.model_name = plan.model_name;
  in.job_name = job.job_name;
  in.log_dir = job.log_dir;
  in.params = job.params;
  in.container_runtime = job.runtime;
  in.container_image = job.job_image;
  in.container_name = job.container_name;
  in.container_mounts = job.mounts.Joined();
  in.project_path = job.project;
  in.run_working_dir = plan.working_dir;
  in.llm_models_root = job.models_root_export;
  in.steps = JobSteps(job);
  in.keep_env = plan.launch.keep_env;
  in.run_shows_gpus = plan.launch.run_shows_gpus;
  if (!plan.launch.run_script.empty()) {
    const std::string& name = plan.launch.run_script;
    Result<std::string> text = ReadFile(DataDirectory() + "/" + name);
    if (!text.ok()) {
      return Status::IoError("the custom run script of this installation is missing: " +
                             text.status().message());
    }
    TRTLLM_RUN_RETURN_IF_ERROR(WriteExecutable(work_dir + "/" + name, text.value()));
    in.run_script = (options.remote ? job.remote_work_dir : work_dir) + "/" + name;
    in.custom_command = job.command;
    in.custom_env = CustomEnvText(plan.env);
    in.custom_workdir = job.project;
    spec->extra_files.push_back(work_dir + "/" + name);
  }
  if (!job.custom_script_remote.empty()) {
    std::error_code error;
    fs::create_directories(work_dir + "/scripts", error);
    Result<std::string> script = ReadFile(job.custom_script);
    if (!script.ok()) return script.status();
    std::string copy = work_dir + "/scripts/" + BaseName(job.custom_script);
    TRTLLM_RUN_RETURN_IF_ERROR(WriteExecutable(copy, script.value()));
    spec->extra_files.push_back(copy);
  }
  return WriteExecutable(spec->script_path, RenderSlurmBatchScript(in));
}

}  // namespace

Status ApplyAfterPlacementHook(const CaseRequest& request, const Placement& placement,
                               const SlurmJobOptions& options, JobPlan* plan,
                               std::vector<std::string>* notes) {
  if (!plan->launch.after_placement) return Status::Ok();
  internal::ResolvedSlurmJob job;
  job.plan = *plan;
  TRTLLM_RUN_RETURN_IF_ERROR(internal::ResolveEnvAndPartition(request, placement, options, &job));
  const std::size_t known_notes = job.notes.size();
  TRTLLM_RUN_RETURN_IF_ERROR(internal::ApplyPlacement(placement, &job));
  notes->insert(notes->end(), job.notes.begin() + static_cast<std::ptrdiff_t>(known_notes),
                job.notes.end());
  *plan = std::move(job.plan);
  plan->launch.after_placement = nullptr;
  return Status::Ok();
}

Status ValidateSlurmJob(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                        const SlurmJobOptions& options) {
  Result<ResolvedSlurmJob> job =
      internal::ResolveSlurmJob(request, plan, placement, options, "<work_dir>");
  return job.ok() ? CheckScriptValues(job.value()) : job.status();
}

Status PrepareSlurmJob(const CaseRequest& request, const JobPlan& plan, const Placement& placement,
                       const SlurmJobOptions& options, JobSpec* spec) {
  Result<ResolvedSlurmJob> resolved =
      internal::ResolveSlurmJob(request, plan, placement, options, spec->work_dir);
  if (!resolved.ok()) return resolved.status();
  ResolvedSlurmJob& job = resolved.value();
  TRTLLM_RUN_RETURN_IF_ERROR(CheckScriptValues(job));
  FillSpec(request, placement, options, job, spec);
  if (job.plan.launch.perf.enabled) {
    TRTLLM_RUN_RETURN_IF_ERROR(WritePerfLaunch(job, spec));
  } else {
    TRTLLM_RUN_RETURN_IF_ERROR(WriteBatchScript(options, job, spec));
  }
  TRTLLM_RUN_RETURN_IF_ERROR(
      WriteFileAtomic(spec->work_dir + "/slurm_env.json", spec->slurm_env_json));
  std::string notes;
  for (const std::string& note : job.notes) notes += (notes.empty() ? "" : "\n") + note;
  if (!notes.empty()) spec->extra["resolution_notes"] = notes;
  return WriteJobSpec(*spec);
}

}  // namespace trtllm_run
