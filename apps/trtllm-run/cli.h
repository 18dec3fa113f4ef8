// Shared pieces of the trtllm-run subcommands: option groups, parsing, error reporting.
// Each subcommand lives in its own cmd_<name>.cc and is listed in main.cc's table.
#ifndef TRTLLM_RUN_APPS_CLI_H_
#define TRTLLM_RUN_APPS_CLI_H_

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli_help.h"
#include "trtllm_run/multi_run.h"
#include "trtllm_run/request.h"
#include "trtllm_run/runtime.h"
#include "trtllm_run/status.h"

namespace trtllm_run {
struct StageRequest;  // stage/stage_plan.h
namespace history {
class HistoryStore;  // history/history_store.h
struct CaseRecord;
struct RepeatSummary;  // history/repeat_stats.h
}  // namespace history
}  // namespace trtllm_run

namespace trtllm_run::cli {

namespace po = boost::program_options;

// Subcommand entry points: argv[0] is the subcommand name; returns the exit code.
int RunMain(int argc, char** argv);
int PluginsMain(int argc, char** argv);
int PlanMain(int argc, char** argv);
int ExecMain(int argc, char** argv);
int StatusMain(int argc, char** argv);
int AttachMain(int argc, char** argv);
int CancelMain(int argc, char** argv);
int ReleaseMain(int argc, char** argv);
int EnvMain(int argc, char** argv);
int McpMain(int argc, char** argv);
int ListMain(int argc, char** argv);
int LogsMain(int argc, char** argv);
int StageMain(int argc, char** argv);
int HistoryMain(int argc, char** argv);
int PerfMain(int argc, char** argv);
int ReportMain(int argc, char** argv);

// The directory of a `run --cases` run (cases_dir.h) for status / attach / cancel, and
// `plan --cases FILE` (cmd_cases.cc).
int CasesDirStatus(const std::string& dir, bool json);
int CasesDirAttach(const std::string& dir, bool json, double poll);
int CasesDirCancel(const std::string& dir, double wait, int kill_grace);
int PlanCasesMain(const po::variables_map& vm, const CaseRequest& shared);
// `plan --stage NAME` / `plan --test-db CONTEXT` (cmd_plan_stage.cc).
int PlanStageMain(const po::variables_map& vm, const CaseRequest& shared);
// The stage flags `plan --stage` and `stage` share (--test-db, --waives, --splits,
// --match) into *request, and on local_direct / local_docker this host's GPUs (nvidia-smi)
// as the target's gpu and system_gpu_count; *probe_warning (may be null) says why the host
// gave none. A --match that is not key=value is the usage error of `subcommand`: its exit
// code is returned; nullopt when all is well.
std::optional<int> StageRequestFromFlags(const std::string& subcommand, const po::variables_map& vm,
                                         const CaseRequest& shared, StageRequest* request,
                                         std::string* probe_warning);

// Prints "trtllm-run <subcommand>: error: <status>" and returns its exit code (2 for
// bad input and unknown names, 3 otherwise). With JSON errors on (--json), stdout also
// gets {"error": {"subcommand", "exit_code", "message", "hint"}}.
int Fail(const std::string& subcommand, const Status& status);

// Turns the JSON error object of Fail and UsageError on (main: --json was given).
void SetJsonErrors(bool on);

// The running subcommand's one-line description (main's table): its --help shows it
// under the usage line when the subcommand gives no CommandUsage::about of its own.
void SetCommandDescription(const std::string& description);

// While a hook is set, Parse describes the subcommand's table to it and returns 0
// without parsing: the man page and completion generators read every table this way.
void SetDescribeHook(std::function<void(const CommandDoc&)> hook);

// A time flag's value in seconds: the duration syntax (2h, 90m, 30s, HH:MM:SS, a bare
// number of seconds; fractions of a second where `fractions`), kInvalidInput naming
// the flag otherwise, and for a negative value.
Result<double> DurationFlag(const po::variables_map& vm, const std::string& flag,
                            bool fractions = false);

// The value of a time flag (--kill-grace 30s, ...): a string parsed by DurationFlag.
po::typed_value<std::string>* DurationValue(const std::string& default_value = "");

// kInvalidInput unless `path` can be written as a report file (`flag` names it): it is a
// regular file or absent, in an existing writable directory.
Status CheckOutputFile(const std::string& path, const std::string& flag);

// Prints a usage error with a pointer to --help (after `hint`, when given); returns 2.
int UsageError(const std::string& subcommand, const std::string& message,
               const std::string& hint = "");

// --plugin-dir, accepted by every subcommand that loads plugins.
po::options_description PluginOptions();

// The SSH connection flags (the request's ssh fields and --password-file): the same
// group in env, plan and run.
po::options_description SshFlagOptions();

// One flag per CaseRequest field (--custom-cmd, ...) plus --request FILE; the SSH
// fields in their own group (SshFlagOptions).
po::options_description CaseOptions();

// --kill-grace DURATION in whole seconds; kInvalidInput when it is not a duration.
Result<int> KillGraceFlag(const po::variables_map& vm);

// The request from --request FILE overlaid with the case flags given.
Result<CaseRequest> RequestFromOptions(const po::variables_map& vm);

// A runtime over the built-in plugins, $TRTLLM_RUN_PLUGIN_PATH and --plugin-dir.
Result<std::unique_ptr<Runtime>> MakeRuntime(const po::variables_map& vm);

// "warning: ..." on stderr for each plugin that failed to load.
void PrintPluginProblems(const Registry& registry);

// RunOptions for a case this process supervises: job output on stdout (on stderr with
// --json, so that stdout holds only the JSON), status lines on stderr.
RunOptions TerminalRunOptions(const po::variables_map& vm, CancellationToken* cancel,
                              int kill_grace_seconds);

// The end of a single-case run: the summary on stderr, --junit FILE, --json on stdout.
// Returns the verdict's exit code (a failed --junit write is reported, not fatal).
int ReportResult(const std::string& subcommand, const po::variables_map& vm,
                 const RunResult& result);

// What a subcommand takes besides its flags.
struct CommandUsage {
  std::string positional;   // "WORK_DIR": exactly one argument, read with Positional(vm)
  std::string about;        // shown by --help after the usage line
  int max_positionals = 1;  // arguments allowed after the first (`history flaky`, ...)
};

// Parses argv against `visible` (plus --help). Returns an exit code when parsing ended
// the command (--help: 0, an error: 2); nullopt to go on. An unknown flag is refused
// with the closest known one; a flag whose value is named FILE (value_name) must name
// an existing, readable file (exit 2 naming it; unless its reader checks that itself),
// PATH a file to be written, DIR a directory, DURATION a time (DurationValue).
std::optional<int> Parse(const std::string& subcommand, int argc, char** argv,
                         const po::options_description& visible, po::variables_map* vm,
                         const CommandUsage& usage = {});

// The positional argument of a CommandUsage with `positional` set.
std::string Positional(const po::variables_map& vm);
// Every positional argument (at most CommandUsage::max_positionals).
std::vector<std::string> Positionals(const po::variables_map& vm);

// --perf-gate MODE and --perf-baseline FILE (perf_flags.cc): run takes them.
po::options_description PerfGateOptions();
// The perf gate of a run (RunOptions::finalize) from those flags, recording in `store`
// (may be null). kInvalidInput for a bad mode or baseline file: check before running.
Result<std::function<void(RunResult*)>> PerfFinalizer(const po::variables_map& vm,
                                                      history::HistoryStore* store);
// The same, with the store taken from `store` (it must outlive the finalizer) when the
// finalizer runs, after the job.
class HistoryOpening;
Result<std::function<void(RunResult*)>> PerfFinalizer(const po::variables_map& vm,
                                                      HistoryOpening& store);
// --html PATH (cmd_report.cc): run, exec and stage take it.
po::options_description HtmlOptions();
// kInvalidInput unless --html is absent or names a file that can be written (checked
// before anything runs).
Status CheckHtmlFlag(const po::variables_map& vm);
// With --html: the report of the finished run in `run_dir` written there (a failure is an
// error on stderr, never a change of the verdict's exit code).
void WriteHtmlIfAsked(const std::string& subcommand, const po::variables_map& vm,
                      const std::string& run_dir);
// The shortcut for the most recent work dir of the checkout around the current
// directory (the first line of `trtllm-run list`).
inline constexpr char kLastRun[] = "@last";

// The work dir a WORK_DIR argument names, absolute and normalized: @last (kLastRun); a
// bare name from `trtllm-run list` (no '/', nothing of that name in the current
// directory) as <checkout>/work_dirs/NAME; else the path as given. kNotFound for @last
// when the checkout has no work dirs.
Result<std::string> WorkDirArgument(const std::string& given);

// --history STORE and --no-history (history_flags.cc): run, stage and history take them.
po::options_description HistoryOptions();

// Where runs are recorded: --history, else the user config's `history:`, else
// history::DefaultHistoryPath(); "" when recording is off (--no-history, `history: off`,
// no $HOME). kInvalidInput when --history and --no-history are both given, or --history
// is empty. *origin (may be null) names where the choice came from.
Result<std::string> HistoryPathFromFlags(const po::variables_map& vm, std::string* origin);

// The store a run records its verdicts in, opened; null when recording is off or the
// store cannot be opened (a warning on stderr naming the store and why: recording never
// changes a run's verdict or exit code).
std::unique_ptr<history::HistoryStore> OpenHistoryForRecording(const std::string& subcommand,
                                                               const po::variables_map& vm);

// OpenHistoryForRecording on a thread of its own, started by the constructor: opening
// the store (SQLite's WAL recovery, the first connection's shared-memory reset, the
// filesystem check: ~5 ms of a `run --custom-cmd true`) overlaps the run's plan and job,
// and the store is first needed after the job. Get() waits for the opening and returns
// OpenHistoryForRecording's answer (null when recording is off or the store could not be
// opened, that warning printed once, from the calling thread).
class HistoryOpening {
 public:
  HistoryOpening(std::string subcommand, const po::variables_map& vm);
  ~HistoryOpening();
  HistoryOpening(const HistoryOpening&) = delete;
  HistoryOpening& operator=(const HistoryOpening&) = delete;

