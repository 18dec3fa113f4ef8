// An embedder's CaseRequest.slurm_password reaches the remote_slurm executor in memory:
// with no password variable in the environment, Runtime::Execute logs in to the password
// user of the test sshd (tests/services/sshd.sh) and the job PASSES; the password is in
// no file the run leaves behind.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <random>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "slurm_test_util.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/sdk/slurm/submit.h"

using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";
const char kPasswordUser[] = "slurmpw";
const char kPassword[] = "trtllm-test-pw";  // tests/services/sshd.sh's test secret

std::string RandomSuffix() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

TEST_CASE("embedder: CaseRequest.slurm_password logs in to remote_slurm without the environment",
          "[sshd]") {
  EnsureSshd();
  ScopedEnv no_password(kSlurmPasswordEnv, "");  // empty counts as unset
  ScopedEnv no_password_file(kSlurmPasswordFileEnv, "");
  TempDir dir("trtllm_embedder_pw");
  const std::string remote_root =
      "/home/" + std::string(kPasswordUser) + "/trtllm_test_" + RandomSuffix();
  const std::string ssh_config = dir.path() + "/ssh_config";
  WriteTextFile(ssh_config, "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n  User " +
                                std::string(kPasswordUser) + "\n  UserKnownHostsFile " + kSshDir +
                                "/known_hosts\n  StrictHostKeyChecking yes\n"
                                "  PubkeyAuthentication no\n  PreferredAuthentications password\n");

  PreparedCase prepared;
  prepared.planned.request.slurm_password = kPassword;
  prepared.planned.scenario = "remote_slurm";
  JobSpec& spec = prepared.spec;
  spec = SlurmTestSpec(dir.path(), "embedpw", "remote_slurm");
  spec.ssh_host = "trtllm-test-login";
  spec.slurm_user = kPasswordUser;
  spec.extra["ssh_config_file"] = ssh_config;
  spec.remote_work_dir = remote_root + "/work";
  WriteTextFile(spec.script_path,
                BatchScript(spec.remote_work_dir, "embedpw", {"echo hello from $(whoami)"}));
  ::chmod(spec.script_path.c_str(), 0755);

  Result<std::unique_ptr<Runtime>> runtime = Runtime::Create(RuntimeOptions{});
  REQUIRE(runtime.ok());
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  options.kill_grace_seconds = 5;
  RunResult result = runtime.value()->Execute(prepared, options);
  Shell("rm -rf " + ShellQuote(remote_root));
  INFO(RunStatusName(result.status) << ": " << result.reason << "\n" << progress.str());
  CHECK(result.status == RunStatus::kPassed);
  CHECK(ReadTextFile(result.log_file).find("hello from slurmpw") != std::string::npos);
  int status = 0;
  Shell("grep -rqF " + ShellQuote(kPassword) + " " + ShellQuote(dir.path()), &status);
  CHECK(status == 1);  // grep: the password is in no file of the work dir
  CHECK(progress.str().find(kPassword) == std::string::npos);
}

}  // namespace
