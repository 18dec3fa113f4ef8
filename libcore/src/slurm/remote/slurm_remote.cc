// The run of a Slurm job (sdk/slurm/submit.h RunSlurmJob, ExecuteSlurmJob), written once
// for this host and a login node: the SSH master, then the remote-only stages when the
// scenario's files live elsewhere (preflight, remote repo setup, work dir check, file
// transfer, the build job), then the submit-and-watch (or the held allocation) through
// the scenario. The stages (slurm_remote_stages.h) also serve the remote session of
// `run --cases`.
#include <fcntl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "os/ssh.h"
#include "slurm/remote/slurm_remote_stages.h"
#include "slurm/submit/slurm_internal.h"
#include "slurm/submit/ssh_settings.h"
#include "trtllm_run/sdk/process.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/sdk/text.h"

namespace trtllm_run {

const char kDefaultBuildCommand[] = "python3 ./scripts/build_wheel.py --use_ccache";

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const char kPrefix[] = "[remote_slurm]";

std::string Extra(const JobSpec& spec, const std::string& key) {
  auto it = spec.extra.find(key);
  return it == spec.extra.end() ? "" : it->second;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  return text;
}

std::string Output(const CommandOutput& out) {
  std::string text = Trimmed(out.stdout_text);
  std::string err = Trimmed(out.stderr_text);
  if (!err.empty()) text += (text.empty() ? "" : "\n") + err;
  return text;
}

bool AuthenticationFailed(const Status& status) {
  const std::string& m = status.message();
  return m.find("Permission denied") != std::string::npos ||
         m.find("Authentication failed") != std::string::npos ||
         m.find("Too many authentication failures") != std::string::npos;
}

// Reads a password from the controlling terminal with echo off; nullopt without one.
// Echo goes off before the prompt is printed: a user who types as soon as the prompt
// appears never sees the password on the screen.
std::optional<std::string> PromptPassword(const std::string& destination) {
  // One prompt at a time: the destinations of a session connect in parallel.
  static std::mutex prompt_mu;
  std::lock_guard<std::mutex> lock(prompt_mu);
  int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  termios old_mode{};
  bool restore = ::tcgetattr(fd, &old_mode) == 0;
  if (restore) {
    termios quiet = old_mode;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    restore = ::tcsetattr(fd, TCSAFLUSH, &quiet) == 0;
  }
  std::string prompt = "SSH password for " + destination + ": ";
  if (::write(fd, prompt.data(), prompt.size()) < 0) {
    if (restore) ::tcsetattr(fd, TCSAFLUSH, &old_mode);
    ::close(fd);
    return std::nullopt;
  }
  std::string password;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n' && c != '\r') password += c;
  if (restore) ::tcsetattr(fd, TCSAFLUSH, &old_mode);
  if (::write(fd, "\n", 1) < 0) {
    // the newline is cosmetic
  }
  ::close(fd);
  return password;
}

// Runs `script` with bash on the remote host; positional args follow.
Result<CommandOutput> RemoteBash(Scenario* scenario, const std::string& script,
                                 const std::vector<std::string>& args,
                                 const std::string& stdin_data = "") {
  std::vector<std::string> argv = {"bash", "-c", script, "trtllm-run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return scenario->Run(argv, stdin_data);
}

const char kPreflightScript[] = R"SH(missing=
for tool in sbatch scontrol scancel squeue timeout; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "the Slurm client tools are missing on $(hostname):$missing (PATH=$PATH)" >&2
  exit 3
fi
command -v git >/dev/null 2>&1 || echo "note: git is not installed on $(hostname)"
echo "host $(hostname) user $(id -un)"
)SH";

const char kWorkDirScript[] =
    R"SH(mkdir -p -- "$1" 2>/dev/null || { echo "cannot create $1 on $(hostname)" >&2; exit 4; }
probe="$1/.trtllm-run-write-test.$$"
if ! : >"$probe" 2>/dev/null; then echo "$1 on $(hostname) is not writable" >&2; exit 4; fi
rm -f -- "$probe"
)SH";

