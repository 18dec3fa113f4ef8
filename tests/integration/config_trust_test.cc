// Which config file may set what (user_config.h, README "Security model"): a checkout's
// .trtllm-run.yaml sets only harmless defaults; hosts, SSH options, identities, files,
// scenario, image, env file come from flags, named request files or the user's config.
// Config files that are not regular, writable by others or owned by someone else are
// refused before a byte is read. Through the real binary, with the real ssh.
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "cli_harness.h"

using namespace trtllm_run_test;
namespace fs = std::filesystem;

namespace {

constexpr uid_t kNobody = 65534;

struct TrustSetup {
  TempDir root{"trtllm_config_trust"};
  std::string repo = root.path() + "/repo";
  std::string xdg = root.path() + "/xdg";
  std::string bin = root.path() + "/bin";
  std::string user_config = xdg + "/trtllm-run/config.yaml";
  std::string repo_config = repo + "/.trtllm-run.yaml";
  std::string ran_log = root.path() + "/ran.log";  // what a stand-in tool was asked to do
  TrustSetup() {
    fs::create_directories(repo);
    fs::create_directories(xdg + "/trtllm-run");
    fs::create_directories(bin);
    // Stand-ins for everything that would reach another host: each logs its arguments
    // and trtllm-run's variables it was given, so the log proves what ran.
    for (const char* tool : {"ssh", "scp", "rsync", "sbatch", "srun", "docker"}) {
      const std::string path = bin + "/" + tool;
      WriteTextFile(path, "#!/bin/sh\n{ echo \"" + std::string(tool) +
                              " $*\"; env | grep TRTLLM_RUN; } >> " + ran_log + "\nexit 1\n");
      fs::permissions(path, fs::perms::owner_all);
    }
  }
  // `plan` run inside the checkout (no --repo-root), as a person would after cloning it.
  CliRun Plan(std::vector<std::string> args, bool stand_ins = true) {
    CliOptions options;
    options.args = {"plan"};
    options.args.insert(options.args.end(), args.begin(), args.end());
    options.env = {{"XDG_CONFIG_HOME", xdg}, {"TRTLLM_RUN_SLURM_PASSWORD", "pw-must-stay-home"}};
    if (stand_ins) options.env.emplace_back("PATH", bin + ":" + std::getenv("PATH"));
    options.cwd = repo;
    options.timeout_seconds = 30;
    return RunCli(options);
  }
  bool AnyWorkDir() const { return fs::exists(repo + "/work_dirs"); }
};

const std::vector<std::string> kHello = {"--custom-cmd", "echo hi"};

}  // namespace

TEST_CASE("config trust: a checkout's ProxyCommand is refused and never runs", "[cli][config]") {
  TrustSetup setup;
  const std::string marker = setup.root.path() + "/proxy_command_ran";
  WriteTextFile(setup.repo_config,
                "scenario: remote_slurm\nssh_host: 127.0.0.1\n"
                "ssh_option: ProxyCommand=touch " +
                    marker + "\npartition: batch\n");
  CliRun run = setup.Plan(kHello, /*stand_ins=*/false);  // the real ssh would run it
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_FALSE(fs::exists(marker));
  CHECK_THAT(run.stderr_text, Catch::Contains(setup.repo_config + ":1: 'scenario'") &&
                                  Catch::Contains(setup.repo_config + ":2: 'ssh_host'") &&
                                  Catch::Contains(setup.repo_config + ":3: 'ssh_option'") &&
                                  Catch::Contains("--ssh-option") &&
                                  Catch::Contains(setup.user_config));
  CHECK_THAT(run.stderr_text, !Catch::Contains("'partition'"));  // an allowed key
  CHECK_FALSE(setup.AnyWorkDir());
}

TEST_CASE("config trust: a checkout naming the SSH host gets no password and runs nothing",
          "[cli][config]") {
  TrustSetup setup;
  WriteTextFile(setup.repo_config, "scenario: remote_slurm\nssh_host: collector.example\n");
  CliRun run = setup.Plan(kHello);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.stderr_text, Catch::Contains(setup.repo_config + ":2: 'ssh_host'"));
  CHECK_FALSE(fs::exists(setup.ran_log));  // no ssh, scp, sbatch ... was started
  CHECK(run.stderr_text.find("pw-must-stay-home") == std::string::npos);
  CHECK(run.stdout_text.find("pw-must-stay-home") == std::string::npos);
  CHECK_FALSE(setup.AnyWorkDir());
}

TEST_CASE("config trust: each key that chooses what runs or where is refused in a checkout",
          "[cli][config]") {
  TrustSetup setup;
  WriteTextFile(setup.root.path() + "/key", "not a key\n");
  struct Refused {
    std::string line;  // written on line 2, after an allowed key
    std::string key;
    std::string flag;
  };
  const std::vector<Refused> cases = {
      {"extra_files: " + setup.root.path() + "/key", "extra_files", "--extra-files"},
      {"scenario: local_direct", "scenario", "--scenario"},
      {"container_image: evil/image:latest", "container_image", "--container-image"},
      {"slurm_env_file: " + setup.root.path() + "/key", "slurm_env_file", "--slurm-env-file"},
      {"identity: " + setup.root.path() + "/key", "identity", "--identity"},
      {"ssh_config_file: " + setup.root.path() + "/key", "ssh_config_file", "--ssh-config-file"},
      {"slurm_cluster: elsewhere", "slurm_cluster", "--slurm-cluster"},
      {"skip_install: false", "skip_install", "--skip-install"},
      {"remote_repo_path: /tmp/other", "remote_repo_path", "--remote-repo-path"},
      {"repo_url: https://example.com/x.git", "repo_url", "--repo-url"},
      {"device_type: B200", "device_type", "--device-type"},
      {"container_runtime: none", "container_runtime", "--container-runtime"},
      {"ssh_port: 2222", "ssh_port", "--ssh-port"},
  };
  for (const Refused& refused : cases) {
    WriteTextFile(setup.repo_config, "monitor_timeout: 5m\n" + refused.line + "\n");
    CliRun run = setup.Plan(kHello);
    INFO(refused.key << "\n" << run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(setup.repo_config + ":2: '" + refused.key + "'") &&
                                    Catch::Contains(refused.flag) && Catch::Contains("--request") &&
                                    Catch::Contains(setup.user_config));
    CHECK_FALSE(fs::exists(setup.ran_log));
    CHECK_FALSE(setup.AnyWorkDir());
  }
  // A cluster's section of the checkout's config is held to the same list.
  WriteTextFile(setup.repo_config, "clusters:\n  c1:\n    partition: a\n    ssh_host: h\n");
  CliRun section = setup.Plan(kHello);
  INFO(section.Describe());
  CHECK(section.exit_code == 2);
  CHECK_THAT(section.stderr_text, Catch::Contains(setup.repo_config + ":4: 'ssh_host'"));
}

