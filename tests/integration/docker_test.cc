// local_docker through the real CLI and the real Docker engine (tests/services/docker.sh:
// dockerd from Debian's docker.io and the local image trtllm-run-test:busybox, which has
// bash but no Python and no TensorRT-LLM, hence --skip-install true --build-project false).
// Every verdict, what is left behind (no container, no process), result.json against the
// documented schema, JUnit XML through a real XML parser, and the work dir commands.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli_harness.h"
#include "result_schema.h"

namespace trtllm_run_test {
namespace {

constexpr const char* kImage = "trtllm-run-test:busybox";

std::string Str(const rapidjson::Value& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember(key) || !doc[key].IsString()) return "<missing>";
  return doc[key].GetString();
}

std::string Detail(const rapidjson::Value& doc, const char* key) {
  if (!doc.IsObject() || !doc.HasMember("details") || !doc["details"].IsObject()) {
    return "<missing>";
  }
  return Str(doc["details"], key);
}

std::string ServiceScript() {
  return (std::filesystem::path(TRTLLM_RUN_SOURCE_DIR) / "tests" / "services" / "docker.sh")
      .string();
}

// A `sleep` whose process carries a marker that the command text does not: the payload
// says `sleep 30.$((N-1+1))`, only the running sleep has "sleep 30.N" in its command line
// (the docker client's command line holds the payload text, not the marker).
struct Sleep {
  std::string command;  // in the payload
  std::string marker;   // in the running process only
};
Sleep MakeSleep(int seconds) {
  static int counter = 0;
  long n = static_cast<long>(::getpid()) * 1000 + ++counter;
  return {"sleep " + std::to_string(seconds) + ".$((" + std::to_string(n - 1) + "+1))",
          "sleep " + std::to_string(seconds) + "." + std::to_string(n)};
}

// Runs a program (no shell) through the harness.
CliRun Tool(std::vector<std::string> args,
            std::vector<std::pair<std::string, std::string>> env = {}, double timeout = 120) {
  CliOptions options;
  options.program = "/usr/bin/env";
  options.args = std::move(args);
  options.env = std::move(env);
  options.timeout_seconds = timeout;
  return RunCli(options);
}

// Names of the containers (running or not) whose name starts with `prefix`.
std::string Containers(const std::string& prefix, const std::string& docker_host = "") {
  std::vector<std::pair<std::string, std::string>> env;
  if (!docker_host.empty()) env.push_back({"DOCKER_HOST", docker_host});
  CliRun ps =
      Tool({"docker", "ps", "-a", "--filter", "name=^" + prefix, "--format", "{{.Names}}"}, env);
  REQUIRE(ps.exit_code == 0);
  return ps.stdout_text;
}

// A repo root and a HOME for the run (both bind-mounted into the container).
struct DockerCase {
  TempDir root{"docker_repo"};
  TempDir home{"docker_home"};

  CliOptions Options(const std::string& command, std::vector<std::string> extra = {}) const {
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
                    "--custom-cmd",
                    command};
    options.args.insert(options.args.end(), extra.begin(), extra.end());
    options.env = {{"HOME", home.path()}};
    options.timeout_seconds = 180;
    return options;
  }
};

struct Outcome {
  CliRun run;
  std::string work_dir;
  rapidjson::Document result;
  std::string log;
};

Outcome Read(const DockerCase& c, CliRun run) {
  Outcome out;
  out.run = std::move(run);
  INFO(out.run.Describe());
  out.work_dir = FindSingleWorkDir(c.root.path());
  REQUIRE_FALSE(out.work_dir.empty());
  out.result = ReadResultJson(out.work_dir);
  REQUIRE_FALSE(out.result.HasParseError());
  REQUIRE(out.result.IsObject());
  out.log = ReadTextFile(Str(out.result, "log_file"));
  return out;
}

Outcome RunCase(const DockerCase& c, const std::string& command,
                std::vector<std::string> extra = {}) {
  return Read(c, RunCli(c.Options(command, std::move(extra))));
}

