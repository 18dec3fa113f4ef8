// `trtllm-run env` against the real Slurm clusters of tests/services/slurm.sh ([slurm])
// and through the real sshd of tests/services/sshd.sh ([sshd]): every field is checked
// against what sinfo, scontrol, sacctmgr, sbatch and srun say when run directly. The
// untagged cases need no service (no Slurm tools on PATH, bad catalogs).
#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "os/ssh.h"
#include "slurm/probe/slurm_probe.h"

namespace fs = std::filesystem;

namespace trtllm_run_test {
namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";
const char kSshPassword[] = "trtllm-test-pw";
const char kNoAcctConf[] = "/etc/slurm-noacct/slurm.conf";

// Runs a shell command line as `user` (root: as this test) and returns its stdout.
std::string Shell(const std::string& command,
                  const std::vector<std::pair<std::string, std::string>>& env = {},
                  const std::string& user = "root", int* exit_code = nullptr) {
  CliOptions options;
  options.program = "/bin/bash";
  options.args = {"-c", command};
  if (user != "root") {
    options.program = "/usr/sbin/runuser";
    options.args = {"-u", user, "--", "/bin/bash", "-c", command};
    options.cwd = "/";
  }
  options.env = env;
  CliRun run = RunCli(options);
  if (exit_code != nullptr) *exit_code = run.exit_code;
  return run.stdout_text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos) lines.push_back(line.substr(start));
  }
  return lines;
}

std::string First(const std::string& text) {
  std::vector<std::string> lines = Lines(text);
  return lines.empty() ? "" : lines.front();
}

rapidjson::Document Json(const CliRun& run) {
  rapidjson::Document doc;
  doc.Parse(run.stdout_text.c_str());
  INFO(run.Describe());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.IsObject());
  return doc;
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& value : array.GetArray()) out.emplace_back(value.GetString());
  return out;
}

bool AnyContains(const std::vector<std::string>& items, const std::string& needle) {
  return std::any_of(items.begin(), items.end(), [&](const std::string& item) {
    return item.find(needle) != std::string::npos;
  });
}

int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) count += line.find(needle) != std::string::npos;
  return count;
}

std::vector<std::string> SshArgs(const std::string& destination) {
  std::string dir = kSshDir;
  return {"--ssh-host",   destination,
          "--ssh-port",   "2222",
          "--ssh-option", "UserKnownHostsFile=" + dir + "/known_hosts",
          "--ssh-option", "StrictHostKeyChecking=yes"};
}