// Clones repo_url at repo_branch into the path, or fetches and checks it out there.
const char kRepoScript[] = R"SH(set -u
path=$1 url=$2 branch=$3
if [ -d "$path/.git" ]; then
  git -C "$path" remote set-url origin "$url" 2>/dev/null || git -C "$path" remote add origin "$url" || exit 5
  if [ -n "$branch" ]; then
    git -C "$path" fetch --quiet origin "$branch" || exit 5
    git -C "$path" checkout --quiet -B "$branch" FETCH_HEAD || exit 5
  else
    git -C "$path" fetch --quiet origin || exit 5
    git -C "$path" merge --quiet --ff-only '@{u}' || exit 5
  fi
  echo "updated $path to $(git -C "$path" rev-parse --short HEAD) ($branch)"
else
  if [ -e "$path" ] && [ -n "$(ls -A -- "$path" 2>/dev/null)" ]; then
    echo "$path exists, is not empty and is not a git checkout" >&2
    exit 5
  fi
  mkdir -p -- "$(dirname -- "$path")" || exit 5
  if [ -n "$branch" ]; then
    git clone --quiet --branch "$branch" -- "$url" "$path" || exit 5
  else
    git clone --quiet -- "$url" "$path" || exit 5
  fi
  echo "cloned $url ($branch) into $path at $(git -C "$path" rev-parse --short HEAD)"
fi
)SH";

const char kCopyScript[] = R"SH(mkdir -p -- "$(dirname -- "$1")" && cat >"$1" && chmod "$2" -- "$1"
)SH";

// The remote path of an extra file: files under the local work dir keep their place
// under the remote work dir; others land next to the script.
std::string RemotePathFor(const JobSpec& spec, const std::string& local) {
  fs::path path = fs::path(local).lexically_normal();
  fs::path work = fs::path(spec.work_dir).lexically_normal();
  fs::path relative = path.lexically_relative(work);
  if (!relative.empty() && relative.native().rfind("..", 0) != 0 && !relative.is_absolute()) {
    return spec.remote_work_dir + "/" + relative.string();
  }
  return spec.remote_work_dir + "/" + path.filename().string();
}

// The batch script of the build job (spec 000 Step 3: the executor builds when
// build_project is true, in the resolved container).
std::string BuildScript(const JobSpec& spec, const std::string& command) {
  const SlurmParams params = spec.slurm_params.value_or(SlurmParams{});
  std::string log = spec.remote_work_dir + "/build_%j";
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" +
       ShellQuote((spec.job_name.empty() ? spec.model_name : spec.job_name) + ".build") + "\n";
  s += "#SBATCH --output=" + log + ".out\n";
  s += "#SBATCH --error=" + log + ".err\n";
  s += "#SBATCH --nodes=1\n#SBATCH --ntasks=1\n";
  if (!params.gres.empty()) s += "#SBATCH --gres=" + params.gres + "\n";
  std::string time = !params.time_limit.empty() ? params.time_limit : spec.time_limit;
  if (!time.empty()) s += "#SBATCH --time=" + time + "\n";
  std::string partition = !params.partition.empty() ? params.partition : spec.partition;
  if (!partition.empty()) s += "#SBATCH --partition=" + partition + "\n";
  std::string account = !params.account.empty() ? params.account : spec.account;
  if (!account.empty()) s += "#SBATCH --account=" + account + "\n";
  s += "\n# Generated by trtllm-run: builds " + spec.remote_repo_path + " before the job runs.\n";
  s += "set -uo pipefail\n";
  s += "echo \"[trtllm-run] build job ${SLURM_JOB_ID:-?} on $(hostname) started\"\n";
  std::vector<std::string> srun = {"srun", "-l", "--ntasks=1"};
  if (spec.container_runtime != "none" && !spec.container_image.empty()) {
    std::string image = Extra(spec, "docker_image");
    if (image.empty()) image = spec.container_image;
    srun.push_back("--container-image=" + image);
    if (!spec.container_mounts.empty())
      srun.push_back("--container-mounts=" + spec.container_mounts);
    srun.push_back("--container-workdir=" + spec.remote_repo_path);
  } else {
    srun.push_back("--chdir=" + spec.remote_repo_path);
  }
  srun.push_back("bash");
  srun.push_back("-c");
  srun.push_back("cd " + ShellQuote(spec.remote_repo_path) + " && " + command);
  std::string line;
  for (const std::string& word : srun) line += (line.empty() ? "" : " ") + ShellQuote(word);
  s += line + "\nexit_code=$?\n";
  s += EndMarkerEcho(NewEndMarkerToken()) + "\n";  // a whole line; the build command has no token
  s += "exit \"$exit_code\"\n";
  return s;
}

}  // namespace

