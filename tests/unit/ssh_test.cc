// SshScenario without a server: option checks, the argv and environment it builds
// (the password never in argv or on disk), the private directory, and a real ssh
// failing to connect. Connections to a real sshd: tests/integration/ssh_scenario_test.cc.
#include "os/ssh.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "trtllm_run/sdk/text.h"

namespace fs = std::filesystem;
using namespace trtllm_run;

namespace {

bool Contains(const std::vector<std::string>& argv, const std::string& word) {
  for (const std::string& arg : argv) {
    if (arg == word) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) out += arg + " ";
  return out;
}

}  // namespace

TEST_CASE("ssh: option checks", "[ssh]") {
  Result<std::unique_ptr<SshScenario>> empty = MakeSshScenario(SshOptions{});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == StatusCode::kInvalidInput);
  CHECK(empty.status().message() == "no SSH destination");

  SshOptions dash;
  dash.destination = "-oProxyCommand=evil";
  CHECK_FALSE(MakeSshScenario(dash).ok());

  SshOptions unset;
  unset.destination = "login";
  unset.password_env = "TRTLLM_RUN_TEST_UNSET_PASSWORD_VARIABLE";
  ::unsetenv(unset.password_env.c_str());
  Result<std::unique_ptr<SshScenario>> no_password = MakeSshScenario(unset);
  REQUIRE_FALSE(no_password.ok());
  CHECK(no_password.status().message() == "$TRTLLM_RUN_TEST_UNSET_PASSWORD_VARIABLE is not set");
}

TEST_CASE("ssh: key mode argv", "[ssh]") {
  SshOptions options;
  options.destination = "alice@login";
  options.port = 2222;
  options.identity_file = "/keys/id";
  options.extra_options = {"StrictHostKeyChecking=yes"};
  Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options);
  REQUIRE(made.ok());
  SshScenario& ssh = *made.value();
  CHECK(ssh.Name() == "ssh:alice@login:2222");
  CHECK(ssh.IsRemote());
  std::string dir = fs::path(ssh.control_path()).parent_path().string();
  CHECK(fs::is_directory(dir));
  CHECK((fs::status(dir).permissions() & fs::perms::all) == fs::perms::owner_all);

  std::vector<std::string> argv = ssh.SshArgv({"bash", "-c", "echo 'a b'"});
  CHECK(argv.front() == "ssh");
  CHECK(Contains(argv, "ControlPath=" + ssh.control_path()));
  CHECK(Contains(argv, "ControlMaster=no"));
  CHECK(Contains(argv, "BatchMode=yes"));
  CHECK(Contains(argv, "IdentitiesOnly=yes"));
  CHECK(Contains(argv, "StrictHostKeyChecking=yes"));
  CHECK(Contains(argv, "2222"));
  // The remote command is one word, quoted for the remote shell; the destination comes
  // after "--" so it can never be read as an option.
  CHECK(argv.back() == "bash -c 'echo '\\''a b'\\'''");
  CHECK(argv[argv.size() - 2] == "alice@login");
  CHECK(argv[argv.size() - 3] == "--");
  CHECK(ssh.SshEnv().empty());

  REQUIRE(ssh.Close().ok());
  CHECK_FALSE(fs::exists(dir));  // the private directory goes with the scenario
  CHECK(ssh.Close().ok());       // idempotent
}

TEST_CASE("ssh: password mode keeps the password out of argv and files", "[ssh]") {
  const std::string secret = "s3cret-pa55-for-ssh-test";
  ::setenv("TRTLLM_RUN_TEST_SSH_PASSWORD", secret.c_str(), 1);
  SshOptions options;
  options.destination = "login";
  options.password_env = "TRTLLM_RUN_TEST_SSH_PASSWORD";
  Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options);
  ::unsetenv("TRTLLM_RUN_TEST_SSH_PASSWORD");
  REQUIRE(made.ok());
  SshScenario& ssh = *made.value();
  std::vector<std::string> argv = ssh.SshArgv({"true"});
  CHECK(Joined(argv).find(secret) == std::string::npos);
  CHECK(Contains(argv, "BatchMode=no"));
  CHECK(Contains(argv, "NumberOfPasswordPrompts=1"));

  std::string askpass;
  bool secret_in_env = false;
  for (const EnvVar& var : ssh.SshEnv()) {
    if (var.name == "SSH_ASKPASS") askpass = var.value;
    if (var.value == secret) secret_in_env = true;
  }
  CHECK(secret_in_env);
  REQUIRE_FALSE(askpass.empty());
  // Nothing on disk holds the password: the askpass script prints a variable.
  std::string dir = fs::path(ssh.control_path()).parent_path().string();
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    Result<std::string> text = ReadFile(entry.path().string());
    REQUIRE(text.ok());
    CHECK(text.value().find(secret) == std::string::npos);
  }
  CHECK((fs::status(askpass).permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK((fs::status(askpass).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
        fs::perms::none);
}

TEST_CASE("ssh: a failed connection is an error with ssh's own message", "[ssh]") {
  SshOptions options;
  options.destination = "127.0.0.1";
  options.port = 1;  // nothing listens there
  options.connect_timeout_seconds = 5;
  Result<std::unique_ptr<SshScenario>> made = MakeSshScenario(options);
  REQUIRE(made.ok());
  Result<CommandOutput> run = made.value()->Run({"true"}, "");
  REQUIRE_FALSE(run.ok());
  CHECK(run.status().code() == StatusCode::kExecutionError);
  CHECK(run.status().message().find("cannot connect to ssh:127.0.0.1:1") == 0);
  CHECK(run.status().message().find("Connection refused") != std::string::npos);
  CHECK(made.value()->connections_opened() == 0);
  CHECK_FALSE(made.value()->MasterAlive());
}

TEST_CASE("ssh: remote command line quoting", "[ssh]") {
  CHECK(RemoteCommandLine({"bash", "-s"}) == "bash -s");
  CHECK(RemoteCommandLine({"echo", "$HOME", "a;b"}) == "echo '$HOME' 'a;b'");
}