// What the probe must say, computed by running the Slurm commands directly, the way
// an administrator would check it (per partition, one command at a time).
void CheckAgainstSlurm(const rapidjson::Document& doc, const std::string& user,
                       const std::vector<std::pair<std::string, std::string>>& env = {}) {
  CHECK(std::string(doc["user"].GetString()) == user);
  std::vector<std::string> accounts;
  for (const std::string& line :
       Lines(Shell("sacctmgr -nP show assoc where user=" + user + " format=account", env, user))) {
    if (std::find(accounts.begin(), accounts.end(), line) == accounts.end()) {
      accounts.push_back(line);
    }
  }
  CHECK(Strings(doc["accounts"]) == accounts);
  std::string default_account =
      First(Shell("sacctmgr -nP show user " + user + " format=DefaultAccount", env, user));
  if (default_account.empty() && !accounts.empty()) default_account = accounts.front();
  if (default_account.empty()) {
    CHECK(doc["default_account"].IsNull());
  } else {
    REQUIRE(doc["default_account"].IsString());
    CHECK(std::string(doc["default_account"].GetString()) == default_account);
  }

  std::vector<std::string> rows = Lines(Shell("sinfo -h -o '%P|%a|%l|%D'", env, user));
  const rapidjson::Value& partitions = doc["partitions"];
  REQUIRE(partitions.Size() == rows.size());
  std::vector<std::string> accepted, names;
  std::string marked;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> fields;
    std::stringstream row(rows[i]);
    std::string field;
    while (std::getline(row, field, '|')) fields.push_back(field);
    REQUIRE(fields.size() == 4);
    std::string name = fields[0];
    if (name.back() == '*') {
      name.pop_back();
      marked = name;
    }
    names.push_back(name);
    const rapidjson::Value& p = partitions[static_cast<rapidjson::SizeType>(i)];
    INFO("partition " << name);
    CHECK(std::string(p["name"].GetString()) == name);
    CHECK(std::string(p["state"].GetString()) == fields[1]);
    CHECK(std::string(p["time_limit"].GetString()) == fields[2]);
    CHECK(std::string(p["nodes"].GetString()) == fields[3]);
    if (fields[1] != "up") {
      CHECK(p["arch"].IsNull());
      continue;
    }
    std::string node = First(Shell("sinfo -h -N -p " + name + " -o %N", env, user));
    std::string arch = First(
        Shell("scontrol show node " + node + " | grep -o 'Arch=[^ ]*' | cut -d= -f2", env, user));
    REQUIRE(p["arch"].IsString());
    CHECK(std::string(p["arch"].GetString()) == arch);
    std::string gres = First(Shell("sinfo -h -p " + name + " -o %G", env, user));
    CHECK(std::string(p["gres"].GetString()) == gres);
    if (gres.rfind("gpu:", 0) == 0) {
      std::string count = gres.substr(0, gres.find('('));
      count = count.substr(count.rfind(':') + 1);
      REQUIRE(p["gpus_per_node"].IsInt());
      CHECK(p["gpus_per_node"].GetInt() == std::stoi(count));
      CHECK(p["requires_gres"].GetBool());
    } else {
      CHECK(p["gpus_per_node"].IsNull());
      CHECK_FALSE(p["requires_gres"].GetBool());
    }
    std::string account = default_account.empty() ? "" : " --account=" + default_account;
    int status = -1;
    Shell("sbatch --test-only --partition=" + name + account +
              " --nodes=1 --time=00:01:00 --ntasks=1 --wrap=true 2>/dev/null",
          env, user, &status);
    if (status == 0) {
      accepted.push_back(name);
    }
  }
  // The access rule: plain names, then *-backfill, then *-hp/*-admin; ties go to the
  // partition sinfo marks default.
  auto rank = [](const std::string& n) {
    auto ends = [&](const std::string& s) {
      return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    return ends("-backfill") ? 1 : (ends("-hp") || ends("-admin")) ? 2 : 0;
  };
  std::string expected_default;
  for (const std::string& name : names) {
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end()) continue;
    if (expected_default.empty() || rank(name) < rank(expected_default) ||
        (rank(name) == rank(expected_default) && name == marked)) {
      expected_default = name;
    }
  }
  if (!expected_default.empty()) {
    CHECK(std::string(doc["default_partition"].GetString()) == expected_default);
  }

  std::string mpi = Shell("srun --mpi=list 2>&1", env, user);
  std::vector<std::string> available = Strings(doc["pmix"]["available"]);
  for (const std::string& plugin : available) {
    CHECK(mpi.find(plugin) != std::string::npos);
  }
  if (mpi.find("pmix_v4") != std::string::npos) {
    CHECK(std::find(available.begin(), available.end(), "pmix_v4") != available.end());
  }
}

}  // namespace

TEST_CASE("env: the probe matches what Slurm says, field by field", "[slurm]") {
  CliRun run = RunCli({"env"});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document doc = Json(run);
  CheckAgainstSlurm(doc, "root");
  // The cluster of tests/services/slurm.sh, spelled out.
  CHECK(Strings(doc["accounts"]) == std::vector<std::string>{"proj2", "research", "root"});
  CHECK(std::string(doc["default_account"].GetString()) == "research");
  CHECK(std::string(doc["default_partition"].GetString()) == "batch");
  CHECK(std::string(doc["pmix"]["preferred"].GetString()) == "pmix_v4");
  CHECK(doc["errors"].Empty());
  CHECK(run.seconds < 20);
}