// The JUnit file as a real XML parser (Python's xml.etree) sees it, as JSON.
rapidjson::Document ParseJUnit(const std::string& path) {
  static const char* kScript = R"(
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find('testsuite')
case = suite.find('testcase')
failure = case.find('failure')
print(json.dumps({
  'root': root.tag, 'suite': suite.get('name'), 'tests': suite.get('tests'),
  'failures': suite.get('failures'), 'classname': case.get('classname'),
  'name': case.get('name'),
  'properties': {p.get('name'): p.get('value') for p in suite.iter('property')},
  'failure': None if failure is None else {
    'type': failure.get('type'), 'message': failure.get('message'), 'text': failure.text}}))
)";
  CliRun parsed = Tool({"python3", "-c", kScript, path});
  INFO(parsed.Describe());
  REQUIRE(parsed.exit_code == 0);
  rapidjson::Document doc;
  doc.Parse(parsed.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

void CheckSchema(const Outcome& o) {
  std::vector<std::string> problems = ValidateResult(o.result, o.run.exit_code);
  INFO(Join(problems));
  CHECK(problems.empty());
}

TEST_CASE("local_docker: a passing command, byte for byte, nothing left behind", "[docker]") {
  DockerCase c;
  const std::string command =
      "echo \"home=$HOME_DIR\"; printf '%s|' 'it'\"'\"'s' \"$MY_VAR\" '$HOME' `echo bt` "
      "$(echo sub); echo\necho 'ünïcödé ✓'; echo to-stderr >&2; pwd";
  std::string junit = c.home.path() + "/report.xml";
  Outcome o = RunCase(
      c, command,
      {"--model-name", "Demo-Model", "--custom-env", "MY_VAR='a \"b\" $c'", "--junit", junit});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 0);
  CHECK(Str(o.result, "status") == "PASSED");
  CheckSchema(o);
  const std::string expected = "home=" + c.home.path() +
                               "\nit's|a \"b\" $c|$HOME|bt|sub|\nünïcödé ✓\n" + c.root.path() +
                               "\n";
  // stdout and stderr reach the client as two streams: their relative order is not
  // kept, each stream's own order is.
  std::string log = o.log;
  std::string::size_type err = log.find("to-stderr\n");
  REQUIRE(err != std::string::npos);
  CHECK(log.erase(err, 10) == expected);
  CHECK(o.run.stdout_text == o.log);  // the job's output, and nothing else, on stdout
  CHECK(Str(o.result, "scenario") == "local_docker");
  CHECK(Str(o.result, "command") == command);
  CHECK(Str(o.result, "log_file") == o.work_dir + "/demo_model_local.log");

  // The container: named <model>_auto_test_<work dir timestamp>_<hex>, removed.
  std::string name = Detail(o.result, "container_name");
  std::string stamp = o.work_dir.substr(o.work_dir.rfind("/demo_model_") + 12);
  CHECK_THAT(name, Catch::StartsWith("demo_model_auto_test_" + stamp + "_"));
  CHECK(Detail(o.result, "container_removed") == "true");
  CHECK(Detail(o.result, "oom_killed") == "false");
  CHECK(Containers(name).empty());

  // The work dir: docker_cmd.sh (executable), job_spec.json with docker_cmd, run_state.json.
  struct stat st;
  REQUIRE(::stat((o.work_dir + "/docker_cmd.sh").c_str(), &st) == 0);
  CHECK((st.st_mode & S_IXUSR) != 0);
  std::string spec = ReadTextFile(o.work_dir + "/job_spec.json");
  CHECK_THAT(spec, Catch::Contains("\"docker_cmd\": \"docker run --rm --name " + name));
  CHECK_THAT(spec, Catch::Contains("\"container_name\": \"" + name + "\""));
  CHECK_THAT(ReadTextFile(o.work_dir + "/run_state.json"), Catch::Contains("\"finished\""));

  rapidjson::Document xml = ParseJUnit(junit);
  CHECK(Str(xml, "suite") == "trtllm-run");
  CHECK(Str(xml, "failures") == "0");
  CHECK(Str(xml, "classname") == "trtllm-run.local_docker.custom");
  CHECK(Str(xml, "name") == "demo_model");
  CHECK(xml["failure"].IsNull());
  CHECK(Str(xml["properties"], "details.container_name") == name);
}