TEST_CASE("config trust: a checkout's harmless defaults apply, the user's config sets the rest",
          "[cli][config]") {
  TrustSetup setup;
  WriteTextFile(setup.repo_config,
                "partition: batch\naccount: research\ntime_limit: 30m\nmonitor_timeout: 7m\n"
                "silence_timeout: 90s\nmax_pending: 1h\nmodels_path: /models\n"
                "llm_models_root: /models\nnode_count: 1\nrequired_devices: 0\n"
                "clusters:\n  c1:\n    partition: debug\n");
  WriteTextFile(setup.user_config,
                "scenario: local_direct\nssh_option: ServerAliveInterval=15\n"
                "container_image: img:tag\n");
  CliRun run = setup.Plan(kHello);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(
      run.stdout_text,
      Catch::Contains("config: monitor_timeout=7m (from " + setup.repo_config + ":4)") &&
          Catch::Contains("config: silence_timeout=90s (from " + setup.repo_config) &&
          Catch::Contains("config: scenario=local_direct (from " + setup.user_config + ":1)"));
  const std::string work_dir = FindSingleWorkDir(setup.repo);
  REQUIRE_FALSE(work_dir.empty());
  CHECK_THAT(ReadTextFile(work_dir + "/job_spec.json"),
             Catch::Contains("\"monitor_timeout_seconds\": 420"));
  CHECK_FALSE(fs::exists(setup.ran_log));
}

TEST_CASE("config trust: a FIFO config is refused at once, user's or checkout's", "[cli][config]") {
  TrustSetup setup;
  for (const std::string& path : {setup.user_config, setup.repo_config}) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    CliRun run = setup.Plan({"--scenario", "local_direct", "--custom-cmd", "echo hi"});
    INFO(run.Describe());
    CHECK_FALSE(run.timed_out);  // a reader that opens it blocking waits forever
    CHECK(run.seconds < 20);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains(path) && Catch::Contains("not a regular file"));
    CHECK_FALSE(setup.AnyWorkDir());
    fs::remove(path);
  }
}

TEST_CASE("config trust: config files writable by others or owned by another user are refused",
          "[cli][config]") {
  TrustSetup setup;
  const std::vector<std::string> direct = {"--scenario", "local_direct", "--custom-cmd", "echo hi"};
  for (const std::string& path : {setup.user_config, setup.repo_config}) {
    INFO(path);
    WriteTextFile(path, "monitor_timeout: 5m\n");
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read | fs::perms::others_write);  // 0646
    CliRun world = setup.Plan(direct);
    INFO(world.Describe());
    CHECK(world.exit_code == 2);
    CHECK_THAT(world.stderr_text, Catch::Contains(path) && Catch::Contains("writable by others") &&
                                      Catch::Contains("chmod go-w"));

    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::group_write);  // 0660
    CliRun group = setup.Plan(direct);
    INFO(group.Describe());
    CHECK(group.exit_code == 2);
    CHECK_THAT(group.stderr_text, Catch::Contains(path) && Catch::Contains("writable by group"));

    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);  // 0600
    REQUIRE(::chown(path.c_str(), kNobody, static_cast<gid_t>(-1)) == 0);
    CliRun other = setup.Plan(direct);
    INFO(other.Describe());
    CHECK(other.exit_code == 2);
    CHECK_THAT(other.stderr_text, Catch::Contains(path) && Catch::Contains("owned by uid 65534") &&
                                      Catch::Contains("nobody"));
    CHECK_FALSE(setup.AnyWorkDir());
    fs::remove(path);
  }
}

TEST_CASE("config trust: a checkout's config may not be a symlink, the user's may",
          "[cli][config]") {
  TrustSetup setup;
  const std::vector<std::string> direct = {"--scenario", "local_direct", "--custom-cmd", "echo hi"};
  const std::string target = setup.root.path() + "/dotfiles.yaml";
  WriteTextFile(target, "monitor_timeout: 5m\n");
  fs::create_symlink(target, setup.repo_config);
  CliRun repo = setup.Plan(direct);
  INFO(repo.Describe());
  CHECK(repo.exit_code == 2);
  CHECK_THAT(repo.stderr_text,
             Catch::Contains(setup.repo_config) && Catch::Contains("symbolic link"));
  CHECK_FALSE(setup.AnyWorkDir());
  fs::remove(setup.repo_config);

  fs::create_symlink(target, setup.user_config);  // dotfile managers link these
  CliRun user = setup.Plan(direct);
  INFO(user.Describe());
  CHECK(user.exit_code == 0);
  CHECK_THAT(user.stdout_text, Catch::Contains("config: monitor_timeout=5m"));
}
