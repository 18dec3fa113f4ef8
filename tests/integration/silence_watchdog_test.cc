// The silence watchdog: with --silence-timeout DURATION a job that writes no new byte of
// output for that long is stopped as a hang is (SIGTERM then SIGKILL locally, docker stop
// in a container, scancel on Slurm) and judged HANG_DETECTED "no output for Ns (last line:
// ...)", on every executor; a job that keeps printing runs to its end; without the flag
// nothing watches the silence.
//
// Each silent job prints a line carrying a marker and then replaces its shell with a
// sleep named after the marker (exec -a; in the busybox image a bash that waits for the
// sleep), so that "nothing of it is left" is a look at /proc for the marker (the Slurm
// steps and containers run on this host too).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "slurm_test_util.h"

namespace fs = std::filesystem;
using namespace trtllm_run_test;
using trtllm_run::ShellQuote;

namespace {

constexpr int kHangDetectedExit = 5;

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

// Prints its last line, then sleeps silently for a minute as a process named MARKER-silent.
std::string PrintThenSilent(const std::string& marker) {
  return "echo 'loading the engine " + marker + "'; exec -a " + marker + "-silent sleep 60";
}

// The same in the busybox test image, whose sleep (an applet) must be called "sleep": a
// bash carrying the marker waits for it.
std::string PrintThenSilentInBusybox(const std::string& marker) {
  return "echo 'loading the engine " + marker + "'; exec bash -c 'sleep 60; :' " + marker +
         "-silent";
}

// Prints a line every 0.5 s for `seconds`, then exits 0.
std::string KeepsPrinting(const std::string& marker, int seconds) {
  return "for i in $(seq 1 " + std::to_string(seconds * 2) + "); do echo \"tick $i " + marker +
         "\"; sleep 0.5; done; echo all done";
}

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
};

Outcome RunAndRead(const std::string& repo, const CliOptions& options) {
  Outcome o;
  o.run = RunCli(options);
  INFO(o.run.Describe());
  o.work_dir = FindSingleWorkDir(repo);
  REQUIRE_FALSE(o.work_dir.empty());
  o.result = ReadResultJson(o.work_dir);
  REQUIRE(o.result.IsObject());
  return o;
}

// HANG_DETECTED for `seconds` of silence, naming the last line, and nothing left running.
void CheckSilenceVerdict(const Outcome& o, int seconds, const std::string& marker) {
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == kHangDetectedExit);
  CHECK(Str(o.result, "status") == "HANG_DETECTED");
  const std::string reason = Str(o.result, "reason");
  CHECK_THAT(reason, Catch::Contains("no output for " + std::to_string(seconds) + "s"));
  CHECK_THAT(reason, Catch::Contains("loading the engine " + marker));
  CHECK(Str(o.result["details"], "silence_timeout_seconds") == std::to_string(seconds));
  CHECK_THAT(Str(o.result, "diagnosis"), Catch::Contains("--silence-timeout"));
  // Stopped at the silence, long before the minute of sleep was over.
  CHECK(o.run.seconds < 45);
  CHECK(WaitNoProcessWithMarker(marker, 10));
  KillProcessesWithMarker(marker);
}

void CheckPassed(const Outcome& o) {
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 0);
  CHECK(Str(o.result, "status") == "PASSED");
}

// ---------------------------------------------------------------- input

// `trtllm-run run --repo-root ROOT <args>`: exit 2, nothing on stdout, no work dir.
CliRun ExpectBadInput(const std::vector<std::string>& args) {
  TempDir root;
  CliOptions options;
  options.args = {"run", "--repo-root", root.path()};
  options.args.insert(options.args.end(), args.begin(), args.end());
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == 2);
  CHECK(run.stdout_text.empty());
  CHECK_FALSE(fs::exists(fs::path(root.path()) / "work_dirs"));
  return run;
}

TEST_CASE("silence watchdog: a bad --silence-timeout is exit 2 naming the flag and the forms",
          "[silence][cli][bad_input]") {
  for (const char* bad :
       {"0", "0s", "-5", "soon", "1h1h", "30m1h", "1h30", "99999999999", "999999999h", "596524h"}) {
    INFO("value: " << bad);
    CliRun run = ExpectBadInput({"--custom-cmd", "true", "--silence-timeout", bad});
    CHECK_THAT(run.stderr_text, Catch::Contains("--silence-timeout"));
    CHECK_THAT(run.stderr_text, Catch::Contains(std::string("'") + bad + "'"));
    CHECK_THAT(run.stderr_text, Catch::Contains("30m"));
  }
}