TEST_CASE("env: text format and an atomic --output", "[slurm]") {
  TempDir dir;
  std::string out = dir.path() + "/slurm_env.json";
  CliRun run = RunCli({"env", "--output", out});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK(ReadTextFile(out) == run.stdout_text);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
  trtllm_run::Result<trtllm_run::SlurmEnv> parsed =
      trtllm_run::SlurmEnvFromJson(ReadTextFile(out), out);
  REQUIRE(parsed.ok());
  CHECK(parsed.value().default_partition == std::optional<std::string>("batch"));

  CliRun text = RunCli({"env", "--format", "text"});
  INFO(text.Describe());
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.stdout_text, Catch::Contains("default_account: research\n"));
  CHECK_THAT(text.stdout_text, Catch::Contains("default_partition: batch\n"));
  CHECK_THAT(text.stdout_text, Catch::Contains("errors: (none)\n"));
}

TEST_CASE("env: a user without association gets the error entry", "[slurm]") {
  CliOptions options;
  options.program = "/usr/sbin/runuser";
  options.args = {"-u", "noassoc", "--", TRTLLM_RUN_BIN, "env"};
  options.cwd = "/";
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  rapidjson::Document doc = Json(run);
  CheckAgainstSlurm(doc, "noassoc");
  CHECK(doc["accounts"].Empty());
  CHECK(doc["default_account"].IsNull());
  std::vector<std::string> errors = Strings(doc["errors"]);
  CHECK(AnyContains(errors, "no SLURM account associations for user noassoc"));
  CHECK(AnyContains(errors,
                    "partition access verification failed; falling back to first "
                    "available partition"));
  CHECK(doc["partitions"].Size() == 7);  // every partition of tests/services/slurm.sh
}

