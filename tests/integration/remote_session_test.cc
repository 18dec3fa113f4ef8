// `run --cases` with remote_slurm cases: one shared session per SSH destination (one
// master connection, one preflight, one repo setup, one build job, one watcher), through
// the trtllm-run binary, a loopback sshd of the test's own (its log counts the
// connections) and the real test cluster.
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run;
using namespace trtllm_run_test;

namespace {

const char kSshDir[] = "/run/trtllm-test-sshd";
const int kPort = 2241;  // this file's own sshd (tests/services/sshd.sh start-extra)

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

int AcceptedLines() {
  std::string log = ReadTextFile(std::string(kSshDir) + "/sshd-" + std::to_string(kPort) + ".log");
  int count = 0;
  for (size_t at = log.find("Accepted "); at != std::string::npos;
       at = log.find("Accepted ", at + 1)) {
    ++count;
  }
  return count;
}

// The sshd of this file on kPort, stopped (with its connections) at the end.
struct OwnSshd {
  OwnSshd() {
    EnsureSshd();
    int status = 0;
    std::string out = Shell("bash " + SourceDir() + "/tests/services/sshd.sh start-extra " +
                                std::to_string(kPort) + " 2>&1",
                            &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  ~OwnSshd() {
    Shell("bash " + SourceDir() + "/tests/services/sshd.sh stop-extra " + std::to_string(kPort) +
          " >/dev/null 2>&1");
  }
};

// A bare repo with one commit on `main` (scripts/build_wheel.py succeeds, slowly enough
// that cases sharing it wait) and one on `broken` (it fails), owned by sshtest.
class OriginRepo {
 public:
  OriginRepo() {
    ::chmod(dir_.path().c_str(), 0755);
    path_ = dir_.path() + "/TensorRT-LLM.git";
    std::string work = dir_.path() + "/seed";
    std::string script =
        "set -e\ngit init -q -b main " + work + "\ncd " + work +
        "\ngit config user.email t@example.com && git config user.name test\n"
        "mkdir -p scripts\n"
        "printf 'import os, sys, time\\nprint(\"building the wheel\")\\ntime.sleep(3)\\n"
        "sys.exit(1 if os.path.exists(\"BUILD_SHOULD_FAIL\") else 0)\\n' > scripts/build_wheel.py\n"
        "echo readme > README.md\ngit add -A && git commit -q -m main\n"
        "git checkout -q -b broken\n"
        "echo 'error: this branch does not build' > BUILD_SHOULD_FAIL\n"
        "git add -A && git commit -q -m broken\n"
        "git clone -q --bare " +
        work + " " + path_ + "\nchmod -R a+rX " + dir_.path() + "\nchown -R sshtest " + path_ +
        "\n";
    int status = 0;
    std::string out = Shell("bash -c " + ShellQuote(script) + " 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
  }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_{"trtllm_origin"};
  std::string path_;
};

// A cases run against two aliases of this file's sshd (two destinations when both are
// used), key user sshtest.
struct RemoteCases {
  OwnSshd sshd;
  OriginRepo origin;
  TempDir repo{"trtllm_remote_cases"};
  std::string remote_root = "/home/sshtest/trtllm_cases_" + RandomName();
  std::string ssh_config = repo.path() + "/ssh_config";
  std::string marker = UniqueMarker("rs");
  int accepted_before = 0;

  RemoteCases() {
    std::string config;
    for (const char* alias : {"trtllm-rs-login", "trtllm-rs-login2"}) {
      config += std::string("Host ") + alias + "\n  HostName 127.0.0.1\n  Port " +
                std::to_string(kPort) + "\n  User sshtest\n  UserKnownHostsFile " + kSshDir +
                "/known_hosts_" + std::to_string(kPort) +
                "\n  StrictHostKeyChecking yes\n  IdentityFile " + kSshDir +
                "/id_ed25519\n  IdentitiesOnly yes\n";
    }
    WriteTextFile(ssh_config, config);
    accepted_before = AcceptedLines();
  }
  ~RemoteCases() { Shell("rm -rf " + ShellQuote(remote_root)); }

  // Cases named <marker>_<i> running `commands[i]`; `extra` is added to each entry.
  void WriteCases(const std::vector<std::string>& commands, const std::string& extra = "",
                  const std::set<int>& second_destination = {}) {
    std::string yaml = "cases:\n";
    for (size_t i = 0; i < commands.size(); ++i) {
      std::string name = Name(static_cast<int>(i));
      yaml += "  - {name: " + name + ", model_name: " + name + ", custom_cmd: \"" + commands[i] +
              "\"" + extra +
              // Both aliases reach this host: the second one's checkout is a path of its own.
              (second_destination.count(static_cast<int>(i))
                   ? ", ssh_host: trtllm-rs-login2, remote_repo_path: " + remote_root + "/second"
                   : "") +
              "}\n";
    }
    WriteTextFile(repo.path() + "/cases.yaml", yaml);
  }
  std::string Name(int i) const { return marker + "_" + std::to_string(i); }

  CliOptions Options(const std::string& branch, std::vector<std::string> more = {}) const {
    CliOptions options;
    options.args = {"run",
                    "--cases",
                    repo.path() + "/cases.yaml",
                    "--scenario",
                    "remote_slurm",
                    "--ssh-host",
                    "trtllm-rs-login",
                    "--slurm-user",
                    "sshtest",
                    "--ssh-config-file",
                    ssh_config,
                    "--repo-root",
                    repo.path(),
                    "--remote-repo-path",
                    remote_root + "/TensorRT-LLM",
                    "--repo-url",
                    origin.path(),
                    "--repo-branch",
                    branch,
                    "--partition",
                    "batch",
                    "--skip-install",
                    "true",
                    "--container-runtime",
                    "none",
                    "--container-image",
                    "none",
                    "--kill-grace",
                    "5"};
    options.args.insert(options.args.end(), more.begin(), more.end());
    options.timeout_seconds = 300;
    return options;
  }

  // The combined result.json: the only cases_* dir under work_dirs.
  rapidjson::Document Combined() const {
    std::string found;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(repo.path() + "/work_dirs", error)) {
      if (entry.path().filename().string().rfind("cases_", 0) == 0) found = entry.path().string();
    }
    return ReadResultJson(found);
  }

  int Accepted() const { return AcceptedLines() - accepted_before; }

  // sshd's connections of planning alone (`plan --cases` with the same inputs: the Slurm
  // probe of each destination, before any session exists); the count starts after them.
  int PlanningConnections(std::vector<std::string> more = {}) {
    CliOptions plan = Options("main", more);
    plan.args[0] = "plan";
    plan.args.resize(plan.args.size() - more.size() - 2);  // without --kill-grace
    plan.args.insert(plan.args.end(), more.begin(), more.end());
    CliRun run = RunCli(plan);
    INFO(run.Describe());
    REQUIRE(run.exit_code == 0);
    int planning = Accepted();
    accepted_before = AcceptedLines();
    return planning;
  }
};

// The one session's stats of the combined result (empty object when there is none).
const rapidjson::Value& SessionStats(const rapidjson::Document& combined) {
  static const rapidjson::Value kNone(rapidjson::kObjectType);
  if (!combined.IsObject() || !combined.HasMember("sessions") || combined["sessions"].Size() != 1)
    return kNone;
  return combined["sessions"][0]["stats"];
}

const rapidjson::Value& Details(const rapidjson::Value& item) { return item["result"]["details"]; }

}  // namespace

TEST_CASE(
    "remote session: 6 cases to one destination share one SSH connection, preflight, "
    "repo setup and watcher",
    "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  std::vector<std::string> commands;
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 6; ++i) {
    bool fail = i % 3 == 1;
    commands.push_back(fail ? "echo case " + std::to_string(i) + "; exit 1"
                            : "echo case " + std::to_string(i) + " ok");
    expected[cases.Name(i)] = fail ? "FAILED" : "PASSED";
  }
  cases.WriteCases(commands);
  const int planning = cases.PlanningConnections();
  CliRun run = RunCli(cases.Options("main"));
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK(run.stderr_text.find("one shared session per destination (1 destination)") !=
        std::string::npos);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 6);
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == expected[Str(item, "name")]);
    CHECK(Str(Details(item), "ssh_connections") == "1");
    CHECK(Str(Details(item), "shared_session") == "true");
    CHECK(JobActiveStates(Str(item, "job_id")).empty());
    CHECK(ReadTextFile(Str(item["result"], "log_file")).find("case ") != std::string::npos);
  }
  const rapidjson::Value& stats = SessionStats(combined);
  CHECK(Str(stats, "destinations") == "1");
  CHECK(Str(stats, "connections") == "1");
  CHECK(Str(stats, "preflights") == "1");
  CHECK(Str(stats, "repo_setups") == "1");
  CHECK(Str(stats, "watchers") == "1");
  CHECK(Str(stats, "jobs") == "6");
  CHECK(Str(stats, "submits") == "6");
  // sshd's own count: planning's probe, then one authenticated connection for the run.
  CHECK(cases.Accepted() == planning + 1);
}