TEST_CASE("local_docker: exit 3 is FAILED with exit code 3, JUnit survives control bytes",
          "[docker]") {
  DockerCase c;
  std::string junit = c.home.path() + "/report.xml";
  Outcome o = RunCase(c, "printf '\\033[31mred\\033[0m \\001\\002 <tag> & \\377\\n'; exit 3",
                      {"--junit", junit});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 1);
  CHECK(Str(o.result, "status") == "FAILED");
  CHECK(o.result["exit_code"].GetInt() == 3);
  CHECK(Detail(o.result, "container_exit_code") == "3");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("code 3"));
  CheckSchema(o);
  CHECK(Containers(Detail(o.result, "container_name")).empty());

  rapidjson::Document xml = ParseJUnit(junit);
  CHECK(Str(xml, "failures") == "1");
  REQUIRE(xml["failure"].IsObject());
  CHECK(Str(xml["failure"], "type") == "FAILED");
  CHECK_THAT(Str(xml["failure"], "message"), Catch::Contains("code 3"));
  std::string text = Str(xml["failure"], "text");
  CHECK_THAT(text, Catch::Contains("Log tail"));
  CHECK_THAT(text, Catch::Contains("red"));
  CHECK_THAT(text, Catch::Contains("<tag> &"));
}

TEST_CASE("local_docker: monitor timeout stops and removes the container", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  Outcome o = RunCase(c, "echo started; " + sleep.command, {"--monitor-timeout", "3s"});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 4);
  CHECK(Str(o.result, "status") == "TIMEOUT");
  CHECK_THAT(Str(o.result, "reason"),
             Catch::StartsWith("still running after monitor_timeout_seconds=3; docker stop -t 2"));
  CHECK(o.run.seconds >= 3.0);
  CHECK(o.run.seconds < 3.0 + 2 + 10);
  CHECK(o.log == "started\n");
  CheckSchema(o);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
}

TEST_CASE("local_docker: 'hang detected' in the log is HANG_DETECTED", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  Outcome o =
      RunCase(c, "echo working; echo '[watchdog] Hang Detected on rank 0'; " + sleep.command);
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 5);
  CHECK(Str(o.result, "status") == "HANG_DETECTED");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("Hang Detected on rank 0"));
  CHECK(o.run.seconds < 15);
  CheckSchema(o);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
}

TEST_CASE("local_docker: Ctrl-C cancels, stops and removes the container (exit 130)", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  CliOptions options = c.Options("echo started; " + sleep.command);
  options.signal = SIGINT;
  options.signal_when_process = sleep.marker;  // the container's own process runs
  Outcome o = Read(c, RunCli(options));
  INFO(o.run.Describe());
  REQUIRE(o.run.signal_sent);
  CHECK(o.run.exit_code == 130);
  CHECK(Str(o.result, "status") == "CANCELLED");
  CHECK(o.result["user_interrupt"].GetBool());
  CHECK(Str(o.result, "cancelled_by") == "SIGINT");
  CheckSchema(o);
  CHECK(o.run.seconds - o.run.signal_sent_at < 2 + 10);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
  CHECK(o.log == "started\n");
}

// The options of `c` with Docker's default stop grace (trtllm-run's 30 s) instead of the 2 s
// the other tests give: a stop that waits for the grace shows as a 30 s verdict.
CliOptions DefaultGrace(CliOptions options) {
  for (auto it = options.args.begin(); it != options.args.end(); ++it) {
    if (*it == "--kill-grace") {
      options.args.erase(it, it + 2);
      break;
    }
  }
  return options;
}