namespace internal {

std::unique_ptr<SshScenario> ConnectRemote(const JobSpec& spec, const ExecContext& context,
                                           const RunResult& base, std::optional<RunResult>* error) {
  Result<SshOptions> options = SshOptionsForSpec(spec);
  if (!options.ok()) {
    *error = internal::ErrorResult(base, options.status().ToString(), "");
    return nullptr;
  }
  if (context.slurm_password) options->password = *context.slurm_password;
  Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options.value());
  if (!made.ok()) {
    *error = internal::ErrorResult(base, made.status().ToString(), "");
    return nullptr;
  }
  std::unique_ptr<SshScenario> ssh = std::move(made.value());
  const std::string& where = spec.ssh_host;
  internal::Say(context, kPrefix, "connecting to " + where);
  Status connected = ssh->EnsureMaster();
  if (!connected.ok() && AuthenticationFailed(connected) && options->password.empty() &&
      options->password_env.empty()) {
    // Prompted once per run: the master connection then serves every command.
    if (std::optional<std::string> password = PromptPassword(where)) {
      SshOptions with_password = options.value();
      with_password.password = *password;
      Result<std::unique_ptr<SshScenario>> again = MakeSshScenario(with_password);
      if (again.ok()) {
        ssh->Close().IgnoreError();
        ssh = std::move(again.value());
        connected = ssh->EnsureMaster();
      }
    }
  }
  if (!connected.ok()) {
    *error = internal::ErrorResult(
        base, "cannot connect to " + where + ": " + connected.message(),
        "check ssh_host/slurm_user, the key or password ($" + std::string(kSlurmPasswordEnv) +
            ", --password-file), and that `ssh " + where + " true` works");
    return nullptr;
  }
  return ssh;
}

std::optional<RunResult> RunPreflight(StagedRun* run) {
  const std::string& where = run->where;
  Result<CommandOutput> preflight = RemoteBash(run->scenario, kPreflightScript, {});
  if (!preflight.ok()) {
    return internal::ErrorResult(
        run->base, "preflight on " + where + " failed: " + preflight.status().message(), "");
  }
  if (preflight->exit_code != 0) {
    return internal::ErrorResult(run->base,
                                 "preflight on " + where + " failed: " + Output(preflight.value()),
                                 "install the Slurm client tools on the login node, or "
                                 "choose a login node that has them");
  }
  internal::Say(run->context, kPrefix, Trimmed(preflight->stdout_text));
  return std::nullopt;
}

std::optional<RunResult> SetUpRemoteRepo(StagedRun* run) {
  const JobSpec& spec = run->spec;
  if (spec.repo_url.empty() || spec.remote_repo_path.empty()) return std::nullopt;
  internal::Say(run->context, kPrefix,
                "setting up " + spec.remote_repo_path + " from " + spec.repo_url +
                    (spec.repo_branch.empty() ? "" : " (" + spec.repo_branch + ")"));
  Result<CommandOutput> repo = RemoteBash(run->scenario, kRepoScript,
                                          {spec.remote_repo_path, spec.repo_url, spec.repo_branch});
  if (!repo.ok() || repo->exit_code != 0) {
    std::string why = repo.ok() ? Output(repo.value()) : repo.status().message();
    return internal::ErrorResult(
        run->base,
        "remote repo setup in " + spec.remote_repo_path + " on " + run->where + " failed: " + why,
        "check repo_url/repo_branch and that the cluster can "
        "reach the repository");
  }
  run->base.notes.push_back("remote repo: " + Trimmed(repo->stdout_text));
  return std::nullopt;
}

std::optional<RunResult> CheckRemoteWorkDir(StagedRun* run) {
  Result<CommandOutput> work_dir =
      RemoteBash(run->scenario, kWorkDirScript, {run->spec.remote_work_dir});
  if (!work_dir.ok() || work_dir->exit_code != 0) {
    std::string why = work_dir.ok() ? Output(work_dir.value()) : work_dir.status().message();
    return internal::ErrorResult(run->base, "preflight on " + run->where + " failed: " + why,
                                 "choose a remote_repo_path / remote work dir the user "
                                 "can write");
  }
  return std::nullopt;
}