TEST_CASE("remote session: two destinations get a master connection each", "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases(
      {"echo a ok; sleep 3", "echo b ok; sleep 3", "echo c ok; sleep 3", "echo d ok; sleep 3"}, "",
      {2, 3});
  const int planning = cases.PlanningConnections();
  CliRun run = RunCli(cases.Options("main"));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  CHECK(run.stderr_text.find("one shared session per destination (2 destinations)") !=
        std::string::npos);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 4);
  std::set<std::string> hosts;
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == "PASSED");
    CHECK(Str(Details(item), "ssh_connections") == "1");
    hosts.insert(Str(Details(item), "ssh_host"));
  }
  CHECK(hosts == std::set<std::string>{"trtllm-rs-login", "trtllm-rs-login2"});
  const rapidjson::Value& stats = SessionStats(combined);
  CHECK(Str(stats, "destinations") == "2");
  CHECK(Str(stats, "watchers") == "2");
  CHECK(Str(stats, "connections") == "2");
  CHECK(Str(stats, "preflights") == "2");
  CHECK(cases.Accepted() == planning + 2);
}

TEST_CASE("remote session: build_project shared by 3 cases runs one build job", "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo one ok", "echo two ok", "echo three ok"});
  CliRun run = RunCli(cases.Options("main", {"--build-project", "true"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  std::set<std::string> builds;
  for (const auto& item : combined["cases"].GetArray()) {
    CHECK(Str(item, "status") == "PASSED");
    builds.insert(Str(Details(item), "build_job_id"));
  }
  CHECK(builds.size() == 1);
  CHECK(Str(SessionStats(combined), "build_jobs") == "1");
  CHECK(Str(SessionStats(combined), "jobs") == "4");  // the build job and the 3 cases
}

TEST_CASE("remote session: a failing shared build ends every case BUILD_FAILED", "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo one", "echo two", "echo three"});
  CliRun run = RunCli(cases.Options("broken", {"--build-project", "true"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 3);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  std::set<std::string> builds;
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item["result"], "reason"));
    CHECK(Str(item, "status") == "ERROR");
    CHECK(Str(item["result"], "reason").rfind("BUILD_FAILED: ", 0) == 0);
    builds.insert(Str(Details(item), "build_job_id"));
  }
  CHECK(builds.size() == 1);
  CHECK(Str(SessionStats(combined), "build_jobs") == "1");
  CHECK(Str(SessionStats(combined), "submits") == "1");  // only the build job
}

