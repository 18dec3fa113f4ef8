// What a running job is, asked of the executor that started it (Executor::DescribeJob):
// `trtllm-run status` and the MCP server's case state both ask it through the one
// work-dir reader (workdir_state.h). For remote_slurm the record is the cluster's,
// asked over the executor's SSH connection, never of a local scontrol.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "mcp_test_client.h"
#include "slurm_test_util.h"
#include "trtllm_run/sdk/slurm/remote.h"
#include "trtllm_run/sdk/slurm/submit.h"
#include "trtllm_run/workdir.h"

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

// A remote_slurm job of the key user (sshtest) through the loopback sshd, without a
// repo to set up: its job_spec.json written, its run supervised by this test.
struct RemoteJob {
  TempDir dir{"trtllm_describe"};
  std::string remote_root = "/home/sshtest/trtllm_test_" + RandomName();
  JobSpec spec;
  CancellationToken cancel;
  std::ostringstream terminal, progress;
  ExecContext context;

  explicit RemoteJob(const std::string& name) {
    const std::string ssh_config = dir.path() + "/ssh_config";
    WriteTextFile(ssh_config,
                  "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                  "  User sshtest\n  UserKnownHostsFile " +
                      std::string(kSshDir) +
                      "/known_hosts\n  StrictHostKeyChecking yes\n  IdentityFile " + kSshDir +
                      "/id_ed25519\n  IdentitiesOnly yes\n");
    ::chmod(ssh_config.c_str(), 0600);
    spec = SlurmTestSpec(dir.path(), name, "remote_slurm");
    spec.ssh_host = "trtllm-test-login";
    spec.slurm_user = "sshtest";
    spec.extra["ssh_config_file"] = ssh_config;
    spec.remote_work_dir = remote_root + "/work_dirs/" + RandomName();
    WriteTextFile(spec.script_path,
                  BatchScript(spec.remote_work_dir, name, {"echo running; sleep 600"}));
    ::chmod(spec.script_path.c_str(), 0755);
    REQUIRE(WriteJobSpec(spec).ok());
    context.cancel = &cancel;
    context.terminal = &terminal;
    context.progress = &progress;
    context.kill_grace_seconds = 5;
  }
  ~RemoteJob() { Shell("rm -rf " + ShellQuote(remote_root)); }
};

}  // namespace