// Seconds since the epoch that the payload wrote to `path` (bash's $EPOCHREALTIME in the
// container: the host's clock).
double EpochSecondsIn(const std::string& path) {
  std::string text = ReadTextFile(path);
  INFO(path << ": '" << text << "'");
  REQUIRE_FALSE(text.empty());
  return std::stod(text);
}

double EpochNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What one docker CLI call costs on this machine now (the median of three `docker inspect`
// of a container that does not exist): after the decision the executor makes three (docker
// stop, inspect, rm), each a Go client start and a daemon round trip, which a loaded machine
// stretches from ~0.1 s to over a second. A stop that waited for the 30 s grace fails the
// bound 2 s + 3 calls on any machine.
double DockerCallSeconds() {
  std::vector<double> seconds;
  for (int i = 0; i < 3; ++i) {
    CliRun call =
        Tool({"docker", "inspect", "--type", "container", "trtllm-run-no-such-container"});
    seconds.push_back(call.seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[1];
}

// The command ends the container as PID 1 would not: `exec sleep` has no SIGTERM handler, and
// PID 1 ignores such a signal, so before `--init` every stop below waited its 30 s grace.
TEST_CASE("local_docker: a hang is judged within 2 s of the hang line (30 s grace)", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  const std::string stamp = c.root.path() + "/hang_line_at";
  CliOptions options =
      DefaultGrace(c.Options("echo working; echo $EPOCHREALTIME > " + stamp +
                             "; echo '[watchdog] Hang Detected on rank 0'; exec " + sleep.command));
  Outcome o = Read(c, RunCli(options));
  const double after_line = EpochNow() - EpochSecondsIn(stamp);
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 5);
  CHECK(Str(o.result, "status") == "HANG_DETECTED");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("Hang Detected on rank 0"));
  const double call = DockerCallSeconds();
  INFO("verdict " << after_line << " s after the hang line; one docker call " << call << " s");
  CHECK(after_line < 2.0 + 3 * call);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
}

TEST_CASE("local_docker: a monitor timeout is judged within 2 s of the timeout (30 s grace)",
          "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  const std::string stamp = c.root.path() + "/started_at";
  CliOptions options = DefaultGrace(
      c.Options("echo $EPOCHREALTIME > " + stamp + "; echo started; exec " + sleep.command,
                {"--monitor-timeout", "3s"}));
  Outcome o = Read(c, RunCli(options));
  // The monitor's clock starts before the container does: the timeout fell at most 3 s
  // after the payload started.
  const double after_timeout = EpochNow() - EpochSecondsIn(stamp) - 3.0;
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 4);
  CHECK(Str(o.result, "status") == "TIMEOUT");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("docker stop -t 30"));
  const double call = DockerCallSeconds();
  INFO("verdict at most " << after_timeout << " s after the timeout; one docker call " << call
                          << " s");
  CHECK(after_timeout < 2.0 + 3 * call);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
}

TEST_CASE("local_docker: Ctrl-C is judged within 2 s of the signal (30 s grace)", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  CliOptions options = DefaultGrace(c.Options("echo started; exec " + sleep.command));
  options.signal = SIGINT;
  options.signal_when_process = sleep.marker;
  Outcome o = Read(c, RunCli(options));
  INFO(o.run.Describe());
  REQUIRE(o.run.signal_sent);
  CHECK(o.run.exit_code == 130);
  CHECK(Str(o.result, "status") == "CANCELLED");
  const double call = DockerCallSeconds();
  INFO("verdict " << o.run.seconds - o.run.signal_sent_at << " s after SIGINT; one docker call "
                  << call << " s");
  CHECK(o.run.seconds - o.run.signal_sent_at < 2.0 + 3 * call);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
}