TEST_CASE(
    "remote session: Ctrl-C cancels every remote job of both destinations, all CANCELLED and gone",
    "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo one; sleep $((600 + 71))", "echo two; sleep $((600 + 72))",
                    "echo three; sleep $((600 + 73))"},
                   "", {2});  // two destinations
  CliOptions options = cases.Options("main");
  options.signal = SIGINT;
  options.signal_when_process = "sleep 67";  // a job runs on the cluster
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.signal_sent);
  CHECK(run.exit_code == 130);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  for (const auto& item : combined["cases"].GetArray()) {
    CHECK(Str(item, "status") == "CANCELLED");
    std::string id = Str(item, "job_id");
    if (!id.empty() && id != "<missing>") CHECK(JobActiveStates(id).empty());
  }
  CHECK(Str(SessionStats(combined), "destinations") == "2");
  CHECK(Str(SessionStats(combined), "connections") == "2");
  CHECK(Str(SessionStats(combined), "cancels") != "0");
  for (const char* sleep : {"sleep 671", "sleep 672", "sleep 673"}) {
    CHECK(WaitNoProcessWithMarker(sleep, 10));
  }
}

TEST_CASE("remote session: the shared master killed mid-watch is re-established", "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo " + cases.marker + " before; sleep 8; echo after",
                    "echo " + cases.marker + " before; sleep 8; echo after"});
  const int planning = cases.PlanningConnections();
  std::thread killer([&] {
    // Once a job runs, kill the master: the ssh process whose argv names this config.
    for (int waited = 0; waited < 1200; ++waited) {
      if (Shell("squeue -h -o '%j %T' | grep -F " + ShellQuote(cases.marker) + " || true")
              .find("RUNNING") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    for (int pid : PidsWithMarker("ControlMaster=yes")) {
      std::string cmdline = ReadTextFile("/proc/" + std::to_string(pid) + "/cmdline");
      if (cmdline.find(cases.ssh_config) != std::string::npos) ::kill(pid, SIGKILL);
    }
  });
  CliRun run = RunCli(cases.Options("main"));
  killer.join();
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 2);
  for (const auto& item : combined["cases"].GetArray()) {
    CHECK(Str(item, "status") == "PASSED");
    CHECK(ReadTextFile(Str(item["result"], "log_file")).find("after") != std::string::npos);
  }
  CHECK(Str(SessionStats(combined), "connections") == "2");
  CHECK(cases.Accepted() == planning + 2);
}