TEST_CASE(
    "describe: a running remote_slurm job is the cluster's record over SSH, in status and in "
    "the MCP case state",
    "[slurm][sshd]") {
  EnsureSshd();
  RemoteJob job("rdescribe");
  // This process supervises the run, as `trtllm-run exec` would: it holds the lock.
  Result<std::unique_ptr<WorkDirLock>> lock = WorkDirLock::Acquire(job.spec.work_dir);
  REQUIRE(lock.ok());
  RunResult result;
  std::thread runner([&] { result = ExecuteSlurmJob(job.spec, job.context); });
  struct StopRunner {  // whatever the test's outcome: scancel through the run, then join
    RemoteJob* job;
    std::thread* runner;
    ~StopRunner() {
      job->cancel.Cancel(SIGINT);
      runner->join();
    }
  } stop{&job, &runner};
  const std::string id = WaitForFileText(job.spec.work_dir + "/slurm_job_id", 90);
  REQUIRE_FALSE(id.empty());
  WaitForJobState(id, "RUNNING", 120);
  REQUIRE(JobState(id) == "RUNNING");

  // A local scontrol that answers for any job: whoever asks here instead of on the
  // cluster gets LOCAL_SCONTROL.
  TempDir bin("trtllm_fake_scontrol");
  WriteTextFile(bin.path() + "/scontrol",
                "#!/bin/sh\nfor a; do id=$a; done\n"
                "echo \"JobId=$id JobName=fake UserId=nobody(65534) JobState=LOCAL_SCONTROL "
                "Reason=AskedLocally\"\n");
  ::chmod((bin.path() + "/scontrol").c_str(), 0755);
  ScopedEnv path("PATH", bin.path() + ":" + std::getenv("PATH"));
  REQUIRE_THAT(Shell("scontrol -o show job " + id), Catch::Contains("LOCAL_SCONTROL"));

  CliRun status = RunCli({"status", "--json", job.spec.work_dir});
  INFO(status.Describe());
  REQUIRE(status.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(status.stdout_text.c_str());
  REQUIRE(doc.IsObject());
  CHECK(Str(doc, "job_id") == id);
  CHECK(Str(doc, "scheduler_state") == "RUNNING");
  CliRun text = RunCli({"status", job.spec.work_dir});
  INFO(text.Describe());
  CHECK_THAT(text.stdout_text, Catch::Contains("slurm state: RUNNING"));
  CHECK_THAT(text.stdout_text, !Catch::Contains("LOCAL_SCONTROL"));

  TempDir repo("trtllm_describe_mcp");
  McpProcess server(repo.path());
  server.Initialize();
  rapidjson::Document state =
      server.Call(1, "case_status", "{\"handle\":" + Quoted(job.spec.work_dir) + "}");
  const rapidjson::Value& structured = Structured(state);
  INFO(JsonText(structured));
  CHECK(Str(structured, "status") == "running");
  CHECK(Str(structured, "job_id") == id);
  CHECK(Str(structured, "slurm_state") == "RUNNING");  // before: null (asked only locally)
  CHECK(Str(structured, "slurm_reason") != "AskedLocally");
}

// A work dir someone else wrote names SSH settings that run a command (ProxyCommand):
// status must not run them, and says why; the same file, owned by you and private, is
// used (the control: the marker appears, so the refusal is what kept it away).
TEST_CASE("describe: status never connects through SSH settings of a work dir you do not control",
          "[workdir][cli]") {
  TempDir dir("trtllm_describe_trust");
  const std::string marker = dir.path() + "/proxy_command_ran";
  JobSpec spec = SlurmTestSpec(dir.path() + "/wd", "rtrust", "remote_slurm");
  std::filesystem::create_directories(spec.work_dir);
  spec.ssh_host = "trtllm-test-nowhere";
  const std::string config = dir.path() + "/ssh_config";
  WriteTextFile(config,
                "Host trtllm-test-nowhere\n  ProxyCommand sh -c 'touch " + marker + "; exit 1'\n");
  spec.extra["ssh_config_file"] = config;
  REQUIRE(WriteJobSpec(spec).ok());
  RunState state = NewRunState("remote_slurm");
  state.supervisor_pid = 0;  // its supervisor is gone: abandoned, still described
  state.job_id = "4242";
  REQUIRE(WriteRunState(spec.work_dir, state).ok());

  ::chmod(config.c_str(), 0666);  // anyone may have written it
  CliRun refused = RunCli({"status", spec.work_dir});
  INFO(refused.Describe());
  CHECK(refused.exit_code == 0);
  CHECK_THAT(refused.stdout_text, Catch::Contains("is not owned by you or root, or is writable"));
  CHECK_FALSE(std::filesystem::exists(marker));

  ::chmod(config.c_str(), 0600);
  spec.extra["ssh_options"] = "ProxyCommand=sh -c 'touch " + marker + "'";
  REQUIRE(WriteJobSpec(spec).ok());
  CliRun option = RunCli({"status", spec.work_dir});
  INFO(option.Describe());
  CHECK_THAT(option.stdout_text, Catch::Contains("is not allowed"));
  CHECK_FALSE(std::filesystem::exists(marker));

  spec.extra.erase("ssh_options");  // yours and private: used
  REQUIRE(WriteJobSpec(spec).ok());
  CliRun used = RunCli({"status", spec.work_dir});
  INFO(used.Describe());
  CHECK(std::filesystem::exists(marker));
  CHECK_THAT(used.stdout_text, Catch::Contains("the controller could not be asked"));
}

// The same rule for cancel: `trtllm-run cancel` of a remote_slurm work dir asks the login
// node through the work dir's SSH settings only when they are ones you control.
TEST_CASE("describe: cancel never connects through SSH settings of a work dir you do not control",
          "[workdir][cli]") {
  TempDir dir("trtllm_cancel_trust");
  const std::string marker = dir.path() + "/proxy_command_ran";
  JobSpec spec = SlurmTestSpec(dir.path() + "/wd", "ctrust", "remote_slurm");
  std::filesystem::create_directories(spec.work_dir);
  spec.ssh_host = "trtllm-test-nowhere";
  const std::string config = dir.path() + "/ssh_config";
  WriteTextFile(config,
                "Host trtllm-test-nowhere\n  ProxyCommand sh -c 'touch " + marker + "; exit 1'\n");
  spec.extra["ssh_config_file"] = config;
  REQUIRE(WriteJobSpec(spec).ok());
  RunState state = NewRunState("remote_slurm");
  state.supervisor_pid = DeadPid();  // its supervisor is gone: cancel asks the executor
  state.supervisor_start_time = 1;
  state.job_id = "4242";
  REQUIRE(WriteRunState(spec.work_dir, state).ok());

  ::chmod(config.c_str(), 0666);  // anyone may have written it
  CliRun refused = RunCli({"cancel", "--kill-grace", "1", spec.work_dir});
  INFO(refused.Describe());
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.stderr_text + refused.stdout_text,
             Catch::Contains("is not owned by you or root, or is writable"));
  CHECK_FALSE(std::filesystem::exists(marker));

  ::chmod(config.c_str(), 0600);
  spec.extra["ssh_options"] = "ProxyCommand=sh -c 'touch " + marker + "'";
  REQUIRE(WriteJobSpec(spec).ok());
  CliRun option = RunCli({"cancel", "--kill-grace", "1", spec.work_dir});
  INFO(option.Describe());
  CHECK(option.exit_code != 0);
  CHECK_THAT(option.stderr_text + option.stdout_text, Catch::Contains("is not allowed"));
  CHECK_FALSE(std::filesystem::exists(marker));

  spec.extra.erase("ssh_options");  // yours and private: used
  REQUIRE(WriteJobSpec(spec).ok());
  CliRun used = RunCli({"cancel", "--kill-grace", "1", spec.work_dir});
  INFO(used.Describe());
  CHECK(std::filesystem::exists(marker));
}