TEST_CASE("local_docker: the OOM killer at a --docker-memory limit is OUT_OF_MEMORY", "[docker]") {
  DockerCase c;
  // bash keeps the whole command substitution in memory: 300 MB against a 64 MiB limit.
  Outcome o = RunCase(c,
                      "echo allocating; x=$(head -c 300000000 /dev/zero | tr '\\0' a); "
                      "echo survived ${#x}",
                      {"--docker-memory", "64m"});
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 7);
  CHECK(Str(o.result, "status") == "OUT_OF_MEMORY");
  CHECK(Detail(o.result, "oom_killed") == "true");
  CHECK(Detail(o.result, "memory_limit") == "64m");
  CHECK_THAT(Str(o.result, "reason"), Catch::Contains("OOM killer"));
  CHECK(o.log.find("survived") == std::string::npos);
  CheckSchema(o);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
}

TEST_CASE("local_docker: bad docker inputs stop before anything starts (exit 2)", "[docker]") {
  DockerCase c;
  SECTION("a missing image with --docker-pull never: no registry is contacted") {
    CliOptions options = c.Options("echo never runs");
    for (std::size_t i = 0; i + 1 < options.args.size(); ++i) {
      if (options.args[i] == "--container-image") options.args[i + 1] = "trtllm-run-test:absent";
    }
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("image 'trtllm-run-test:absent' is not present"));
    CHECK_THAT(run.stderr_text, Catch::Contains("--docker-pull is never"));
    CHECK(run.seconds < 20);
  }
  SECTION("an invalid --docker-memory") {
    CliRun run = RunCli(c.Options("echo never runs", {"--docker-memory", "lots"}));
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("--docker-memory 'lots'"));
  }
  SECTION("an invalid --docker-pull") {
    CliOptions options = c.Options("echo never runs");
    for (std::size_t i = 0; i + 1 < options.args.size(); ++i) {
      if (options.args[i] == "--docker-pull") options.args[i + 1] = "sometimes";
    }
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text, Catch::Contains("--docker-pull 'sometimes'"));
  }
  CHECK(FindSingleWorkDir(c.root.path()).empty());
}

TEST_CASE("local_docker: the engine stopped -> a clear error naming it", "[docker]") {
  // A private engine (its own socket, data and network namespace), stopped for real; the
  // shared engine other tests use is never touched.
  DockerCase c;
  TempDir engine_dir("docker_engine");
  CliRun started = Tool({"bash", ServiceScript(), "private-start", engine_dir.path()}, {}, 120);
  INFO(started.Describe());
  REQUIRE(started.exit_code == 0);
  std::string host = "unix://" + engine_dir.path() + "/docker.sock";
  struct StopEngine {
    std::string dir;
    ~StopEngine() { Tool({"bash", ServiceScript(), "private-stop", dir}, {}, 120); }
  } stop_on_exit{engine_dir.path()};

  SECTION("while the job runs: ERROR, exit 3") {
    Sleep sleep = MakeSleep(60);
    CliOptions options = c.Options("echo started; " + sleep.command);
    options.env.push_back({"DOCKER_HOST", host});
    std::thread stopper([&] {
      for (int i = 0; i < 600 && !ProcessWithMarkerAlive(sleep.marker); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      Tool({"bash", ServiceScript(), "private-stop", engine_dir.path()}, {}, 120);
    });
    Outcome o = Read(c, RunCli(options));
    stopper.join();
    INFO(o.run.Describe());
    CHECK(o.run.exit_code == 3);
    CHECK(Str(o.result, "status") == "ERROR");
    CHECK_THAT(Str(o.result, "reason"),
               Catch::Contains("the Docker engine at " + host + " became unreachable"));
    CHECK(Detail(o.result, "docker_host") == host);
    CheckSchema(o);
    CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
  }
  SECTION("before the run: nothing starts, exit 2, the socket is named") {
    Tool({"bash", ServiceScript(), "private-stop", engine_dir.path()}, {}, 120);
    CliOptions options = c.Options("echo never runs");
    options.env.push_back({"DOCKER_HOST", host});
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.stderr_text,
               Catch::Contains("the Docker engine at " + host + " is not reachable"));
    CHECK_THAT(run.stderr_text, Catch::Contains("start the Docker daemon"));
    CHECK(FindSingleWorkDir(c.root.path()).empty());
  }
}