TEST_CASE("remote session: session=per-case opens one connection per case", "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo one ok", "echo two ok", "echo three ok"});
  const int planning = cases.PlanningConnections({"--executor-option", "session=per-case"});
  // One at a time: per-case runs set up the same fresh checkout each, and racing clones
  // of one path fail (as they always did).
  CliRun run = RunCli(
      cases.Options("main", {"--executor-option", "session=per-case", "--max-parallel", "1"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason"));
    CHECK(Str(item, "status") == "PASSED");
    CHECK(Str(Details(item), "ssh_connections") == "1");
    CHECK(Str(Details(item), "shared_session") == "<missing>");
  }
  CHECK(Str(SessionStats(combined), "per_case_runs") == "3");
  CHECK(cases.Accepted() == planning + 3);
}

TEST_CASE("remote session: a bad session value is exit 2 naming the valid values",
          "[slurm][sshd]") {
  EnsureSlurm();
  RemoteCases cases;
  cases.WriteCases({"echo one ok"});
  CliRun run = RunCli(cases.Options("main", {"--executor-option", "session=sometimes"}));
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("session=sometimes") != std::string::npos);
  CHECK(run.stderr_text.find("valid values: shared (the default), per-case") != std::string::npos);
  CHECK(!fs::exists(cases.repo.path() + "/work_dirs"));
  CHECK(!fs::exists(cases.remote_root));  // nothing set up on the login node
}

TEST_CASE(
    "remote session: release_allocation false runs in the held allocation over the "
    "shared master",
    "[slurm][sshd]") {
  EnsureSlurm();
  TempDir state("trtllm_remote_session_state");
  RemoteCases cases;
  // The allocation records the ssh config it was made with: one that outlives the run.
  std::string config = state.path() + "/ssh_config";
  WriteTextFile(config, ReadTextFile(cases.ssh_config));
  cases.WriteCases({"echo held step one", "echo held step two"},
                   ", release_allocation: false, alloc_time_limit: 10m");
  CliOptions options = cases.Options("main", {"--max-parallel", "1"});
  for (size_t i = 0; i + 1 < options.args.size(); ++i) {
    if (options.args[i] == "--ssh-config-file") options.args[i + 1] = config;
  }
  options.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 0);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 2);
  std::set<std::string> allocations;
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason") + "\n--- log\n" +
         ReadTextFile(Str(item["result"], "log_file")));
    CHECK(Str(item, "status") == "PASSED");
    CHECK(Str(Details(item), "shared_session") == "true");
    allocations.insert(Str(Details(item), "allocation_id"));
  }
  REQUIRE(allocations.size() == 1);  // the second case reused the first one's
  const std::string allocation = *allocations.begin();
  for (const auto& item : combined["cases"].GetArray()) {
    std::string log = ReadTextFile(Str(item["result"], "log_file"));
    CHECK(log.find("job " + allocation + " on") != std::string::npos);
    CHECK(log.find("held step") != std::string::npos);
  }
  CHECK(Str(SessionStats(combined), "connections") == "1");
  CHECK(JobState(allocation) == "RUNNING");
  CliOptions release;
  release.args = {"release"};
  release.env = {{"XDG_RUNTIME_DIR", state.path()}};
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
  CHECK(JobActiveStates(allocation).empty());
}

TEST_CASE(
    "remote session: a job's own end line is not its end: FAILED after its real exit, "
    "nothing left running",
    "[slurm][sshd][end_marker]") {
  EnsureSlurm();
  RemoteCases cases;
  const std::string line = "[trtllm-run] job finished with exit code 0";
  // The case (PASSED in 5.9 s while the job ran on), and a forged end line
  // followed by the real failure at once, beside a passing case.
  cases.WriteCases(
      {"echo '" + line + "'; sleep 15; exit 1", "echo '" + line + "'; exit 5", "echo all good"});
  CliRun run = RunCli(cases.Options("main"));
  INFO(run.Describe());
  CHECK(run.exit_code == 1);
  CHECK(run.seconds >= 15);
  rapidjson::Document combined = cases.Combined();
  REQUIRE(combined.IsObject());
  REQUIRE(combined["cases"].Size() == 3);
  const std::map<std::string, std::pair<std::string, int>> expected = {
      {cases.Name(0), {"FAILED", 1}},
      {cases.Name(1), {"FAILED", 5}},
      {cases.Name(2), {"PASSED", 0}}};
  for (const auto& item : combined["cases"].GetArray()) {
    INFO(Str(item, "name") + ": " + Str(item["result"], "reason") + "\n--- log\n" +
         ReadTextFile(Str(item["result"], "log_file")));
    const auto& [status, exit_code] = expected.at(Str(item, "name"));
    CHECK(Str(item, "status") == status);
    REQUIRE(item["result"].HasMember("exit_code"));
    CHECK(item["result"]["exit_code"].GetInt() == exit_code);
    CHECK(JobActiveStates(Str(item, "job_id")).empty());
  }
}