TEST_CASE("silence watchdog: plan shows the timeout, job_spec.json holds it in seconds",
          "[silence][cli]") {
  TempDir root;
  CliOptions options;
  options.args = {"plan",         "--repo-root",       root.path(), "--scenario",
                  "local_direct", "--custom-cmd",      "true",      "--silence-timeout",
                  "1h30m",        "--monitor-timeout", "3h"};
  CliRun run = RunCli(options);
  INFO(run.Describe());
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.stdout_text, Catch::Contains("Silence timeout: 5400s"));
  std::string work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(work_dir.empty());
  CHECK_THAT(ReadTextFile(work_dir + "/job_spec.json"),
             Catch::Contains("\"silence_timeout_seconds\": 5400"));
}

// ---------------------------------------------------------------- local_direct

CliOptions LocalDirect(const std::string& repo, const std::string& command,
                       std::vector<std::string> extra = {}) {
  CliOptions options;
  options.args = {"run",          "--scenario",   "local_direct",
                  "--custom-cmd", command,        "--repo-root",
                  repo,           "--kill-grace", "2"};
  options.args.insert(options.args.end(), extra.begin(), extra.end());
  options.timeout_seconds = 60;
  return options;
}

TEST_CASE("silence watchdog, local_direct: printed, then silent: HANG_DETECTED, nothing left",
          "[silence][cli]") {
  TempDir root;
  const std::string marker = UniqueMarker("silentdirect");
  Outcome o = RunAndRead(
      root.path(), LocalDirect(root.path(), PrintThenSilent(marker), {"--silence-timeout", "2s"}));
  CheckSilenceVerdict(o, 2, marker);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("SIGTERM"));
}

TEST_CASE("silence watchdog, local_direct: a job printing every 0.5 s for 3x the timeout PASSES",
          "[silence][cli]") {
  TempDir root;
  const std::string marker = UniqueMarker("tickdirect");
  Outcome o = RunAndRead(
      root.path(), LocalDirect(root.path(), KeepsPrinting(marker, 6), {"--silence-timeout", "2"}));
  CheckPassed(o);
  CHECK_THAT(ReadTextFile(Str(o.result, "log_file")), Catch::Contains("all done"));
}

TEST_CASE("silence watchdog, local_direct: off by default: a job silent for 3 s PASSES",
          "[silence][cli]") {
  // Guards the default: no flag, no watchdog (a regression test, so it passes on code
  // without the watchdog as well).
  TempDir root;
  Outcome o = RunAndRead(root.path(), LocalDirect(root.path(), "echo start; sleep 3; echo end"));
  CheckPassed(o);
  CHECK_THAT(ReadTextFile(o.work_dir + "/job_spec.json"),
             !Catch::Contains("silence_timeout_seconds"));
}

TEST_CASE("silence watchdog, run --cases: silence_timeout in the cases file's defaults",
          "[silence][cli][multi]") {
  TempDir root("silence_cases");
  const std::string marker = UniqueMarker("silentcases");
  WriteTextFile(root.path() + "/cases.yaml",
                "defaults:\n  scenario: local_direct\n  silence_timeout: 2s\ncases:\n"
                "  - {name: silent, custom_cmd: \"" +
                    PrintThenSilent(marker) +
                    "\"}\n"
                    "  - {name: ticking, custom_cmd: '" +
                    KeepsPrinting(marker + "tick", 6) + "'}\n");
  CliOptions options;
  options.args = {"run",         "--cases",   root.path() + "/cases.yaml",
                  "--repo-root", root.path(), "--kill-grace",
                  "2",           "--json"};
  options.timeout_seconds = 60;
  CliRun run = RunCli(options);
  INFO(run.Describe());
  CHECK(run.exit_code == kHangDetectedExit);
  rapidjson::Document printed;
  printed.Parse(run.stdout_text.c_str());
  REQUIRE_FALSE(printed.HasParseError());
  REQUIRE(printed.HasMember("cases"));
  REQUIRE(printed["cases"].Size() == 2);
  const rapidjson::Value& silent = printed["cases"][0];
  CHECK(Str(silent, "name") == "silent");
  CHECK(Str(silent, "status") == "HANG_DETECTED");
  rapidjson::Document own = ReadResultJson(Str(silent, "work_dir"));
  REQUIRE(own.IsObject());
  CHECK_THAT(Str(own, "reason"), Catch::Contains("no output for 2s"));
  CHECK(Str(printed["cases"][1], "status") == "PASSED");
  CHECK(WaitNoProcessWithMarker(marker, 10));
  KillProcessesWithMarker(marker);
}