TEST_CASE("env: without accounting, partitions come back and the errors say why", "[slurm]") {
  CliOptions options;
  options.args = {"env"};
  options.env = {{"SLURM_CONF", kNoAcctConf}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  rapidjson::Document doc = Json(run);
  CheckAgainstSlurm(doc, "root", {{"SLURM_CONF", kNoAcctConf}});
  REQUIRE(doc["partitions"].Size() == 1);
  CHECK(std::string(doc["partitions"][0]["name"].GetString()) == "batch");
  CHECK(std::string(doc["default_partition"].GetString()) == "batch");
  std::vector<std::string> errors = Strings(doc["errors"]);
  CHECK(AnyContains(errors,
                    "'sacctmgr show assoc' failed (exit 1): You are not running a "
                    "supported accounting_storage plugin; accounts unavailable"));
  CHECK(AnyContains(errors, "no SLURM account associations for user root"));
}

TEST_CASE("env: accounts from the controller's cache, slurmdbd only without it", "[slurm]") {
  // sacctmgr on PATH logs each call and runs the real one.
  TempDir dir;
  std::string log = dir.path() + "/sacctmgr.log";
  std::string wrapper = dir.path() + "/sacctmgr";
  WriteTextFile(wrapper, "#!/bin/bash\necho \"$*\" >>" + log + "\nexec /usr/bin/sacctmgr \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  std::string path = dir.path() + ":" + std::getenv("PATH");

  CliOptions options;
  options.args = {"env"};
  options.env = {{"PATH", path}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document doc = Json(run);
  CheckAgainstSlurm(doc, "root");  // what sacctmgr itself says, in its order
  CHECK_FALSE(fs::exists(log));    // ... without asking slurmdbd

  // trtllm-noacct's controller holds no associations: sacctmgr is asked (and fails).
  options.env = {{"PATH", path}, {"SLURM_CONF", kNoAcctConf}};
  CliRun noacct = RunCli(options);
  INFO(noacct.Describe());
  CHECK(noacct.exit_code == 2);
  std::vector<std::string> calls = Lines(ReadTextFile(log));  // run concurrently
  std::sort(calls.begin(), calls.end());
  CHECK(calls == std::vector<std::string>{"-nP show assoc where user=root format=account",
                                          "-nP show user root format=DefaultAccount"});
}

TEST_CASE("env: partition filter, and account/partition validation", "[slurm]") {
  CliRun filtered = RunCli({"env", "--partitions", "cpu"});
  INFO(filtered.Describe());
  CHECK(filtered.exit_code == 0);
  rapidjson::Document doc = Json(filtered);
  for (const auto& p : doc["partitions"].GetArray()) {
    CHECK(p["arch"].IsNull() == (std::string(p["name"].GetString()) != "cpu"));
  }
  CHECK(std::string(doc["default_partition"].GetString()) == "cpu");

  CliRun unknown = RunCli({"env", "--partitions", "gpu-a,cpu"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.stdout_text,
             Catch::Contains("partition 'gpu-a' (partition filter) does not exist; partitions: "
                             "maint, restricted, batch-backfill, debug, batch, cpu"));

  CliRun bad_account = RunCli({"env", "--account", "bogus"});
  INFO(bad_account.Describe());
  CHECK(bad_account.exit_code == 2);
  CHECK_THAT(bad_account.stderr_text, Catch::Contains("account 'bogus' (--account)"));
  CHECK_THAT(bad_account.stderr_text, Catch::Contains("valid accounts: proj2, research, root"));

  CliRun bad_partition = RunCli({"env", "--partition", "maint"});
  CHECK(bad_partition.exit_code == 2);
  CHECK_THAT(bad_partition.stderr_text, Catch::Contains("partition 'maint' (--partition) is down"));
  CHECK_THAT(bad_partition.stderr_text,
             Catch::Contains("up: restricted, batch-backfill, debug, batch, cpu"));

  CliRun good = RunCli({"env", "--account", "proj2", "--partition", "restricted"});
  INFO(good.Describe());
  CHECK(good.exit_code == 0);
  CHECK_THAT(good.stderr_text, Catch::Contains("account proj2 (--account; validated)"));
}

TEST_CASE("env --env-check on a Slurm host", "[slurm]") {
  CliRun run = RunCli({"env", "--env-check"});
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document doc = Json(run);
  CHECK(doc["slurm_available"].GetBool());
  CHECK(std::string(doc["cluster_name"].GetString()) == "trtllm-test");
  CHECK(std::string(doc["arch"].GetString()) == First(Shell("uname -m")));
}

TEST_CASE("env: without Slurm tools on PATH, exit 3 and the documented document", "[env]") {
  // A PATH with the shell tools the probe script needs, and no Slurm command.
  TempDir bin;
  for (const char* tool : {"bash", "mktemp", "rm", "cat", "wc", "id", "timeout", "sed"}) {
    for (const char* dir : {"/usr/bin/", "/bin/"}) {
      if (fs::exists(std::string(dir) + tool)) {
        fs::create_symlink(std::string(dir) + tool, fs::path(bin.path()) / tool);
        break;
      }
    }
  }
  CliOptions options;
  options.args = {"env"};
  options.env = {{"PATH", bin.path()}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 3);  // the probe could not run (README: "trtllm-run env" exit)
  std::string user = First(Shell("id -un"));
  CHECK(run.stdout_text ==
        "{\n"
        "  \"user\": \"" +
            user +
            "\",\n"
            "  \"default_account\": null,\n"
            "  \"accounts\": [],\n"
            "  \"default_partition\": null,\n"
            "  \"partitions\": [],\n"
            "  \"pmix\": {\n"
            "    \"available\": [],\n"
            "    \"preferred\": null\n"
            "  },\n"
            "  \"errors\": [\n"
            "    \"SLURM client tools not found\"\n"
            "  ]\n"
            "}\n");
}

TEST_CASE("env: bad catalog, unknown cluster, bad flags are exit 2 naming the choices", "[env]") {
  TempDir dir;
  std::string bad = dir.path() + "/clusters.yaml";
  WriteTextFile(bad, "clusters:\n  - name: eos\n    gpu_count: 8\n");
  CliRun yaml = RunCli({"env", "--clusters", bad});
  CHECK(yaml.exit_code == 2);
  CHECK_THAT(yaml.stderr_text, Catch::Contains(bad + ":3: unknown key 'gpu_count'"));
  CHECK_THAT(yaml.stderr_text, Catch::Contains("gpus_per_node"));
  CHECK(yaml.stdout_text.empty());

  CliOptions from_env;
  from_env.args = {"env"};
  from_env.env = {{"TRTLLM_RUN_CLUSTERS", bad}};
  CHECK(RunCli(from_env).exit_code == 2);

  std::string good = dir.path() + "/good.yaml";
  WriteTextFile(good,
                "clusters:\n  - {name: eos, device_types: [H100], gpus_per_node: 8}\n"
                "  - {name: oberon, device_types: [GB200], gpus_per_node: 4}\n");
  CliRun unknown = RunCli({"env", "--clusters", good, "--slurm-cluster", "titan"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.stderr_text, Catch::Contains("unknown cluster 'titan' (--slurm-cluster)"));
  CHECK_THAT(unknown.stderr_text, Catch::Contains("eos (H100 x8), oberon (GB200 x4)"));

  CliRun missing = RunCli({"env", "--clusters", dir.path() + "/none.yaml"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.stderr_text, Catch::Contains("none.yaml' does not exist"));

  CHECK(RunCli({"env", "--format", "xml"}).exit_code == 2);
  CHECK(RunCli({"env", "--identity", "/k"}).exit_code == 2);
}

TEST_CASE("env over SSH: the same document in one connection", "[sshd]") {
  std::string log = std::string(kSshDir) + "/sshd.log";
  CliOptions local;
  local.program = "/usr/sbin/runuser";
  local.args = {"-u", "sshtest", "--", TRTLLM_RUN_BIN, "env"};
  local.cwd = "/";
  CliRun here = RunCli(local);
  INFO(here.Describe());
  REQUIRE(here.exit_code == 0);

  int before = CountLines(log, "Accepted publickey for sshtest");
  TempDir tmp;  // the control socket's private directory goes here
  CliOptions options;
  options.args = {"env", "--identity", std::string(kSshDir) + "/id_ed25519"};
  for (const std::string& arg : SshArgs("sshtest@127.0.0.1")) options.args.push_back(arg);
  options.env = {{"TMPDIR", tmp.path()}};
  CliRun remote = RunCli(options);
  INFO(remote.Describe());
  CHECK(remote.exit_code == 0);
  CHECK(remote.stdout_text == here.stdout_text);
  CheckAgainstSlurm(Json(remote), "sshtest");
  CHECK(CountLines(log, "Accepted publickey for sshtest") == before + 1);
  // The master connection ended with the command, and its private directory is gone.
  CHECK(fs::is_empty(tmp.path()));
  CHECK(WaitNoProcessWithMarker(tmp.path(), 5));
}

TEST_CASE("env over SSH with a password", "[sshd]") {
  std::string log = std::string(kSshDir) + "/sshd.log";
  TempDir dir;
  std::string password_file = dir.path() + "/pw";
  WriteTextFile(password_file, std::string(kSshPassword) + "\n");
  int before = CountLines(log, "Accepted password for slurmpw");
  std::vector<std::string> args = {"env", "--password-file", password_file};
  for (const std::string& arg : SshArgs("slurmpw@127.0.0.1")) args.push_back(arg);
  CliRun run = RunCli(args);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CheckAgainstSlurm(Json(run), "slurmpw");
  CHECK(CountLines(log, "Accepted password for slurmpw") == before + 1);
  CHECK(run.stdout_text.find(kSshPassword) == std::string::npos);
  CHECK(run.stderr_text.find(kSshPassword) == std::string::npos);

  // The same through $TRTLLM_RUN_SLURM_PASSWORD; a wrong one fails fast, exit 3.
  CliOptions from_env;
  from_env.args = {"env", "--format", "text"};
  for (const std::string& arg : SshArgs("slurmpw@127.0.0.1")) from_env.args.push_back(arg);
  from_env.env = {{"TRTLLM_RUN_SLURM_PASSWORD", kSshPassword}};
  CHECK(RunCli(from_env).exit_code == 0);
  from_env.env = {{"TRTLLM_RUN_SLURM_PASSWORD", "wrong-password"}};
  CliRun wrong = RunCli(from_env);
  CHECK(wrong.exit_code == 3);
  CHECK_THAT(wrong.stderr_text, Catch::Contains("cannot connect to ssh:slurmpw@127.0.0.1:2222"));
  CHECK_THAT(wrong.stderr_text, Catch::Contains("Permission denied"));
  CHECK(wrong.stderr_text.find("wrong-password") == std::string::npos);
}

TEST_CASE("env --slurm-cluster: catalog host and policy fields", "[sshd]") {
  TempDir dir;
  std::string catalog = dir.path() + "/clusters.yaml";
  WriteTextFile(catalog,
                "clusters:\n"
                "  - name: loop\n"
                "    ssh_host_pattern: \"{slurm_user}@127.0.0.1\"\n"
                "    slurm_user: sshtest\n"
                "    user_root_dir: \"/home/{slurm_user}\"\n"
                "    mounts: [\"/data:/data\"]\n");
  std::vector<std::string> args = {"env",
                                   "--clusters",
                                   catalog,
                                   "--slurm-cluster",
                                   "LOOP",
                                   "--identity",
                                   std::string(kSshDir) + "/id_ed25519"};
  std::vector<std::string> ssh = SshArgs("unused");
  args.insert(args.end(), ssh.begin() + 2, ssh.end());  // port and host-key options only
  CliRun run = RunCli(args);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document doc = Json(run);
  CHECK(std::string(doc["user"].GetString()) == "sshtest");
  CHECK(std::string(doc["cluster_name"].GetString()) == "loop");
  CHECK(std::string(doc["ssh_host"].GetString()) == "sshtest@127.0.0.1");
  CHECK(std::string(doc["slurm_user"].GetString()) == "sshtest");
  CHECK(std::string(doc["remote_cwd"].GetString()) == "/home/sshtest");
  CHECK(Strings(doc["mounts"]) == std::vector<std::string>{"/data:/data"});
  CHECK(doc["mfa_style"].IsNull());
}

TEST_CASE("SshScenario: one master for the probe and every later command", "[sshd]") {
  std::string log = std::string(kSshDir) + "/sshd.log";
  trtllm_run::SshOptions options;
  options.destination = "127.0.0.1";
  options.user = "sshtest";
  options.port = 2222;
  options.identity_file = std::string(kSshDir) + "/id_ed25519";
  options.known_hosts_file = std::string(kSshDir) + "/known_hosts";
  options.strict_host_key_checking = "yes";
  auto made = trtllm_run::MakeSshScenario(options);
  REQUIRE(made.ok());
  trtllm_run::SshScenario& ssh = *made.value();
  int before = CountLines(log, "Accepted publickey for sshtest");
  auto env = trtllm_run::ProbeSlurm(ssh, trtllm_run::ProbeOptions{});
  REQUIRE(env.ok());
  CHECK(env.value().user == "sshtest");
  for (int i = 0; i < 3; ++i) {
    auto echo = ssh.Run({"printf", "%s|", "a b", "$HOME"}, "");
    REQUIRE(echo.ok());
    CHECK(echo.value().stdout_text == "a b|$HOME|");
  }
  auto cat = ssh.Run({"cat"}, std::string(300000, 'x'));  // stdin larger than a pipe
  REQUIRE(cat.ok());
  CHECK(cat.value().stdout_text.size() == 300000);
  auto fail = ssh.Run({"sh", "-c", "echo oops >&2; exit 7"}, "");
  REQUIRE(fail.ok());
  CHECK(fail.value().exit_code == 7);
  CHECK(fail.value().stderr_text == "oops\n");
  CHECK(ssh.connections_opened() == 1);
  CHECK(ssh.MasterAlive());
  CHECK(CountLines(log, "Accepted publickey for sshtest") == before + 1);
  std::string control_dir = fs::path(ssh.control_path()).parent_path().string();
  REQUIRE(ssh.Close().ok());
  CHECK_FALSE(ssh.MasterAlive());
  CHECK_FALSE(fs::exists(control_dir));
}

}  // namespace trtllm_run_test
