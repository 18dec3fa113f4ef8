// Test helpers that drive the real trtllm-run binary (TRTLLM_RUN_BIN) as a user would:
// argv, environment, signals, timeouts; and that inspect what it leaves behind (work
// dirs, result.json, processes). POSIX only; no part of libtrtllm_run_core is used to
// run the binary, so a bug there cannot hide itself.
#ifndef TRTLLM_RUN_TESTS_INTEGRATION_CLI_HARNESS_H_
#define TRTLLM_RUN_TESTS_INTEGRATION_CLI_HARNESS_H_

#include <rapidjson/document.h>

#include <string>
#include <utility>
#include <vector>

namespace trtllm_run_test {

struct CliOptions {
  std::vector<std::string> args;                         // after the program name
  std::vector<std::pair<std::string, std::string>> env;  // set on top of this environment
  std::vector<std::string> unset_env;                    // removed from it
  std::string cwd;                                       // empty: the test's current directory
  std::string stdin_text;  // fed to stdin, then closed (default: empty stdin)
  // When > 0, `signal` is sent to trtllm-run (its pid only, as a terminal would to the
  // foreground process) once `signal_after_seconds` have passed.
  int signal = 0;
  double signal_after_seconds = 0;
  // When not empty, the signal waits (also) until a live process other than trtllm-run
  // whose command line contains this text exists: e.g. the job's own marker, so that the
  // signal arrives while the job runs, however slow the machine.
  std::string signal_when_process;
  // Hard limit: trtllm-run is SIGKILLed after this and the result says timed_out.
  double timeout_seconds = 120;
  std::string program = TRTLLM_RUN_BIN;
};

struct CliRun {
  int exit_code = -1;   // -1 when ended by a signal
  int term_signal = 0;  // the signal that ended it, else 0
  bool timed_out = false;
  bool signal_sent = false;
  double seconds = 0;         // wall time from start to exit
  double signal_sent_at = 0;  // seconds after start
  std::string stdout_text;
  std::string stderr_text;
  // For failure messages: args, exit, both outputs.
  std::string Describe() const;
};

// Runs trtllm-run to completion (or to the hard timeout). Fails the test (Catch2
// FAIL) only when the binary cannot be started at all.
CliRun RunCli(const CliOptions& options);
CliRun RunCli(std::vector<std::string> args);

// A fresh directory under $TMPDIR (or /tmp), removed recursively on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "trtllm_run_test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The only directory under <repo_root>/work_dirs/; "" when there is none or more than one.
std::string FindSingleWorkDir(const std::string& repo_root);

// Parses <work_dir>/result.json; a document with HasParseError() (and no members) when
// the file is missing or not JSON.
rapidjson::Document ReadResultJson(const std::string& work_dir);

// The whole file, or "" when it cannot be read.
std::string ReadTextFile(const std::string& path);

void WriteTextFile(const std::string& path, const std::string& contents);

// Pids of live (not zombie) processes whose command line contains `marker`, excluding
// this test process.
std::vector<int> PidsWithMarker(const std::string& marker);
bool ProcessWithMarkerAlive(const std::string& marker);

// Waits up to `seconds` for no process with `marker` to be left; true when none is.
bool WaitNoProcessWithMarker(const std::string& marker, double seconds);

// SIGKILLs every process with `marker` (cleanup after a failed assertion).
void KillProcessesWithMarker(const std::string& marker);

// A marker unique to this test process and call: "<prefix>_<pid>_<counter>".
std::string UniqueMarker(const std::string& prefix);

// A pid that no process has now: a child that already exited and was reaped.
int DeadPid();

}  // namespace trtllm_run_test

#endif  // TRTLLM_RUN_TESTS_INTEGRATION_CLI_HARNESS_H_
