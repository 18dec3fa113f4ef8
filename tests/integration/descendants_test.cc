// Nothing a local_direct job starts outlives its run: children that left the job's
// process group (setsid) or lost their parent (a double fork) are ended on Ctrl-C,
// SIGTERM, a monitor timeout, a normal exit, and by `trtllm-run cancel` after the
// supervising trtllm-run was killed. Each escaped child is a `sleep` with a marker that
// only its own command line carries.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_harness.h"

namespace trtllm_run_test {
namespace {

std::string Str(const rapidjson::Value& doc, const char* key) {
  return doc.IsObject() && doc.HasMember(key) && doc[key].IsString() ? doc[key].GetString()
                                                                     : "<missing>";
}

// `sleep 300.N` written so that only the sleep itself has "sleep 300.N" in its command
// line (bash's command line holds the arithmetic, not its value).
struct Escapee {
  std::string command;
  std::string marker;
};
Escapee MakeEscapee(int seconds) {
  static int counter = 0;
  long n = static_cast<long>(::getpid()) * 1000 + ++counter;
  return {"sleep " + std::to_string(seconds) + ".$((" + std::to_string(n - 1) + "+1))",
          "sleep " + std::to_string(seconds) + "." + std::to_string(n)};
}

struct Escapees {
  Escapee setsid = MakeEscapee(300);
  Escapee double_fork = MakeEscapee(300);
  Escapee setsid_double_fork = MakeEscapee(300);
  // Starts all three in the background; the last one started is the double-forked setsid.
  std::string Command() const {
    return "setsid " + setsid.command + " & ( ( " + double_fork.command + " & ) & ); ( ( setsid " +
           setsid_double_fork.command + " & ) & ); echo started";
  }
  std::vector<std::string> Markers() const {
    return {setsid.marker, double_fork.marker, setsid_double_fork.marker};
  }
  ~Escapees() {
    for (const std::string& marker : Markers()) KillProcessesWithMarker(marker);
  }
};

TEST_CASE("descendants: setsid and double-forked children end with the run however it ends",
          "[local_direct][cli]") {
  struct Ending {
    const char* name;
    int signal;                      // sent to trtllm-run once every escapee runs
    std::vector<std::string> extra;  // more run flags
    bool keep_running;               // the command waits after starting them
    int exit_code;
    const char* status;
  };
  const std::vector<Ending> endings = {
      {"Ctrl-C", SIGINT, {}, true, 130, "CANCELLED"},
      {"SIGTERM", SIGTERM, {}, true, 6, "CANCELLED"},
      {"monitor timeout", 0, {"--monitor-timeout", "3"}, true, 4, "TIMEOUT"},
      {"normal exit", 0, {}, false, 0, "PASSED"},
  };
  for (const Ending& ending : endings) {
    INFO(ending.name);
    TempDir root;
    Escapees escapees;
    CliOptions options;
    std::string command = escapees.Command() + (ending.keep_running ? "; sleep 120" : "");
    options.args = {"run",          "--scenario",   "local_direct",
                    "--custom-cmd", command,        "--repo-root",
                    root.path(),    "--kill-grace", "2"};
    options.args.insert(options.args.end(), ending.extra.begin(), ending.extra.end());
    options.signal = ending.signal;
    options.signal_when_process = ending.signal ? escapees.setsid_double_fork.marker : "";
    options.timeout_seconds = 60;
    CliRun run = RunCli(options);
    INFO(run.Describe());
    CHECK(run.exit_code == ending.exit_code);
    rapidjson::Document result = ReadResultJson(FindSingleWorkDir(root.path()));
    CHECK(Str(result, "status") == ending.status);
    for (const std::string& marker : escapees.Markers()) {
      INFO(marker);
      CHECK(WaitNoProcessWithMarker(marker, 2));
    }
  }
}

TEST_CASE("descendants: cancel after the supervisor was killed ends the job's setsid child",
          "[local_direct][cli][workdir]") {
  TempDir root;
  Escapees escapees;
  CliOptions options;
  options.args = {"run",
                  "--scenario",
                  "local_direct",
                  "--custom-cmd",
                  escapees.Command() + "; sleep 120",
                  "--repo-root",
                  root.path(),
                  "--kill-grace",
                  "1"};
  options.signal = SIGKILL;  // trtllm-run dies at once; its job keeps running
  options.signal_when_process = escapees.setsid_double_fork.marker;
  options.timeout_seconds = 60;
  CliRun killed = RunCli(options);
  REQUIRE(killed.term_signal == SIGKILL);
  std::string work_dir = FindSingleWorkDir(root.path());
  REQUIRE_FALSE(work_dir.empty());
  for (const std::string& marker : escapees.Markers()) REQUIRE(ProcessWithMarkerAlive(marker));

  CliRun cancel = RunCli({"cancel", "--kill-grace", "1", work_dir});
  INFO(cancel.Describe());
  CHECK(cancel.exit_code == 0);
  for (const std::string& marker : escapees.Markers()) {
    INFO(marker);
    CHECK(WaitNoProcessWithMarker(marker, 3));
  }
  CHECK(Str(ReadResultJson(work_dir), "status") == "CANCELLED");
}

}  // namespace
}  // namespace trtllm_run_test