// ---------------------------------------------------------------- local_docker

constexpr const char* kImage = "trtllm-run-test:busybox";  // tests/services/docker.sh

TEST_CASE("silence watchdog, local_docker: printed, then silent: HANG_DETECTED, container gone",
          "[silence][docker]") {
  TempDir root("silence_docker_repo"), home("silence_docker_home");
  const std::string marker = UniqueMarker("silentdocker");
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_docker",
                  "--container-image",
                  kImage,
                  "--docker-pull",
                  "never",
                  "--build-project",
                  "false",
                  "--skip-install",
                  "true",
                  "--repo-root",
                  root.path(),
                  "--kill-grace",
                  "2",
                  "--silence-timeout",
                  "3",
                  "--custom-cmd",
                  PrintThenSilentInBusybox(marker)};
  options.env = {{"HOME", home.path()}};
  options.timeout_seconds = 120;
  Outcome o = RunAndRead(root.path(), options);
  CheckSilenceVerdict(o, 3, marker);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("docker stop"));
  const std::string container = Str(o.result["details"], "container_name");
  CHECK(Str(o.result["details"], "container_removed") == "true");
  CHECK(Shell("docker ps -aq --filter name=^" + container + "$ 2>&1").empty());
}

// ---------------------------------------------------------------- local_slurm

std::vector<std::string> SlurmArgs(const std::string& repo, std::vector<std::string> more) {
  std::vector<std::string> args = {
      "run",   "--scenario",     "local_slurm", "--repo-root",         repo,   "--partition",
      "batch", "--skip-install", "true",        "--container-runtime", "none", "--container-image",
      "none"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_CASE("silence watchdog, local_slurm: .out, then .err, then silent: scancelled, HANG_DETECTED",
          "[silence][slurm][cli]") {
  EnsureSlurm();
  TempDir repo("silence_slurm");
  const std::string marker = UniqueMarker("silentslurm");
  // Output on stdout, then twice on stderr 1.5 s apart: the .err (of every rank, srun -l)
  // counts as output, so the silence is judged from the last stderr line.
  CliOptions options;
  options.args = SlurmArgs(
      repo.path(), {"--silence-timeout", "3", "--custom-cmd",
                    "echo 'first stdout line'; sleep 1.5; echo 'warming up' >&2; sleep 1.5; "
                    "echo 'loading the engine " +
                        marker + "' >&2; exec -a " + marker + "-silent sleep 60"});
  options.timeout_seconds = 180;
  Outcome o = RunAndRead(repo.path(), options);
  CheckSilenceVerdict(o, 3, marker);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("scancel"));
  std::string id = WaitForFileText(o.work_dir + "/slurm_job_id", 1);
  REQUIRE_FALSE(id.empty());
  CHECK(JobActiveStates(id).empty());
}

TEST_CASE("silence watchdog, local_slurm: a job printing every 0.5 s for 3x the timeout PASSES",
          "[silence][slurm][cli]") {
  EnsureSlurm();
  TempDir repo("silence_slurm");
  CliOptions options;
  options.args = SlurmArgs(repo.path(), {"--silence-timeout", "2", "--custom-cmd",
                                         KeepsPrinting(UniqueMarker("tickslurm"), 6)});
  options.timeout_seconds = 180;
  Outcome o = RunAndRead(repo.path(), options);
  CheckPassed(o);
}

TEST_CASE("silence watchdog, local_slurm persistent mode: a silent step is HANG_DETECTED",
          "[silence][slurm][cli]") {
  EnsureSlurm();
  TempDir state("silence_slurm_state");  // a private allocation state dir
  TempDir repo("silence_slurm");
  const std::string marker = UniqueMarker("silentheld");
  CliOptions options;
  options.args = SlurmArgs(
      repo.path(), {"--persistent-mode", "true", "--alloc-time-limit", "10", "--kill-grace", "2",
                    "--silence-timeout", "3", "--custom-cmd", PrintThenSilent(marker)});
  options.env = {{"XDG_RUNTIME_DIR", state.path()}};
  options.timeout_seconds = 180;
  Outcome o = RunAndRead(repo.path(), options);
  const std::string allocation = Str(o.result["details"], "allocation_id");
  CheckSilenceVerdict(o, 3, marker);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("held allocation " + allocation));
  // The step is gone; the allocation stays held until released.
  CHECK(Shell("squeue -h -s -j " + allocation +
              " -o '%i %j' 2>/dev/null | grep -v -e extern "
              "-e batch -e interactive")
            .empty());
  CliOptions release;
  release.args = {"release"};
  release.env = options.env;
  CliRun released = RunCli(release);
  INFO(released.Describe());
  CHECK(released.exit_code == 0);
  CHECK(JobActiveStates(allocation).empty());
}