// Copies over the master with `cat > file`, one command per file.
std::optional<RunResult> TransferFiles(StagedRun* run) {
  const JobSpec& spec = run->spec;
  std::vector<std::pair<std::string, std::string>> files;  // local -> remote
  files.emplace_back(spec.script_path,
                     spec.remote_work_dir + "/" +
                         (spec.script_name.empty() ? fs::path(spec.script_path).filename().string()
                                                   : spec.script_name));
  for (const std::string& extra : spec.extra_files)
    files.emplace_back(extra, RemotePathFor(spec, extra));
  for (const auto& [local, remote] : files) {
    Result<std::string> text = ReadFile(local);
    if (!text.ok()) {
      return internal::ErrorResult(
          run->base,
          "cannot read " + local + " to copy it to " + run->where + ": " + text.status().message(),
          "");
    }
    std::error_code error;
    bool executable =
        (fs::status(local, error).permissions() & fs::perms::owner_exec) != fs::perms::none;
    Result<CommandOutput> copied =
        RemoteBash(run->scenario, kCopyScript, {remote, executable ? "755" : "644"}, text.value());
    if (!copied.ok() || copied->exit_code != 0) {
      std::string why = copied.ok() ? Output(copied.value()) : copied.status().message();
      return internal::ErrorResult(
          run->base, "copying " + local + " to " + run->where + ":" + remote + " failed: " + why,
          "");
    }
  }
  internal::Say(run->context, kPrefix,
                "copied " + std::to_string(files.size()) + " file(s) to " + spec.remote_work_dir);
  run->job_script = files.front().second;
  return std::nullopt;
}

std::string BuildCommandOf(const JobSpec& spec) {
  std::string command = Extra(spec, "build_command");
  return command.empty() ? kDefaultBuildCommand : command;
}

std::optional<RunResult> RunBuildJob(StagedRun* run, const SubmitAndWatchFn& submit) {
  const JobSpec& spec = run->spec;
  const std::string command = BuildCommandOf(spec);
  std::string local_script = spec.work_dir + "/build.slurm";
  std::string remote_script = spec.remote_work_dir + "/build.slurm";
  Status written = WriteFileAtomic(local_script, BuildScript(spec, command));
  Result<CommandOutput> copied = Status::Ok();
  if (written.ok()) {
    copied = RemoteBash(run->scenario, kCopyScript, {remote_script, "755"},
                        ReadFile(local_script).value());
  }
  if (!written.ok() || !copied.ok() || copied->exit_code != 0) {
    std::string why = !written.ok()  ? written.ToString()
                      : !copied.ok() ? copied.status().message()
                                     : Output(copied.value());
    return internal::ErrorResult(run->base, "BUILD_FAILED: could not stage the build job: " + why,
                                 "");
  }
  internal::Say(
      run->context, kPrefix,
      "build_project: building " + spec.remote_repo_path + " in a build job (" + command + ")");
  internal::SubmitRequest build;
  build.label = "build job";
  build.script_local = local_script;
  build.script_submit = remote_script;
  build.submit_dir = spec.remote_work_dir;
  build.echo = true;
  RunResult built = submit(build);
  if (built.status == RunStatus::kPassed) {
    run->base.notes.push_back("build job " + built.details["job_id"] + ": " + built.reason);
    run->base.details["build_job_id"] = built.details["job_id"];
    return std::nullopt;
  }
  RunResult result = run->base;
  if (built.status == RunStatus::kCancelled) {
    result = built;
    result.reason = "cancelled during the build job: " + built.reason;
    return result;
  }
  result.status = RunStatus::kError;
  result.reason = "BUILD_FAILED: " + built.reason;
  result.errors.push_back(result.reason);
  result.exit_code = built.exit_code;
  result.log_file = built.log_file;
  result.log_tail = built.log_tail;
  result.details = built.details;
  result.details["build_job_id"] = built.details["job_id"];
  result.diagnosis = "The build failed, so the test was not submitted; see " + built.log_file +
                     (built.diagnosis.empty() ? "" : "\n" + built.diagnosis);
  return result;
}