TEST_CASE("local_docker: a failing build pre-step is BUILD_FAILED and the case never runs",
          "[docker]") {
  DockerCase c;
  CliOptions options = c.Options("touch " + c.root.path() + "/case_ran");
  for (std::size_t i = 0; i + 1 < options.args.size(); ++i) {
    if (options.args[i] == "--build-project") options.args[i + 1] = "true";
  }
  // The test image has no python3: scripts/build_wheel.py cannot run (exit 127).
  Outcome o = Read(c, RunCli(options));
  INFO(o.run.Describe());
  CHECK(o.run.exit_code == 3);
  CHECK(Str(o.result, "status") == "ERROR");
  CHECK_THAT(Str(o.result, "reason"), Catch::StartsWith("BUILD_FAILED: the build container "
                                                        "exited with code 127"));
  CHECK_FALSE(std::filesystem::exists(c.root.path() + "/case_ran"));
  std::string build_log = Detail(o.result, "build_log");
  CHECK_THAT(ReadTextFile(build_log), Catch::Contains("python3"));
  CHECK_THAT(ReadTextFile(o.work_dir + "/docker_build.sh"),
             Catch::Contains("python3 ./scripts/build_wheel.py"));
  CheckSchema(o);
  CHECK(Containers(Detail(o.result, "container_name")).empty());
}

TEST_CASE("local_docker: docker_cmd.sh run by hand, with and without a terminal", "[docker]") {
  DockerCase c;
  Outcome o = RunCase(c, "echo by-hand; exit 4");
  REQUIRE(Str(o.result, "status") == "FAILED");
  std::string script = o.work_dir + "/docker_cmd.sh";
  std::string name = Detail(o.result, "container_name");
  // No terminal: no -it (docker would refuse it); --rm removes the container.
  CliRun plain = Tool({"bash", script}, {{"HOME", c.home.path()}});
  INFO(plain.Describe());
  CHECK(plain.exit_code == 4);
  CHECK(plain.stdout_text == "by-hand\n");
  CHECK(Containers(name).empty());
  // On a pseudo-terminal (script(1)): -it is added and works.
  CliRun tty = Tool({"script", "-qec", "bash " + script, "/dev/null"}, {{"HOME", c.home.path()}});
  INFO(tty.Describe());
  CHECK(tty.exit_code == 4);
  CHECK_THAT(tty.stdout_text, Catch::Contains("by-hand\r\n"));  // a tty's line ending
  CHECK(Containers(name).empty());
}

