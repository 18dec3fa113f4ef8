// RunSlurmJob (sdk/slurm/submit.h): one function for local_slurm and remote_slurm, which
// differ only by the Scenario passed. The same spec fields (repo, build job, extra files,
// remote work dir) stage a run on a login node only when the scenario's files live on
// another host; on this host they are never acted on. Real test cluster, real sshd.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#include "os/ssh.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/slurm/submit.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// A spec whose remote-only fields would each leave a trace if acted on: a repo to clone
// (from a path that does not exist: the setup would fail the run), a build job, an extra
// file to copy, a remote work dir to create.
JobSpec SpecWithRemoteFields(const std::string& work_dir, const std::string& name,
                             const std::string& remote_root) {
  JobSpec spec = SlurmTestSpec(work_dir, name, "remote_slurm");
  spec.remote_work_dir = remote_root + "/work";
  spec.remote_repo_path = remote_root + "/TensorRT-LLM";
  spec.repo_url = remote_root + "/no-such-origin.git";
  spec.build_project = true;
  fs::create_directories(work_dir + "/inputs");
  const std::string extra = work_dir + "/inputs/extra.txt";
  WriteTextFile(extra, "an extra file\n");
  spec.extra_files = {extra};
  return spec;
}

}  // namespace

TEST_CASE("RunSlurmJob: on this host no remote-only stage runs for a spec that names them",
          "[slurm]") {
  EnsureSlurm();
  TempDir dir("trtllm_scenario_local");
  const std::string remote_root = dir.path() + "/login_node_only";
  JobSpec spec = SpecWithRemoteFields(dir.path(), "scenlocal", remote_root);
  WriteTextFile(spec.script_path,
                BatchScript(dir.path(), "scenlocal", {"echo ran here; echo '1 passed'"}));
  ::chmod(spec.script_path.c_str(), 0755);
  std::ostringstream terminal, progress;
  ExecContext context;
  context.terminal = &terminal;
  context.progress = &progress;
  context.kill_grace_seconds = 5;

  std::unique_ptr<Scenario> local = MakeLocalScenario();
  RunResult r = RunSlurmJob(spec, context, *local);
  INFO(std::string(RunStatusName(r.status)) + ": " + r.reason + "\n--- progress\n" +
       progress.str());
  CHECK(r.status == RunStatus::kPassed);
  // The script ran from the work dir, its log read in place.
  CHECK(r.log_file.rfind(dir.path() + "/scenlocal_auto_test_", 0) == 0);
  CHECK(ReadTextFile(r.log_file).find("ran here") != std::string::npos);
  CHECK(r.details.count("remote_log_file") == 0);
  // No preflight, repo setup, work dir check, transfer or build job.
  CHECK(!fs::exists(remote_root));
  CHECK(r.details.count("build_job_id") == 0);
  CHECK(progress.str().find("copied") == std::string::npos);
  CHECK(progress.str().find("setting up") == std::string::npos);
  CHECK(progress.str().find("build_project") == std::string::npos);
  CHECK(r.details.count("ssh_host") == 0);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}

TEST_CASE("RunSlurmJob: through an SSH scenario the same call stages the run on the login node",
          "[sshd]") {
  EnsureSshd();
  TempDir dir("trtllm_scenario_ssh");
  const std::string remote_root = "/home/sshtest/trtllm_test_" + RandomName();
  struct RemoveRemoteRoot {
    std::string path;
    ~RemoveRemoteRoot() { Shell("rm -rf " + ShellQuote(path)); }
  } cleanup{remote_root};
  JobSpec spec = SpecWithRemoteFields(dir.path(), "scenssh", remote_root);
  spec.repo_url.clear();  // no origin to clone from: the repo setup is skipped
  spec.build_project = false;
  WriteTextFile(spec.script_path,
                BatchScript(spec.remote_work_dir, "scenssh",
                            {"echo ran on $(whoami); cat inputs/extra.txt; echo '1 passed'"}));
  ::chmod(spec.script_path.c_str(), 0755);
  const std::string ssh_config = dir.path() + "/ssh_config";
  WriteTextFile(ssh_config,
                "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                "  User sshtest\n  UserKnownHostsFile " +
                    std::string(kSshDir) +
                    "/known_hosts\n  StrictHostKeyChecking yes\n  IdentityFile " + kSshDir +
                    "/id_ed25519\n  IdentitiesOnly yes\n");
  SshOptions options;
  options.destination = "trtllm-test-login";
  options.ssh_config_file = ssh_config;
  Result<std::unique_ptr<SshScenario>> ssh = MakeSshScenario(options);
  REQUIRE(ssh.ok());
  std::ostringstream terminal, progress;
  ExecContext context;
  context.terminal = &terminal;
  context.progress = &progress;
  context.kill_grace_seconds = 5;

  RunResult r = RunSlurmJob(spec, context, *ssh.value());
  (*ssh)->Close().IgnoreError();
  INFO(std::string(RunStatusName(r.status)) + ": " + r.reason + "\n--- progress\n" +
       progress.str());
  CHECK(r.status == RunStatus::kPassed);
  // Script and extra file copied into the remote work dir; sbatch ran there.
  CHECK(progress.str().find("copied 2 file(s) to " + spec.remote_work_dir) != std::string::npos);
  CHECK(fs::exists(spec.remote_work_dir + "/inputs/extra.txt"));
  CHECK(r.details["remote_log_file"].rfind(spec.remote_work_dir + "/scenssh_auto_test_", 0) == 0);
  // The log was copied back into the local work dir as it grew.
  CHECK(r.log_file.rfind(dir.path() + "/scenssh_auto_test_", 0) == 0);
  const std::string log = ReadTextFile(r.log_file);
  CHECK(log.find("ran on sshtest") != std::string::npos);
  CHECK(log.find("an extra file") != std::string::npos);
  // The connection is the caller's: RunSlurmJob neither opens nor reports one.
  CHECK(r.details.count("ssh_connections") == 0);
  CHECK(JobActiveStates(r.details["job_id"]).empty());
}