std::optional<RunResult> StageOnLoginNode(StagedRun* run, const SubmitAndWatchFn& submit) {
  std::optional<RunResult> failed = RunPreflight(run);
  if (!failed) failed = SetUpRemoteRepo(run);
  if (!failed) failed = CheckRemoteWorkDir(run);
  if (!failed) failed = TransferFiles(run);
  if (!failed && run->spec.build_project) failed = RunBuildJob(run, submit);
  return failed;
}

bool RunsInHeldAllocation(const JobSpec& spec, const Scenario& scenario) {
  // Persistent mode is only ever set for this host (AddSlurmRunFields); a login node
  // keeps its allocation for later runs instead (release_allocation false).
  return spec.persistent_mode ||
         (scenario.IsRemote() && Extra(spec, "release_allocation") == "false");
}

RunResult RunJob(StagedRun* run, const SubmitAndWatchFn& submit) {
  const JobSpec& spec = run->spec;
  const std::string& submit_dir = run->scenario->IsRemote() ? spec.remote_work_dir : spec.work_dir;
  RunResult result;
  if (RunsInHeldAllocation(spec, *run->scenario)) {
    result = internal::RunInHeldAllocation(spec, run->context, run->scenario,
                                           {run->where, run->job_script, submit_dir});
  } else {
    internal::SubmitRequest request = internal::LocalSubmitRequest(spec);
    request.script_submit = run->job_script;
    request.submit_dir = submit_dir;
    result = submit(request);
  }
  result.notes.insert(result.notes.begin(), run->base.notes.begin(), run->base.notes.end());
  for (const auto& [key, value] : run->base.details) result.details.emplace(key, value);
  return result;
}

}  // namespace internal

RunResult RunSlurmJob(const JobSpec& spec, const ExecContext& context, Scenario& scenario) {
  const auto started = Clock::now();
  auto finish = [&](RunResult result) {
    result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    if (result.finished_at.empty()) result.finished_at = NowIso8601();
    return result;
  };
  RunResult base = internal::BaseResult(spec);
  const bool files_elsewhere = scenario.IsRemote();
  const std::string executor = spec.scenario.empty() ? std::string("Slurm") : spec.scenario;
  if (files_elsewhere && spec.remote_work_dir.empty()) {
    return finish(internal::ErrorResult(base, "job_spec.json has no remote_work_dir",
                                        "prepare the case with the remote_slurm executor"));
  }
  if (spec.script_path.empty()) {
    return finish(
        internal::ErrorResult(base, "job_spec.json has no script_path",
                              "prepare the case again with the " + executor + " executor"));
  }
  internal::StagedRun run{spec,
                          context,
                          &scenario,
                          files_elsewhere ? spec.ssh_host : "",
                          std::move(base),
                          spec.script_path};
  SlurmClient client(&scenario);
  auto submit = [&](const internal::SubmitRequest& request) {
    return internal::SubmitAndWatch(&client, spec, context, request);
  };
  std::optional<RunResult> failed;
  if (files_elsewhere) failed = internal::StageOnLoginNode(&run, submit);
  return finish(failed ? std::move(*failed) : internal::RunJob(&run, submit));
}

RunResult ExecuteSlurmJob(const JobSpec& spec, const ExecContext& context) {
  if (!internal::NamesLoginNode(spec)) {
    std::unique_ptr<Scenario> own;
    Scenario* scenario = context.scenario;
    if (scenario == nullptr || scenario->IsRemote()) {
      own = MakeLocalScenario();
      scenario = own.get();
    }
    return RunSlurmJob(spec, context, *scenario);
  }
  const auto started = Clock::now();
  std::optional<RunResult> failed;
  std::unique_ptr<SshScenario> ssh =
      internal::ConnectRemote(spec, context, internal::BaseResult(spec), &failed);
  RunResult result = ssh ? RunSlurmJob(spec, context, *ssh) : std::move(*failed);
  result.duration_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (!ssh) return result;
  result.details["ssh_connections"] = std::to_string(ssh->connections_opened());
  if (ssh->connections_opened() > 1) {  // the master died (sshd restart, network) and came back
    result.notes.push_back("SSH: the connection to " + spec.ssh_host +
                           " was lost and re-established (" +
                           std::to_string(ssh->connections_opened()) + " connections opened)");
  }
  result.details["ssh_host"] = spec.ssh_host;
  ssh->Close().IgnoreError();
  return result;
}

}  // namespace trtllm_run