// ---------------------------------------------------------------- remote_slurm

const char kSshDir[] = "/run/trtllm-test-sshd";  // tests/services/sshd.sh

std::string RandomName() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// A bare repo with one commit on main, owned by the remote user sshtest (git refuses
// repositories of other owners), and the remote root the case clones it into.
struct RemoteRepos {
  TempDir origin{"silence_origin"};
  TempDir repo{"silence_remote"};
  std::string bare = origin.path() + "/TensorRT-LLM.git";
  std::string remote_root = "/home/sshtest/trtllm_silence_" + RandomName();
  std::string ssh_config = repo.path() + "/ssh_config";
  RemoteRepos() {
    ::chmod(origin.path().c_str(), 0755);
    std::string seed = origin.path() + "/seed";
    std::string script = "set -e\ngit init -q -b main " + seed + "\ncd " + seed +
                         "\ngit config user.email t@example.com\ngit config user.name test\n"
                         "echo readme > README.md\ngit add -A\ngit commit -q -m main\n"
                         "git clone -q --bare . " +
                         bare + "\nchmod -R a+rX " + origin.path() + "\nchown -R sshtest " + bare +
                         "\n";
    int status = 0;
    std::string out = Shell("bash -c " + ShellQuote(script) + " 2>&1", &status);
    INFO(out);
    REQUIRE(status == 0);
    WriteTextFile(ssh_config,
                  "Host trtllm-test-login\n  HostName 127.0.0.1\n  Port 2222\n"
                  "  UserKnownHostsFile " +
                      std::string(kSshDir) + "/known_hosts\n  IdentityFile " + kSshDir +
                      "/id_ed25519\n  IdentitiesOnly yes\n");
  }
  ~RemoteRepos() { Shell("rm -rf " + ShellQuote(remote_root)); }
};

TEST_CASE("silence watchdog, remote_slurm: printed, then silent: scancelled, HANG_DETECTED",
          "[silence][sshd][cli]") {
  EnsureSshd();
  RemoteRepos repos;
  const std::string marker = UniqueMarker("silentremote");
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "remote_slurm",
                  "--ssh-host",
                  "trtllm-test-login",
                  "--slurm-user",
                  "sshtest",
                  "--ssh-config-file",
                  repos.ssh_config,
                  "--repo-root",
                  repos.repo.path(),
                  "--remote-repo-path",
                  repos.remote_root + "/TensorRT-LLM",
                  "--repo-url",
                  repos.bare,
                  "--repo-branch",
                  "main",
                  "--partition",
                  "batch",
                  "--skip-install",
                  "true",
                  "--build-project",
                  "false",
                  "--container-runtime",
                  "none",
                  "--container-image",
                  "none",
                  "--silence-timeout",
                  "3",
                  "--custom-cmd",
                  PrintThenSilent(marker)};
  options.timeout_seconds = 300;
  Outcome o = RunAndRead(repos.repo.path(), options);
  CheckSilenceVerdict(o, 3, marker);
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("scancel"));
  std::string id = WaitForFileText(o.work_dir + "/slurm_job_id", 1);
  REQUIRE_FALSE(id.empty());
  CHECK(JobActiveStates(id).empty());
}

}  // namespace