TEST_CASE("local_docker: progress is one live line on a terminal, plain lines elsewhere",
          "[docker]") {
  DockerCase c;
  CliOptions options = c.Options("echo first; sleep 2; echo second");
  // Plain: stderr is a pipe here.
  CliRun plain = RunCli(options);
  INFO(plain.Describe());
  CHECK(plain.exit_code == 0);
  CHECK_THAT(plain.stderr_text, Catch::Contains("\n[local_docker] running "));
  CHECK(plain.stderr_text.find('\r') == std::string::npos);
  CHECK(plain.stdout_text == "first\nsecond\n");  // progress never in the job's output
  // Live: the same run on a pseudo-terminal rewrites one line in place.
  std::string command = "HOME=" + c.home.path() + " " + std::string(TRTLLM_RUN_BIN);
  for (const std::string& arg : options.args) {
    std::string quoted = "'";
    for (char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    command += " " + quoted + "'";
  }
  CliRun live = Tool({"script", "-qec", command, "/dev/null"});
  INFO(live.Describe());
  CHECK(live.exit_code == 0);
  CHECK_THAT(live.stdout_text, Catch::Contains("\r\033[K[local_docker] running "));
  CHECK_THAT(live.stdout_text, Catch::Contains("| first"));  // the last log line
  CHECK_THAT(live.stdout_text, Catch::Contains("second\r\n"));
}

// Runs `options` on another thread until it ends.
struct Background {
  CliOptions options;
  CliRun run;
  std::thread thread;
  explicit Background(CliOptions o) : options(std::move(o)) {
    thread = std::thread([this] { run = RunCli(options); });
  }
  ~Background() {
    if (thread.joinable()) thread.join();
  }
  void Join() { thread.join(); }
};

std::string WaitForWorkDir(const DockerCase& c, const std::string& marker) {
  for (int i = 0; i < 1200 && !ProcessWithMarkerAlive(marker); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(ProcessWithMarkerAlive(marker));
  std::string work_dir = FindSingleWorkDir(c.root.path());
  REQUIRE_FALSE(work_dir.empty());
  return work_dir;
}

TEST_CASE("local_docker: status and attach on a running and a finished work dir", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(4);
  Background job(c.Options("echo one; " + sleep.command + "; echo two; exit 3"));
  std::string work_dir = WaitForWorkDir(c, sleep.marker);

  CliRun status = RunCli({"status", work_dir});
  INFO(status.Describe());
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.stdout_text, Catch::Contains("state:      running"));
  CHECK_THAT(status.stdout_text, Catch::Contains("(running)"));  // the container
  CHECK_THAT(status.stdout_text, Catch::Contains("last line:  one"));
  CliRun status_json = RunCli({"status", "--json", work_dir});
  rapidjson::Document doc;
  doc.Parse(status_json.stdout_text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(Str(doc, "phase") == "running");
  CHECK(Str(doc, "container_state") == "running");
  CHECK(doc["supervisor_alive"].GetBool());
  CHECK(doc["result"].IsNull());

  // attach follows the log to the verdict and exits with its code (FAILED: 1).
  CliRun attach = RunCli({"attach", work_dir});
  INFO(attach.Describe());
  CHECK(attach.exit_code == 1);
  CHECK(attach.stdout_text == "one\ntwo\n");
  CHECK_THAT(attach.stderr_text, Catch::Contains("FAILED"));
  job.Join();
  CHECK(job.run.exit_code == 1);

  CliRun finished = RunCli({"status", work_dir});
  CHECK(finished.exit_code == 0);
  CHECK_THAT(finished.stdout_text, Catch::Contains("state:      finished"));
  CHECK_THAT(finished.stdout_text, Catch::Contains("FAILED"));
  CliRun again = RunCli({"attach", "--json", work_dir});
  CHECK(again.exit_code == 1);
  CHECK(again.stderr_text.rfind("one\ntwo\n", 0) == 0);  // the log, then the summary
  rapidjson::Document result;
  result.Parse(again.stdout_text.c_str());
  REQUIRE_FALSE(result.HasParseError());
  std::vector<std::string> problems = ValidateResult(result, again.exit_code);
  INFO(Join(problems));
  CHECK(problems.empty());
}

TEST_CASE("local_docker: cancel WORK_DIR stops the running job from another process", "[docker]") {
  DockerCase c;
  Sleep sleep = MakeSleep(60);
  Background job(c.Options("echo started; " + sleep.command));
  std::string work_dir = WaitForWorkDir(c, sleep.marker);
  CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  CHECK_THAT(cancel.stdout_text, Catch::Contains("CANCELLED"));
  job.Join();
  INFO(job.run.Describe());
  CHECK(job.run.exit_code == 6);  // the supervisor got SIGTERM: CANCELLED, not a user ^C
  rapidjson::Document result = ReadResultJson(work_dir);
  CHECK(Str(result, "status") == "CANCELLED");
  std::vector<std::string> problems = ValidateResult(result, job.run.exit_code);
  INFO(Join(problems));
  CHECK(problems.empty());
  CHECK(Containers(Detail(result, "container_name")).empty());
  CHECK(WaitNoProcessWithMarker(sleep.marker, 5));
  // Cancelling a finished work dir is a no-op that says so.
  CliRun twice = RunCli({"cancel", work_dir});
  CHECK(twice.exit_code == 0);
  CHECK_THAT(twice.stdout_text, Catch::Contains("already finished: CANCELLED"));
}

}  // namespace
}  // namespace trtllm_run_test