  history::HistoryStore* Get();
  // Closes the store (waiting for the opening first); Get() is null afterwards.
  void Close();

 private:
  std::string subcommand_;
  // Opens the store into store_ or open_failure_; joined by Get(). (A std::future of the
  // store would export its std:: instance from libtrtllm_run_core: tests/check_exports.py.)
  std::thread opener_;
  Status open_failure_;
  std::unique_ptr<history::HistoryStore> store_;
};

// Records `record` in `store` (null: nothing); a failure is a warning on stderr.
void RecordInHistory(const std::string& subcommand, history::HistoryStore* store,
                     const history::CaseRecord& record);

// --repeat N, --repeat-pass-rate R and (`reuse_passed`) --reuse-passed (repeat_flags.cc).
po::options_description RepeatOptions(bool reuse_passed);

struct RepeatFlags {
  int count = 0;                    // --repeat N; 0 when not given
  std::optional<double> pass_rate;  // --repeat-pass-rate R
  bool reuse_passed = false;        // --reuse-passed
};

// Reads the flags: exit 2 (printed) for N outside 1..kMaxRepeat or not a number, R outside
// [0, 1], R without N, --repeat with --reuse-passed, --reuse-passed with the history off.
std::optional<int> RepeatFromFlags(const std::string& subcommand, const po::variables_map& vm,
                                   RepeatFlags* flags);

// The checkout a request runs in: `repo_root` made absolute, else the nearest directory
// above the cwd with a .git, else the cwd.
std::string CheckoutRoot(const std::optional<std::string>& repo_root);

// `count` copies of every case, in case order: index = group * count + run (1-based), name
// "<name or command> #<run>", and a custom command's custom_env gets
// TRTLLM_RUN_REPEAT_INDEX=<run>.
std::vector<CaseEntry> ExpandRepeats(const std::vector<CaseEntry>& cases, int count);

// The name a repeated case's runs are recorded and summarized under: its name, else its
// command as given (without the TRTLLM_RUN_REPEAT_INDEX each run adds).
std::string RepeatedCaseName(const CaseEntry& entry);

// One summary per case of `cases` (before ExpandRepeats) from the expanded run's outcomes.
std::vector<history::RepeatSummary> SummarizeRepeats(const std::vector<CaseEntry>& cases,
                                                     const MultiRunResult& result, int count,
                                                     std::optional<double> pass_rate);

// The combined result.json text with a "repeat" list of the summaries added.
std::string WithRepeatJson(const std::string& combined,
                           const std::vector<history::RepeatSummary>& summaries);

// --reuse-passed of `run --cases`: removes from `cases` the ones whose name passed on their
// checkout's commit (history/reuse_passed.h: the case's own newest verdict, else, for a
// name with no case row, a test of that id) and returns them as SKIPPED outcomes whose
// reason says where they passed. Cases without a name or outside a git checkout always run.
std::vector<CaseOutcome> TakeReusedCases(const std::string& subcommand,
                                         history::HistoryStore* store,
                                         std::vector<CaseEntry>* cases);

}  // namespace trtllm_run::cli

#endif  // TRTLLM_RUN_APPS_CLI_H_
